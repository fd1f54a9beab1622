//! What a process keeps to publish in one round trip (issue 58): the organisation's
//! subscribers and the publisher's token, each proven current by the publish script against
//! the organisation's version (`store::versions`). Each guarantee across two processes (or
//! the test's own store as the other writer): a change that returned before a publish
//! started is seen by that publish.

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::receiver::Receiver;
use crate::support::weir::{Tenant, Weir, WeirBuilder, work_order_event};

/// The ids of the webhooks an event went to, as its lookup lists them.
async fn went_to(t: &Tenant, event_id: &str) -> Vec<String> {
    let found = t.admin.get(&format!("/api/v2/events/{event_id}")).await.expect(200).json();
    let mut ids: Vec<String> = found["deliveries"]
        .as_array()
        .expect("deliveries")
        .iter()
        .map(|d| d["webhook_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn id(hook: &Value) -> String {
    hook["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn webhooks_changed_on_another_process_get_the_next_publish_as_they_are_now() {
    let a = Weir::start_default().await;
    let b = a.builder.start().await;
    let on_a = a.tenant(Plan::pro()).await;
    let on_b = on_a.on(&b);
    let receiver = Receiver::start().await;
    let first = id(&on_a.admin.create_webhook(&receiver.url, &["work_order_created"]).await);
    // A keeps the subscribers of the action and the publisher's token.
    let e1 = on_a.publisher.publish(&work_order_event("wo_1")).await;
    assert_eq!(went_to(&on_a, &e1).await, vec![first.clone()]);
    let stale_before = on_a.admin.metric("weir_stale_publishes_total").await.unwrap_or(0.0);

    // Created on B: A's next publish goes to it.
    let second = id(&on_b.admin.create_webhook(&receiver.url, &["work_order_created"]).await);
    let e2 = on_a.publisher.publish(&work_order_event("wo_2")).await;
    let mut both = vec![first.clone(), second.clone()];
    both.sort();
    assert_eq!(went_to(&on_a, &e2).await, both);

    // A filter set on B that the next event fails: A leaves that webhook out.
    let filter = json!({"filter": "work_order.priority > 5"});
    on_b.admin.patch(&format!("/api/v2/webhooks/{first}"), &filter).await.expect(200);
    let e3 = on_a.publisher.publish(&work_order_event("wo_3")).await;
    assert_eq!(went_to(&on_a, &e3).await, vec![second.clone()]);

    // Deleted on B: A sends it nothing more.
    on_b.admin.delete(&format!("/api/v2/webhooks/{second}")).await.expect(204);
    let e4 = on_a.publisher.publish(&work_order_event("wo_4")).await;
    assert_eq!(went_to(&on_a, &e4).await, Vec::<String>::new());

    // Each change made what A kept stale once: seen by its publish script, not by luck.
    let stale_after = on_a.admin.metric("weir_stale_publishes_total").await.unwrap_or(0.0);
    assert!(stale_after >= stale_before + 3.0, "{stale_before} → {stale_after}");
    // Unchanged since: A publishes from what it keeps again, stale no more.
    let e5 = on_a.publisher.publish(&work_order_event("wo_5")).await;
    assert_eq!(went_to(&on_a, &e5).await, Vec::<String>::new());
    assert_eq!(on_a.admin.metric("weir_stale_publishes_total").await.unwrap_or(0.0), stale_after);
}

#[tokio::test]
async fn a_token_or_client_revoked_elsewhere_is_refused_by_the_next_publish() {
    let a = Weir::start_default().await;
    let b = a.builder.start().await;
    let t = a.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;

    // The publisher's token, revoked through B: A, which keeps it, refuses it at once.
    b.http()
        .post("/oauth/revoke")
        .form(&[
            ("token", &t.publisher.token),
            ("client_id", &t.publisher.creds.client_id),
            ("client_secret", &t.publisher.creds.client_secret),
        ])
        .send()
        .await
        .expect(200);
    t.publisher.post("/api/v2/events", &work_order_event("wo_2")).await.expect(401);

    // A new token of the same client publishes; its client revoked (by the test's own
    // store, a third writer), every token of it is refused.
    let token = a.token(&t.publisher.creds).await;
    let publisher = crate::support::weir::Api { token, ..t.publisher.clone() };
    publisher.publish(&work_order_event("wo_3")).await;
    publisher.publish(&work_order_event("wo_4")).await;
    assert!(a.store.clients().revoke_client(&t.publisher.creds.client_id).await.unwrap());
    publisher.post("/api/v2/events", &work_order_event("wo_5")).await.expect(401);
}

#[tokio::test]
async fn a_plan_changed_elsewhere_holds_the_next_publish() {
    let a = WeirBuilder::shared()
        .config_file("[plans.closed]\napi_integrations = true\nevents_per_day = 0\n")
        .start()
        .await;
    let t = a.tenant(Plan::pro()).await;
    // A keeps the publisher's token, with its plan (pro: no daily limit).
    t.publisher.publish(&work_order_event("wo_1")).await;
    t.publisher.publish(&work_order_event("wo_2")).await;
    // Changed by another writer (the test's own store): A's next publish is held to the
    // plan the organisation has now, which allows no event.
    a.store.plan_changes().set_org_plan(&t.org_id, Plan::parse("closed").unwrap()).await.unwrap();
    let refused = t.publisher.post("/api/v2/events", &work_order_event("wo_3")).await;
    assert_eq!(refused.status, 429, "{}", refused.text());
    a.store.plan_changes().set_org_plan(&t.org_id, Plan::pro()).await.unwrap();
    t.publisher.publish(&work_order_event("wo_4")).await;
}
