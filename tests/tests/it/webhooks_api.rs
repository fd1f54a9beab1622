//! `/api/v2/webhooks` (service document §4, contract §2–§3).

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::weir::Weir;

const HOOK: &str = "http://127.0.0.1:9/hook";

#[tokio::test]
async fn create_returns_the_full_resource_with_location() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let resp = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"name": " Orders ", "url": HOOK, "subscribed_actions": ["work_order_created", "no_such_event", "form_completed", "work_order_created"]}),
        )
        .await
        .expect(201);
    let w = resp.json();
    let id = w["id"].as_str().unwrap();
    assert!(id.starts_with("wh_"));
    assert_eq!(resp.header("location").unwrap(), format!("/api/v2/webhooks/{id}"));
    assert_eq!(w["name"], "Orders");
    assert_eq!(w["url"], HOOK);
    assert_eq!(w["active"], true);
    assert_eq!(w["subscribed_actions"], json!(["work_order_created", "form_completed"]));
    assert_eq!(w["plugins"], json!([]));
    assert_eq!(w["deactivated_at"], Value::Null);
    assert_eq!(w["deactivation_reason"], Value::Null);
    let secret = w["signing_secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_") && secret.len() >= 6 + 43, "{secret}");
    for ts in ["created_at", "updated_at"] {
        let text = w[ts].as_str().unwrap();
        assert!(weir::time::parse_rfc3339(text).is_some() && text.ends_with('Z') && text.len() == 24, "{text}");
    }
    // Read back: same resource, secret included.
    let got = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
    assert_eq!(got, w);
}

#[tokio::test]
async fn name_defaults_to_the_host_and_secrets_differ() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let a = t.admin.create_webhook("http://127.0.0.1:9/a", &["form_completed"]).await;
    let b = t.admin.create_webhook("http://127.0.0.1:9/b", &[]).await;
    assert_eq!(a["name"], "127.0.0.1");
    assert_eq!(b["subscribed_actions"], json!([]));
    assert_ne!(a["signing_secret"], b["signing_secret"]);
}

#[tokio::test]
async fn list_is_newest_first_with_a_cursor() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut created = Vec::new();
    for i in 0..5 {
        let w = t.admin.create_webhook(&format!("http://127.0.0.1:9/{i}"), &["form_completed"]).await;
        created.push(w["id"].as_str().unwrap().to_owned());
    }
    created.reverse();
    let page1 = t.admin.get("/api/v2/webhooks?limit=2").await.expect(200).json();
    let ids = |page: &Value| -> Vec<String> {
        page["data"].as_array().unwrap().iter().map(|w| w["id"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(ids(&page1), created[..2]);
    let cursor = page1["next_cursor"].as_str().unwrap();
    let page2 = t.admin.get(&format!("/api/v2/webhooks?limit=2&cursor={cursor}")).await.expect(200).json();
    assert_eq!(ids(&page2), created[2..4]);
    let cursor = page2["next_cursor"].as_str().unwrap();
    let page3 = t.admin.get(&format!("/api/v2/webhooks?limit=2&cursor={cursor}")).await.expect(200).json();
    assert_eq!(ids(&page3), created[4..]);
    assert_eq!(page3["next_cursor"], Value::Null);
    let all = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(ids(&all), created);
    // Every listed webhook carries the full resource.
    assert!(all["data"][0]["signing_secret"].is_string());

    for bad in ["limit=0", "limit=101", "limit=x", "cursor=nope", "colour=red"] {
        let resp = t.admin.get(&format!("/api/v2/webhooks?{bad}")).await.expect(422);
        assert_eq!(resp.error_code(), "validation_failed", "{bad}");
    }
}

#[tokio::test]
async fn patch_changes_only_what_is_sent() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let w = t.admin.create_webhook(HOOK, &["form_completed"]).await;
    let path = format!("/api/v2/webhooks/{}", w["id"].as_str().unwrap());
    let patched = t
        .admin
        .patch(&path, &json!({"name": "Renamed", "subscribed_actions": ["defect_created", "bogus"]}))
        .await
        .expect(200)
        .json();
    assert_eq!(patched["name"], "Renamed");
    assert_eq!(patched["subscribed_actions"], json!(["defect_created"]));
    assert_eq!(patched["url"], w["url"]);
    assert_eq!(patched["signing_secret"], w["signing_secret"]);
    assert_eq!(patched["created_at"], w["created_at"]);
    assert!(patched["updated_at"].as_str() >= w["updated_at"].as_str());

    let off = t.admin.patch(&path, &json!({"active": false})).await.expect(200).json();
    assert_eq!(off["active"], false);
    assert_eq!(off["deactivation_reason"], "manual");
    assert!(off["deactivated_at"].is_string());
    let on = t.admin.patch(&path, &json!({"active": true, "url": "http://127.0.0.1:10/new"})).await.expect(200).json();
    assert_eq!(on["active"], true);
    assert_eq!(on["deactivated_at"], Value::Null);
    assert_eq!(on["url"], "http://127.0.0.1:10/new");

    // A bad field changes nothing at all.
    let resp = t.admin.patch(&path, &json!({"name": "Never", "url": "http://10.0.0.1/"})).await.expect(422);
    assert_eq!(resp.error_fields(), vec!["url"]);
    let now = t.admin.get(&path).await.expect(200).json();
    assert_eq!(now["name"], "Renamed");
}

#[tokio::test]
async fn delete_removes_it() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let w = t.admin.create_webhook(HOOK, &["form_completed"]).await;
    let path = format!("/api/v2/webhooks/{}", w["id"].as_str().unwrap());
    let resp = t.admin.delete(&path).await.expect(204);
    assert!(resp.body.is_empty());
    t.admin.get(&path).await.expect(404);
    t.admin.delete(&path).await.expect(404);
    t.admin.patch(&path, &json!({"name": "x"})).await.expect(404);
    let list = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(list["data"], json!([]));
}

#[tokio::test]
async fn events_catalogue_is_grouped_by_category() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let body = t.admin.get("/api/v2/webhooks/events").await.expect(200).json();
    let categories = body["categories"].as_array().unwrap();
    let keys: Vec<&str> = categories.iter().map(|c| c["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        vec![
            "work_orders",
            "work_order_tasks",
            "work_order_templates",
            "reports",
            "defects",
            "reviews",
            "assets",
            "locations",
            "companies",
            "tools",
            "actions",
            "notes",
            "documents",
            "work_instructions",
            "exports",
            "webhooks"
        ]
    );
    // Weir's own events (contract §7).
    let webhooks = categories.iter().find(|c| c["key"] == "webhooks").unwrap();
    assert_eq!(webhooks["name"], "Webhooks");
    assert_eq!(
        webhooks["events"],
        serde_json::json!(["webhook_deactivated", "webhook_reactivated", "webhook_delivery_failed"])
    );
    let all: Vec<&str> =
        categories.iter().flat_map(|c| c["events"].as_array().unwrap().iter().map(|e| e.as_str().unwrap())).collect();
    for name in ["work_order_created", "form_completed", "report_export_completed", "note_created"] {
        assert!(all.contains(&name), "{name}");
    }
    assert!(categories.iter().all(|c| c["name"].is_string()));
}

#[tokio::test]
async fn checks_run_in_order_401_402_403_then_404() {
    let weir = Weir::start_default().await;
    let free = weir.tenant(Plan::free()).await;
    let pro = weir.tenant(Plan::pro()).await;
    let missing = "/api/v2/webhooks/wh_00000000000000000000000000";
    let http = weir.http();

    // 401: no token, a malformed header, an unknown token.
    for resp in [
        http.get(missing).send().await,
        http.get(missing).header("authorization", "Basic abc").send().await,
        http.get(missing).bearer("wat_not-a-token").send().await,
    ] {
        assert_eq!(resp.status, 401);
        assert_eq!(resp.error_code(), "invalid_token");
        assert_eq!(resp.header("www-authenticate").unwrap(), "Bearer realm=\"weir\"");
    }
    // 402 before 403: a non-admin on a free plan gets 402.
    let free_member = weir.client(&free.org_id, false, false).await;
    assert_eq!(free_member.get(missing).await.expect(402).error_code(), "plan_required");
    assert_eq!(free.admin.get(missing).await.expect(402).error_code(), "plan_required");
    assert_eq!(free.admin.get("/api/v2/webhooks/events").await.status, 402);
    // 403 before 404 / 422.
    let member = weir.client(&pro.org_id, false, false).await;
    assert_eq!(member.get(missing).await.expect(403).error_code(), "forbidden");
    assert_eq!(pro.publisher.post("/api/v2/webhooks", &json!({"url": 1})).await.expect(403).error_code(), "forbidden");
    // Then 404.
    assert_eq!(pro.admin.get(missing).await.expect(404).error_code(), "not_found");
    assert_eq!(pro.admin.get("/api/v2/webhooks/not-an-id").await.expect(404).error_code(), "not_found");

    // Upgrading the plan takes effect on the next request.
    weir.store.plan_changes().set_org_plan(&free.org_id, Plan::pro()).await.unwrap();
    free.admin.get("/api/v2/webhooks").await.expect(200);
}

#[tokio::test]
async fn other_organisations_webhooks_are_404() {
    let weir = Weir::start_default().await;
    let a = weir.tenant(Plan::pro()).await;
    let b = weir.tenant(Plan::pro()).await;
    let w = a.admin.create_webhook(HOOK, &["form_completed"]).await;
    let path = format!("/api/v2/webhooks/{}", w["id"].as_str().unwrap());
    assert_eq!(b.admin.get(&path).await.expect(404).error_code(), "not_found");
    b.admin.patch(&path, &json!({"name": "stolen"})).await.expect(404);
    b.admin.delete(&path).await.expect(404);
    let listed = b.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(listed["data"], json!([]));
    // Untouched for its owner.
    let own = a.admin.get(&path).await.expect(200).json();
    assert_eq!(own["name"], w["name"]);
}

#[tokio::test]
async fn invalid_fields_are_422_naming_each_field() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let cases = [
        (json!({"subscribed_actions": []}), vec!["url"]),
        (json!({"url": HOOK}), vec!["subscribed_actions"]),
        (json!({"url": 5, "subscribed_actions": []}), vec!["url"]),
        (json!({"url": HOOK, "subscribed_actions": "form_completed"}), vec!["subscribed_actions"]),
        (json!({"url": HOOK, "subscribed_actions": ["form_completed", 7]}), vec!["subscribed_actions[1]"]),
        (json!({"url": HOOK, "subscribed_actions": [], "name": ""}), vec!["name"]),
        (json!({"url": HOOK, "subscribed_actions": [], "name": null}), vec!["name"]),
        (json!({"url": HOOK, "subscribed_actions": [], "name": "x".repeat(201)}), vec!["name"]),
        (json!({"url": HOOK, "subscribed_actions": [], "colour": "red"}), vec!["colour"]),
        (json!({"url": HOOK, "subscribed_actions": [], "active": false}), vec!["active"]),
        (json!({"url": HOOK, "subscribed_actions": [], "plugins": {}}), vec!["plugins"]),
        (
            json!({"url": HOOK, "subscribed_actions": [], "plugins": [{"plugin_id": "plg_00000000000000000000000000"}]}),
            vec!["plugins[0].plugin_id"],
        ),
        (
            json!({"url": HOOK, "subscribed_actions": [], "plugins": [{"plugin_id": "x", "on_error": "explode", "extra": 1}]}),
            vec!["plugins[0].on_error", "plugins[0].extra", "plugins[0].plugin_id"],
        ),
    ];
    for (body, fields) in cases {
        let resp = t.admin.post("/api/v2/webhooks", &body).await;
        assert_eq!(resp.status, 422, "{body}: {}", resp.text());
        assert_eq!(resp.error_code(), "validation_failed");
        assert_eq!(resp.error_fields(), fields, "{body}");
    }
    for body in [json!({"active": "yes"}), json!({"url": null}), json!({"id": "wh_x"})] {
        let w = t.admin.create_webhook(HOOK, &[]).await;
        let path = format!("/api/v2/webhooks/{}", w["id"].as_str().unwrap());
        assert_eq!(t.admin.patch(&path, &body).await.status, 422, "{body}");
    }
    // Nothing was created by the failed requests (only the PATCH targets exist).
    let listed = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 3);
}
