//! Hardening, round 4 (contract §8 "Hardening"): a webhook's header values are secrets
//! wherever a delivery is shown, the rules for header names and values, reserved event ids
//! and creator, operational notices that cannot multiply, per-organisation limits, and the
//! small leaks of a hostile probe. (Slow bodies and plugin compiles: `hardening_load`.)

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::settings::{PASSWORD, http_sign_in, user};
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{WeirBuilder, raw_conn, raw_keys, work_order_event};

#[tokio::test]
async fn header_values_are_sent_but_never_kept_with_a_delivery_nor_shown_to_a_member() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let secret = "Bearer gw-s3cr3t-9f2c";
    let cookie = "session=c00kie-s3cr3t";
    let created = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"url": receiver.url, "subscribed_actions": ["work_order_created"],
                "headers": {"Authorization": secret, "Cookie": cookie}}),
        )
        .await
        .expect(201)
        .json();
    let id = created["id"].as_str().unwrap().to_owned();
    t.publisher.publish(&work_order_event("wo_secret")).await;
    let got = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!((got[0].header("authorization"), got[0].header("cookie")), (secret.to_owned(), cookie.to_owned()));

    // The API's record names the headers as sent, without their values.
    let delivery = t.admin.settled(&id, 1).await.remove(0);
    let headers = &delivery["request"]["headers"];
    assert_eq!((&headers["authorization"], &headers["cookie"]), (&json!(""), &json!("")), "{delivery}");
    let text = delivery.to_string();
    assert!(!text.contains("s3cr3t"), "{text}");

    // Nor does the stored row hold them (so a rotation leaves no old value behind).
    let dlv = delivery["id"].as_str().unwrap();
    let row = dlv.trim_start_matches("dlv_");
    let rows = raw_keys(&weir.builder, &format!("{}*:d:{row}", weir.builder.prefix()));
    assert!(!rows.is_empty(), "the delivery's row is found");
    let mut conn = raw_conn(&weir.builder);
    for key in rows {
        let fields: Vec<Vec<u8>> = redis::cmd("HGETALL").arg(&key).query(&mut *conn).unwrap();
        for field in fields {
            assert!(!String::from_utf8_lossy(&field).contains("s3cr3t"), "{key} keeps a header value");
        }
    }

    // A member (no admin role) on Settings sees the names only, the admin the same.
    for (email, admin) in [("member@example.com", false), ("owner@example.com", true)] {
        user(&weir, &t.org_id, email, admin).await;
        let http = weir.http();
        let (_, session) = http_sign_in(&http, email, PASSWORD).await;
        let (pair, _) = session.expect("signed in");
        let page = http.get(&format!("/settings/deliveries/{dlv}")).header("cookie", &pair).send().await.expect(200);
        let page = page.text();
        assert!(page.contains("authorization"), "the header is named");
        assert!(!page.contains("s3cr3t"), "{email} sees a header value");
    }
    // The webhook itself still shows them to its admins (they are its settings).
    let hook = t.admin.get(&format!("/api/v2/webhooks/{id}")).await.expect(200).json();
    assert_eq!(hook["headers"]["Authorization"], secret);
    weir.stop().await;
}

#[tokio::test]
async fn header_rules_refuse_control_characters_hop_by_hop_names_and_more_than_8_kib() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let big = "v".repeat(4000);
    for bad in [
        json!({"X-A": "next\u{85}line"}),
        json!({"X-A": "line\u{2028}separator"}),
        json!({"X-A": "para\u{2029}separator"}),
        json!({"X-A": "tab\tinside"}),
        json!({"Proxy-Authenticate": "Basic"}),
        json!({"Trailers": "x"}),
        json!({"TE": "trailers"}),
        json!({"Keep-Alive": "timeout=5"}),
        json!({"X-1": big, "X-2": big, "X-3": big}),
    ] {
        let resp = t
            .admin
            .post(
                "/api/v2/webhooks",
                &json!({"url": "http://127.0.0.1:9/", "subscribed_actions": ["*"], "headers": bad}),
            )
            .await;
        assert_eq!(resp.status, 422, "{bad}: {}", resp.text());
        assert_eq!(resp.error_fields(), vec!["headers".to_owned()], "{bad}");
    }
    let long_name = "X".repeat(100_000);
    let resp = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"url": "http://127.0.0.1:9/", "subscribed_actions": ["*"], "headers": {long_name: "v"}}),
        )
        .await;
    assert_eq!(resp.status, 422);
    assert!(resp.text().len() < 1_000, "the long name is not echoed whole: {} bytes", resp.text().len());
    weir.stop().await;
}

#[tokio::test]
async fn publishers_cannot_take_weirs_event_ids_nor_its_creator() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut event = work_order_event("wo_spoof");
    event["id"] = json!("evt_weir_0123456789abcdef01234567");
    let resp = t.publisher.post("/api/v2/events", &event).await;
    assert_eq!((resp.status, resp.error_fields()), (422, vec!["id".to_owned()]), "{}", resp.text());
    let mut event = work_order_event("wo_spoof");
    event["creator"] = json!({"id": "weir", "name": "Weir"});
    let resp = t.publisher.post("/api/v2/events", &event).await;
    assert_eq!((resp.status, resp.error_fields()), (422, vec!["creator.id".to_owned()]), "{}", resp.text());
    // Ids and creators merely like them are a publisher's own.
    let mut event = work_order_event("wo_fine");
    event["id"] = json!("evt_weirdly_named");
    event["creator"] = json!({"id": "weird", "name": "W"});
    t.publisher.post("/api/v2/events", &event).await.expect(202);
    weir.stop().await;
}

#[tokio::test]
async fn failures_at_many_webhooks_send_a_bounded_number_of_notices_not_n_squared() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let failing = Receiver::replying(Reply::Status(500)).await;
    const N: usize = 14;
    for _ in 0..N {
        t.admin.create_webhook(&failing.url, &["work_order_created", "webhook_delivery_failed"]).await;
    }
    t.publisher.publish(&work_order_event("wo_fanout")).await;
    // N deliveries of the event fail (4 attempts each); of their N notices, the
    // organisation's budget (10 at once) lets 10 out, each to the N − 1 other webhooks.
    let notices = 10;
    let expected = N * 4 + notices * (N - 1) * 4;
    let got = failing.wait_for(expected, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let got_later = failing.received().len();
    assert_eq!(got_later, expected, "no more than that ({} at first)", got.len());
    let metrics = weir.http().get("/metrics").send().await.expect(200).text();
    assert!(metrics.contains(&format!("weir_notices_suppressed_total {}", N - notices)), "{metrics}");
    weir.stop().await;
}

#[tokio::test]
async fn an_organisation_has_its_plans_webhooks_and_no_more() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::free()).await;
    user(&weir, &t.org_id, "free@example.com", true).await;
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "free@example.com", PASSWORD).await;
    let (cookie, csrf) = session.expect("signed in");
    let create = async |n: usize| {
        http.post("/settings/webhooks")
            .header("cookie", &cookie)
            .form(&[
                ("_csrf", csrf.as_str()),
                ("name", &format!("hook {n}")),
                ("url", "http://127.0.0.1:9/x"),
                ("subscribed_actions", "form_completed"),
            ])
            .send()
            .await
    };
    let free = weir.builder.config().plans.rules("free").limits.webhooks.expect("free has a webhook limit") as usize;
    for n in 0..free {
        assert_eq!(create(n).await.status, 303);
    }
    // The form shows why, as it shows any refusal.
    let refused = create(free).await;
    assert_eq!(refused.status, 422, "{}", refused.text());
    assert!(refused.text().contains("100 webhooks, the most its plan (free) allows"), "{}", refused.text());
    assert_eq!(weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap().len(), free);
    weir.stop().await;
}

#[tokio::test]
async fn the_rules_mean_what_they_say_replay_until_null_and_settings_rate_limits() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let hook = t.admin.create_webhook("http://127.0.0.1:9/x", &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    let since = weir::time::format_millis(weir::time::now_millis() - 60_000);
    // `"until": null` is the same as leaving it out.
    t.admin.post(&format!("/api/v2/webhooks/{id}/replay"), &json!({"since": since, "until": null})).await.expect(202);
    let resp = t.admin.post(&format!("/api/v2/webhooks/{id}/replay"), &json!({"since": since, "until": 5})).await;
    assert_eq!((resp.status, resp.error_fields()), (422, vec!["until".to_owned()]));

    // Settings takes a rate limit as the API does: a plain whole number.
    user(&weir, &t.org_id, "rates@example.com", true).await;
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "rates@example.com", PASSWORD).await;
    let (cookie, csrf) = session.expect("signed in");
    for (rate, status) in [(" 7 ", 422), ("+8", 422), ("09", 422), ("7.0", 422), ("12", 303)] {
        let resp = http
            .post(&format!("/settings/webhooks/{id}"))
            .header("cookie", &cookie)
            .form(&[
                ("_csrf", csrf.as_str()),
                ("url", "http://127.0.0.1:9/x"),
                ("subscribed_actions", "work_order_created"),
                ("rate_limit", rate),
            ])
            .send()
            .await;
        assert_eq!(resp.status, status, "rate limit {rate:?}: {}", resp.text());
    }
    let stored = weir.store.webhooks().get_webhook(&t.org_id, id).await.unwrap().unwrap();
    assert_eq!(stored.rate_limit, Some(12));
    weir.stop().await;
}

#[tokio::test]
async fn small_leaks_are_closed() {
    let weir = WeirBuilder::shared().env("WEIR_ALLOW_PRIVATE_TARGETS", "").start().await;
    let t = weir.tenant(Plan::pro()).await;
    // The IPv4-translated form of loopback is loopback.
    let resp = t
        .admin
        .post("/api/v2/webhooks", &json!({"url": "http://[::ffff:0:127.0.0.1]/", "subscribed_actions": ["*"]}))
        .await;
    assert_eq!((resp.status, resp.error_fields()), (422, vec!["url".to_owned()]), "{}", resp.text());

    // Listing another organisation's webhook's deliveries: an empty last page.
    let other = weir.tenant(Plan::pro()).await;
    let theirs = other.admin.create_webhook("https://8.8.8.8/x", &["work_order_created"]).await;
    let theirs = theirs["id"].as_str().unwrap();
    other.publisher.publish(&work_order_event("wo_theirs")).await;
    for _ in 0..3 {
        t.publisher.publish(&work_order_event("wo_mine")).await;
    }
    let page = t.admin.get(&format!("/api/v2/webhook_deliveries?webhook_id={theirs}&limit=1")).await.expect(200).json();
    assert_eq!(page, json!({"data": [], "next_cursor": null}));
    weir.stop().await;
}
