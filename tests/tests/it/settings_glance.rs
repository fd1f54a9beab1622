//! The pages a customer reads at a glance (issue 55): a delivery found by its id and an
//! event by its, within the organisation only; a filter tried on recent events without
//! saving it; each hour's delivered and failed counts, exact beyond the latest 100.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::settings::{PASSWORD, http_sign_in, user};
use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, work_order_event};

#[tokio::test]
async fn search_finds_deliveries_and_events_of_the_organisation_only() {
    let weir = Weir::start_default().await;
    let (t, other) = (weir.tenant(Plan::pro()).await, weir.tenant(Plan::pro()).await);
    user(&weir, &t.org_id, "finder@example.com", false).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let theirs = other.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let mine = t.publisher.publish(&work_order_event("wo_1")).await;
    let foreign = other.publisher.publish(&work_order_event("wo_2")).await;
    t.admin.settled(hook["id"].as_str().unwrap(), 1).await;
    other.admin.settled(theirs["id"].as_str().unwrap(), 1).await;
    let event_id = mine.as_str();
    let delivery = t.admin.get(&format!("/api/v2/events/{event_id}")).await.json()["deliveries"][0]["id"].clone();
    let delivery = delivery.as_str().unwrap();
    let foreign_event = foreign.as_str();
    let foreign_delivery =
        other.admin.get(&format!("/api/v2/events/{foreign_event}")).await.json()["deliveries"][0]["id"].clone();

    let http = weir.http();
    let (_, session) = http_sign_in(&http, "finder@example.com", PASSWORD).await;
    let (cookie, _) = session.unwrap();
    let find = |q: String| {
        let (http, cookie) = (http.clone(), cookie.clone());
        async move { http.get(&format!("/settings/search?q={q}")).header("cookie", &cookie).send().await }
    };
    let found = find(delivery.to_owned()).await;
    assert_eq!(found.status, 303);
    assert_eq!(found.header("location").as_deref(), Some(format!("/settings/deliveries/{delivery}").as_str()));
    let event_page = find(event_id.to_owned()).await.expect(200).text();
    assert!(event_page.contains(&format!(r#"href="/settings/deliveries/{delivery}""#)), "{event_page}");
    assert!(event_page.contains("work_order_created") && event_page.contains("succeeded"), "{event_page}");
    // Another organisation's ids find nothing, and say nothing about them.
    for q in [foreign_event.to_owned(), foreign_delivery.as_str().unwrap().to_owned(), "dlv_nonsense".to_owned()] {
        let page = find(q.clone()).await;
        assert_eq!(page.status, 404, "{q}");
        assert!(page.text().contains("Nothing found") && !page.text().contains("succeeded"), "{q}");
    }
    assert_eq!(find(String::new()).await.status, 303, "an empty search goes back to the list");
}

#[tokio::test]
async fn a_filter_is_tried_on_recent_events_without_saving_it() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "admin@example.com", true).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    let published = t.publisher.publish(&work_order_event("wo_7")).await;
    let event_id = published.as_str();
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "admin@example.com", PASSWORD).await;
    let (cookie, csrf) = session.unwrap();
    let tried = |filter: &'static str| {
        let (http, cookie, csrf) = (http.clone(), cookie.clone(), csrf.clone());
        let path = format!("/settings/webhooks/{id}/try_filter");
        async move {
            let form = [
                ("_csrf", csrf.as_str()),
                ("url", "http://127.0.0.1:9/typed-not-saved"),
                ("subscribed_actions", "work_order_created"),
                ("filter", filter),
            ];
            http.post(&path).header("cookie", &cookie).form(&form).send().await.expect(200).text()
        }
    };
    let page = tried(r#"subject.id == "wo_7""#).await;
    let verdicts = page.split(r#"id="filter-tried""#).nth(1).expect("the verdicts are shown");
    assert!(verdicts.contains(event_id) && verdicts.contains("<strong>delivered</strong>"), "{verdicts}");
    assert!(page.contains("typed-not-saved"), "the form comes back as typed");
    let page = tried(r#"subject.id == "wo_8""#).await;
    assert!(page.contains("<strong>not delivered</strong>"), "{page}");
    let page = tried("subject.id ==").await;
    assert!(page.contains("The filter is not valid"), "{page}");
    let saved = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.json();
    assert_eq!(saved["url"], json!(receiver.url), "nothing was saved");
    assert!(saved["filter"].is_null(), "{saved}");
    // A member cannot (the form changes nothing, but it is an admin's form).
    user(&weir, &t.org_id, "reader@example.com", false).await;
    let (_, reader) = http_sign_in(&http, "reader@example.com", PASSWORD).await;
    let (reader_cookie, reader_csrf) = reader.unwrap();
    let form = [("_csrf", reader_csrf.as_str()), ("filter", "true")];
    let refused = http
        .post(&format!("/settings/webhooks/{id}/try_filter"))
        .header("cookie", &reader_cookie)
        .form(&form)
        .send()
        .await;
    assert_eq!(refused.status, 403);
}

#[tokio::test]
async fn each_hour_counts_every_delivery_that_ended() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "oncall@example.com", false).await;
    let (good, bad) = (Receiver::start().await, Receiver::replying(Reply::Status(410)).await);
    t.admin.create_webhook(&good.url, &["work_order_created"]).await;
    for i in 0..130 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    good.wait_for(130, Duration::from_secs(30)).await;
    let bad_hook = t.admin.create_webhook(&bad.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_gone")).await;
    t.admin.settled(bad_hook["id"].as_str().unwrap(), 1).await;

    let http = weir.http();
    let (_, session) = http_sign_in(&http, "oncall@example.com", PASSWORD).await;
    let (cookie, _) = session.unwrap();
    let list = eventually("counted", Duration::from_secs(10), async || {
        let list = http.get("/settings/webhooks").header("cookie", &cookie).send().await.expect(200).text();
        (list.contains("0 delivered, 1 failed") && list.contains("131 delivered")).then_some(list)
    })
    .await;
    assert!(list.contains("131 delivered, 0 failed (100.0% delivered)"), "every one, not a sample of 100: {list}");
    assert!(list.contains("<strong>Off</strong> — switched off: the endpoint answered 410 Gone"), "{list}");
}
