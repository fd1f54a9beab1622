//! The plugin API and plugins in the delivery path (contract §5).

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::plugins::plugin_wasm;
use crate::support::receiver::Receiver;
use crate::support::weir::{Weir, export_event, work_order_event};

#[tokio::test]
async fn plugins_are_uploaded_listed_read_and_deleted() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let wasm = plugin_wasm("report_export_filter");
    let resp = t
        .admin
        .http
        .post("/api/v2/plugins?name=export%20filter")
        .bearer(&t.admin.token)
        .raw("application/wasm", wasm.clone())
        .send()
        .await
        .expect(201);
    let plugin = resp.json();
    let id = plugin["id"].as_str().unwrap();
    assert!(id.starts_with("plg_"));
    assert_eq!(resp.header("location").unwrap(), format!("/api/v2/plugins/{id}"));
    assert_eq!(plugin["name"], "export filter");
    assert_eq!(plugin["size"], wasm.len());
    assert_eq!(plugin["sha256"], weir::plugins::sha256_hex(&wasm));
    assert!(plugin["created_at"].is_string());
    assert_eq!(t.admin.get(&format!("/api/v2/plugins/{id}")).await.expect(200).json(), plugin);
    let list = t.admin.get("/api/v2/plugins").await.expect(200).json();
    assert_eq!(list["data"], json!([plugin]));
    assert_eq!(list["next_cursor"], Value::Null);

    let other = weir.tenant(Plan::pro()).await;
    other.admin.get(&format!("/api/v2/plugins/{id}")).await.expect(404);
    other.admin.delete(&format!("/api/v2/plugins/{id}")).await.expect(404);
    assert_eq!(other.admin.get("/api/v2/plugins").await.expect(200).json()["data"], json!([]));
    t.publisher.get("/api/v2/plugins").await.expect(403);
    weir.tenant(Plan::free()).await.admin.get("/api/v2/plugins").await.expect(402);

    t.admin.delete(&format!("/api/v2/plugins/{id}")).await.expect(204);
    t.admin.get(&format!("/api/v2/plugins/{id}")).await.expect(404);
}

#[tokio::test]
async fn uploads_that_are_not_plugins_are_refused_with_the_reason() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let upload = |body: Vec<u8>, content_type: &'static str, name: &'static str| {
        let admin = t.admin.clone();
        async move {
            admin.http.post(&format!("/api/v2/plugins{name}")).bearer(&admin.token).raw(content_type, body).send().await
        }
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not wasm at all".to_vec(), "not a WebAssembly component"),
        (b"\0asm\x01\0\0\0".to_vec(), "core WebAssembly module"),
        (plugin_wasm("wrong_world"), "weir:plugin/filter"),
    ];
    for (body, needle) in cases {
        let resp = upload(body, "application/wasm", "?name=x").await.expect(422);
        assert_eq!(resp.error_fields(), vec!["body"]);
        let message = resp.json()["error"]["details"][0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(needle), "{message}");
    }
    upload(plugin_wasm("redact"), "application/octet-stream", "?name=x").await.expect(415);
    assert_eq!(upload(plugin_wasm("redact"), "application/wasm", "").await.expect(422).error_fields(), vec!["name"]);
    upload(plugin_wasm("redact"), "application/wasm", "?name=x&colour=red").await.expect(422);
    upload(vec![0u8; 32 * 1024 * 1024 + 1], "application/wasm", "?name=x").await.expect(413);
    assert_eq!(t.admin.get("/api/v2/plugins").await.expect(200).json()["data"], json!([]));
}

#[tokio::test]
async fn attachments_take_only_the_organisations_plugins_and_block_deletion() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let other = weir.tenant(Plan::pro()).await;
    let theirs = other.admin.upload_plugin("theirs", plugin_wasm("redact")).await;
    let ours = t.admin.upload_plugin("ours", plugin_wasm("redact")).await;
    let resp = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"url": "http://127.0.0.1:9/", "subscribed_actions": [], "plugins": [{"plugin_id": theirs["id"]}]}),
        )
        .await
        .expect(422);
    assert_eq!(resp.error_fields(), vec!["plugins[0].plugin_id"]);
    let webhook = t
        .admin
        .create_webhook_with(
            "http://127.0.0.1:9/",
            &[],
            json!([{"plugin_id": ours["id"], "config": {"pointers": ["/creator"]}, "on_error": "deliver"}]),
        )
        .await;
    assert_eq!(
        webhook["plugins"],
        json!([{"plugin_id": ours["id"], "config": {"pointers": ["/creator"]}, "on_error": "deliver"}])
    );
    let plugin_path = format!("/api/v2/plugins/{}", ours["id"].as_str().unwrap());
    assert_eq!(t.admin.delete(&plugin_path).await.expect(409).error_code(), "conflict");
    let webhook_path = format!("/api/v2/webhooks/{}", webhook["id"].as_str().unwrap());
    let detached = t.admin.patch(&webhook_path, &json!({"plugins": []})).await.expect(200).json();
    assert_eq!(detached["plugins"], json!([]));
    t.admin.delete(&plugin_path).await.expect(204);
    // A default attachment: empty config, on_error drop.
    let again = t.admin.upload_plugin("again", plugin_wasm("redact")).await;
    let w = t.admin.patch(&webhook_path, &json!({"plugins": [{"plugin_id": again["id"]}]})).await.expect(200).json();
    assert_eq!(w["plugins"], json!([{"plugin_id": again["id"], "config": {}, "on_error": "drop"}]));
    let resp = t
        .admin
        .patch(&webhook_path, &json!({"plugins": [{"plugin_id": again["id"], "config": [1]}]}))
        .await
        .expect(422);
    assert_eq!(resp.error_fields(), vec!["plugins[0].config"]);
}

#[tokio::test]
async fn the_dry_run_reports_verdict_body_logs_budget_and_duration() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let filter = t.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    let id = filter["id"].as_str().unwrap();
    let event = export_event("rex_1", ("Form", "frm_1"), "cli_a");
    let pass =
        t.admin.test_plugin(id, &event, json!({"exportable_types": ["Form"], "exportable_ids": ["frm_1"]})).await;
    assert_eq!(pass["outcome"], "deliver", "{pass}");
    let body: Value = serde_json::from_str(pass["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["report_export"]["exportable"]["id"], "frm_1");
    assert_eq!(body["organisation"]["id"], t.org_id);
    assert!(pass["fuel_used"].as_u64().unwrap() > 0);
    assert!(pass["fuel_used"].as_u64().unwrap() < pass["fuel_budget"].as_u64().unwrap());
    assert!(pass["duration_us"].is_u64());
    let drop = t.admin.test_plugin(id, &event, json!({"creator_ids": ["cli_b"]})).await;
    assert_eq!(drop["outcome"], "drop");
    assert!(drop["reason"].as_str().unwrap().contains("Form frm_1 by cli_a"), "{drop}");
    let other_action = t.admin.test_plugin(id, &work_order_event("wo_1"), json!({"creator_ids": ["cli_b"]})).await;
    assert_eq!(other_action["outcome"], "deliver");
    let bad_config = t.admin.test_plugin(id, &event, json!({"colours": []})).await;
    assert_eq!(bad_config["outcome"], "drop");
    assert!(bad_config["reason"].as_str().unwrap().contains("invalid config"));

    // What the host tells a plugin about the event.
    let hostile = t.admin.upload_plugin("hostile", plugin_wasm("hostile")).await;
    let echo =
        t.admin.test_plugin(hostile["id"].as_str().unwrap(), &work_order_event("wo_7"), json!({"mode": "echo"})).await;
    let body: Value = serde_json::from_str(echo["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body,
        json!({"action": "work_order_created", "org": t.org_id, "creator": "usr_7", "subject": "WorkOrder/wo_7", "title": "Replace pump seal"})
    );
    let logged =
        t.admin.test_plugin(hostile["id"].as_str().unwrap(), &work_order_event("wo_7"), json!({"mode": "print"})).await;
    assert_eq!(
        logged["logs"],
        json!([{"level": "info", "message": "hello from stdout"}, {"level": "warn", "message": "hello from stderr"}])
    );

    // Validation of the dry-run request.
    let resp =
        t.admin.post(&format!("/api/v2/plugins/{id}/test"), &json!({"event": {"action": "nope"}})).await.expect(422);
    assert!(resp.error_fields().contains(&"event.action".to_string()));
    t.admin.post(&format!("/api/v2/plugins/{id}/test"), &json!({"config": {}})).await.expect(422);
    t.admin.post("/api/v2/plugins/plg_00000000000000000000000000/test", &json!({"event": event})).await.expect(404);
}

#[tokio::test]
async fn the_dry_run_takes_a_delivered_envelope_or_a_real_delivery_and_shows_no_signature() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let other = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hostile = t.admin.upload_plugin("hostile", plugin_wasm("hostile")).await;
    let id = hostile["id"].as_str().unwrap();
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_9")).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;

    // The envelope exactly as the subscriber received it, `organisation` included.
    let delivered: Value = got[0].json();
    assert_eq!(delivered["organisation"]["id"], t.org_id);
    let run = |event: Value| {
        let admin = t.admin.clone();
        let path = format!("/api/v2/plugins/{id}/test");
        async move { admin.post(&path, &json!({"event": event, "config": {"mode": "echo"}})).await }
    };
    let echo = run(delivered.clone()).await.expect(200).json();
    assert_eq!(echo["outcome"], "deliver", "{echo}");
    let body: Value = serde_json::from_str(echo["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["subject"], "WorkOrder/wo_9");
    assert_eq!(body["org"], t.org_id);
    let identity = t.admin.test_plugin(id, &delivered, json!({})).await;
    let unchanged: Value = serde_json::from_str(identity["body"].as_str().unwrap()).unwrap();
    assert_eq!(unchanged, delivered, "the plugin sees the envelope as it was delivered");
    let mut odd = delivered.clone();
    odd["organisation"] = json!("org_x");
    assert_eq!(run(odd).await.expect(422).error_fields(), vec!["event.organisation"]);

    // A real delivery, by id: the plugin reruns on its event as published.
    let delivery = t.admin.deliveries_of(hook["id"].as_str().unwrap()).await[0]["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v2/plugins/{id}/test");
    let rerun = t.admin.post(&path, &json!({"delivery_id": delivery, "config": {"mode": "echo"}})).await.expect(200);
    let body: Value = serde_json::from_str(rerun.json()["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["subject"], "WorkOrder/wo_9");
    // Another organisation's delivery, a malformed id, both or neither: 422 on the field.
    let theirs = other.admin.upload_plugin("hostile", plugin_wasm("hostile")).await;
    let their_path = format!("/api/v2/plugins/{}/test", theirs["id"].as_str().unwrap());
    let resp = other.admin.post(&their_path, &json!({"delivery_id": delivery})).await.expect(422);
    assert_eq!(resp.error_fields(), vec!["delivery_id"]);
    let resp = t.admin.post(&path, &json!({"delivery_id": "dlv_../../x"})).await.expect(422);
    assert_eq!(resp.error_fields(), vec!["delivery_id"]);
    let both = json!({"delivery_id": delivery, "event": work_order_event("wo_1")});
    assert_eq!(t.admin.post(&path, &both).await.expect(422).error_fields(), vec!["event"]);
    assert_eq!(t.admin.post(&path, &json!({})).await.expect(422).error_fields(), vec!["event"]);

    // A plugin that sets the host's own headers: the dry run shows only what would be sent.
    let headers = t.admin.test_plugin(id, &work_order_event("wo_1"), json!({"mode": "headers"})).await;
    assert_eq!(headers["headers"], json!([{"name": "x-team", "value": "ops"}]), "{headers}");
    assert!(!headers.to_string().to_ascii_lowercase().contains("x-webhook-signature"), "{headers}");
}

#[tokio::test]
async fn a_crafted_plugin_id_is_refused_before_it_reaches_a_key() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = t.admin.create_webhook("http://127.0.0.1:9/", &["work_order_created"]).await;
    // Ids that would name keys of other types (the webhook's own hash, its index, …).
    let wh = hook["id"].as_str().unwrap();
    let crafted =
        [format!("x:wh:{wh}"), format!("../wh/{wh}"), "plg_".to_owned(), "plg_AAAA".to_owned(), "p".repeat(5000)];
    for plugin_id in crafted {
        let body =
            json!({"url": "http://127.0.0.1:9/", "subscribed_actions": [], "plugins": [{"plugin_id": plugin_id}]});
        let resp = t.admin.post("/api/v2/webhooks", &body).await.expect(422);
        assert_eq!(resp.error_fields(), vec!["plugins[0].plugin_id"]);
        assert!(resp.text().len() < 1000, "the id is not echoed back");
        let resp =
            t.admin.patch(&format!("/api/v2/webhooks/{wh}"), &json!({"plugins": [{"plugin_id": plugin_id}]})).await;
        assert_eq!(resp.status, 422, "{}", resp.text());
    }
}

#[tokio::test]
async fn uploads_under_one_name_are_versions_listed_newest_first_and_rolled_back_by_id() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let v1 = t.admin.upload_plugin("shaper", plugin_wasm("redact")).await;
    let v2 = t.admin.upload_plugin("shaper", plugin_wasm("slack_message")).await;
    let unrelated = t.admin.upload_plugin("another", plugin_wasm("redact")).await;
    assert_eq!(
        (v1["version"].as_u64(), v2["version"].as_u64(), unrelated["version"].as_u64()),
        (Some(1), Some(2), Some(1))
    );
    assert_ne!(v1["id"], v2["id"]);

    let versions = t.admin.get("/api/v2/plugins?name=shaper").await.expect(200).json();
    assert_eq!(versions, json!({"data": [v2, v1], "next_cursor": null}));
    let first = t.admin.get("/api/v2/plugins?name=shaper&limit=1").await.expect(200).json();
    assert_eq!(first["data"], json!([v2]));
    assert_eq!(first["next_cursor"], v2["id"]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = t.admin.get(&format!("/api/v2/plugins?name=shaper&limit=1&cursor={cursor}")).await.expect(200).json();
    assert_eq!(second, json!({"data": [v1], "next_cursor": null}));
    assert_eq!(t.admin.get("/api/v2/plugins?name=nothing").await.expect(200).json()["data"], json!([]));
    let other = weir.tenant(Plan::pro()).await;
    assert_eq!(other.admin.get("/api/v2/plugins?name=shaper").await.expect(200).json()["data"], json!([]));

    // Attach the newest version, then roll back by attaching the older id.
    let webhook = t
        .admin
        .create_webhook_with(
            &receiver.url,
            &["work_order_created"],
            json!([{"plugin_id": v2["id"], "config": {"template": "v2 {/subject/id}"}}]),
        )
        .await;
    t.publisher.publish(&work_order_event("wo_v2")).await;
    assert_eq!(receiver.wait_for(1, Duration::from_secs(10)).await[0].json(), json!({"text": "v2 wo_v2"}));
    let path = format!("/api/v2/webhooks/{}", webhook["id"].as_str().unwrap());
    let rollback = json!({"plugins": [{"plugin_id": v1["id"], "config": {"pointers": ["/creator"]}}]});
    t.admin.patch(&path, &rollback).await.expect(200);
    t.publisher.publish(&work_order_event("wo_v1")).await;
    let body = receiver.wait_for(2, Duration::from_secs(10)).await[1].json();
    assert_eq!(body["subject"]["id"], "wo_v1");
    assert!(body.get("creator").is_none(), "redacted by version 1: {body}");

    // The attached version cannot be deleted; the unattached one can, and its number is
    // never given again.
    let v1_path = format!("/api/v2/plugins/{}", v1["id"].as_str().unwrap());
    assert_eq!(t.admin.delete(&v1_path).await.expect(409).error_code(), "conflict");
    t.admin.delete(&format!("/api/v2/plugins/{}", v2["id"].as_str().unwrap())).await.expect(204);
    let v3 = t.admin.upload_plugin("shaper", plugin_wasm("redact")).await;
    assert_eq!(v3["version"], 3);
    let ids: Vec<Value> = t.admin.get("/api/v2/plugins?name=shaper").await.expect(200).json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].clone())
        .collect();
    assert_eq!(ids, [v3["id"].clone(), v1["id"].clone()]);
}
