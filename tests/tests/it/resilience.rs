//! Redis going away and coming back, restarts of `weir serve`, graceful shutdown.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::redis::RedisServer;
use crate::support::weir::WeirBuilder;

#[tokio::test]
async fn losing_redis_gives_503_and_weir_recovers_by_itself() {
    let mut redis = RedisServer::start_persistent();
    let weir = WeirBuilder::new(&redis.url()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.admin.create_webhook("http://127.0.0.1:9/", &["form_completed"]).await;

    redis.stop();
    let http = weir.http();
    let resp = http.get("/readyz").send().await.expect(503);
    assert_eq!(resp.error_code(), "unavailable");
    let resp = t.admin.get("/api/v2/webhooks").await.expect(503);
    assert_eq!(resp.error_code(), "unavailable");
    assert!(resp.header("retry-after").is_some());
    let resp = t.admin.post("/api/v2/webhooks", &json!({"url": "http://127.0.0.1:9/", "subscribed_actions": []})).await;
    assert_eq!(resp.status, 503);
    // Liveness does not depend on Redis.
    http.get("/healthz").send().await.expect(200);

    redis.restart();
    eventually("readyz recovers", Duration::from_secs(20), async || {
        (http.get("/readyz").send().await.status == 200).then_some(())
    })
    .await;
    let list = eventually("API recovers", Duration::from_secs(20), async || {
        let resp = t.admin.get("/api/v2/webhooks").await;
        (resp.status == 200).then(|| resp.json())
    })
    .await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "the acknowledged webhook survived");
}

#[tokio::test]
async fn data_survives_a_restart_of_weir_serve() {
    let redis = RedisServer::start_persistent();
    let builder = WeirBuilder::new(&redis.url());
    let mut first = builder.spawn();
    first.wait_ready().await;
    let weir = builder.start().await; // in-process handle on the same Redis, for setup
    let t = weir.tenant(Plan::pro()).await;
    let token = t.admin.token.clone();
    let created = t.admin.create_webhook("http://127.0.0.1:9/", &["defect_created"]).await;
    weir.stop().await;
    assert!(first.signal("TERM").success());

    let second = builder.spawn();
    second.wait_ready().await;
    let path = format!("/api/v2/webhooks/{}", created["id"].as_str().unwrap());
    let got = second.http().get(&path).bearer(&token).send().await.expect(200).json();
    assert_eq!(got, created);
}

#[tokio::test]
async fn sigterm_lets_in_flight_requests_finish() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let mut serve = builder.spawn();
    serve.wait_ready().await;

    // Send the headers and half the body, then SIGTERM, then the rest.
    let body = json!({"url": "http://127.0.0.1:9/slow", "subscribed_actions": ["form_completed"]}).to_string();
    let (head, tail) = body.split_at(body.len() / 2);
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", serve.port)).await.unwrap();
    let request = format!(
        "POST /api/v2/webhooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
        t.admin.token,
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let port = serve.port;
    let killer = std::thread::spawn(move || serve.signal("TERM"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    // New connections are refused once shutdown began.
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err(), "no new connections after SIGTERM");
    stream.write_all(tail.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 201"), "{response}");
    let status = killer.join().unwrap();
    assert!(status.success(), "{status:?}");
    let list = t.admin.get("/api/v2/webhooks").await.expect(200).json();
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_listener_speaks_https_with_http2_and_http11() {
    let ca = crate::support::tls::TestCa::new();
    let weir = WeirBuilder::shared().tls(&ca).start().await;
    use crate::support::tls::https_get;
    let (alpn, status, body) = eventually("https ready", Duration::from_secs(10), async || {
        https_get(ca.client_config(&[b"h2", b"http/1.1"]), weir.addr, "/readyz").await.ok()
    })
    .await;
    assert_eq!(alpn.as_deref(), Some(&b"h2"[..]));
    assert_eq!(status, 200, "{body}");
    let (alpn, status, _) = https_get(ca.client_config(&[b"http/1.1"]), weir.addr, "/healthz").await.unwrap();
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    assert_eq!(status, 200);
    // A client that does not trust the test CA cannot connect.
    let other = crate::support::tls::TestCa::new();
    assert!(https_get(other.client_config(&[b"http/1.1"]), weir.addr, "/healthz").await.is_err());
    // Plain HTTP is not served on the TLS port.
    let plain = tokio::time::timeout(
        Duration::from_secs(5),
        crate::support::http::Http::new(&format!("http://{}", weir.addr)).get("/healthz").send_raw(),
    )
    .await;
    assert!(!matches!(plain, Ok(Ok(200))), "plain HTTP must not be answered");
}

#[test]
fn bad_tls_files_stop_the_start_with_a_clear_message() {
    let dir = crate::support::temp_dir("badtls");
    let cert = dir.join("cert.pem");
    std::fs::write(&cert, "not a certificate").unwrap();
    let output = crate::support::weir::weir_command()
        .arg("serve")
        .env_clear()
        .env("WEIR_REDIS_URL", crate::support::redis::shared().url())
        .env("WEIR_LISTEN", "127.0.0.1:0")
        .env("WEIR_TLS_CERT", &cert)
        .env("WEIR_TLS_KEY", dir.join("missing.pem"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("WEIR_TLS_CERT"), "{stderr}");
}
