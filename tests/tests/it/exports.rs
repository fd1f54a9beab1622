//! Report exports: created, built from the newest snapshot, downloaded through signed
//! links, announced by `report_export_completed` (contract §2; service document §2, §6).

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::example_receiver::ExampleReceiver;
use crate::support::http::{Http, Resp};
use crate::support::plugins::plugin_wasm;
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, Weir, WeirBuilder};
use crate::support::{eventually, free_port, temp_dir};

pub(crate) fn form_event(form: &str, title: &str, at: &str) -> Value {
    json!({
        "action": "form_completed",
        "created_at": at,
        "creator": {"id": "usr_1", "name": "Inspector Gadget"},
        "subject": {"type": "Form", "id": form},
        "form": {"id": form, "title": title, "answers": [{"question": "Pressure OK?", "answer": "yes"}], "score": 97},
    })
}

pub(crate) async fn export(api: &Api, kind: &str, id: &str, format: &str) -> Value {
    let resp = api
        .post("/api/v2/report_exports", &json!({"exportable": {"type": kind, "id": id}, "format": format}))
        .await
        .expect(202);
    let body = resp.json();
    assert_eq!(resp.header("location").unwrap(), format!("/api/v2/report_exports/{}", body["id"].as_str().unwrap()));
    body
}

pub(crate) async fn completed(api: &Api, id: &str) -> Value {
    eventually("export completed", Duration::from_secs(20), async || {
        let e = api.get(&format!("/api/v2/report_exports/{id}")).await.expect(200).json();
        (e["status"] == "completed" || e["status"] == "failed").then_some(e)
    })
    .await
}

/// GETs a download URL (no token), relative to Weir.
pub(crate) async fn download(weir: &Weir, url: &str) -> Resp {
    let path = url.split_once("/exports/").map(|(_, rest)| format!("/exports/{rest}")).unwrap();
    weir.http().get(&path).send().await
}

fn pdf_text(bytes: &[u8]) -> String {
    let dir = temp_dir("pdf");
    let file = dir.join("export.pdf");
    std::fs::write(&file, bytes).unwrap();
    let out = Command::new("pdftotext")
        .arg(&file)
        .arg("-")
        .output()
        .expect("pdftotext (scripts/setup.sh --tests installs it)");
    assert!(out.status.success(), "not a readable PDF: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn an_export_is_built_from_the_newest_snapshot_and_downloaded_as_a_real_pdf() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    // The newest snapshot wins, whatever the order events arrive in.
    t.publisher.publish(&form_event("frm_1", "Boiler check (final)", "2026-11-22T10:00:00.000Z")).await;
    t.publisher.publish(&form_event("frm_1", "Boiler check (draft)", "2026-11-22T09:00:00.000Z")).await;
    // Any client of the organisation may ask, whatever its role.
    let member = weir.client(&t.org_id, false, false).await;
    let queued = export(&member, "Form", "frm_1", "pdf").await;
    assert_eq!(queued["status"], "queued");
    assert_eq!(queued["format"], "pdf");
    assert_eq!(queued["exportable"], json!({"type": "Form", "id": "frm_1"}));
    assert_eq!(queued["download_url"], Value::Null);
    assert!(queued["id"].as_str().unwrap().starts_with("rex_"));
    let done = completed(&member, queued["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(done["completed_at"].is_string());
    let url = done["download_url"].as_str().unwrap();
    assert!(url.starts_with(&weir.base), "{url}");

    let file = download(&weir, url).await.expect(200);
    assert_eq!(file.header("content-type").as_deref(), Some("application/pdf"));
    assert_eq!(
        file.header("content-disposition").unwrap(),
        format!("attachment; filename=\"{}.pdf\"", done["id"].as_str().unwrap())
    );
    assert!(file.body.starts_with(b"%PDF-"));
    let text = pdf_text(&file.body);
    assert!(text.contains("Boiler check (final)"), "{text}");
    assert!(!text.contains("draft"), "{text}");
    assert!(text.contains("Pressure OK?") && text.contains("Form frm_1"), "{text}");
}

#[tokio::test]
async fn csv_and_json_exports() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::free()).await;
    t.publisher.publish(&form_event("frm_2", "Crane, \"north\"", "2026-11-22T10:00:00.000Z")).await;
    let csv = completed(&t.admin, export(&t.admin, "Form", "frm_2", "csv").await["id"].as_str().unwrap()).await;
    let file = download(&weir, csv["download_url"].as_str().unwrap()).await.expect(200);
    assert_eq!(file.header("content-type").as_deref(), Some("text/csv; charset=utf-8"));
    let text = file.text();
    assert!(text.starts_with("field,value\r\n"), "{text}");
    assert!(text.contains("/title,\"Crane, \"\"north\"\"\""), "{text}");
    assert!(text.contains("/answers/0/answer,yes"), "{text}");
    let json_export =
        completed(&t.admin, export(&t.admin, "Form", "frm_2", "json").await["id"].as_str().unwrap()).await;
    let body = download(&weir, json_export["download_url"].as_str().unwrap()).await.expect(200).json();
    assert_eq!(body["record"]["score"], 97);
    assert_eq!(body["exportable"], json!({"type": "Form", "id": "frm_2"}));
}

#[tokio::test]
async fn export_requests_are_validated() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_1", "x", "2026-11-22T10:00:00.000Z")).await;
    let cases = [
        (json!({"exportable": {"type": "Form", "id": "frm_never"}, "format": "pdf"}), vec!["exportable"]),
        (json!({"exportable": {"type": "Form", "id": "frm_1"}, "format": "docx"}), vec!["format"]),
        (json!({"exportable": {"type": "Spaceship", "id": "x"}, "format": "pdf"}), vec!["exportable.type"]),
        (json!({"exportable": {"type": "Form"}, "format": "pdf"}), vec!["exportable.id"]),
        (json!({"exportable": "Form", "format": "pdf"}), vec!["exportable"]),
        (json!({"exportable": {"type": "Form", "id": "frm_1", "x": 1}, "format": "pdf"}), vec!["exportable.x"]),
        (json!({"format": "pdf"}), vec!["exportable"]),
    ];
    for (body, fields) in cases {
        let resp = t.admin.post("/api/v2/report_exports", &body).await.expect(422);
        assert_eq!(resp.error_fields(), fields, "{body}");
    }
    // Another organisation never saw frm_1, and cannot read this one's exports.
    let other = weir.tenant(Plan::pro()).await;
    other
        .admin
        .post("/api/v2/report_exports", &json!({"exportable": {"type": "Form", "id": "frm_1"}, "format": "pdf"}))
        .await
        .expect(422);
    let mine = export(&t.admin, "Form", "frm_1", "json").await;
    other.admin.get(&format!("/api/v2/report_exports/{}", mine["id"].as_str().unwrap())).await.expect(404);
    weir.http().post("/api/v2/report_exports").json(&json!({})).send().await.expect(401);
}

#[tokio::test]
async fn a_deleted_record_cannot_be_exported() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_gone", "x", "2026-11-22T10:00:00.000Z")).await;
    let mut deleted = form_event("frm_gone", "x", "2026-11-22T11:00:00.000Z");
    deleted["action"] = json!("form_deleted");
    deleted["subject"]["deleted"] = json!(true);
    t.publisher.publish(&deleted).await;
    t.admin
        .post("/api/v2/report_exports", &json!({"exportable": {"type": "Form", "id": "frm_gone"}, "format": "pdf"}))
        .await
        .expect(422);
}

#[tokio::test]
async fn download_links_are_signed_and_short_lived() {
    let weir = WeirBuilder::shared().env("WEIR_EXPORT_URL_TTL", "2s").start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_1", "x", "2026-11-22T10:00:00.000Z")).await;
    let done = completed(&t.admin, export(&t.admin, "Form", "frm_1", "json").await["id"].as_str().unwrap()).await;
    let url = done["download_url"].as_str().unwrap().to_owned();
    download(&weir, &url).await.expect(200);
    let tampered = [
        url.replace("sig=", "sig=0"),
        url.replace("expires=", "expires=9"),
        url.replace(done["id"].as_str().unwrap(), "rex_00000000000000000000000000"),
        url.split("&sig=").next().unwrap().to_owned(),
    ];
    for bad in tampered {
        let resp = download(&weir, &bad).await.expect(403);
        assert_eq!(resp.error_code(), "forbidden");
    }
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let resp = download(&weir, &url).await.expect(410);
    assert_eq!(resp.json()["error"]["code"], "gone");
}

#[tokio::test]
async fn an_export_queued_by_a_process_that_died_is_built_by_another() {
    let builder = WeirBuilder::shared();
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_1", "x", "2026-11-22T10:00:00.000Z")).await;
    let queued = export(&t.admin, "Form", "frm_1", "pdf").await;
    let token = t.admin.token.clone();
    api.stop().await;
    let worker = builder.start().await;
    let id = queued["id"].as_str().unwrap();
    let api2 = Api { http: worker.http(), token, creds: t.admin.creds.clone() };
    let done = completed(&api2, id).await;
    assert_eq!(done["status"], "completed");
}

#[tokio::test]
async fn completion_emits_report_export_completed_with_the_requesting_client_as_creator() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["report_export_completed"]).await;
    t.publisher.publish(&form_event("frm_1", "x", "2026-11-22T10:00:00.000Z")).await;
    let done = completed(&t.admin, export(&t.admin, "Form", "frm_1", "pdf").await["id"].as_str().unwrap()).await;
    let got = receiver.wait_for(1, Duration::from_secs(20)).await;
    let body = got[0].json();
    assert_eq!(body["action"], "report_export_completed");
    assert_eq!(body["creator"], json!({"id": t.admin.creds.client_id, "name": "test client"}));
    assert_eq!(body["organisation"], json!({"id": t.org_id}));
    let rex = &body["report_export"];
    assert_eq!(rex["id"], done["id"]);
    assert_eq!(rex["status"], "completed");
    assert_eq!(rex["format"], "pdf");
    assert_eq!(rex["exportable"], json!({"type": "Form", "id": "frm_1"}));
    assert_eq!(rex["created_at"], done["created_at"]);
    assert_eq!(rex["completed_at"], done["completed_at"]);
    assert_eq!(rex["download_url"], done["download_url"]);
    assert_eq!(body["subject"], json!({"type": "ReportExport", "id": done["id"]}));
    assert_eq!(got[0].header("x-webhook-timestamp"), done["completed_at"].as_str().unwrap());
}

/// The scenario the service exists for (issue: report exports, item 7).
#[tokio::test]
async fn a_subscriber_narrowed_to_one_form_and_one_creator_gets_only_that_export_and_downloads_it() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let alice = weir.client(&t.org_id, false, false).await;
    let bob = weir.client(&t.org_id, false, false).await;
    for (form, at) in [("frm_audit", "2026-11-22T10:00:00.000Z"), ("frm_other", "2026-11-22T10:00:01.000Z")] {
        t.publisher.publish(&form_event(form, &format!("Form {form}"), at)).await;
    }
    let filter = t.admin.upload_plugin("exports-of-interest", plugin_wasm("report_export_filter")).await;
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/hook");
    let config =
        json!({"exportable_types": ["Form"], "exportable_ids": ["frm_audit"], "creator_ids": [alice.creds.client_id]});
    let webhook = t
        .admin
        .create_webhook_with(&url, &["report_export_completed"], json!([{"plugin_id": filter["id"], "config": config}]))
        .await;
    let downloads = temp_dir("downloads");
    let mut receiver =
        ExampleReceiver::start(webhook["signing_secret"].as_str().unwrap(), port, Some(&downloads)).await;

    let wanted = export(&alice, "Form", "frm_audit", "pdf").await;
    for (who, form) in [(&bob, "frm_audit"), (&alice, "frm_other"), (&bob, "frm_other")] {
        export(who, "Form", form, "pdf").await;
    }
    let line = receiver.next(Duration::from_secs(30)).await.expect("the matching export was delivered");
    assert_eq!(line["event"]["report_export"]["id"], wanted["id"]);
    let downloaded = receiver.next(Duration::from_secs(10)).await.expect("and downloaded");
    let path = downloaded["downloaded"].as_str().unwrap();
    let bytes = std::fs::read(path).unwrap();
    assert!(pdf_text(&bytes).contains("Form frm_audit"));

    let deliveries = t.admin.settled(webhook["id"].as_str().unwrap(), 4).await;
    let statuses: Vec<&str> = deliveries.iter().map(|d| d["status"].as_str().unwrap()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == "filtered").count(), 3, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == "succeeded").count(), 1);
    assert!(receiver.next(Duration::from_millis(300)).await.is_none(), "nothing else reached the subscriber");
    let _ = Http::new(&weir.base);
}

#[tokio::test]
async fn an_export_whose_record_vanished_before_building_fails_with_the_reason() {
    let builder = WeirBuilder::shared();
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::pro()).await;
    t.publisher.publish(&form_event("frm_short", "x", "2026-11-22T10:00:00.000Z")).await;
    let queued = export(&t.admin, "Form", "frm_short", "pdf").await;
    let mut deleted = form_event("frm_short", "x", "2026-11-22T11:00:00.000Z");
    deleted["action"] = json!("form_deleted");
    deleted["subject"]["deleted"] = json!(true);
    t.publisher.publish(&deleted).await;
    let _worker = builder.start().await;
    let done = completed(&t.admin, queued["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    assert!(done["error"].as_str().unwrap().contains("no longer has a snapshot of Form frm_short"), "{done}");
    assert_eq!(done["download_url"], Value::Null);
}
