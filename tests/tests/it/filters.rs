//! Filters (contract §8): a webhook's CEL `filter` decides which subscribed events it
//! receives — on the API (shown on read, `null` by default, 422 naming the position), at
//! publishing (no delivery for what it does not select, counted per webhook in
//! `/metrics`), at replays, on `POST /api/v2/filters/test`, and in agreement with the
//! `report-export-filter` plugin on generated events.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::plugins::plugin_wasm;
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, Weir, export_event};

/// The service document's case, in one line.
const DOCUMENTED: &str = r#"report_export.exportable.type == "Form" && creator.id in ["usr_1", "usr_2"]"#;

/// A webhook for report exports with the service document's filter.
async fn with_documented_filter(admin: &Api, url: &str) -> Value {
    let body = json!({"url": url, "subscribed_actions": ["report_export_completed"], "filter": DOCUMENTED});
    admin.post("/api/v2/webhooks", &body).await.expect(201).json()
}

#[tokio::test]
async fn a_filter_selects_what_its_webhook_receives_and_nothing_is_kept_of_the_rest() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = with_documented_filter(&t.admin, &receiver.url).await;
    assert_eq!(hook["filter"], DOCUMENTED);
    let id = hook["id"].as_str().unwrap().to_owned();
    assert_eq!(t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json()["filter"], DOCUMENTED);

    let selected = t.publisher.publish(&export_event("rex_1", ("Form", "frm_1"), "usr_1")).await;
    let other_type = t.publisher.publish(&export_event("rex_2", ("Asset", "ast_1"), "usr_1")).await;
    let other_creator = t.publisher.publish(&export_event("rex_3", ("Form", "frm_1"), "usr_9")).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got[0].json()["id"], selected);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.count(), 1, "only the selected event is delivered");
    // The others have no delivery at all: as an unsubscribed action.
    for event in [&other_type, &other_creator] {
        let view = t.admin.get(&format!("/api/v2/events/{event}")).await.expect(200).json();
        assert_eq!(view["deliveries"], json!([]), "{view}");
    }
    let listed = t.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={id}")).await.expect(200).json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    let series = |result: &str| format!("weir_filter_events_total{{webhook_id=\"{id}\",result=\"{result}\"}}");
    assert_eq!(t.admin.metric(&series("selected")).await.unwrap_or(0.0), 1.0);
    assert_eq!(t.admin.metric(&series("not_selected")).await.unwrap_or(0.0), 2.0);

    // An evaluation error (a field some events lack) selects nothing and is counted.
    let patched = t
        .admin
        .patch(&format!("/api/v2/webhooks/{id}"), &json!({"filter": "report_export.missing == 1"}))
        .await
        .expect(200)
        .json();
    assert_eq!(patched["filter"], "report_export.missing == 1");
    t.publisher.publish(&export_event("rex_4", ("Form", "frm_1"), "usr_1")).await;
    assert_eq!(t.admin.metric(&series("error")).await.unwrap_or(0.0), 1.0);
    // Removed: every subscribed event again.
    let cleared = t.admin.patch(&format!("/api/v2/webhooks/{id}"), &json!({"filter": null})).await.expect(200).json();
    assert_eq!(cleared["filter"], Value::Null);
    t.publisher.publish(&export_event("rex_5", ("Asset", "ast_1"), "usr_9")).await;
    receiver.wait_for(2, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), 2);
    weir.stop().await;
}

#[tokio::test]
async fn a_filter_that_does_not_parse_or_check_is_422_naming_the_position() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let base = json!({"url": "http://127.0.0.1:9/hook", "subscribed_actions": ["report_export_completed"]});
    let with = |filter: Value| {
        let mut body = base.clone();
        body["filter"] = filter;
        body
    };
    for (filter, says) in [
        (json!("creator.id =="), "at line 1, column"),
        (json!("action == \"x\" &&\n  nobody.id == 1"), "at line 2, column 3: unknown name `nobody`"),
        (json!("creator.id.lowerAscii() == \"a\""), "unknown function `lowerAscii`"),
        (
            json!("report_export.exportable.type == \"Form\" && report_export.tags.exists(t, t == creator.name)"),
            "may take too long",
        ),
        (json!("x".repeat(4097)), "longer than 4096 bytes"),
        (json!(17), "must be a CEL expression"),
    ] {
        let resp = t.admin.post("/api/v2/webhooks", &with(filter.clone())).await.expect(422);
        assert_eq!(resp.error_fields(), ["filter"], "{filter}");
        let message = resp.json()["error"]["details"][0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(says), "{filter}: {message}");
    }
    // Nothing was created; `null` is no filter.
    let listed = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 0);
    let created = t.admin.post("/api/v2/webhooks", &with(Value::Null)).await.expect(201).json();
    assert_eq!(created["filter"], Value::Null);
    weir.stop().await;
}

#[tokio::test]
async fn filters_are_tried_on_an_event_or_a_published_one() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let envelope = json!({"id": "evt_1", "action": "report_export_completed", "creator": {"id": "usr_2"},
        "report_export": {"exportable": {"type": "Form", "id": "frm_1"}}});
    let tried = t.admin.post("/api/v2/filters/test", &json!({"filter": DOCUMENTED, "event": envelope})).await;
    assert_eq!(tried.expect(200).json(), json!({"match": true, "error": null}));
    let tried =
        t.admin.post("/api/v2/filters/test", &json!({"filter": "creator.id == \"usr_1\"", "event": envelope})).await;
    assert_eq!(tried.expect(200).json(), json!({"match": false, "error": null}));
    let tried =
        t.admin.post("/api/v2/filters/test", &json!({"filter": "subject.id == \"x\"", "event": envelope})).await;
    let tried = tried.expect(200).json();
    assert_eq!(tried["match"], false);
    assert!(tried["error"].as_str().is_some_and(|e| e.contains("subject")), "{tried}");
    // A published event, by id.
    let published = t.publisher.publish(&export_event("rex_1", ("Form", "frm_1"), "usr_1")).await;
    let tried = t.admin.post("/api/v2/filters/test", &json!({"filter": DOCUMENTED, "event_id": published})).await;
    assert_eq!(tried.expect(200).json(), json!({"match": true, "error": null}));
    t.admin
        .post("/api/v2/filters/test", &json!({"filter": DOCUMENTED, "event_id": "evt_01M8ZZZZZZZZZZZZZZZZZZZZZZ"}))
        .await
        .expect(404);
    let bad = t.admin.post("/api/v2/filters/test", &json!({"filter": "creator.id ==", "event": envelope})).await;
    assert_eq!(bad.expect(422).error_fields(), ["filter"]);
    let neither = t.admin.post("/api/v2/filters/test", &json!({"filter": DOCUMENTED})).await;
    assert_eq!(neither.expect(422).error_fields(), ["event"]);
    // Admins only, as for webhooks.
    t.publisher.post("/api/v2/filters/test", &json!({"filter": DOCUMENTED, "event": envelope})).await.expect(403);
    weir.stop().await;
}

#[tokio::test]
async fn a_replay_applies_the_filter_as_it_is_then() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let since = weir::time::format_millis(weir::time::now_millis() - 2000);
    for (rex, exportable, creator) in [
        ("rex_1", ("Form", "frm_1"), "usr_1"),
        ("rex_2", ("Asset", "ast_1"), "usr_1"),
        ("rex_3", ("Form", "frm_2"), "usr_2"),
    ] {
        t.publisher.publish(&export_event(rex, exportable, creator)).await;
    }
    let receiver = Receiver::start().await;
    let hook = with_documented_filter(&t.admin, &receiver.url).await;
    let id = hook["id"].as_str().unwrap();
    let replay = t.admin.post(&format!("/api/v2/webhooks/{id}/replay"), &json!({"since": since})).await;
    assert_eq!(replay.expect(202).json()["count"], 2, "the two Forms");
    let got = receiver.wait_for(2, Duration::from_secs(10)).await;
    let mut exports: Vec<String> =
        got.iter().map(|r| r.json()["report_export"]["id"].as_str().unwrap().to_owned()).collect();
    exports.sort();
    assert_eq!(exports, ["rex_1", "rex_3"]);
    weir.stop().await;
}

/// The expression and the Rust `report-export-filter` plugin agree on 300 generated events.
#[test]
fn the_expression_and_the_report_export_filter_plugin_agree() {
    let types = ["Form", "Asset", "Checklist"];
    let (ids, creators) = (["frm_1", "frm_2", "ast_1"], ["usr_1", "usr_2", "usr_3", "cli_a"]);
    let config = json!({"exportable_types": ["Form", "Checklist"], "creator_ids": ["usr_1", "cli_a"]});
    let filter = weir::filters::Filter::compile(
        r#"report_export.exportable.type in ["Form", "Checklist"] && creator.id in ["usr_1", "cli_a"]"#,
    )
    .unwrap();
    let dir = std::env::temp_dir().join(format!("weir-filter-agreement-{}", std::process::id()));
    let runtime = weir::plugins::Runtime::new(crate::support::plugins::plugin_limits(), dir.clone()).expect("runtime");
    let sha256 = runtime.validate_blocking(&plugin_wasm("report_export_filter")).expect("the plugin");
    let (mut selected, mut refused) = (0, 0);
    for i in 0..300usize {
        // A deterministic spread of every combination (and a few events missing a field).
        let mut event = export_event(&format!("rex_{i}"), (types[i % 3], ids[(i / 3) % 3]), creators[(i / 9) % 4]);
        event["id"] = json!(format!("evt_{i}"));
        event["created_at"] = json!("2026-11-26T10:00:00.000Z");
        event["organisation"] = json!({"id": "org_1"});
        let envelope: Arc<str> = Arc::from(event.to_string().as_str());
        let meta = Arc::new(weir::plugins::EventMeta::from_envelope(&envelope).expect("meta"));
        let report = weir::plugins::call_blocking(&runtime, &sha256, None, meta, envelope.clone(), &config.to_string());
        let plugin = matches!(report.result, Ok(weir::plugins::Verdict::Deliver { .. }));
        let expression =
            filter.evaluate(&weir::filters::Envelope::parse(&envelope).unwrap()) == weir::filters::Selection::Selected;
        assert_eq!(plugin, expression, "event {i}: {event}");
        if expression { selected += 1 } else { refused += 1 }
    }
    assert!(selected > 50 && refused > 50, "{selected} selected, {refused} not");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_settings_form_sets_a_filter_and_shows_its_error_at_its_position() {
    use crate::settings::{PASSWORD, http_sign_in, user};
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "filter@example.com", true).await;
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "filter@example.com", PASSWORD).await;
    let (cookie, csrf) = session.unwrap();
    let new = http.get("/settings/webhooks/new").header("cookie", &cookie).send().await.text();
    assert!(
        new.contains(r#"name="filter""#) && new.contains("report_export.exportable.type"),
        "a field with an example"
    );
    let post = |filter: &'static str| {
        let (http, cookie, csrf) = (http.clone(), cookie.clone(), csrf.clone());
        async move {
            let form = [
                ("_csrf", csrf.as_str()),
                ("url", "http://127.0.0.1:9/x"),
                ("subscribed_actions", "report_export_completed"),
                ("filter", filter),
            ];
            http.post("/settings/webhooks").header("cookie", &cookie).form(&form).send().await
        }
    };
    let refused = post("creator.id == \"a\" &&\n  nobody == 1").await;
    assert_eq!(refused.status, 422);
    let page = refused.text();
    assert!(page.contains("at line 2, column 3") && page.contains("nobody"), "{page}");
    assert!(page.contains("nobody == 1"), "what was typed is kept");
    assert_eq!(post(DOCUMENTED).await.status, 303);
    let hooks = weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap();
    assert_eq!(hooks[0].filter.as_deref(), Some(DOCUMENTED));
    let shown = http.get(&format!("/settings/webhooks/{}", hooks[0].id)).header("cookie", &cookie).send().await.text();
    assert!(shown.contains("report_export.exportable.type == &quot;Form&quot;"), "{shown}");
    weir.stop().await;
}
