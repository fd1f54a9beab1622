//! Settings > Webhooks in a real browser (headless Chromium through chromedriver), and the
//! session and CSRF rules over raw HTTP. Screenshots land in `target/browser-screenshots/`.

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::browser::Browser;
use crate::support::eventually;
use crate::support::http::{Http, Resp};
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Tenant, Weir, WeirBuilder};

pub(crate) const PASSWORD: &str = "correct horse battery";

pub(crate) async fn user(weir: &Weir, org_id: &str, email: &str, admin: bool) {
    let hash = weir::auth::passwords::hash(PASSWORD).unwrap();
    weir.store.users().create_user(org_id, email, admin, &hash).await.unwrap().expect("new email");
}

pub(crate) async fn sign_in(browser: &Browser, weir: &Weir, email: &str) {
    browser.goto(&format!("{}/settings/webhooks", weir.base)).await;
    assert!(browser.url().await.ends_with("/settings/login"), "signed-out visitors are sent to sign in");
    browser.fill("#email", email).await;
    browser.fill("#password", PASSWORD).await;
    browser.click("button[type=submit]").await;
    eventually("signed in", Duration::from_secs(10), async || {
        browser.url().await.ends_with("/settings/webhooks").then_some(())
    })
    .await;
}

pub(crate) fn set_cookies(resp: &Resp) -> Vec<String> {
    resp.headers.get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).map(str::to_owned).collect()
}

/// Signs in over raw HTTP; returns the session cookie pair and the page's CSRF token.
pub(crate) async fn http_sign_in(http: &Http, email: &str, password: &str) -> (Resp, Option<(String, String)>) {
    let form = http.get("/settings/login").send().await.expect(200);
    let login_cookie = set_cookies(&form).into_iter().find(|c| c.starts_with("weir_login=")).unwrap();
    let login_cookie = login_cookie.split(';').next().unwrap().to_owned();
    let html = form.text();
    let csrf = html.split("name=\"_csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let resp = http
        .post("/settings/login")
        .header("cookie", &login_cookie)
        .form(&[("_csrf", &csrf), ("email", email), ("password", password)])
        .send()
        .await;
    let session =
        set_cookies(&resp).into_iter().find(|c| c.starts_with("weir_session=") && !c.starts_with("weir_session=;"));
    let Some(session) = session else { return (resp, None) };
    let pair = session.split(';').next().unwrap().to_owned();
    let page = http.get("/settings/webhooks").header("cookie", &pair).send().await.expect(200).text();
    let token = page.split("name=\"_csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    (resp, Some((pair, token)))
}

#[tokio::test]
async fn an_admin_manages_webhooks_from_the_page() {
    let weir = WeirBuilder::shared()
        .env("WEIR_DEACTIVATE_AFTER_FAILURES", "3")
        .env("WEIR_DEACTIVATE_AFTER", "100ms")
        .env("WEIR_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "ada@example.com", true).await;
    let receiver = Receiver::start().await;
    let browser = Browser::start(1280, 900).await;
    browser.goto(&format!("{}/settings/login", weir.base)).await;
    browser.screenshot("01-sign-in").await;
    sign_in(&browser, &weir, "ada@example.com").await;
    assert!(browser.page_text().await.contains("No webhooks yet"));

    // Create a webhook on the page.
    browser.click("a[href='/settings/webhooks/new']").await;
    browser.fill("#name", "Orders to ERP").await;
    browser.fill("#url", &receiver.url).await;
    browser.click("input[value=work_order_created]").await;
    browser.screenshot("02-new-webhook").await;
    submit(&browser, "main form button.save", "Webhook created.").await;

    // It is the same resource the API sees, and an API-made one shows on the page.
    let from_page = t.admin.get("/api/v2/webhooks").await.expect(200).json()["data"][0].clone();
    assert_eq!(from_page["name"], "Orders to ERP");
    assert_eq!(from_page["subscribed_actions"], json!(["work_order_created"]));
    let failing = Receiver::replying(Reply::Status(500)).await;
    let api_made = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"name": "Made by the API", "url": failing.url, "subscribed_actions": ["defect_created"]}),
        )
        .await
        .expect(201)
        .json();
    browser.goto(&format!("{}/settings/webhooks", weir.base)).await;
    let list = browser.page_text().await;
    assert!(list.contains("Orders to ERP") && list.contains("Made by the API"), "{list}");
    browser.screenshot("03-webhooks").await;

    // Reveal the signing secret.
    browser.goto(&format!("{}/settings/webhooks/{}#settings", weir.base, from_page["id"].as_str().unwrap())).await;
    browser.click("details summary").await;
    assert_eq!(browser.text("#secret").await, from_page["signing_secret"].as_str().unwrap());

    rotate_from_the_page(&browser, &t, from_page["id"].as_str().unwrap(), &from_page["signing_secret"]).await;
    a_failing_webhook_from_the_page(&browser, &weir, &t, (api_made["id"].as_str().unwrap(), &failing)).await;

    // Sign out: the pages ask to sign in again.
    browser.click("header form button").await;
    eventually("signed out", Duration::from_secs(10), async || {
        browser.url().await.ends_with("/settings/login").then_some(())
    })
    .await;
    browser.goto(&format!("{}/settings/webhooks", weir.base)).await;
    assert!(browser.url().await.ends_with("/settings/login"));
}

/// Rotates a webhook's secret from its page (the form carries the CSRF token); the old
/// secret signs for the chosen grace period, and the page says until when.
async fn rotate_from_the_page(browser: &Browser, t: &Tenant, id: &str, secret: &Value) {
    browser.run("document.querySelector('#grace_period').value = '1h'").await;
    submit(browser, "form[action$='/rotate_secret'] button", "Signing secret rotated.").await;
    let rotated = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.json();
    assert_ne!(rotated["signing_secret"], *secret);
    let expires = weir::time::parse_rfc3339(rotated["previous_secret_expires_at"].as_str().unwrap()).unwrap();
    assert!(expires.abs_diff(weir::time::now_millis() + 3_600_000) < 10_000, "the chosen grace period");
    browser.click("details summary").await;
    assert_eq!(browser.text("#secret").await, rotated["signing_secret"].as_str().unwrap());
    assert!(browser.text("#previous-secret").await.contains("in 1 h"), "relative, with the exact time in the element");
    let exact = browser.run("return document.querySelector('#previous-secret time').getAttribute('datetime');").await;
    assert_eq!(exact, rotated["previous_secret_expires_at"]);
    browser.screenshot("03b-rotated-secret").await;
}

/// A webhook made by the API fails until it is deactivated: its page says when and why,
/// reactivates it, retries the failed delivery once the endpoint works, and deletes it.
async fn a_failing_webhook_from_the_page(
    browser: &Browser,
    weir: &Weir,
    t: &Tenant,
    (api_id, failing): (&str, &Receiver),
) {
    let defect = json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": "d1"}, "defect": {}});
    t.publisher.publish(&defect).await;
    eventually("deactivated", Duration::from_secs(20), async || {
        let w = t.admin.get(&format!("/api/v2/webhooks/{api_id}")).await.json();
        (w["active"] == false).then_some(())
    })
    .await;
    browser.goto(&format!("{}/settings/webhooks/{api_id}", weir.base)).await;
    let page = browser.page_text().await;
    assert!(page.contains("Off — switched off because it kept failing"), "{page}");
    browser.screenshot("04-deactivated").await;
    submit(browser, "form[action$='/active'] button", "Webhook reactivated.").await;
    assert_eq!(t.admin.get(&format!("/api/v2/webhooks/{api_id}")).await.json()["active"], true);

    // Retry the failed delivery from its page once the endpoint works again.
    failing.set(Reply::Status(200));
    browser.click(".tabs a[href='#deliveries']").await;
    browser.click("a[href^='/settings/deliveries/']").await;
    let delivery_page = browser.page_text().await;
    assert!(delivery_page.contains("failed") && delivery_page.contains("Attempt 1"), "{delivery_page}");
    let timeline = browser.text("ol.timeline").await;
    assert!(timeline.contains("HTTP 500") && timeline.contains("Ended"), "the attempt timeline: {timeline}");
    browser.screenshot("05-delivery").await;
    submit(browser, "form[action$='/retry'] button", "Retry queued.").await;
    let delivery_id =
        browser.url().await.split("/settings/deliveries/").nth(1).unwrap().split('?').next().unwrap().to_owned();
    eventually("retried delivery succeeded", Duration::from_secs(20), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery_id}")).await.json();
        (d["status"] == "succeeded").then_some(())
    })
    .await;

    // Delete, after confirming.
    browser.goto(&format!("{}/settings/webhooks/{api_id}#settings", weir.base)).await;
    browser.click(&format!("a[href='/settings/webhooks/{api_id}/delete']")).await;
    assert!(browser.page_text().await.contains("cannot be undone"));
    submit(browser, "form[action$='/delete'] button", "Webhook deleted").await;
    t.admin.get(&format!("/api/v2/webhooks/{api_id}")).await.expect(404);
}

/// Clicks `selector` and waits for the page to say `said`.
pub(crate) async fn submit(browser: &Browser, selector: &str, said: &str) {
    browser.click(selector).await;
    eventually(said, Duration::from_secs(10), async || browser.page_text().await.contains(said).then_some(())).await;
}

#[tokio::test]
async fn pages_apply_the_apis_rules_and_work_on_the_free_plan() {
    let weir = WeirBuilder::shared().env("WEIR_ALLOW_PRIVATE_TARGETS", "").start().await;
    let t = weir.tenant(Plan::free()).await;
    user(&weir, &t.org_id, "grace@example.com", true).await;
    let browser = Browser::start(1280, 900).await;
    sign_in(&browser, &weir, "grace@example.com").await;
    browser.goto(&format!("{}/settings/webhooks/new", weir.base)).await;
    browser.fill("#url", "http://10.0.0.1/hook").await;
    browser.click("main form button.save").await;
    let text = eventually("validation shown", Duration::from_secs(10), async || {
        let t = browser.page_text().await;
        t.contains("Please correct").then_some(t)
    })
    .await;
    // The same message the API gives for the same URL.
    assert!(text.contains("url: resolves to 10.0.0.1, which is not a public address"), "{text}");
    assert!(
        browser.run("return document.querySelector('#url').value").await == json!("http://10.0.0.1/hook"),
        "input is kept"
    );
    browser.screenshot("06-validation").await;
    // Nothing was written.
    assert!(weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap().is_empty());
    // Every form control has a label.
    let unlabelled = browser
        .run("return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter(e => !e.labels || e.labels.length === 0).length")
        .await;
    assert_eq!(unlabelled, json!(0));
}

#[tokio::test]
async fn the_page_is_readable_on_a_phone_and_usable_by_keyboard() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "phone@example.com", true).await;
    t.admin.post("/api/v2/webhooks", &json!({"name": "A webhook with a rather long name", "url": "http://127.0.0.1:9/a/very/long/path/that/could/overflow/a/small/screen", "subscribed_actions": ["form_completed"]})).await.expect(201);
    let browser = Browser::start(390, 844).await;
    // Sign in with the keyboard only: Tab from the email field to the password field, Enter.
    browser.goto(&format!("{}/settings/login", weir.base)).await;
    browser.fill("#email", "phone@example.com").await;
    browser.keys("\u{E004}").await;
    assert_eq!(browser.run("return document.activeElement.id").await, json!("password"));
    browser.keys(PASSWORD).await;
    browser.keys("\u{E007}").await;
    eventually("signed in", Duration::from_secs(10), async || {
        browser.url().await.ends_with("/settings/webhooks").then_some(())
    })
    .await;
    let overflow = browser.run("return document.documentElement.scrollWidth - window.innerWidth").await;
    assert!(overflow.as_i64().unwrap() <= 0, "no horizontal scrolling on a phone: {overflow}");
    browser.screenshot("07-phone").await;
}
