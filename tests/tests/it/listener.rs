//! The limits the listener enforces (contract §2): request headers within 10 s of the
//! connection opening, at most `WEIR_MAX_CONNECTIONS` open at once, while other clients
//! keep being served.

use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::weir::{Weir, WeirBuilder};

/// Waits until the server closes `stream` (EOF or reset); how long that took.
async fn closed_within(stream: &mut (impl AsyncRead + Unpin), limit: Duration) -> Duration {
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(limit.saturating_sub(started.elapsed()), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return started.elapsed(),
            Ok(Ok(_)) => continue,
            Err(_) => panic!("the connection was still open after {limit:?}"),
        }
    }
}

/// A plain request on its own connection; the status line, or `None` without an answer.
async fn status_line(addr: std::net::SocketAddr, wait: Duration) -> Option<String> {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.ok()?;
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: weir\r\nConnection: close\r\n\r\n").await.ok()?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.ok()?;
        String::from_utf8_lossy(&response).lines().next().map(str::to_owned)
    };
    tokio::time::timeout(wait, exchange).await.ok().flatten()
}

#[tokio::test]
async fn a_connection_trickling_its_request_is_closed_while_others_are_served() {
    let weir = Weir::start_default().await;
    let opened = Instant::now();
    // Half a request line, then a byte every few seconds: the slow-loris pattern.
    let (mut slow, mut slow_writer) = TcpStream::connect(weir.addr).await.unwrap().into_split();
    slow_writer.write_all(b"GET /heal").await.unwrap();
    // An HTTP/2 preface that never completes is held to the same limit.
    let mut preface = TcpStream::connect(weir.addr).await.unwrap();
    preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    // A connection that never sends anything.
    let mut silent = TcpStream::connect(weir.addr).await.unwrap();
    let trickle = tokio::spawn(async move {
        for byte in b"thz HTTP/1.1\r\n" {
            tokio::time::sleep(Duration::from_secs(3)).await;
            if slow_writer.write_all(&[*byte]).await.is_err() {
                break;
            }
        }
    });
    // Meanwhile everyone else is served at once.
    for _ in 0..5 {
        let line = status_line(weir.addr, Duration::from_secs(2)).await;
        assert_eq!(line.as_deref(), Some("HTTP/1.1 200 OK"));
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let took = closed_within(&mut silent, Duration::from_secs(13)).await;
    assert!(opened.elapsed() >= Duration::from_secs(9), "closed too early: {:?}", opened.elapsed());
    assert!(took <= Duration::from_secs(13));
    closed_within(&mut preface, Duration::from_secs(3)).await;
    closed_within(&mut slow, Duration::from_secs(3)).await;
    trickle.abort();
    assert!(opened.elapsed() < Duration::from_secs(14), "all three closed about 10 s after opening");
}

#[tokio::test]
async fn connections_beyond_the_maximum_wait_until_one_closes() {
    let weir = WeirBuilder::shared().env("WEIR_MAX_CONNECTIONS", "2").start().await;
    let mut holders = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(weir.addr).await.unwrap();
        // A full request on a keep-alive connection: it stays open, counted.
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: weir\r\n\r\n").await.unwrap();
        let mut buf = [0u8; 512];
        let n = stream.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        holders.push(stream);
    }
    let waiting = tokio::spawn(status_line(weir.addr, Duration::from_secs(8)));
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!waiting.is_finished(), "a third connection is not served while two are open");
    drop(holders.pop());
    let line = waiting.await.unwrap();
    assert_eq!(line.as_deref(), Some("HTTP/1.1 200 OK"), "served as soon as a slot freed");
}
