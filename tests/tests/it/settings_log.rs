//! One log across webhooks and a list that narrows: `/settings/deliveries` shows every
//! webhook's deliveries, filtered by status, event, webhook and how recent, searched by a
//! webhook's name or URL (an id goes to its own page); the list of webhooks is searched by
//! name or URL and filtered by health; the event catalogue lists what each event carries.

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::settings::{PASSWORD, http_sign_in, user};
use crate::support::receiver::Receiver;
use crate::support::weir::{WeirBuilder, work_order_event};

/// The delivery ids a page links to, in order.
fn delivery_links(html: &str) -> Vec<String> {
    html.split(r#"href="/settings/deliveries/dlv_"#)
        .skip(1)
        .map(|rest| format!("dlv_{}", rest.split('"').next().unwrap_or_default()))
        .collect()
}

#[tokio::test]
async fn one_log_across_webhooks_filtered_and_searched_and_a_list_that_narrows() {
    // One retry, soon: the failing webhook's delivery ends failed.
    let weir = WeirBuilder::shared().env("WEIR_RETRY_SCHEDULE", "50ms").start().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "log@example.com", false).await;
    let receiver = Receiver::start().await;
    let erp = t
        .admin
        .post("/api/v2/webhooks", &json!({"name": "Orders to the ERP", "url": receiver.url, "subscribed_actions": ["work_order_created", "form_completed"]}))
        .await
        .expect(201)
        .json();
    let billing = t
        .admin
        .post("/api/v2/webhooks", &json!({"name": "Billing", "url": "http://127.0.0.1:9/billing-down", "subscribed_actions": ["work_order_created"]}))
        .await
        .expect(201)
        .json();
    let (erp_id, billing_id) = (erp["id"].as_str().unwrap(), billing["id"].as_str().unwrap());
    t.publisher.publish(&work_order_event("wo_1")).await;
    let form = json!({"action": "form_completed", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Form", "id": "f1"}, "form": {}});
    t.publisher.publish(&form).await;
    t.admin.settled(erp_id, 2).await;
    let failed = t.admin.settled(billing_id, 1).await;
    let erp_all: Vec<String> =
        t.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={erp_id}")).await.json()["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_owned())
            .collect();
    let billing_one = failed[0]["id"].as_str().unwrap().to_owned();

    let http = weir.http();
    let (_, session) = http_sign_in(&http, "log@example.com", PASSWORD).await;
    let (cookie, _) = session.unwrap();
    let page = |q: &str| {
        let (http, cookie, q) = (http.clone(), cookie.clone(), q.to_owned());
        async move { http.get(&format!("/settings/deliveries{q}")).header("cookie", &cookie).send().await }
    };
    let all = page("").await.expect(200).text();
    let mut listed = delivery_links(&all);
    listed.sort();
    let mut expected = [erp_all.clone(), vec![billing_one.clone()]].concat();
    expected.sort();
    assert_eq!(listed, expected, "every webhook's deliveries");
    assert!(all.contains("Orders to the ERP") && all.contains("Billing"), "each with its webhook's name");
    assert_eq!(delivery_links(&page("?status=failed").await.text()), [billing_one.as_str()]);
    assert_eq!(delivery_links(&page(&format!("?webhook={billing_id}")).await.text()), [billing_one.as_str()]);
    let forms = delivery_links(&page("?action=form_completed").await.text());
    assert_eq!(forms.len(), 1, "the one form_completed delivery");
    assert!(erp_all.contains(&forms[0]));
    assert_eq!(delivery_links(&page("?q=billing-down").await.text()), [billing_one.as_str()], "by URL");
    assert_eq!(delivery_links(&page("?q=erp&status=failed").await.text()), Vec::<String>::new());
    assert_eq!(delivery_links(&page("?since=1h").await.text()).len(), 3, "all made in the last hour");
    let by_id = page(&format!("?q={billing_one}")).await;
    assert_eq!(by_id.status, 303, "an id goes to the search");
    let found = http.get(&by_id.header("location").unwrap()).header("cookie", &cookie).send().await;
    assert_eq!(found.header("location"), Some(format!("/settings/deliveries/{billing_one}")));

    // The list: searched, and filtered by health.
    let list = |q: &str| {
        let (http, cookie, q) = (http.clone(), cookie.clone(), q.to_owned());
        async move { http.get(&format!("/settings/webhooks{q}")).header("cookie", &cookie).send().await.expect(200).text() }
    };
    let failing = list("?health=failing").await;
    assert!(failing.contains(billing_id) && !failing.contains(erp_id), "only the failing one");
    let healthy = list("?health=healthy").await;
    assert!(healthy.contains(erp_id) && !healthy.contains(billing_id));
    let named = list("?q=ERP").await;
    assert!(named.contains(erp_id) && !named.contains(billing_id), "by name, in any case");

    let events = http.get("/settings/events").header("cookie", &cookie).send().await.expect(200).text();
    assert!(events.contains(r#"<tr id="work_order_created">"#) && events.contains("data.work_order"), "{events}");
    let webhook = http.get(&format!("/settings/webhooks/{erp_id}")).header("cookie", &cookie).send().await.text();
    assert!(webhook.contains(r#"href="/settings/events#form_completed""#), "its events, linked to the catalogue");
}
