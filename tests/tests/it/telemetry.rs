//! OpenTelemetry (contract §8): Weir exports spans over OTLP/HTTP to a real receiver that
//! decodes them with the official protobuf definitions, in both encodings — a publish
//! continuing the publisher's trace, an attempt whose span id the subscriber receives as
//! its parent, plugin calls under it, failed attempts as errors linked to the first, a
//! replay as a trace of its own; sampling off exports nothing; a collector that never
//! answers costs deliveries nothing and its spans are counted as dropped.

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::otlp::{Collector, Hanging};
use crate::support::plugins::plugin_wasm;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{WeirBuilder, export_event, work_order_event};

/// SERVER, CLIENT and INTERNAL in OTLP's numbering; status ERROR.
const SERVER: i64 = 2;
const CLIENT: i64 = 3;
const INTERNAL: i64 = 1;
const ERROR: i64 = 2;

const PUBLISHER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PUBLISHER_SPAN: &str = "00f067aa0ba902b7";

fn exporting(collector_endpoint: &str) -> WeirBuilder {
    WeirBuilder::shared()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector_endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
}

fn attr<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

async fn publish_traced(t: &crate::support::weir::Tenant, event: &Value, flags: &str) -> String {
    t.publisher.publish_traced(event, &format!("00-{PUBLISHER_TRACE}-{PUBLISHER_SPAN}-{flags}")).await
}

#[tokio::test]
async fn a_published_and_delivered_event_is_one_trace_from_publisher_to_subscriber() {
    let collector = Collector::start();
    let weir = exporting(&collector.endpoint()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let plugin = t.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    let config = json!({"exportable_types": ["Form"], "exportable_ids": ["frm_1"], "creator_ids": ["cli_a"]});
    // A query in the URL (it may carry a credential): it must not reach `url.full`. (User
    // info is refused in a webhook's URL.)
    let url = format!("{}?token=s3cret", receiver.url);
    let webhook = t
        .admin
        .create_webhook_with(&url, &["report_export_completed"], json!([{"plugin_id": plugin["id"], "config": config}]))
        .await;
    let event_id = publish_traced(&t, &export_event("rex_1", ("Form", "frm_1"), "cli_a"), "01").await;
    let got = receiver.wait_for(1, Duration::from_secs(20)).await;
    let sent_parent = got[0].header("traceparent");

    let publish = collector.span("the publish span", |s| s["kind"] == SERVER).await;
    assert_eq!(publish["trace_id"], PUBLISHER_TRACE, "{publish}");
    assert_eq!(publish["parent_span_id"], PUBLISHER_SPAN, "the publisher's span is its parent: {publish}");
    assert_eq!(publish["name"], "POST /api/v2/events");
    assert_eq!(attr(&publish, "http.request.method"), "POST");
    assert_eq!(attr(&publish, "http.response.status_code"), 202);
    assert_eq!(attr(&publish, "weir.event.id"), event_id.as_str());
    assert_eq!(attr(&publish, "weir.organisation.id"), t.org_id.as_str());
    assert_eq!(publish["resource"]["service.name"], "weir");
    assert_eq!(publish["resource"]["deployment.environment"], "test");
    assert_eq!(publish["encoding"], "protobuf", "http/protobuf by default");
    assert_eq!(publish["path"], "/v1/traces");

    let attempt = collector.span("the attempt span", |s| s["kind"] == CLIENT).await;
    assert_eq!(attempt["trace_id"], PUBLISHER_TRACE);
    assert_eq!(attempt["parent_span_id"], publish["span_id"], "the publish span is its parent");
    assert_eq!(
        sent_parent,
        format!("00-{PUBLISHER_TRACE}-{}-01", attempt["span_id"].as_str().unwrap()),
        "the subscriber's parent is the attempt's span"
    );
    assert_eq!(attr(&attempt, "http.request.method"), "POST");
    let full = attr(&attempt, "url.full").as_str().unwrap();
    assert!(!full.contains("s3cret") && !full.contains('?'), "{full}");
    assert!(full.starts_with("http://127.0.0.1:"), "{full}");
    assert_eq!(attr(&attempt, "server.address"), "127.0.0.1");
    assert_eq!(attr(&attempt, "http.response.status_code"), 200);
    assert_eq!(attempt["status"], 0, "unset on success");
    assert_eq!(attr(&attempt, "weir.webhook.id"), &webhook["id"]);
    assert_eq!(attr(&attempt, "weir.event.id"), event_id.as_str());
    assert_eq!(attr(&attempt, "weir.organisation.id"), t.org_id.as_str());
    assert_eq!(attr(&attempt, "weir.attempt"), 1);
    let delivery_id = attr(&attempt, "weir.delivery.id").as_str().unwrap().to_owned();
    assert!(delivery_id.starts_with("dlv_"));

    let call = collector.span("the plugin call's span", |s| s["name"] == "plugin").await;
    assert_eq!(call["kind"], INTERNAL);
    assert_eq!(call["parent_span_id"], attempt["span_id"], "a child of its attempt");
    assert_eq!(attr(&call, "weir.plugin.id"), &plugin["id"]);
    assert_eq!(attr(&call, "weir.plugin.verdict"), "deliver");
    assert!(attr(&call, "weir.plugin.fuel").as_i64().is_some_and(|f| f > 0), "{call}");

    // A replay is a trace of its own.
    t.admin
        .post(
            &format!("/api/v2/webhooks/{}/replay", webhook["id"].as_str().unwrap()),
            &json!({"since": weir::time::format_millis(weir::time::now_millis() - 3_600_000)}),
        )
        .await
        .expect(202);
    let replay = collector.span("the replay's span", |s| s["name"] == "replay").await;
    assert_ne!(replay["trace_id"], PUBLISHER_TRACE);
    assert_eq!(replay["parent_span_id"], "");
    assert_eq!(attr(&replay, "weir.webhook.id"), &webhook["id"]);
    let exported = t.admin.metric("weir_otel_spans_exported_total").await;
    assert!(exported.is_some_and(|n| n > 0.0), "{exported:?}");
    weir.stop().await;
}

#[tokio::test]
async fn a_failed_attempt_is_an_error_span_and_its_retry_links_to_the_first_over_http_json() {
    let collector = Collector::start();
    let weir = exporting(&collector.endpoint()).env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Status(500)).await;
    receiver.sequence(vec![Reply::Status(500), Reply::Status(200)]);
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    // No traceparent: Weir starts the trace.
    let event_id = t.publisher.publish(&work_order_event("wo_1")).await;
    receiver.wait_for(2, Duration::from_secs(20)).await;
    let attempt = |n: i64| {
        let collector = &collector;
        async move { collector.span(&format!("attempt {n}"), |s| s["kind"] == CLIENT && attr(s, "weir.attempt") == n).await }
    };
    let (first, second) = (attempt(1).await, attempt(2).await);
    assert_eq!(first["encoding"], "json");
    assert_eq!(first["status"], ERROR, "{first}");
    assert_eq!(first["status_message"], "HTTP 500");
    assert_eq!(attr(&first, "error.type"), "500");
    assert_eq!(attr(&first, "http.response.status_code"), 500);
    assert_eq!(second["status"], 0);
    assert_eq!(
        second["links"],
        json!([{"trace_id": first["trace_id"], "span_id": first["span_id"]}]),
        "linked to the first"
    );
    assert_eq!(second["trace_id"], first["trace_id"]);
    assert_eq!(second["parent_span_id"], first["parent_span_id"], "both children of the publish span");
    let publish = collector.span("the publish span", |s| s["kind"] == SERVER).await;
    assert_eq!(publish["parent_span_id"], "", "a root: no publisher's trace");
    assert_eq!(publish["span_id"], first["parent_span_id"]);
    assert_eq!(attr(&publish, "weir.event.id"), event_id.as_str());
    assert!(collector.spans().iter().all(|s| s["encoding"] == "json"));
    let _ = webhook;
    weir.stop().await;
}

#[tokio::test]
async fn sampling_off_exports_nothing() {
    let collector = Collector::start();
    let weir = exporting(&collector.endpoint()).env("OTEL_TRACES_SAMPLER", "always_off").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    for i in 0..5 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    // A publisher's sampled trace too: Weir does not sample it, so neither may its
    // subscriber (flags 00 passed on, not the publisher's 01).
    publish_traced(&t, &work_order_event("wo_publisher_sampled"), "01").await;
    let settled = t.admin.settled(webhook["id"].as_str().unwrap(), 6).await;
    let got = receiver.wait_for(6, Duration::from_secs(20)).await;
    for request in &got {
        let sent = request.header("traceparent");
        assert!(sent.ends_with("-00"), "an unsampled trace is passed on unsampled: {sent}");
    }
    assert!(got.iter().any(|r| r.header("traceparent").starts_with(&format!("00-{PUBLISHER_TRACE}-"))));
    // The delivery record shows the header as it was sent.
    for delivery in &settled {
        let id = delivery["id"].as_str().unwrap();
        let shown = t.admin.get(&format!("/api/v2/webhook_deliveries/{id}")).await.expect(200).json();
        let header = shown["request"]["headers"]["traceparent"].as_str().unwrap_or_default().to_owned();
        assert!(got.iter().any(|r| r.header("traceparent") == header), "{id} shows {header}, which was not sent");
    }
    weir.stop().await;
    // A publisher that does not sample its trace (flags 00) under the default sampler,
    // which follows the parent: nothing either.
    let weir = exporting(&collector.endpoint()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    publish_traced(&t, &work_order_event("wo_unsampled"), "00").await;
    t.admin.settled(webhook["id"].as_str().unwrap(), 1).await;
    // And one it samples: its spans arrive (so the silence above is sampling's).
    publish_traced(&t, &work_order_event("wo_sampled"), "01").await;
    collector.span("the sampled trace's attempt", |s| s["kind"] == CLIENT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let spans = collector.spans();
    assert!(spans.iter().all(|s| s["trace_id"] == PUBLISHER_TRACE), "only the sampled trace: {spans:?}");
    assert_eq!(spans.iter().filter(|s| s["kind"] == CLIENT).count(), 1, "{spans:?}");
    weir.stop().await;
}

#[tokio::test]
async fn a_collector_that_never_answers_costs_deliveries_nothing_and_its_spans_are_counted_as_dropped() {
    let hanging = Hanging::start().await;
    let weir = exporting(&format!("http://127.0.0.1:{}", hanging.port))
        .env("OTEL_BSP_MAX_QUEUE_SIZE", "8")
        .env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    for i in 0..40 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    // Every event delivered while the collector holds the first export unanswered.
    let delivered = t.admin.settled(webhook["id"].as_str().unwrap(), 40).await;
    assert!(delivered.iter().all(|d| d["status"] == "succeeded"));
    let dropped = eventually("spans counted as dropped", Duration::from_secs(10), async || {
        t.admin.metric("weir_otel_spans_dropped_total").await.filter(|n| *n > 0.0)
    })
    .await;
    // 80 spans (a publish and an attempt per event), at most 8 waiting and 4 being sent.
    assert!(dropped >= 60.0, "{dropped}");
    weir.stop().await;
}

#[tokio::test]
async fn metrics_go_over_otlp_too_as_the_same_series_as_the_metrics_endpoint() {
    let collector = Collector::start();
    let weir = exporting(&collector.endpoint())
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let webhook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    for i in 0..3 {
        t.publisher.publish(&work_order_event(&format!("wo_{i}"))).await;
    }
    t.admin.settled(webhook["id"].as_str().unwrap(), 3).await;
    let value = |m: &Value| m["points"][0]["value"].as_f64().unwrap_or(0.0);
    let published = eventually("weir_events_published over OTLP", Duration::from_secs(20), async || {
        collector.metrics().into_iter().rev().find(|m| m["metric"] == "weir_events_published" && value(m) >= 3.0)
    })
    .await;
    assert_eq!(published["kind"], "sum");
    assert_eq!(published["monotonic"], true);
    assert_eq!(published["encoding"], "json");
    assert_eq!(published["resource"]["service.name"], "weir");
    // The attempt histogram of an export made after the third attempt was counted (an export
    // can fall between a delivery settling and its attempt's measurement).
    let success = |m: &Value| {
        m["points"]
            .as_array()
            .and_then(|points| points.iter().find(|p| p["attributes"]["result"] == "success"))
            .cloned()
    };
    let attempts = eventually("the attempt histogram with 3 successes", Duration::from_secs(20), async || {
        collector.metrics().into_iter().rev().find(|m| {
            m["metric"] == "weir_attempt_duration_seconds"
                && success(m).is_some_and(|p| p["count"].as_u64().unwrap_or(0) >= 3)
        })
    })
    .await;
    assert_eq!(attempts["kind"], "histogram");
    let point = success(&attempts).unwrap();
    assert!(point["count"].as_u64().unwrap() >= 3, "{point}");
    let buckets: u64 = point["buckets"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).sum();
    assert_eq!(buckets, point["count"].as_u64().unwrap(), "every attempt in one bucket: {point}");
    assert_eq!(point["buckets"].as_array().unwrap().len(), point["bounds"].as_array().unwrap().len() + 1);
    // Every family /metrics serves is there (by the next export: a family can appear between two,
    // e.g. weir_attempts_slow when a loaded machine makes an attempt slow).
    let text = weir.http().get("/metrics").send().await.expect(200).text();
    let families: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .map(|l| l.split(' ').next().unwrap().trim_end_matches("_total").to_owned())
        .collect();
    assert!(families.len() > 5, "{text}");
    let missing = || {
        let names: Vec<String> = collector.metrics().iter().map(|m| m["metric"].as_str().unwrap().to_owned()).collect();
        families.iter().filter(|f| !names.contains(f)).cloned().collect::<Vec<_>>()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !missing().is_empty() {
        assert!(std::time::Instant::now() < deadline, "missing from OTLP: {:?}", missing());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    weir.stop().await;
    // OTEL_METRICS_EXPORTER=none: spans only.
    let other = Collector::start();
    let weir = exporting(&other.endpoint())
        .env("OTEL_METRIC_EXPORT_INTERVAL", "100")
        .env("OTEL_METRICS_EXPORTER", "none")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    t.publisher.publish(&work_order_event("wo_x")).await;
    other.span("a span", |s| s["kind"] == SERVER).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(other.metrics().is_empty(), "{:?}", other.metrics());
    weir.stop().await;
}

#[tokio::test]
async fn a_providers_request_to_a_source_is_a_server_span_its_delivery_continues() {
    let collector = Collector::start();
    let weir = exporting(&collector.endpoint()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let made = t.admin.post("/api/v2/sources", &json!({"type": "none"})).await.expect(201).json();
    let url = made["ingest_url"].as_str().unwrap();
    let receiver = Receiver::start().await;
    let hook = json!({"url": receiver.url, "subscribed_sources": [made["id"]]});
    t.admin.post("/api/v2/webhooks", &hook).await.expect(201);
    let path = crate::support::providers::path_of(url);
    let parent = (String::from("traceparent"), format!("00-{PUBLISHER_TRACE}-{PUBLISHER_SPAN}-01"));
    let answer = crate::support::providers::deliver(&weir.http(), &path, &[parent], r#"{"n":1}"#).await.expect(200);
    let event_id = answer.json()["id"].as_str().unwrap().to_owned();
    let got = receiver.wait_for(1, Duration::from_secs(20)).await;

    let ingest = collector.span("the ingest span", |s| s["kind"] == SERVER).await;
    assert_eq!(ingest["name"], "POST /in/{token}");
    assert_eq!((&ingest["trace_id"], &ingest["parent_span_id"]), (&json!(PUBLISHER_TRACE), &json!(PUBLISHER_SPAN)));
    let token = path.rsplit('/').next().unwrap();
    assert!(!ingest.to_string().contains(token), "the token is the source's credential: {ingest}");
    assert_eq!(attr(&ingest, "http.response.status_code"), 200);
    assert_eq!(attr(&ingest, "weir.event.id"), event_id.as_str());
    assert_eq!(attr(&ingest, "weir.organisation.id"), t.org_id.as_str());
    let attempt = collector.span("the attempt span", |s| s["kind"] == CLIENT).await;
    assert_eq!(attempt["parent_span_id"], ingest["span_id"], "the ingest span is its parent");
    let sent = format!("00-{PUBLISHER_TRACE}-{}-01", attempt["span_id"].as_str().unwrap());
    let parents: Vec<_> = got[0].headers.get_all("traceparent").iter().collect();
    assert_eq!(
        parents,
        [sent.as_str()],
        "the subscriber's parent is the attempt's span (the provider's is not sent on)"
    );
    weir.stop().await;
}
