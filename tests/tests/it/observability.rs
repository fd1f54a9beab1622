//! Logs and metrics that tools read: `WEIR_LOG_FORMAT=json` lines, plain text off a
//! terminal, and `/metrics` parsed by the Prometheus text parser of `prometheus_client`.

use std::time::Duration;

use serde_json::Value;
use weir::store::tenants::orgs::Plan;

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
    let t = api.tenant(Plan::pro()).await;
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
    // And the metrics count both, with no tenant in their labels.
    let metrics = serve.http().get("/metrics").send().await.expect(200).text();
    assert!(metrics.contains("weir_webhooks_deactivated_total{reason=\"failing\"} 1"), "{metrics}");
    assert!(
        metrics.contains("weir_attempts_total{result=\"failure\",class=\"5xx\",destination=\"http\"} 2"),
        "{metrics}"
    );
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

#[tokio::test]
async fn metrics_parse_as_the_prometheus_text_format_with_typed_counters_and_no_tenant_labels() {
    let weir = crate::support::weir::Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_metrics")).await;
    t.admin.settled(hook["id"].as_str().unwrap(), 1).await;

    let resp = weir.http().get("/metrics").send().await.expect(200);
    assert_eq!(resp.header("content-type").as_deref(), Some("text/plain; version=0.0.4"));
    let parsed = crate::support::python::run("parse_metrics.py", &[], resp.text().as_bytes());
    let families: serde_json::Map<String, Value> = serde_json::from_str(&parsed).unwrap();
    let kind = |name: &str| families.get(name).map(|f| f["type"].as_str().unwrap().to_owned());
    for counter in [
        "weir_tokens_issued",
        "weir_events_published",
        "weir_dead_letters",
        "weir_deliveries",
        "weir_attempts",
        "weir_plugin_compilations",
        "weir_plugin_cache_loads",
        "weir_plugin_calls",
    ] {
        assert_eq!(kind(counter).as_deref(), Some("counter"), "{counter}: {parsed}");
    }
    assert_eq!(kind("weir_attempt_duration_seconds").as_deref(), Some("histogram"), "{parsed}");
    // The Grafana dashboard in examples/ queries only series Weir has.
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::python::repo().join("examples/grafana-dashboard.json")).unwrap(),
    )
    .unwrap();
    let exprs: Vec<&str> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .map(|t| t["expr"].as_str().unwrap())
        .collect();
    assert!(exprs.len() >= 10, "{exprs:?}");
    for expr in exprs {
        for (at, _) in expr.match_indices("weir_") {
            let name: String = expr[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            let family =
                ["_total", "_bucket", "_sum", "_count"].iter().find_map(|s| name.strip_suffix(s)).unwrap_or(&name);
            assert!(
                kind(family).is_some() || family == "weir_webhooks_deactivated",
                "the dashboard queries {name}, which Weir does not have: {expr}"
            );
        }
    }
    for gauge in ["weir_queue_ready", "weir_queue_scheduled", "weir_deliveries_in_flight"] {
        assert_eq!(kind(gauge).as_deref(), Some("gauge"), "{gauge}: {parsed}");
    }
    // (Labelled families such as weir_webhooks_deactivated appear with their first sample.)
    assert!(families.values().all(|f| f["type"] != "unknown"), "every family is typed: {parsed}");
    let samples: Vec<&Value> = families.values().flat_map(|f| f["samples"].as_array().unwrap()).collect();
    let value = |name: &str, labels: Value| {
        samples.iter().find(|s| s["name"] == name && s["labels"] == labels).map(|s| s["value"].as_f64().unwrap())
    };
    assert!(value("weir_deliveries_total", serde_json::json!({"status": "succeeded"})) >= Some(1.0), "{parsed}");
    assert!(
        value("weir_attempts_total", serde_json::json!({"result": "success", "class": "2xx", "destination": "http"}))
            >= Some(1.0)
    );
    assert!(value("weir_attempt_duration_seconds_count", serde_json::json!({"result": "success"})) >= Some(1.0));
    // Bounded cardinality: no label names a tenant, a webhook or a delivery.
    let allowed = ["status", "result", "class", "reason", "le", "destination"];
    for sample in &samples {
        for label in sample["labels"].as_object().unwrap().keys() {
            assert!(allowed.contains(&label.as_str()), "label {label} in {sample}");
        }
    }
}
