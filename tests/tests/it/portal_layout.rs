//! The portal's pages at every width a customer opens them at (320, 375, 768 and 1,280 px) in
//! a real Chromium: nothing sticks out of the page or out of any element (`scrollWidth >
//! clientWidth` on anything but a box that scrolls on purpose), with long names and URLs, a
//! broker webhook and failed deliveries on the pages; a webhook failing now shows its failed
//! attempts on its chart, and a delivery waiting for its next attempt reads "retrying", with
//! when. Screenshots at each width go to
//! `target/browser-screenshots/layout-*.png`.

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::portal::link;
use crate::support::api::Tenant;
use crate::support::browser::Browser;
use crate::support::eventually;
use crate::support::weir::{Weir, WeirBuilder, work_order_event};

/// The widths tried, in CSS px.
const WIDTHS: [u32; 4] = [320, 375, 768, 1280];

/// What sticks out at this width: the page itself, or an element whose content is wider
/// than it (boxes that scroll on purpose, `overflow-x: auto | scroll`, excepted, and what is
/// inside them).
const OVERFLOWS: &str = r#"
const out = [];
const doc = document.documentElement;
if (doc.scrollWidth > doc.clientWidth + 1) out.push(`the page: ${doc.scrollWidth} > ${doc.clientWidth}`);
for (const el of document.querySelectorAll('body *')) {
  if (!(el instanceof HTMLElement) || el.closest('svg')) continue;
  let scroller = false;
  for (let p = el; p; p = p.parentElement) {
    const x = getComputedStyle(p).overflowX;
    if (p !== el && (x === 'auto' || x === 'scroll')) { scroller = true; break; }
  }
  if (scroller) continue;
  const style = getComputedStyle(el);
  if (style.display === 'inline' || el.clientWidth === 0) continue;
  // A field scrolls its own text; a box taken out of the flow (the hidden default button) is not laid out.
  if (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) || style.position === 'absolute') continue;
  if (style.overflowX === 'auto' || style.overflowX === 'scroll') continue;
  if (el.scrollWidth > el.clientWidth + 1) {
    const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + String(el.className).split(' ').join('.') : '');
    out.push(`${name}: ${el.scrollWidth} > ${el.clientWidth}: ${(el.innerText || '').slice(0, 60)}`);
  }
  const r = el.getBoundingClientRect();
  if (r.right > doc.clientWidth + 1 && style.position !== 'absolute' && style.position !== 'fixed') {
    const name = el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '');
    out.push(`${name} ends at ${Math.round(r.right)} px, past ${doc.clientWidth}`);
  }
}
return out.slice(0, 20);
"#;

/// The pages a customer meets: the list, a webhook (HTTP and broker), a failed delivery,
/// the forms.
fn pages(http: &Value, broker: &Value, delivery: &str) -> Vec<(String, String)> {
    let (h, b) = (http["id"].as_str().unwrap(), broker["id"].as_str().unwrap());
    vec![
        ("list".into(), "/settings/webhooks".into()),
        ("webhook".into(), format!("/settings/webhooks/{h}")),
        ("webhook-deliveries".into(), format!("/settings/webhooks/{h}#deliveries")),
        ("webhook-settings".into(), format!("/settings/webhooks/{h}#settings")),
        ("broker".into(), format!("/settings/webhooks/{b}")),
        ("log".into(), "/settings/deliveries".into()),
        ("events".into(), "/settings/events".into()),
        ("delivery".into(), format!("/settings/deliveries/{delivery}")),
        ("new".into(), "/settings/webhooks/new".into()),
        ("delete".into(), format!("/settings/webhooks/{h}/delete")),
    ]
}

/// A browser `width` px wide (a phone's below 600) that opened a new portal link of `t`'s.
async fn in_the_portal(t: &Tenant, width: u32) -> Browser {
    let made = link(t, json!({})).await;
    let browser = if width < 600 { Browser::phone(width, 900).await } else { Browser::start(width, 900).await };
    browser.goto(made["url"].as_str().unwrap()).await;
    eventually("the portal opens", Duration::from_secs(15), async || {
        browser.url().await.ends_with("/settings/webhooks").then_some(())
    })
    .await;
    browser
}

#[tokio::test]
async fn no_portal_page_sticks_out_at_320_375_768_or_1280_px() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "1h").start().await;
    let t = weir.tenant(Plan::pro()).await;
    // A refused connection (nothing listens on port 9): failed attempts to show.
    let long =
        "http://127.0.0.1:9/a/rather/long/path/of/the/customers/endpoint/that/goes/on/and/on?with=a-query-string-too";
    let http = t.admin.create_webhook(long, &["work_order_created", "form_completed"]).await;
    let broker = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"name": "Orders to the warehouse's event stream (billing and shipping)",
                    "destination": {"type": "nats", "url": "nats://127.0.0.1:9", "subject": "billing.orders.created.v1"},
                    "subscribed_actions": ["work_order_created"]}),
        )
        .await
        .expect(201)
        .json();
    t.publisher.publish(&work_order_event("wo_layout")).await;
    let listed = eventually("a delivery with a failed attempt", Duration::from_secs(20), async || {
        let page = t.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={}", http["id"].as_str()?)).await.json();
        let d = page["data"].as_array()?.first()?.clone();
        (!d["attempts"].as_array()?.is_empty()).then_some(d)
    })
    .await;
    let delivery = listed["id"].as_str().unwrap().to_owned();
    let (source_pages, ingest) = a_source_with_a_refused_request(&weir, &t).await;
    let ingest = ingest.as_str();
    let mut faults = Vec::new();
    for width in WIDTHS {
        let browser = in_the_portal(&t, width).await;
        for (name, path) in pages(&http, &broker, &delivery).into_iter().chain(source_pages.clone()) {
            browser.goto(&format!("{}{path}", weir.base)).await;
            browser.find("main").await;
            let found = browser.run(OVERFLOWS).await;
            for fault in found.as_array().into_iter().flatten() {
                faults.push(format!("{width} px, {name} ({path}): {}", fault.as_str().unwrap_or_default()));
            }
            browser.screenshot(&format!("layout-{width}-{name}")).await;
            let text = browser.page_text().await;
            match name.as_str() {
                // Failing now, nothing ended yet: the failures show, in red.
                "list" => {
                    assert!(text.contains("no deliveries ended · 1 failed attempt"), "{text}");
                    assert!(
                        !text.contains("Plan:") && !text.contains("Usage on"),
                        "no plan nor quotas in the portal: {text}"
                    );
                    let red = browser.run("return document.querySelectorAll('svg.chart rect.bad').length;").await;
                    assert!(red.as_u64().unwrap_or(0) >= 2, "a red bar for each failing webhook: {red}");
                }
                // Waiting for its next attempt: retrying, and when.
                // … and what went wrong, and what to try.
                "delivery" => {
                    assert!(text.contains("retrying") && text.contains("next in"), "{text}");
                    assert!(text.contains("Nothing accepted the connection") && text.contains("no firewall"), "{text}");
                }
                "webhook" => assert!(text.contains("Nothing accepted the connection"), "{text}"),
                "source" => {
                    assert!(text.contains("missing_signature: the request has no stripe-signature header"), "{text}");
                    let url = browser.run("return document.querySelector('input.copy').value;").await;
                    assert_eq!(url.as_str(), Some(ingest), "the URL to copy");
                }
                _ => {}
            }
        }
    }
    assert!(faults.is_empty(), "{} things stick out:\n{}", faults.len(), faults.join("\n"));
}

/// A source with a refused request (no signature) to show: its pages, and its ingest URL.
async fn a_source_with_a_refused_request(weir: &Weir, t: &Tenant) -> (Vec<(String, String)>, String) {
    let body = json!({"name": "Stripe payments (live mode)", "type": "stripe", "secret": "whsec_layout"});
    let source = t.admin.post("/api/v2/sources", &body).await.expect(201).json();
    let ingest = source["ingest_url"].as_str().unwrap().to_owned();
    let path = &ingest[ingest.find("/in/").unwrap()..];
    weir.http().post(path).raw("application/json", r#"{"id":"evt_1"}"#).send().await.expect(401);
    let pages = vec![
        ("sources".to_owned(), "/settings/sources".to_owned()),
        ("source".to_owned(), format!("/settings/sources/{}", source["id"].as_str().unwrap())),
    ];
    (pages, ingest)
}

/// Whether the element `css` is shown (neither it nor a parent is `display: none`).
async fn shown(browser: &Browser, css: &str) -> bool {
    let script = format!("const e = document.querySelector({css:?}); return !!e && e.getClientRects().length > 0;");
    browser.run(&script).await.as_bool().unwrap_or(false)
}

#[tokio::test]
async fn a_broker_webhook_is_made_from_a_form_showing_only_its_kinds_fields() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let browser = in_the_portal(&t, 375).await;
    browser.goto(&format!("{}/settings/webhooks/new", weir.base)).await;
    // Over HTTP (the default): the URL, empty, and no broker field.
    assert!(shown(&browser, "#url").await && !shown(&browser, "#destination_subject").await);
    assert_eq!(browser.run("return document.querySelector('#url').value;").await, "", "no https:// typed in for you");
    browser.run("const s = document.querySelector('#destination_type'); s.value = 'nats'; s.dispatchEvent(new Event('change'));").await;
    assert!(!shown(&browser, "#url").await, "a broker takes no HTTP URL");
    assert!(shown(&browser, "#destination_url").await && shown(&browser, "#destination_subject").await);
    assert!(!shown(&browser, "#destination_queue_url").await, "another kind's field is hidden");
    browser.fill("#name", "Orders to the stream").await;
    // Nothing listens on port 9: the connection test says so, and what to try.
    browser.fill("#destination_url", "nats://127.0.0.1:9").await;
    browser.fill("#destination_subject", "orders.created").await;
    browser.click("input[value=work_order_created]").await;
    browser.click("main form button.save").await;
    eventually("the webhook is made", Duration::from_secs(15), async || {
        browser.page_text().await.contains("Webhook created.").then_some(())
    })
    .await;
    let listed = t.admin.get("/api/v2/webhooks").await.json();
    let hook = &listed["data"][0];
    assert_eq!(hook["destination"]["type"], "nats", "{listed}");
    assert_eq!(hook["destination"]["subject"], "orders.created");
    let page = browser.page_text().await;
    assert!(
        page.contains("NATS") && page.contains("orders.created"),
        "its kind and subject, not only its server: {page}"
    );
    browser.screenshot("layout-375-broker-form").await;
    browser.click("form[action$='/test'] button").await;
    let tested = eventually("the connection tested", Duration::from_secs(15), async || {
        let page = browser.page_text().await;
        page.contains("Attempt 1").then_some(page)
    })
    .await;
    assert!(
        tested.contains("Nothing accepted the connection") && tested.contains("listening on that port"),
        "{tested}"
    );
}

/// Sets the select `css` to `value` as a person choosing it would (the change event fires).
async fn choose(browser: &Browser, css: &str, value: &str) {
    let script = format!(
        "const s = document.querySelector({css:?}); s.value = {value:?}; s.dispatchEvent(new Event('change'));"
    );
    browser.run(&script).await;
}

#[tokio::test]
async fn a_kafka_webhook_is_made_with_selects_a_check_box_and_a_sasl_fieldset_and_saved_as_shown() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let browser = in_the_portal(&t, 375).await;
    browser.goto(&format!("{}/settings/webhooks/new", weir.base)).await;
    choose(&browser, "#destination_type", "kafka").await;
    for css in ["#destination_bootstrap_servers", "#destination_key", "#destination_tls", "#destination_sasl_username"]
    {
        assert!(shown(&browser, css).await, "{css} is one of Kafka's inputs");
    }
    assert!(!shown(&browser, "#destination_subject").await && !shown(&browser, "#url").await);
    let overflows = browser.run(OVERFLOWS).await;
    assert_eq!(overflows, json!([]), "nothing sticks out of the Kafka form at 375 px");
    browser.fill("#name", "Orders to Kafka").await;
    browser.fill("#destination_bootstrap_servers", "127.0.0.1:9").await;
    browser.fill("#destination_topic", "orders").await;
    choose(&browser, "#destination_key", "event").await;
    browser.click("#destination_tls").await;
    choose(&browser, "#destination_sasl_mechanism", "scram-sha-256").await;
    browser.fill("#destination_sasl_username", "weir").await;
    browser.fill("#destination_sasl_password", "pw-typed-in-the-form").await;
    browser.screenshot("layout-375-kafka-form").await;
    browser.click("input[value=work_order_created]").await;
    browser.click("main form button.save").await;
    eventually("the webhook is made", Duration::from_secs(15), async || {
        browser.page_text().await.contains("Webhook created.").then_some(())
    })
    .await;
    let hook = t.admin.get("/api/v2/webhooks").await.json()["data"][0].clone();
    let stored = json!({"type": "kafka", "bootstrap_servers": "127.0.0.1:9", "topic": "orders", "key": "event",
                        "sasl": {"mechanism": "scram-sha-256", "username": "weir"}, "tls": true});
    assert_eq!(hook["destination"], stored, "{hook}");
    let page = browser.page_text().await;
    assert!(page.contains("SASL mechanism: scram-sha-256, SASL user name: weir") && page.contains("TLS"), "{page}");
    assert!(!page.contains("pw-typed-in-the-form"), "the password is never shown");
    // Saved again as shown (the password left empty): it keeps its destination, credentials and all.
    let id = hook["id"].as_str().unwrap();
    browser.goto(&format!("{}/settings/webhooks/{id}#settings", weir.base)).await;
    browser.screenshot("layout-375-kafka-settings").await;
    browser.click(&format!("main form[action$='/webhooks/{id}'] button.save")).await;
    eventually("the change is saved", Duration::from_secs(15), async || {
        browser.page_text().await.contains("Changes saved.").then_some(())
    })
    .await;
    let hook = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.json();
    assert_eq!(hook["destination"], stored, "{hook}");
}
