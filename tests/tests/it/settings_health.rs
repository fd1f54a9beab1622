//! Settings > Webhooks for the person on call, in a real browser: each webhook's health at
//! a glance, and a webhook's deliveries near the top of its page with filters, pages, the
//! cause of each failure in words, and retries.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::settings::{sign_in, submit, user};
use crate::support::browser::Browser;
use crate::support::plugins::plugin_wasm;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, WeirBuilder, work_order_event};
use crate::support::{eventually, free_port};

#[tokio::test]
async fn the_person_on_call_sees_health_and_works_the_deliveries() {
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "100ms").start().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "oncall@example.com", true).await;
    let healthy = Receiver::start().await;
    let broken = Receiver::replying(Reply::Status(500)).await;
    let plugin = t.admin.upload_plugin("trim-creator", plugin_wasm("redact")).await;
    let actions = ["work_order_created"];
    let ok = t
        .admin
        .create_webhook_with(
            &healthy.url,
            &actions,
            json!([{"plugin_id": plugin["id"], "config": {"pointers": ["/creator"]}}]),
        )
        .await;
    let failing = t.admin.create_webhook(&broken.url, &actions).await;
    let closed = format!("http://127.0.0.1:{}/nobody-listens", free_port());
    let unreachable = t.admin.create_webhook(&closed, &actions).await;
    let (ok_id, failing_id, unreachable_id) =
        (ok["id"].as_str().unwrap(), failing["id"].as_str().unwrap(), unreachable["id"].as_str().unwrap());
    for i in 0..22 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    t.admin.settled(ok_id, 22).await;
    t.admin.settled(failing_id, 22).await;
    t.admin.settled(unreachable_id, 22).await;

    let browser = Browser::start(1280, 900).await;
    sign_in(&browser, &weir, "oncall@example.com").await;
    health_at_a_glance(&browser).await;
    deliveries_before_the_forms(&browser, &weir, unreachable_id, ok_id).await;
    pages_of_twenty_with_the_filters_kept(&browser, &weir, ok_id).await;

    // Retry everything that failed since yesterday, once the endpoint works again.
    broken.set(Reply::Status(200));
    browser.goto(&format!("{}/settings/webhooks/{failing_id}#deliveries", weir.base)).await;
    browser.screenshot("09-webhook-deliveries").await;
    submit(&browser, "form[action$='/retry_failed'] button", "22 failed deliveries queued for a new attempt.").await;
    eventually("retried deliveries succeeded", Duration::from_secs(30), async || {
        let list = t
            .admin
            .get(&format!("/api/v2/webhook_deliveries?webhook_id={failing_id}&status=succeeded&limit=100"))
            .await
            .json();
        (list["data"].as_array().unwrap().len() == 22).then_some(())
    })
    .await;
    // One delivery, by its own button.
    browser.goto(&format!("{}/settings/webhooks/{unreachable_id}#deliveries", weir.base)).await;
    submit(&browser, "#deliveries form[action$='/retry'] button", "Retry queued.").await;
}

/// Health at a glance on the list: a word, the failure in words and the streak, the last
/// 24 hours.
async fn health_at_a_glance(browser: &Browser) {
    let list = browser.page_text().await;
    assert!(list.contains("22 delivered, 0 failed (100.0% delivered)"), "{list}");
    assert!(list.contains("0 delivered, 22 failed (0.0% delivered)"), "{list}");
    assert!(list.contains("HTTP 500") && list.contains("connection failed"), "{list}");
    assert!(list.contains("44 failed attempts in a row"), "two attempts of each of 22 deliveries: {list}");
    assert!(list.contains("Healthy — the last delivery succeeded"), "{list}");
    assert!(list.contains("Failing — "), "{list}");
    assert!(!list.contains("null"), "{list}");
    let charts = "return [...document.querySelectorAll('svg.chart')].map(s => s.querySelectorAll('g').length);";
    assert_eq!(browser.run(charts).await, json!([24, 24, 24]), "a bar per hour for each webhook");
    let hover = "return document.querySelector('svg.chart g:last-child title').textContent;";
    let last_hour = browser.run(hover).await;
    assert!(last_hour.as_str().unwrap().contains(" delivered, "), "each hour's numbers on hover: {last_hour}");
    browser.screenshot("08-webhook-health").await;
}

/// A webhook's page opens on its overview — what went wrong and what to try — with its
/// deliveries and its long settings forms each under a tab of their own.
async fn deliveries_before_the_forms(browser: &Browser, weir: &Weir, unreachable_id: &str, ok_id: &str) {
    browser.goto(&format!("{}/settings/webhooks/{unreachable_id}", weir.base)).await;
    let shown = "return [...document.querySelectorAll('.tab')].filter(t => t.offsetParent !== null).map(t => t.id);";
    assert_eq!(browser.run(shown).await, json!(["overview"]), "one tab at a time, the overview first");
    let why = browser.text(".why").await;
    assert!(why.contains("Nothing accepted the connection") && why.contains("listening on that port"), "{why}");
    browser.click(".tabs a[href='#deliveries']").await;
    assert_eq!(browser.run(shown).await, json!(["deliveries"]));
    let page = browser.text("#deliveries").await;
    assert!(page.contains("connection failed"), "the failure in words: {page}");
    assert!(!page.contains("null"), "{page}");
    assert!(page.contains("just now") || page.contains(" min ago"), "relative times: {page}");
    let exact = browser.run("return document.querySelector('#deliveries time').title;").await;
    assert!(exact.as_str().unwrap().ends_with(" UTC"), "the exact time on hover: {exact}");
    browser.click(".tabs a[href='#settings']").await;
    assert_eq!(browser.run(shown).await, json!(["settings"]));
    assert!(browser.text("#settings").await.contains("Edit"), "the form under Settings");
    browser.goto(&format!("{}/settings/webhooks/{ok_id}", weir.base)).await;
    assert!(browser.page_text().await.contains("trim-creator v1"), "the plugins by name");
}

/// Pages of 20, newest first, with the filters kept.
async fn pages_of_twenty_with_the_filters_kept(browser: &Browser, weir: &Weir, ok_id: &str) {
    browser.goto(&format!("{}/settings/webhooks/{ok_id}#deliveries", weir.base)).await;
    browser.run("document.querySelector('#filter-status').value = 'succeeded'").await;
    browser.click("form.filters button").await;
    eventually("filtered", Duration::from_secs(10), async || {
        browser.url().await.contains("status=succeeded").then_some(())
    })
    .await;
    let rows = "return document.querySelectorAll('#deliveries tbody tr').length;";
    assert_eq!(browser.run(rows).await, 20);
    browser.click("a[rel=next]").await;
    eventually("second page", Duration::from_secs(10), async || browser.url().await.contains("cursor=").then_some(()))
        .await;
    assert_eq!(browser.run(rows).await, 2);
    assert!(browser.url().await.contains("status=succeeded"));
    browser.run("document.querySelector('#filter-status').value = 'failed'").await;
    submit(browser, "form.filters button", "No deliveries match.").await;
}
