//! An attempt that fails inside Weir (contract §10 "Hardening"): a panic in a destination's
//! send — here lapin's, on an AMQP virtual host over 255 bytes, the length its protocol
//! bounds — is a failed attempt recorded as an internal error, counted, logged once with its
//! webhook's id; it holds no worker, so another organisation's deliveries go on; and
//! `SIGTERM` still ends the process.
//!
//! The webhooks are stored as a release before the check stored them: made with a good
//! virtual host, then their stored destination given the long one (save now refuses it:
//! `destinations.rs`), which is how such records would reach this release after an upgrade.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::api::Api;
use crate::support::eventually;
use crate::support::rabbitmq::RabbitMq;
use crate::support::receiver::Receiver;
use crate::support::weir::{WeirBuilder, raw_conn, work_order_event};

/// AMQP webhooks of one organisation whose panics would each have kept a worker.
const PANICKING: usize = 6;

#[tokio::test]
async fn a_panicking_attempt_is_a_failed_attempt_holds_no_worker_and_sigterm_still_ends_weir() {
    let broker = RabbitMq::start();
    let (_connection, _channel) = broker.channel("orders").await;
    let receiver = Receiver::start().await;
    // Four workers: before the fix, four panics took them all.
    let builder = WeirBuilder::shared().env("WEIR_WORKER_CONCURRENCY", "4").env("WEIR_RETRY_SCHEDULE", "2s,2s,2s");
    let setup = builder.start().await;
    let noisy = setup.tenant(Plan::pro()).await;
    let quiet = setup.tenant(Plan::pro()).await;
    let mut conn = raw_conn(&builder);
    let long_vhost = format!("amqp://127.0.0.1:{}/{}", broker.port, "v".repeat(300));
    let mut panicking = Vec::new();
    for _ in 0..PANICKING {
        let body = json!({"subscribed_actions": ["work_order_created"], "destination": {"type": "amqp",
            "url": format!("{}/%2f", broker.url("guest")), "exchange": "", "routing_key": "orders"}});
        let hook = noisy.admin.post("/api/v2/webhooks", &body).await.expect(201).json();
        let id = hook["id"].as_str().unwrap().to_owned();
        let key = setup.store.keys().webhook(&noisy.org_id, &id);
        let spec = json!({"type": "amqp", "url": long_vhost, "exchange": "", "routing_key": "orders"});
        let _: () = redis::cmd("HSET").arg(&key).arg("destination").arg(spec.to_string()).query(&mut *conn).unwrap();
        panicking.push(id);
    }
    let quiet_hook = quiet.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    setup.stop().await;

    let log = crate::support::temp_dir("panics").join("weir.log");
    let mut serve = builder.env("WEIR_LOG", "info").spawn_logging_to(&log);
    serve.wait_ready().await;
    let on_serve = |api: &Api| Api { http: serve.http(), ..api.clone() };
    let (noisy_admin, noisy_publisher) = (on_serve(&noisy.admin), on_serve(&noisy.publisher));
    let (quiet_admin, quiet_publisher) = (on_serve(&quiet.admin), on_serve(&quiet.publisher));

    noisy_publisher.publish(&work_order_event("wo_noisy")).await;
    // Every panicking webhook's first attempt is recorded, failed, as an internal error.
    for id in &panicking {
        let attempt = eventually("the first attempt recorded", Duration::from_secs(20), async || {
            noisy_admin.deliveries_of(id).await.first()?["attempts"].as_array()?.first().cloned()
        })
        .await;
        let error = attempt["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("internal error"), "{attempt}");
        assert!(!error.contains("ShortString"), "the panic's own words stay in the log: {attempt}");
    }
    let delivery = &noisy_admin.deliveries_of(&panicking[0]).await[0];
    assert_eq!(delivery["status"], "pending", "retried on the schedule: {delivery}");

    // The other organisation's deliveries are not held behind them.
    for i in 0..20 {
        quiet_publisher.publish(&work_order_event(&format!("wo_quiet_{i}"))).await;
    }
    receiver.wait_for(20, Duration::from_secs(20)).await;
    let quiet_id = quiet_hook["id"].as_str().unwrap();
    let settled = quiet_admin.settled(quiet_id, 20).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "{settled:?}");

    let internal = quiet_admin.metric("weir_delivery_internal_errors_total").await.unwrap_or(0.0);
    assert!(internal >= PANICKING as f64, "every internal error counted: {internal}");

    let status = serve.terminate_within(Duration::from_secs(30)).expect("SIGTERM ended weir serve within 30 s");
    assert!(status.success(), "{status:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    let logged: Vec<&str> = text.lines().filter(|l| l.contains("ShortString")).collect();
    let first_attempts = logged.iter().filter(|l| l.contains(&panicking[0]) && l.contains("attempt=1")).count();
    assert_eq!(first_attempts, 1, "one line for the first attempt's panic, with its webhook's id:\n{text}");
    assert!(!text.contains("panicked at"), "the panic hook's own line is left out:\n{text}");
    assert!(logged.iter().all(|l| l.contains("internal error")), "{logged:?}");
}
