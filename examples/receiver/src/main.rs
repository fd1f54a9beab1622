//! An example subscriber for Weir deliveries.
//!
//! For every `POST` it:
//! 1. reads the raw body bytes, untouched;
//! 2. verifies the Standard Webhooks signature (standardwebhooks.com): `webhook-timestamp`
//!    must be within 5 minutes of now (a replayed request is refused), and one of the
//!    space-separated `v1,<base64>` entries of `webhook-signature` must be the HMAC-SHA256 of
//!    `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of the
//!    secret after `whsec_`. Any listed entry may match: during a secret rotation Weir lists
//!    the new secret's signature and the previous one's, so a receiver still holding the old
//!    secret keeps working until the grace period ends, and one given the new secret works at
//!    once. A request without `webhook-signature` is checked against `X-Webhook-Signature`
//!    (hex HMAC-SHA256 of the body keyed with the whole secret string). `401` if nothing
//!    matches (constant-time comparisons);
//! 3. ignores a delivery it has already accepted (`X-Webhook-Delivery` is the same on every
//!    attempt of one delivery), answering `200` so Weir stops retrying;
//! 4. only then parses the JSON, prints one line per accepted delivery on stdout
//!    (`{"delivery","attempt","verified","headers","event"}`: `verified` names the header
//!    whose signature matched, `headers` are the request's), and, with
//!    `--download-dir`, fetches a `report_export_completed` event's `download_url` at once
//!    (the link is short-lived).
//!
//! `weir-receiver --listen 127.0.0.1:9000 --secret whsec_…` (or `WEIR_RECEIVER_SECRET`);
//! `--secret` may be given twice (old and new secret) while a rotation is rolled out.

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use clap::Parser;
use hmac::{Hmac, KeyInit, Mac};
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use sha2::Sha256;

#[derive(Debug, Parser)]
#[command(about = "Receives Weir deliveries, verifying their signature")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9000")]
    listen: SocketAddr,
    /// The webhook's signing_secret (twice during a rotation: either may match).
    #[arg(long, env = "WEIR_RECEIVER_SECRET", hide_env_values = true, required = true)]
    secret: Vec<String>,
    /// Fetch report exports into this directory as soon as their event arrives.
    #[arg(long)]
    download_dir: Option<PathBuf>,
}

/// Delivery ids already accepted (the most recent 100,000).
#[derive(Debug, Default)]
struct Seen {
    ids: HashSet<String>,
    order: VecDeque<String>,
}

impl Seen {
    /// Remembers `id`; `false` if it was seen before.
    fn first_time(&mut self, id: &str) -> bool {
        if !self.ids.insert(id.to_owned()) {
            return false;
        }
        self.order.push_back(id.to_owned());
        if self.order.len() > 100_000
            && let Some(old) = self.order.pop_front()
        {
            self.ids.remove(&old);
        }
        true
    }
}

#[derive(Debug)]
struct State {
    secrets: Vec<String>,
    download_dir: Option<PathBuf>,
    seen: Mutex<Seen>,
}

/// Whether `signature_hex` (`X-Webhook-Signature`) is the HMAC-SHA256 of `body` under
/// `secret` (constant time).
fn signature_ok(secret: &str, body: &[u8], signature_hex: &str) -> bool {
    let Ok(expected) = hex::decode(signature_hex.trim()) else { return false };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else { return false };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

/// Largest difference between `webhook-timestamp` and now that is accepted.
const TOLERANCE_SECS: u64 = 5 * 60;

/// The key of Standard Webhooks signatures: the base64 after `whsec_` (secrets Weir made
/// before it signed the standard way are URL-safe base64 without padding).
fn standard_key(secret: &str) -> Vec<u8> {
    let encoded = secret.strip_prefix("whsec_").unwrap_or(secret);
    STANDARD.decode(encoded).or_else(|_| URL_SAFE_NO_PAD.decode(encoded)).unwrap_or_else(|_| secret.as_bytes().to_vec())
}

/// Why a Standard Webhooks signature is refused.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    BadTimestamp,
    /// Outside the tolerance: a replay, or a clock far off.
    Stale,
    NoMatch,
}

/// Checks `webhook-signature` (any listed `v1` entry) and `webhook-timestamp` at `now`.
fn standard_ok(
    secret: &str,
    id: &str,
    timestamp: &str,
    signatures: &str,
    body: &[u8],
    now: u64,
) -> Result<(), Refused> {
    let ts: u64 = timestamp.trim().parse().map_err(|_| Refused::BadTimestamp)?;
    if ts.abs_diff(now) > TOLERANCE_SECS {
        return Err(Refused::Stale);
    }
    let key = standard_key(secret);
    for entry in signatures.split(' ') {
        let Some(encoded) = entry.strip_prefix("v1,") else { continue };
        let Ok(expected) = STANDARD.decode(encoded) else { continue };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&key) else { continue };
        mac.update(format!("{id}.{}.", timestamp.trim()).as_bytes());
        mac.update(body);
        if mac.verify_slice(&expected).is_ok() {
            return Ok(());
        }
    }
    Err(Refused::NoMatch)
}

fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
}

async fn handle(state: Arc<State>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::POST {
        return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, json!({"error": "POST only"})));
    }
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let headers: serde_json::Map<String, Value> = request
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), Value::from(value.to_str().unwrap_or("(not text)"))))
        .collect();
    let (signature, delivery, attempt) =
        (header("x-webhook-signature"), header("x-webhook-delivery"), header("x-webhook-attempt"));
    let (standard_id, timestamp, standard) =
        (header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"));
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, json!({"error": "unreadable body"}))),
    };
    let verified = if standard.is_empty() { "x-webhook-signature" } else { "webhook-signature" };
    let verdict = if standard.is_empty() {
        let ok = state.secrets.iter().any(|s| signature_ok(s, &body, &signature));
        if ok { Ok(()) } else { Err(Refused::NoMatch) }
    } else {
        let now = unix_now();
        let mut verdict = Err(Refused::NoMatch);
        for secret in &state.secrets {
            verdict = standard_ok(secret, &standard_id, &timestamp, &standard, &body, now);
            if verdict.is_ok() {
                break;
            }
        }
        verdict
    };
    if let Err(why) = verdict {
        eprintln!("rejected a request (delivery {delivery:?}): {why:?}");
        return Ok(reply(StatusCode::UNAUTHORIZED, json!({"error": "bad signature", "reason": format!("{why:?}")})));
    }
    let first = state.seen.lock().map(|mut seen| seen.first_time(&delivery)).unwrap_or(true);
    if !first {
        eprintln!("duplicate delivery {delivery} (attempt {attempt}) ignored");
        return Ok(reply(StatusCode::OK, json!({"duplicate": true})));
    }
    let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    println!(
        "{}",
        json!({"delivery": delivery, "attempt": attempt, "verified": verified, "headers": headers, "event": event})
    );
    if let Some(dir) = &state.download_dir
        && event["action"] == "report_export_completed"
        && let Some(url) = event["report_export"]["download_url"].as_str()
    {
        let id = event["report_export"]["id"].as_str().unwrap_or("export");
        let format = event["report_export"]["format"].as_str().unwrap_or("bin");
        let path = dir.join(format!("{id}.{format}"));
        match download(url, &path).await {
            Ok(bytes) => println!("{}", json!({"downloaded": path, "bytes": bytes, "delivery": delivery})),
            Err(e) => eprintln!("download of {url} failed: {e}"),
        }
    }
    Ok(reply(StatusCode::OK, json!({"received": true})))
}

/// GETs `url` (plain HTTP) into `path`; returns the size.
async fn download(url: &str, path: &std::path::Path) -> Result<usize, String> {
    let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let uri: hyper::Uri = url.parse().map_err(|e| format!("bad URL: {e}"))?;
    let response = client.get(uri).await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let bytes = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
    std::fs::write(path, &bytes).map_err(|e| e.to_string())?;
    Ok(bytes.len())
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    if let Some(dir) = &args.download_dir {
        std::fs::create_dir_all(dir)?;
    }
    let state = Arc::new(State { secrets: args.secret, download_dir: args.download_dir, seen: Mutex::default() });
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    eprintln!("weir-receiver listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_checked_over_the_exact_bytes() {
        let mut mac = Hmac::<Sha256>::new_from_slice(b"whsec_k").unwrap();
        mac.update(b"{\"a\":1}");
        let sig = hex::encode(mac.finalize().into_bytes());
        assert!(signature_ok("whsec_k", b"{\"a\":1}", &sig));
        assert!(!signature_ok("whsec_k", b"{\"a\": 1}", &sig));
        assert!(!signature_ok("whsec_x", b"{\"a\":1}", &sig));
        assert!(!signature_ok("whsec_k", b"{\"a\":1}", ""));
    }

    #[test]
    fn standard_signatures_match_any_listed_entry_within_the_tolerance() {
        // The Standard Webhooks specification's example.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let (id, ts, body) = ("msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", br#"{"test": 2432232314}"#);
        let good = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        let now = 1614265330 + 10;
        assert_eq!(standard_ok(secret, id, ts, good, body, now), Ok(()));
        let listed = format!("v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= {good}");
        assert_eq!(standard_ok(secret, id, ts, &listed, body, now), Ok(()));
        assert_eq!(standard_ok(secret, id, ts, good, b"{}", now), Err(Refused::NoMatch));
        assert_eq!(standard_ok("whsec_AAAA", id, ts, good, body, now), Err(Refused::NoMatch));
        assert_eq!(standard_ok(secret, id, ts, good, body, now + 301), Err(Refused::Stale));
        assert_eq!(standard_ok(secret, id, "soon", good, body, now), Err(Refused::BadTimestamp));
    }

    #[test]
    fn deliveries_are_remembered() {
        let mut seen = Seen::default();
        assert!(seen.first_time("dlv_1"));
        assert!(!seen.first_time("dlv_1"));
        assert!(seen.first_time("dlv_2"));
    }
}
