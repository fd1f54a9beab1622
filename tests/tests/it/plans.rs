//! Plans with limits (contract §9 "Plans"): events per UTC day counted exactly however many
//! publish at once, through two processes; counts checked at create with `403
//! quota_exceeded` and nothing stored; usage visible to any client and on the settings pages;
//! and a plan change applied at the next request without losing anything already stored.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::settings::{PASSWORD, http_sign_in, user};
use crate::support::plugins::plugin_wasm;
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, Weir, WeirBuilder, work_order_event};

/// Plans of these tests, beside the shipped `free` and `pro`.
const PLANS: &str = r#"
[plans.metered]
api_integrations = true
events_per_day = 50

[plans.tiny]
api_integrations = true
webhooks = 2
plugins = 1
"#;

fn metered() -> Plan {
    Plan::parse("metered").expect("a plan name")
}

#[tokio::test]
async fn the_events_of_a_day_are_counted_exactly_under_32_concurrent_publishers() {
    let weir = WeirBuilder::shared().config_file(PLANS).start().await;
    // A second `weir serve` of the same data set: half the publishers go to it.
    let other = weir.builder.start().await;
    let t = weir.tenant(metered()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let warned = Receiver::start().await;
    t.admin.create_webhook(&warned.url, &["usage_limit_approaching"]).await;
    // A pro organisation publishing meanwhile is not held to another's limit.
    let pro = weir.tenant(Plan::pro()).await;

    let (accepted, refused) = publish_from_32(&t.publisher, &other).await;
    assert_eq!((accepted.len(), refused), (50, 78), "exactly the limit, never more");
    for _ in 0..5 {
        pro.publisher.publish(&work_order_event("wo_pro")).await;
    }

    // Every accepted event is delivered; nothing of a refused one is stored.
    let delivered = receiver.wait_for(50, Duration::from_secs(30)).await;
    let ids: HashSet<String> = delivered.iter().map(|r| r.json()["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, accepted);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.count(), 50);
    assert_eq!(t.admin.settled(hook["id"].as_str().unwrap(), 50).await.len(), 50);

    let usage = t.publisher.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["plan"], "metered");
    assert_eq!(usage["events"], json!({"used": 50, "limit": 50}));
    assert_eq!(usage["day"], weir::time::format_day(weir::time::now_millis()));
    let pro_usage = pro.publisher.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(pro_usage["events"], json!({"used": 5, "limit": null}));

    one_warning_at_80_percent(&warned, &t.org_id).await;

    let refusals = r#"weir_quota_refusals_total{plan="metered",quota="events_per_day"}"#;
    // Counted by the process that refused (`/metrics` is per process): the two together.
    let there = Api { http: other.http(), ..t.admin.clone() };
    let counted = t.admin.metric(refusals).await.unwrap_or(0.0) + there.metric(refusals).await.unwrap_or(0.0);
    assert_eq!(counted, 78.0);
    // Test events do not count, and are not refused at the limit.
    let id = hook["id"].as_str().unwrap();
    t.admin.post(&format!("/api/v2/webhooks/{id}/test"), &json!({})).await.expect(202);
    let usage = t.publisher.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["events"]["used"], 50);

    // A plan change applies at the next publish.
    weir.store.plan_changes().set_org_plan(&t.org_id, Plan::pro()).await.unwrap();
    t.publisher.publish(&work_order_event("wo_after_upgrade")).await;
    other.stop().await;
    weir.stop().await;
}

/// 32 publishers at once, half through `other`, four events each: the ids accepted, and how
/// many were refused (each a `429 quota_exceeded` until the UTC day ends).
async fn publish_from_32(publisher: &Api, other: &Weir) -> (HashSet<String>, usize) {
    let publishers = (0..32).map(|p| {
        let publisher = match p % 2 {
            0 => publisher.clone(),
            _ => Api { http: other.http(), ..publisher.clone() },
        };
        tokio::spawn(async move {
            let mut answers = Vec::new();
            for i in 0..4 {
                let event = work_order_event(&format!("wo_{p}_{i}"));
                answers.push(publisher.post("/api/v2/events", &event).await);
            }
            answers
        })
    });
    let mut accepted = HashSet::new();
    let mut refused = 0;
    for answers in futures_util::future::join_all(publishers).await {
        for resp in answers.expect("publisher") {
            match resp.status {
                202 => assert!(accepted.insert(resp.json()["id"].as_str().unwrap().to_owned())),
                429 => {
                    assert_eq!(resp.error_code(), "quota_exceeded", "{}", resp.text());
                    assert_eq!(resp.error_fields(), vec!["events_per_day".to_owned()]);
                    let wait: u64 = resp.header("retry-after").expect("Retry-After").parse().unwrap();
                    assert!((1..=86_400).contains(&wait), "until the UTC day ends: {wait}");
                    refused += 1;
                }
                other => panic!("unexpected {other}: {}", resp.text()),
            }
        }
    }
    (accepted, refused)
}

/// One warning as the day passed 80%, to the webhooks that subscribe to it, once a day.
async fn one_warning_at_80_percent(warned: &Receiver, org_id: &str) {
    let notice = warned.wait_for(1, Duration::from_secs(10)).await[0].json();
    assert_eq!(notice["action"], "usage_limit_approaching", "{notice}");
    assert_eq!(notice["usage"]["events"], json!({"used": 40, "limit": 50}), "{notice}");
    assert_eq!(notice["subject"]["id"], org_id);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(warned.count(), 1, "once a day");
}

#[tokio::test]
async fn counts_are_checked_at_create_answer_403_and_lowering_a_limit_deletes_nothing() {
    let weir = WeirBuilder::shared().config_file(PLANS).start().await;
    let t = weir.tenant(Plan::parse("tiny").unwrap()).await;
    for n in 0..2 {
        t.admin.create_webhook(&format!("http://127.0.0.1:9/{n}"), &["work_order_created"]).await;
    }
    let over = t
        .admin
        .post("/api/v2/webhooks", &json!({"url": "http://127.0.0.1:9/x", "subscribed_actions": ["work_order_created"]}))
        .await
        .expect(403);
    assert_eq!((over.error_code(), over.error_fields()), ("quota_exceeded".to_owned(), vec!["webhooks".to_owned()]));
    assert!(over.text().contains("the most its plan (tiny) allows"), "{}", over.text());
    assert_eq!(weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap().len(), 2, "nothing stored");

    t.admin.upload_plugin("first", plugin_wasm("redact")).await;
    let resp = t
        .admin
        .http
        .post("/api/v2/plugins?name=second")
        .bearer(&t.admin.token)
        .raw("application/wasm", plugin_wasm("redact"))
        .send()
        .await
        .expect(403);
    assert_eq!(resp.error_fields(), vec!["plugins".to_owned()]);
    let usage: Value = t.admin.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["webhooks"], json!({"used": 2, "limit": 2}));
    assert_eq!(usage["plugins"], json!({"used": 1, "limit": 1}));
    assert_eq!(usage["events"]["limit"], Value::Null);
    let refusals = r#"weir_quota_refusals_total{plan="tiny",quota="webhooks"}"#;
    assert_eq!(t.admin.metric(refusals).await, Some(1.0));

    // Up a plan: the next create succeeds. Down again: everything stays, nothing new.
    weir.store.plan_changes().set_org_plan(&t.org_id, Plan::pro()).await.unwrap();
    t.admin.create_webhook("http://127.0.0.1:9/third", &["work_order_created"]).await;
    weir.store.plan_changes().set_org_plan(&t.org_id, Plan::parse("tiny").unwrap()).await.unwrap();
    let usage: Value = t.admin.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["webhooks"], json!({"used": 3, "limit": 2}));
    let listed = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 3);
    t.admin
        .post("/api/v2/webhooks", &json!({"url": "http://127.0.0.1:9/y", "subscribed_actions": []}))
        .await
        .expect(403);

    // Without a daily limit the publishes still count (the publish script counts them);
    // a test event, a duplicate and an operational event do not.
    let publisher = weir.client(&t.org_id, false, true).await;
    let id = publisher.publish(&work_order_event("wo_counted")).await;
    let again = json!({"id": id, "action": "work_order_created", "creator": {"id": "usr_7", "name": "Ada"},
        "subject": {"type": "WorkOrder", "id": "wo_counted"}, "work_order": {"id": "wo_counted"}});
    publisher.post("/api/v2/events", &again).await.expect(202);
    publisher.publish(&work_order_event("wo_counted_2")).await;
    let hook = listed["data"][0]["id"].as_str().unwrap();
    t.admin.post(&format!("/api/v2/webhooks/{hook}/test"), &json!({})).await.expect(202);
    t.admin.patch(&format!("/api/v2/webhooks/{hook}"), &json!({"active": false})).await.expect(200);
    let usage: Value = t.admin.get("/api/v2/usage").await.expect(200).json();
    assert_eq!(usage["events"], json!({"used": 2, "limit": null}), "{usage}");
    weir.stop().await;
}

#[tokio::test]
async fn usage_is_any_clients_to_read_and_shows_on_the_settings_pages() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::free()).await;
    // A free organisation has no API for webhooks, but may read where it stands.
    t.admin.get("/api/v2/webhooks").await.expect(402);
    let usage = t.publisher.get("/api/v2/usage").await.expect(200).json();
    let free = weir.builder.config().plans.rules("free").limits.clone();
    assert_eq!(usage["plan"], "free");
    assert_eq!(usage["events"], json!({"used": 0, "limit": free.events_per_day}));
    assert_eq!(usage["webhooks"], json!({"used": 0, "limit": free.webhooks}));
    assert_eq!(usage["plugin_bytes"], json!({"used": 0, "limit": 0}));
    t.publisher.get("/api/v2/usage?x=1").await.expect(422);
    weir.http().get("/api/v2/usage").send().await.expect(401);

    t.publisher.publish(&work_order_event("wo_1")).await;
    user(&weir, &t.org_id, "usage@example.com", false).await;
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "usage@example.com", PASSWORD).await;
    let (cookie, _) = session.expect("signed in");
    let page = http.get("/settings/webhooks").header("cookie", &cookie).send().await.expect(200).text();
    assert!(page.contains("Plan: free"), "{page}");
    let limit = free.events_per_day.unwrap();
    assert!(page.contains(&format!("1 of {limit}")), "{page}");
    assert!(page.contains(&format!(r#"<meter min="0" max="{limit}""#)), "{page}");
    weir.stop().await;
}

#[tokio::test]
async fn each_plans_retention_holds_in_redis() {
    let short_plan = "[plans.short]\napi_integrations = true\ndelivery_retention = \"1h\"\nevent_retention = \"30m\"\n";
    let weir = WeirBuilder::shared().env("WEIR_DELIVERY_RETENTION", "7d").config_file(short_plan).start().await;
    let plans = weir.builder.config().plans.clone();
    let short = weir.tenant(Plan::parse("short").unwrap()).await;
    let pro = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let mut kept = Vec::new();
    for t in [&short, &pro] {
        let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
        let first = t.publisher.publish(&work_order_event("wo_1")).await;
        // A newer event about the same record: the first is no longer its snapshot, and
        // gets its organisation's retention as its TTL.
        let mut newer = work_order_event("wo_1");
        newer["created_at"] = json!(weir::time::format_millis(weir::time::now_millis() + 1000));
        t.publisher.publish(&newer).await;
        let delivery = t.admin.settled(hook["id"].as_str().unwrap(), 2).await.remove(0);
        kept.push((t, first, delivery["id"].as_str().unwrap().to_owned()));
    }
    let keys = weir.store.keys();
    let mut conn = crate::support::weir::raw_conn(&weir.builder);
    let ttl = |conn: &mut Box<dyn redis::ConnectionLike>, key: &str| -> i64 {
        redis::cmd("PTTL").arg(key).query(&mut **conn).unwrap()
    };
    const HOUR: i64 = 3_600_000;
    for (t, first, _) in &kept {
        let p = keys.partition_of_subject(&t.org_id, "WorkOrder", "wo_1");
        let event_key = keys.event(p, &t.org_id, first);
        let event_ttl =
            crate::support::eventually("the superseded event has a TTL", Duration::from_secs(20), async || {
                let ms = ttl(&mut conn, &event_key);
                (ms > 0).then_some(ms)
            })
            .await;
        // The event log's hour expires its plan's event retention after the hour ends.
        let hour = (weir::time::now_millis() / HOUR as u64) as u32;
        let log_ttl = [hour, hour - 1].iter().map(|h| ttl(&mut conn, &keys.event_log(p, &t.org_id, *h))).max().unwrap();
        if t.org_id == short.org_id {
            assert!(event_ttl <= HOUR, "the short plan keeps its events an hour: {event_ttl}");
            assert!((1..=HOUR + HOUR / 2).contains(&log_ttl), "its log, 30 minutes past the hour: {log_ttl}");
        } else {
            assert!(event_ttl > 6 * 24 * HOUR, "pro keeps the installation's week: {event_ttl}");
            assert!(log_ttl > 6 * 24 * HOUR, "{log_ttl}");
        }
    }
    // A replay reaches back its plan's event retention: 45 minutes is past the short one's.
    let since = json!({"since": weir::time::format_millis(weir::time::now_millis() - 45 * 60_000)});
    for (t, hooks_expected) in [(&short, 422), (&pro, 202)] {
        let hook =
            t.admin.get("/api/v2/webhooks").await.expect(200).json()["data"][0]["id"].as_str().unwrap().to_owned();
        let resp = t.admin.post(&format!("/api/v2/webhooks/{hook}/replay"), &since).await.expect(hooks_expected);
        if hooks_expected == 422 {
            assert_eq!(resp.error_fields(), vec!["since".to_owned()], "{}", resp.text());
        }
    }
    // Two days on, the trim takes the short plan's deliveries and leaves pro's.
    let later = weir::time::now_millis() + 2 * 86_400_000;
    weir.store.trim().trim_deliveries(later, &|plan| plans.delivery_retention(plan)).await.unwrap();
    let (short_delivery, pro_delivery) = (&kept[0].2, &kept[1].2);
    short.admin.get(&format!("/api/v2/webhook_deliveries/{short_delivery}")).await.expect(404);
    pro.admin.get(&format!("/api/v2/webhook_deliveries/{pro_delivery}")).await.expect(200);
    weir.stop().await;
}

#[tokio::test]
async fn an_organisation_on_a_plan_no_longer_configured_is_named_at_start_and_gets_nothing_new() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let gone = weir.tenant(Plan::parse("gold").unwrap()).await;
    // The API and publishing: nothing, with the contract's answers.
    gone.admin.get("/api/v2/webhooks").await.expect(402);
    let refused = gone.publisher.post("/api/v2/events", &work_order_event("wo_1")).await.expect(429);
    assert_eq!(refused.error_code(), "quota_exceeded");
    let usage = gone.publisher.get("/api/v2/usage").await.expect(200).json();
    assert_eq!((usage["plan"].clone(), usage["events"].clone()), (json!("gold"), json!({"used": 0, "limit": 0})));
    // A `weir serve` starting on this data set says so in its log.
    let log = crate::support::temp_dir("plans").join("weir.log");
    let mut serve = builder.spawn_logging_to(&log);
    serve.wait_ready().await;
    let said = crate::support::eventually("the log names the plan", Duration::from_secs(10), async || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.contains("a plan the configuration does not have").then_some(text)
    })
    .await;
    assert!(said.contains("gold"), "{said}");
    serve.signal("TERM");
    weir.stop().await;
}
