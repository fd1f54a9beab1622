//! The low findings of round 5's probe (issue 53), each closed: a member does not see a
//! webhook URL's query values; a deleted webhook's filter series leave `/metrics`; creator
//! ids that read as `weir` are refused; a filter that can never select is `422` and a
//! parse error reads in words; an upload refused at once is answered `429`, not a broken
//! pipe; the OTLP endpoint's password is not logged.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use weir::store::tenants::orgs::Plan;

use crate::settings::{PASSWORD, http_sign_in, user};
use crate::support::receiver::Receiver;
use crate::support::weir::{WeirBuilder, work_order_event};

#[tokio::test]
async fn a_member_sees_a_webhook_url_without_its_query_values() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let url = "https://8.8.8.8/hook?api_key=k3y-s3cr3t&tenant=acme";
    let hook = t.admin.create_webhook(url, &["work_order_created"]).await;
    let id = hook["id"].as_str().unwrap();
    user(&weir, &t.org_id, "member@example.com", false).await;
    user(&weir, &t.org_id, "admin@example.com", true).await;
    let http = weir.http();
    let (_, member) = http_sign_in(&http, "member@example.com", PASSWORD).await;
    let (cookie, _) = member.expect("signed in");
    for page in ["/settings/webhooks".to_owned(), format!("/settings/webhooks/{id}")] {
        let html = http.get(&page).header("cookie", &cookie).send().await.expect(200).text();
        assert!(!html.contains("k3y-s3cr3t"), "{page} shows the key to a member");
        assert!(html.contains("api_key=…"), "{page} shows the query's keys: {html}");
    }
    let (_, admin) = http_sign_in(&http, "admin@example.com", PASSWORD).await;
    let (cookie, _) = admin.expect("signed in");
    let html = http.get(&format!("/settings/webhooks/{id}")).header("cookie", &cookie).send().await.expect(200).text();
    assert!(html.contains("k3y-s3cr3t"), "an admin sees the whole URL");
    weir.stop().await;
}

#[tokio::test]
async fn a_deleted_webhooks_filter_series_leave_the_metrics() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let body =
        json!({"url": receiver.url, "subscribed_actions": ["work_order_created"], "filter": "subject.id == \"wo_1\""});
    let id = t.admin.post("/api/v2/webhooks", &body).await.expect(201).json()["id"].as_str().unwrap().to_owned();
    t.publisher.publish(&work_order_event("wo_1")).await;
    t.publisher.publish(&work_order_event("wo_2")).await;
    let metrics = || async { weir.http().get("/metrics").send().await.expect(200).text() };
    let series = format!("webhook_id=\"{id}\"");
    assert_eq!(metrics().await.matches(&series).count(), 2, "selected and not selected");
    t.admin.delete(&format!("/api/v2/webhooks/{id}")).await.expect(204);
    assert_eq!(metrics().await.matches(&series).count(), 0);
    weir.stop().await;
}

#[tokio::test]
async fn creator_ids_that_read_as_weir_and_filters_that_never_select_are_refused() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    for id in ["Weir", "WEIR", "weir ", "weir\u{200b}"] {
        let mut event = work_order_event("wo_1");
        event["creator"]["id"] = json!(id);
        let resp = t.publisher.post("/api/v2/events", &event).await;
        assert_eq!((resp.status, resp.error_fields()), (422, vec!["creator.id".to_owned()]), "{id:?}");
    }
    for (filter, says) in [
        ("size(1) == 1", "`size` takes"),
        ("1 + \"a\" == 2", "`+` does not apply"),
        ("!1", "`!` takes booleans"),
        ("1", "must be true or false"),
        ("a.b(", "does not parse"),
    ] {
        let body = json!({"url": "https://8.8.8.8/x", "subscribed_actions": ["work_order_created"], "filter": filter});
        let resp = t.admin.post("/api/v2/webhooks", &body).await;
        assert_eq!(resp.status, 422, "{filter}: {}", resp.text());
        let message = resp.json()["error"]["details"][0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(says) && !message.contains("Error("), "{filter}: {message}");
    }
    weir.stop().await;
}

#[tokio::test]
async fn an_upload_refused_at_once_is_answered_429_not_a_broken_pipe() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let head = |length: usize| {
        format!(
            "POST /api/v2/plugins?name=p HTTP/1.1\r\nHost: weir\r\nContent-Type: application/wasm\r\n\
             Authorization: Bearer {}\r\nConnection: close\r\nContent-Length: {length}\r\n\r\n",
            t.admin.token
        )
    };
    // Two uploads whose bodies are still coming: the sender's share of uploads.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(weir.addr).await.unwrap();
        stream.write_all(head(4 << 20).as_bytes()).await.unwrap();
        stream.write_all(&[0u8; 1024]).await.unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A third, sent whole (4 MiB): its sender reads the answer.
    let mut stream = TcpStream::connect(weir.addr).await.unwrap();
    stream.write_all(head(4 << 20).as_bytes()).await.unwrap();
    let sent = stream.write_all(&vec![0u8; 4 << 20]).await;
    assert!(sent.is_ok(), "the whole body was taken: {sent:?}");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("\"rate_limited\""), "{answer}");
    drop(held);
    weir.stop().await;
}

#[tokio::test]
async fn the_otlp_endpoints_password_is_not_logged() {
    let builder = WeirBuilder::shared()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:pa55w0rd@127.0.0.1:9/")
        .env("WEIR_LOG", "info");
    let log = crate::support::temp_dir("otlp-log").join("weir.log");
    let mut serve = builder.spawn_logging_to(&log);
    serve.wait_ready().await;
    serve.signal("TERM");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("exporting traces over OTLP"), "{logged}");
    assert!(!logged.contains("pa55w0rd"), "{logged}");
}
