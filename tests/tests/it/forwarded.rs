//! The client's address behind the operator's proxies (contract §9 "Hardening",
//! `WEIR_TRUSTED_PROXIES`): every per-address rule counts it. Clients on distinct loopback
//! addresses (127.0.0.2, 127.0.0.3…) each have their own allowance; behind a trusted proxy
//! (127.0.0.9) each client it forwards for has its own; from an address that is not trusted,
//! a forged `X-Forwarded-For` changes nothing.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::support::weir::{Weir, WeirBuilder};

/// The most token request bodies one address may have being read at once (api::intake).
const MAX_READING_PER_SENDER: usize = 64;

async fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(source.parse::<IpAddr>().unwrap(), 0)).unwrap();
    socket.connect(to).await.unwrap()
}

/// A token request from `source` (forwarded for `xff` when given) whose body never comes:
/// held open, it is one of that client's bodies being read.
async fn stalled_body(weir: &Weir, source: &str, xff: Option<&str>) -> TcpStream {
    let mut stream = connect_from(source, weir.addr).await;
    let forwarded = xff.map(|a| format!("X-Forwarded-For: {a}\r\n")).unwrap_or_default();
    let head = format!(
        "POST /oauth/token HTTP/1.1\r\nHost: weir\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         {forwarded}Content-Length: 100\r\n\r\ngrant"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// The status of a whole token request from `source` (forwarded for `xff`).
async fn token_status(weir: &Weir, source: &str, xff: Option<&str>) -> u16 {
    let mut stream = connect_from(source, weir.addr).await;
    let forwarded = xff.map(|a| format!("X-Forwarded-For: {a}\r\n")).unwrap_or_default();
    let body = "grant_type=client_credentials&client_id=cli_x&client_secret=nope";
    let request = format!(
        "POST /oauth/token HTTP/1.1\r\nHost: weir\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         {forwarded}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

/// Fills `source`'s (or the forwarded client's) allowance of bodies being read.
async fn fill(weir: &Weir, source: &str, xff: Option<&str>) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..MAX_READING_PER_SENDER {
        held.push(stalled_body(weir, source, xff).await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    held
}

#[tokio::test]
async fn clients_on_distinct_addresses_each_have_their_own_allowance() {
    let weir = WeirBuilder::shared().start().await;
    let _held = fill(&weir, "127.0.0.2", None).await;
    assert_eq!(token_status(&weir, "127.0.0.2", None).await, 429, "its allowance is spent");
    // A forged header from an address that is not a trusted proxy changes nothing.
    assert_eq!(token_status(&weir, "127.0.0.2", Some("203.0.113.7")).await, 429);
    assert_eq!(token_status(&weir, "127.0.0.3", None).await, 401, "another address is served");
    weir.stop().await;
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_it_forwards_for_has_its_own_allowance() {
    let weir = WeirBuilder::shared().env("WEIR_TRUSTED_PROXIES", "127.0.0.9/32").start().await;
    let _held = fill(&weir, "127.0.0.9", Some("203.0.113.1")).await;
    assert_eq!(token_status(&weir, "127.0.0.9", Some("203.0.113.1")).await, 429, "that client's allowance is spent");
    assert_eq!(token_status(&weir, "127.0.0.9", Some("203.0.113.2")).await, 401, "another client behind it is served");
    // The right-most untrusted hop counts: a client cannot pose as another by writing the
    // header itself, the proxy appends the address it saw.
    assert_eq!(token_status(&weir, "127.0.0.9", Some("203.0.113.2, 203.0.113.1")).await, 429);
    // Forwarded (RFC 7239) as well.
    let forwarded = "for=\"203.0.113.1\"";
    let mut stream = connect_from("127.0.0.9", weir.addr).await;
    let body = "grant_type=client_credentials";
    let request = format!(
        "POST /oauth/token HTTP/1.1\r\nHost: weir\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Forwarded: {forwarded}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 429"), "{}", String::from_utf8_lossy(&answer));
    weir.stop().await;
}

#[tokio::test]
async fn without_trusted_proxies_everyone_behind_one_is_one_address() {
    // The same proxy not trusted: its clients share its allowance (what the probe saw).
    let weir = WeirBuilder::shared().start().await;
    let _held = fill(&weir, "127.0.0.9", Some("203.0.113.1")).await;
    assert_eq!(token_status(&weir, "127.0.0.9", Some("203.0.113.2")).await, 429);
    weir.stop().await;
}
