//! Hardening under attack (contract §8 "Hardening"): request bodies sent slowly hold no slot
//! another client needs, and plugin compiles have a budget. Each test measures another
//! tenant's latency beside the attack; the bound it holds to is in its name.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use weir::store::tenants::orgs::Plan;

use crate::support::weir::{WeirBuilder, work_order_event};

/// Opens a connection and sends a request's head announcing `length` bytes of body, then one
/// byte of it every `every` (for at most `bytes` bytes); what the server answered (its
/// status code, 0 when it closed without one) and when.
async fn trickle(
    addr: SocketAddr,
    head: String,
    every: Duration,
    bytes: usize,
) -> Option<tokio::task::JoinHandle<(u16, Duration)>> {
    let stream = TcpStream::connect(addr).await.ok()?;
    Some(tokio::spawn(async move {
        let started = Instant::now();
        let (mut reader, mut writer) = stream.into_split();
        if writer.write_all(head.as_bytes()).await.is_err() {
            return (0, started.elapsed());
        }
        let writing = tokio::spawn(async move {
            for _ in 0..bytes {
                if writer.write_all(b"a").await.is_err() {
                    break;
                }
                tokio::time::sleep(every).await;
            }
            writer
        });
        let mut answer = Vec::new();
        let mut buf = [0u8; 512];
        let status = loop {
            match tokio::time::timeout(Duration::from_secs(90), reader.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break 0,
                Ok(Ok(n)) => {
                    answer.extend_from_slice(&buf[..n]);
                    if let Some(line) = String::from_utf8_lossy(&answer).lines().next()
                        && answer.contains(&b'\n')
                    {
                        break line.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
                    }
                }
            }
        };
        writing.abort();
        (status, started.elapsed())
    }))
}

fn head(path: &str, content_type: &str, token: Option<&str>, length: usize) -> String {
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: weir\r\nContent-Type: {content_type}\r\n{auth}Content-Length: {length}\r\n\r\n"
    )
}

#[tokio::test]
async fn slow_bodies_on_the_token_endpoint_and_publish_leave_another_tenants_requests_under_1_s() {
    let weir = WeirBuilder::shared().start().await;
    let attacker = weir.tenant(Plan::pro()).await;
    let victim = weir.tenant(Plan::pro()).await;
    let receiver = crate::support::receiver::Receiver::start().await;
    let hook = victim.admin.create_webhook(&receiver.url, &["work_order_created"]).await;

    // More slow bodies than the process has slots (1,024): most without credentials on the
    // token endpoint, the rest with a valid publisher token on publish.
    let mut attack = Vec::new();
    for i in 0..1_200 {
        let head = if i % 10 == 0 {
            head("/api/v2/events", "application/json", Some(&attacker.publisher.token), 100_000)
        } else {
            head("/oauth/token", "application/x-www-form-urlencoded", None, 100_000)
        };
        if let Some(task) = trickle(weir.addr, head, Duration::from_secs(2), 60).await {
            attack.push(task);
        }
    }
    assert!(attack.len() > 1_100, "the attack opened {} connections", attack.len());
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The other tenant, meanwhile: every request served, each well under a second.
    let mut slowest = Duration::ZERO;
    for i in 0..40 {
        let started = Instant::now();
        if i % 2 == 0 {
            victim.admin.get("/api/v2/webhooks").await.expect(200);
        } else {
            victim.publisher.publish(&work_order_event(&format!("wo_v{i}"))).await;
        }
        slowest = slowest.max(started.elapsed());
    }
    assert!(slowest < Duration::from_secs(1), "another tenant's slowest request took {slowest:?}");
    receiver.wait_for(20, Duration::from_secs(10)).await;
    assert!(hook["id"].is_string());

    // And every slow body is answered (429 at once beyond a sender's share, 408 once too
    // slow) within the grace period and a little, not held for its minute.
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut longest = Duration::ZERO;
    for task in attack {
        let (status, took) = task.await.unwrap();
        *statuses.entry(status).or_default() += 1;
        longest = longest.max(took);
    }
    assert!(longest < Duration::from_secs(20), "a slow body was held {longest:?}");
    assert_eq!(statuses.keys().copied().filter(|s| ![408, 429].contains(s)).count(), 0, "{statuses:?}");
    assert!(statuses.get(&408).copied().unwrap_or(0) > 0, "{statuses:?}");
    eprintln!(
        "slow bodies answered {statuses:?}, the longest held {longest:?}; the other tenant's slowest request {slowest:?}"
    );
    weir.stop().await;
}

#[tokio::test]
async fn a_body_sent_slowly_but_steadily_is_read() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let event = work_order_event("wo_steady").to_string();
    // A whole second per chunk, the body under the grace period: accepted.
    let stream = TcpStream::connect(weir.addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = head("/api/v2/events", "application/json", Some(&t.publisher.token), event.len());
    writer.write_all(head.as_bytes()).await.unwrap();
    for chunk in event.as_bytes().chunks(event.len().div_ceil(4)) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        writer.write_all(chunk).await.unwrap();
    }
    let mut answer = vec![0u8; 256];
    let n = tokio::time::timeout(Duration::from_secs(10), reader.read(&mut answer)).await.unwrap().unwrap();
    let line = String::from_utf8_lossy(&answer[..n]).lines().next().unwrap_or_default().to_owned();
    assert!(line.starts_with("HTTP/1.1 202"), "{line}");
    weir.stop().await;
}
