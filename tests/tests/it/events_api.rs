//! The events API (contract §2): `POST /api/v2/events` validates what it is sent, and
//! `GET /api/v2/events/{id}` shows an event and the delivery to each webhook.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, work_order_event};

#[tokio::test]
async fn an_event_shows_its_envelope_and_the_delivery_to_each_webhook() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let ok = Receiver::start().await;
    let failing = Receiver::replying(Reply::Status(500)).await;
    let a = t.admin.create_webhook(&ok.url, &["work_order_created"]).await;
    let b = t.admin.create_webhook(&failing.url, &["work_order_created"]).await;
    let unsubscribed = t.admin.create_webhook(&ok.url, &["defect_created"]).await;
    let mut event = work_order_event("wo_lookup");
    event["created_at"] = json!("2026-11-22T11:00:38.123Z");
    let id = t.publisher.publish(&event).await;
    let delivered = ok.wait_for(1, Duration::from_secs(10)).await.remove(0);

    let found = eventually("both attempted", Duration::from_secs(10), async || {
        let e = t.admin.get(&format!("/api/v2/events/{id}")).await.expect(200).json();
        let statuses: BTreeMap<String, String> = e["deliveries"]
            .as_array()?
            .iter()
            .map(|d| (d["webhook_id"].as_str().unwrap().to_owned(), d["status"].as_str().unwrap().to_owned()))
            .collect();
        let a_done = statuses.get(a["id"].as_str()?).is_some_and(|s| s == "succeeded");
        (a_done && failing.count() > 0).then_some(e)
    })
    .await;
    assert_eq!(found["id"], id);
    assert_eq!(found["action"], "work_order_created");
    assert_eq!(found["created_at"], "2026-11-22T11:00:38.123Z");
    assert_eq!(found["envelope"], delivered.json(), "the envelope as delivered");
    let deliveries = found["deliveries"].as_array().unwrap();
    assert_eq!(deliveries.len(), 2, "one per subscribed webhook: {deliveries:?}");
    let to = |w: &Value| deliveries.iter().find(|d| d["webhook_id"] == w["id"]).cloned();
    assert_eq!(to(&a).unwrap()["id"], delivered.header("x-webhook-delivery"));
    assert_eq!(to(&b).unwrap()["status"], "pending", "retrying");
    assert!(to(&unsubscribed).is_none());
    // Each listed delivery is the one the deliveries API shows.
    for d in deliveries {
        let record = t.admin.get(&format!("/api/v2/webhook_deliveries/{}", d["id"].as_str().unwrap())).await;
        assert_eq!(record.expect(200).json()["event_id"], id);
    }

    // An event no webhook wanted has no deliveries.
    let lonely = t
        .publisher
        .publish(&json!({"action": "tool_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Tool", "id": "t1"}, "tool": {}}))
        .await;
    let e = t.admin.get(&format!("/api/v2/events/{lonely}")).await.expect(200).json();
    assert_eq!(e["deliveries"], json!([]));
}

#[tokio::test]
async fn event_lookup_keeps_to_the_organisation_and_the_rules() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let id = t.publisher.publish(&work_order_event("wo_private")).await;
    t.admin.get(&format!("/api/v2/events/{id}")).await.expect(200);
    let other = weir.tenant(Plan::pro()).await;
    assert_eq!(other.admin.get(&format!("/api/v2/events/{id}")).await.expect(404).error_code(), "not_found");
    for missing in ["evt_nope", "not-an-id", "evt_%2e%2e"] {
        t.admin.get(&format!("/api/v2/events/{missing}")).await.expect(404);
    }
    t.publisher.get(&format!("/api/v2/events/{id}")).await.expect(403);
    let free = weir.tenant(Plan::free()).await;
    free.admin.get(&format!("/api/v2/events/{id}")).await.expect(402);
}

#[tokio::test]
async fn events_are_validated() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let base = work_order_event("wo_1");
    let with = |patch: Value| {
        let mut e = base.clone();
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                e.as_object_mut().unwrap().remove(k);
            } else {
                e[k] = v.clone();
            }
        }
        e
    };
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (with(json!({"action": "work_order_exploded"})), vec!["action"]),
        (with(json!({"action": null})), vec!["action"]),
        (with(json!({"action": 5})), vec!["action"]),
        (with(json!({"id": "order-1"})), vec!["id"]),
        (with(json!({"id": "evt_"})), vec!["id"]),
        (with(json!({"created_at": "yesterday"})), vec!["created_at"]),
        (with(json!({"created_at": "9999-12-31T23:59:59.999Z"})), vec!["created_at"]),
        (
            with(json!({"created_at": weir::time::format_millis(weir::time::now_millis() + 25 * 3600 * 1000)})),
            vec!["created_at"],
        ),
        (with(json!({"creator": null})), vec!["creator"]),
        (with(json!({"creator": {"id": "u"}})), vec!["creator.name"]),
        (with(json!({"creator": {"id": "u", "name": "n", "email": "x"}})), vec!["creator.email"]),
        (with(json!({"subject": {"type": "WorkOrder"}})), vec!["subject.id"]),
        (with(json!({"subject": {"type": "WorkOrder", "id": "w", "deleted": "yes"}})), vec!["subject.deleted"]),
        (with(json!({"subject": {"type": "Defect", "id": "w"}})), vec!["work_order"]),
        (with(json!({"work_order": null})), vec!["snapshot"]),
        (with(json!({"work_order": [1]})), vec!["work_order"]),
        (with(json!({"defect": {"id": "d"}})), vec!["defect"]),
        (with(json!({"colour": "red"})), vec!["colour"]),
        (
            json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "WorkOrder", "id": "w"}, "work_order": {}}),
            vec!["work_order"],
        ),
    ];
    for (event, fields) in cases {
        let resp = t.publisher.post("/api/v2/events", &event).await;
        assert_eq!(resp.status, 422, "{event}: {}", resp.text());
        assert_eq!(resp.error_fields(), fields, "{event}");
    }
    // A note is about another record: any snapshot type that matches its subject.
    let note = json!({"action": "note_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Asset", "id": "a1"}, "asset": {"id": "a1"}});
    t.publisher.post("/api/v2/events", &note).await.expect(202);
    // A little clock skew is fine.
    let soon = with(json!({"created_at": weir::time::format_millis(weir::time::now_millis() + 3600 * 1000)}));
    t.publisher.post("/api/v2/events", &soon).await.expect(202);
    let resp = t
        .publisher
        .http
        .post("/api/v2/events")
        .bearer(&t.publisher.token)
        .raw("application/json", "{")
        .send()
        .await
        .expect(422);
    assert_eq!(resp.error_fields(), vec!["body"]);
    t.publisher.http.post("/api/v2/events").bearer(&t.publisher.token).raw("text/plain", "{}").send().await.expect(415);
}
