//! The portal in a real browser (issue 55, item 5): an operator's page on another origin
//! embeds a link in an iframe; the customer works their webhooks inside it; a `view` link
//! changes nothing; a used link opens nothing; an origin the link does not list cannot frame
//! it; one organisation's link never shows another's. Screenshots at 1,280 and 360 px wide
//! go to `target/browser-screenshots/portal-*.png`.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use weir::store::tenants::orgs::Plan;

use crate::portal::link;
use crate::support::browser::Browser;
use crate::support::eventually;
use crate::support::receiver::Receiver;
use crate::support::weir::{Weir, work_order_event};

/// The operator's product: a page on `ip`:`port` (0: any) that frames `url` (`width` px
/// wide); its origin.
async fn host_page(ip: &str, port: u16, url: &str, width: u32) -> String {
    let listener = tokio::net::TcpListener::bind((ip, port)).await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let html = format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>Acme · Settings</title></head><body style="margin:0;font-family:sans-serif"><h1 style="font-size:16px;margin:8px">Acme — Settings › Webhooks</h1><iframe src="{url}" style="border:1px solid #ccc;width:{width}px;height:820px"></iframe><script>window.heights = []; addEventListener("message", (e) => {{ if (e.data && e.data.type === "weir:portal:resize") {{ window.heights.push(e.data.height); document.querySelector("iframe").style.height = e.data.height + "px"; }} }});</script></body></html>"#
    );
    tokio::spawn(async move {
        // At most a few requests per test (the page and a favicon); bounded by the test's life.
        for _ in 0..50 {
            let Ok((mut stream, _)) = listener.accept().await else { return };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf).await;
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                html.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
        }
    });
    origin
}

/// Waits for the framed page to show `text`.
pub(crate) async fn framed_shows(browser: &Browser, text: &str) -> String {
    eventually(&format!("the frame shows {text:?}"), Duration::from_secs(15), async || {
        let page = browser.run("return document.body ? document.body.innerText : '';").await;
        let page = page.as_str().unwrap_or_default().to_owned();
        page.contains(text).then_some(page)
    })
    .await
}

/// The framed page says how tall it is, and the host page's two lines size the frame to it
/// (`host_page`'s listener); back in the frame after.
async fn the_frame_fits_its_page(browser: &Browser) {
    browser.top().await;
    let told = eventually("the portal page tells its height", Duration::from_secs(10), async || {
        let heights = browser.run("return window.heights;").await;
        heights.as_array().and_then(|h| h.last().cloned()).and_then(|h| h.as_u64())
    })
    .await;
    let frame = browser.run("return document.querySelector('iframe').getBoundingClientRect().height;").await;
    assert!(told > 100 && told < 820, "its height, not the frame's: {told}");
    assert!((frame.as_f64().unwrap_or(0.0) - told as f64).abs() <= 3.0, "the frame fits it: {frame} for {told}");
    browser.frame(0).await;
}

#[tokio::test]
async fn a_customer_works_their_webhooks_inside_the_operators_page() {
    let weir = Weir::start_default().await;
    let (a, b) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    let receiver = Receiver::start().await;
    let theirs = b.admin.create_webhook("http://127.0.0.1:9/org-b-secret-hook", &["form_completed"]).await;
    // The operator lists the page that frames the portal (its port is not known yet: a
    // listener is bound first, then the link made for its origin).
    let probe = tokio::net::TcpListener::bind(("127.0.0.2", 0)).await.unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let origin = format!("http://127.0.0.2:{port}");
    let made = link(&a, json!({"frame_ancestors": [origin], "accent_color": "#AA3300"})).await;
    let url = made["url"].as_str().unwrap().to_owned();
    assert_eq!(host_page("127.0.0.2", port, &url, 1240).await, origin);

    let browser = Browser::start(1280, 900).await;
    browser.goto(&format!("{origin}/")).await;
    browser.find("iframe").await;
    browser.frame(0).await;
    framed_shows(&browser, "No webhooks yet").await;
    the_frame_fits_its_page(&browser).await;
    let accent = browser.run("return getComputedStyle(document.querySelector('a.button')).backgroundColor;").await;
    assert_eq!(accent, "rgb(170, 51, 0)", "the link's accent colour");
    assert!(!framed_shows(&browser, "Webhooks").await.contains("org-b-secret-hook"));

    // Create, edit, test, read the delivery, retry it, delete.
    browser.click("a[href='/settings/webhooks/new']").await;
    browser.fill("#name", "Orders to Acme ERP").await;
    browser.fill("#url", &receiver.url).await;
    browser.click("input[value=work_order_created]").await;
    browser.click("main form button.save").await;
    framed_shows(&browser, "Webhook created.").await;
    // Its page opens on its overview; the form is under Settings.
    browser.click(".tabs a[href='#settings']").await;
    browser.fill("#name", "Orders to the ERP").await;
    browser.click("main form button.save").await;
    framed_shows(&browser, "Changes saved.").await;
    browser.click(".tabs a[href='#overview']").await;
    a.publisher.publish(&work_order_event("wo_1")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    browser.click("form[action$='/test'] button").await;
    let delivery = framed_shows(&browser, "Test event sent").await;
    // The page waits for the endpoint's answer: the connection test shows it.
    assert!(delivery.contains("Attempt 1") && delivery.contains("HTTP 200"), "{delivery}");
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    assert_eq!(got[1].json()["test"], true);
    browser.click("form[action$='/retry'] button").await;
    framed_shows(&browser, "Retry queued.").await;
    receiver.wait_for(3, Duration::from_secs(10)).await;
    browser.click("a[href^='/settings/webhooks/wh_']").await;
    framed_shows(&browser, "Orders to the ERP").await;
    let ours = browser.run("return location.pathname;").await.as_str().unwrap_or_default().to_owned();
    assert!(ours.starts_with("/settings/webhooks/wh_"), "the webhook's page: {ours}");
    browser.top().await;
    browser.screenshot("portal-1280-webhook").await;
    browser.frame(0).await;
    // Org B's webhook is not there, whatever the URL says.
    let their_id = theirs["id"].as_str().unwrap();
    browser.run(&format!("location.href = '/settings/webhooks/{their_id}';")).await;
    framed_shows(&browser, "No such webhook.").await;
    // Back to ours by its address (`history.back()` from a frame once left the frame's
    // document without its delete link for 10 s).
    browser.run(&format!("location.href = '{ours}';")).await;
    framed_shows(&browser, "Orders to the ERP").await;
    browser.click(".tabs a[href='#settings']").await;
    browser.click("a[href$='/delete']").await;
    browser.click("form[action$='/delete'] button").await;
    framed_shows(&browser, "Webhook deleted").await;
    assert!(a.admin.get("/api/v2/webhooks").await.json()["data"].as_array().unwrap().is_empty());

    // The used link opens nothing.
    browser.top().await;
    browser.goto(&format!("{origin}/")).await;
    browser.frame(0).await;
    framed_shows(&browser, "This link has expired").await;
}

#[tokio::test]
async fn a_view_link_changes_nothing_and_other_origins_cannot_frame() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    t.admin.settled(hook["id"].as_str().unwrap(), 1).await;
    let probe = tokio::net::TcpListener::bind(("127.0.0.2", 0)).await.unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let origin = format!("http://127.0.0.2:{port}");
    let made = link(&t, json!({"permissions": "view", "frame_ancestors": [origin]})).await;
    host_page("127.0.0.2", port, made["url"].as_str().unwrap(), 340).await;

    // A narrow column of the operator's page: 360 px wide.
    let browser = Browser::start(360, 900).await;
    browser.goto(&format!("{origin}/")).await;
    browser.find("iframe").await;
    browser.frame(0).await;
    let list = framed_shows(&browser, "View only").await;
    assert!(list.contains("Healthy") && list.contains("1 delivered, 0 failed"), "{list}");
    let wide = browser.run("return document.documentElement.scrollWidth <= window.innerWidth + 1;").await;
    assert_eq!(wide, true, "nothing wider than the column");
    let controls = "return document.querySelectorAll('form[method=post], a.button').length;";
    assert_eq!(browser.run(controls).await, 0, "a view link shows no control that changes anything");
    browser.click("a[href^='/settings/webhooks/wh_']").await;
    framed_shows(&browser, "Last 24 hours").await;
    assert_eq!(browser.run(controls).await, 0);
    browser.top().await;
    browser.screenshot("portal-360-view").await;

    // Another origin's page: the link it frames is refused by the browser (its
    // `frame-ancestors` lists only the operator's page), so nothing of the organisation shows.
    let other = link(&t, json!({"frame_ancestors": [origin]})).await;
    let elsewhere = host_page("127.0.0.3", 0, other["url"].as_str().unwrap(), 340).await;
    browser.goto(&format!("{elsewhere}/")).await;
    browser.find("iframe").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    browser.frame(0).await;
    let shown = browser.run("return document.body ? document.body.innerText : '';").await;
    let shown = shown.as_str().unwrap_or_default();
    assert!(shown.contains("refused to connect"), "the browser's refusal: {shown}");
    assert!(!shown.contains("Healthy") && !shown.contains("Webhooks"), "nothing of the organisation: {shown}");
    browser.top().await;
    browser.screenshot("portal-360-refused-origin").await;
}
