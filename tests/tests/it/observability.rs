//! Logs and metrics that tools read: `WEIR_LOG_FORMAT=json` lines, plain text off a
//! terminal, and `/metrics` parsed by the Prometheus text parser of `prometheus_client`.

use std::time::Duration;

use serde_json::Value;
use weir::store::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::temp_dir;
use crate::support::weir::{WeirBuilder, work_order_event};

/// The JSON objects of a log file (every line must be one).
fn json_lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}")))
        .collect()
}

#[tokio::test]
async fn json_logs_carry_ids_and_the_cause_of_every_failed_attempt() {
    let builder = WeirBuilder::shared()
        .env("WEIR_RETRY_SCHEDULE", "1s")
        .env("WEIR_DEACTIVATE_AFTER_FAILURES", "2")
        .env("WEIR_DEACTIVATE_AFTER", "0s");
    let api = builder.clone().env("WEIR_WORKERS", "false").start().await;
    let t = api.tenant(Plan::Pro).await;
    let receiver = Receiver::replying(Reply::Status(503)).await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    let hook_id = hook["id"].as_str().unwrap();

    let log = temp_dir("jsonlog").join("weir.log");
    let serve = builder.clone().env("WEIR_LOG_FORMAT", "json").env("WEIR_LOG", "info").spawn_logging_to(&log);
    serve.wait_ready().await;
    let event = t.publisher.publish(&work_order_event("wo_log")).await;
    receiver.wait_for(2, Duration::from_secs(20)).await;
    let delivery = t.admin.settled(hook_id, 1).await[0]["id"].as_str().unwrap().to_owned();
    assert!(!event.is_empty());

    let lines = eventually("the deactivation is logged", Duration::from_secs(10), async || {
        let lines = json_lines(&log);
        lines
            .iter()
            .any(|l| l["message"].as_str().is_some_and(|m| m.starts_with("webhook deactivated")))
            .then_some(lines)
    })
    .await;
    assert!(lines.iter().all(|l| l["timestamp"].is_string() && l["level"].is_string()), "{lines:?}");
    // Each failed attempt once, at warn, with its cause and the ids.
    let failed: Vec<&Value> =
        lines.iter().filter(|l| l["message"].as_str().unwrap_or("").starts_with("delivery attempt failed")).collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    for (line, attempt) in failed.iter().zip([1, 2]) {
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["delivery_id"], delivery.as_str());
        assert_eq!(line["webhook_id"], hook_id);
        assert_eq!(line["org_id"], t.org_id.as_str());
        assert_eq!(line["attempt"], attempt);
        assert_eq!(line["cause"], "HTTP 503");
    }
    assert!(failed[0]["next"].as_str().unwrap().starts_with("retry in"), "{:?}", failed[0]);
    // The deactivation names its real reason.
    let off = lines.iter().find(|l| l["message"].as_str().unwrap_or("").starts_with("webhook deactivated")).unwrap();
    assert_eq!(off["webhook_id"], hook_id);
    assert_eq!(off["reason"], "failing");
    assert!(off["message"].as_str().unwrap().contains("2 or more failed attempts in a row"), "{off}");
}

#[tokio::test]
async fn text_logs_have_no_colour_codes_off_a_terminal() {
    let builder = WeirBuilder::shared();
    let log = temp_dir("textlog").join("weir.log");
    let mut serve = builder.env("WEIR_LOG", "info").spawn_logging_to(&log);
    serve.wait_ready().await;
    assert!(serve.signal("TERM").success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("weir is serving"), "{text}");
    assert!(!text.contains('\u{1b}'), "ANSI escape codes in a log written to a file:\n{text}");
}
