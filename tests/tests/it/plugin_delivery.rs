//! Plugins in the delivery path (contract §5): filters, reshaping in chain order, their
//! headers, `on_error`, attachments that cannot be read, and compiling once per process.

use crate::support::plugins::plugin_wasm;
use crate::support::receiver::Receiver;
use crate::support::weir::{Weir, WeirBuilder, export_event, work_order_event};
use serde_json::{Value, json};
use std::time::Duration;
use weir::store::tenants::orgs::Plan;

#[tokio::test]
async fn report_export_filter_narrows_exports_by_type_id_and_creator() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let filter = t.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    let config = json!({"exportable_types": ["Form"], "exportable_ids": ["frm_1"], "creator_ids": ["cli_a"]});
    let webhook = t
        .admin
        .create_webhook_with(
            &receiver.url,
            &["report_export_completed", "work_order_created"],
            json!([{"plugin_id": filter["id"], "config": config}]),
        )
        .await;
    let events = [
        ("rex_match", ("Form", "frm_1"), "cli_a"),
        ("rex_other_form", ("Form", "frm_2"), "cli_a"),
        ("rex_other_type", ("Asset", "frm_1"), "cli_a"),
        ("rex_other_creator", ("Form", "frm_1"), "cli_b"),
    ];
    for (rex, exportable, creator) in events {
        t.publisher.publish(&export_event(rex, exportable, creator)).await;
    }
    t.publisher.publish(&work_order_event("wo_1")).await;
    let deliveries = t.admin.settled(webhook["id"].as_str().unwrap(), 5).await;
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), 2);
    let exports: Vec<Value> =
        got.iter().map(|r| r.json()).filter(|b| b["action"] == "report_export_completed").collect();
    assert_eq!(exports.len(), 1);
    assert_eq!(exports[0]["report_export"]["id"], "rex_match");
    let secret = webhook["signing_secret"].as_str().unwrap();
    assert!(got.iter().all(|r| weir::sign::verify(secret, &r.body, &r.header("x-webhook-signature"))));

    let filtered: Vec<&Value> = deliveries.iter().filter(|d| d["status"] == "filtered").collect();
    assert_eq!(filtered.len(), 3);
    for d in &filtered {
        assert_eq!(d["attempts"], json!([]), "no request was sent");
        assert_eq!(d["plugins"][0]["plugin_id"], filter["id"]);
        assert_eq!(d["plugins"][0]["outcome"], "drop");
        assert!(d["plugins"][0]["reason"].as_str().unwrap().contains("not in the filter"));
    }
    let delivered: Vec<&Value> = deliveries.iter().filter(|d| d["status"] == "succeeded").collect();
    assert_eq!(delivered.len(), 2);
    assert!(delivered.iter().all(|d| d["plugins"][0]["outcome"] == "deliver"));
}

#[tokio::test]
async fn redact_and_slack_message_reshape_the_signed_body_in_chain_order() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let redacted = Receiver::start().await;
    let slack = Receiver::start().await;
    let redact = t.admin.upload_plugin("redact", plugin_wasm("redact")).await;
    let message = t.admin.upload_plugin("slack", plugin_wasm("slack_message")).await;
    let w1 = t
        .admin
        .create_webhook_with(&redacted.url, &["report_export_completed"], json!([{"plugin_id": redact["id"], "config": {"pointers": ["/creator/name", "/report_export/download_url", "/nope"]}}]))
        .await;
    t.admin
        .create_webhook_with(
            &slack.url,
            &["report_export_completed"],
            json!([
                {"plugin_id": redact["id"], "config": {"pointers": ["/report_export/download_url"]}},
                {"plugin_id": message["id"], "config": {"template": "Export {/report_export/id} of {/report_export/exportable/type} by {/creator/name}: {{link: {/report_export/download_url}}}", "username": "Weir"}},
            ]),
        )
        .await;
    t.publisher.publish(&export_event("rex_9", ("Form", "frm_1"), "cli_a")).await;

    let got = redacted.wait_for(1, Duration::from_secs(10)).await;
    let body = got[0].json();
    assert_eq!(body["creator"], json!({"id": "cli_a"}));
    assert!(body["report_export"].get("download_url").is_none());
    assert_eq!(body["report_export"]["id"], "rex_9");
    assert!(
        weir::sign::verify(w1["signing_secret"].as_str().unwrap(), &got[0].body, &got[0].header("x-webhook-signature")),
        "signed after the plugin"
    );
    let d = &t.admin.settled(w1["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["request"]["body"].as_str().unwrap().as_bytes(), &got[0].body[..]);
    assert_eq!(d["plugins"][0]["logs"], json!([{"level": "info", "message": "removed 2 of 3 pointers"}]));

    let got = slack.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].json(), json!({"text": "Export rex_9 of Form by Client cli_a: {link: }", "username": "Weir"}));
}

#[tokio::test]
async fn attachments_that_cannot_be_read_drop_the_delivery_instead_of_sending_it_unfiltered() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let redact = t.admin.upload_plugin("redact", plugin_wasm("redact")).await;
    let hook = t
        .admin
        .create_webhook_with(
            &receiver.url,
            &["work_order_created"],
            json!([{"plugin_id": redact["id"], "config": {"pointers": ["/work_order/title"]}}]),
        )
        .await;
    let wh = hook["id"].as_str().unwrap();
    // Damage the attachments record as a bad write or a hand edit might.
    let mut conn = crate::support::weir::raw_conn(&weir.builder);
    let key = weir.store.keys().webhook(&t.org_id, wh);
    let _: () = redis::cmd("HSET").arg(&key).arg("plugins").arg("[{\"plugin_id\": ").query(&mut *conn).unwrap();
    t.publisher.publish(&work_order_event("wo_secret")).await;
    let d = &t.admin.settled(wh, 1).await[0];
    assert_eq!(d["status"], "filtered", "{d}");
    assert_eq!(d["plugins"][0]["outcome"], "error");
    assert!(d["plugins"][0]["error"].as_str().unwrap().contains("cannot be read"), "{d}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), 0, "nothing was sent, least of all the unredacted body");
}

#[tokio::test]
async fn plugin_headers_are_sent_but_never_the_hosts_own() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hostile = t.admin.upload_plugin("hostile", plugin_wasm("hostile")).await;
    let w = t
        .admin
        .create_webhook_with(
            &receiver.url,
            &["work_order_created"],
            json!([{"plugin_id": hostile["id"], "config": {"mode": "headers"}}]),
        )
        .await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].header("x-team"), "ops");
    assert_eq!(got[0].body, &b"{\"rewritten\":true}"[..]);
    let signature = got[0].header("x-webhook-signature");
    assert_ne!(signature, "forged");
    assert!(weir::sign::verify(w["signing_secret"].as_str().unwrap(), &got[0].body, &signature));
}

#[tokio::test]
async fn on_error_decides_between_filtering_and_delivering_the_body_as_it_was() {
    // A panic must not read as a timeout because the machine was busy with other tests: the
    // builder's time limit is the tests' long one (support::plugins::PLUGIN_TIMEOUT).
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hostile = t.admin.upload_plugin("hostile", plugin_wasm("hostile")).await;
    let lenient = t
        .admin
        .create_webhook_with(
            &receiver.url,
            &["work_order_created"],
            json!([{"plugin_id": hostile["id"], "config": {"mode": "panic"}, "on_error": "deliver"}]),
        )
        .await;
    let strict = t
        .admin
        .create_webhook_with(
            "http://127.0.0.1:9/never",
            &["work_order_created"],
            json!([{"plugin_id": hostile["id"], "config": {"mode": "panic"}}]),
        )
        .await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].json()["subject"]["id"], "wo_1", "the body as it was before the failing plugin");
    let d = &t.admin.settled(lenient["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["status"], "succeeded");
    assert_eq!(d["plugins"][0]["outcome"], "error");
    assert!(d["plugins"][0]["error"].as_str().unwrap().starts_with("panicked: boom"), "{d}");
    let d = &t.admin.settled(strict["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["status"], "filtered");
    assert_eq!(d["plugins"][0]["outcome"], "error");
}

#[tokio::test]
async fn a_plugin_is_compiled_once_per_process_and_then_loaded_from_the_cache() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let filter = t.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    t.admin.create_webhook_with(&receiver.url, &["work_order_created"], json!([{"plugin_id": filter["id"]}])).await;
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    receiver.wait_for(3, Duration::from_secs(10)).await;
    let metric = |text: &str, name: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    let text = weir.http().get("/metrics").send().await.text();
    assert_eq!(metric(&text, "weir_plugin_compilations_total "), 1.0, "compiled at upload, reused for every call");
    assert!(metric(&text, "weir_plugin_calls_total ") >= 3.0);
    weir.stop().await;

    // A new process on the same data directory loads the compiled artifact from disk.
    let weir = builder.start().await;
    let t2 = weir.client(&t.org_id, false, true).await;
    t2.publish(&work_order_event("wo_after_restart")).await;
    receiver.wait_for(4, Duration::from_secs(10)).await;
    let text = weir.http().get("/metrics").send().await.text();
    assert_eq!(metric(&text, "weir_plugin_compilations_total "), 0.0);
    assert_eq!(metric(&text, "weir_plugin_cache_loads_total "), 1.0);
}
