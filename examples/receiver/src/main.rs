//! An example subscriber for Weir deliveries.
//!
//! For every `POST` it:
//! 1. reads the raw body bytes, untouched;
//! 2. recomputes HMAC-SHA256 over exactly those bytes with the webhook's signing secret and
//!    compares it with `X-Webhook-Signature` in constant time — `401` if they differ;
//! 3. ignores a delivery it has already accepted (`X-Webhook-Delivery` is the same on every
//!    attempt of one delivery), answering `200` so Weir stops retrying;
//! 4. only then parses the JSON, prints one line per accepted delivery on stdout, and, with
//!    `--download-dir`, fetches a `report_export_completed` event's `download_url` at once
//!    (the link is short-lived).
//!
//! `weir-receiver --listen 127.0.0.1:9000 --secret whsec_…` (or `WEIR_RECEIVER_SECRET`).

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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
    /// The webhook's signing_secret.
    #[arg(long, env = "WEIR_RECEIVER_SECRET", hide_env_values = true)]
    secret: String,
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
    secret: String,
    download_dir: Option<PathBuf>,
    seen: Mutex<Seen>,
}

/// Whether `signature_hex` is the HMAC-SHA256 of `body` under `secret` (constant time).
fn signature_ok(secret: &str, body: &[u8], signature_hex: &str) -> bool {
    let Ok(expected) = hex::decode(signature_hex.trim()) else { return false };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else { return false };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
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
    let (signature, delivery, attempt) =
        (header("x-webhook-signature"), header("x-webhook-delivery"), header("x-webhook-attempt"));
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(reply(StatusCode::BAD_REQUEST, json!({"error": "unreadable body"}))),
    };
    if !signature_ok(&state.secret, &body, &signature) {
        eprintln!("rejected a request with a bad signature (delivery {delivery:?})");
        return Ok(reply(StatusCode::UNAUTHORIZED, json!({"error": "bad signature"})));
    }
    let first = state.seen.lock().map(|mut seen| seen.first_time(&delivery)).unwrap_or(true);
    if !first {
        eprintln!("duplicate delivery {delivery} (attempt {attempt}) ignored");
        return Ok(reply(StatusCode::OK, json!({"duplicate": true})));
    }
    let event: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    println!("{}", json!({"delivery": delivery, "attempt": attempt, "event": event}));
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
    let state = Arc::new(State { secret: args.secret, download_dir: args.download_dir, seen: Mutex::default() });
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
    fn deliveries_are_remembered() {
        let mut seen = Seen::default();
        assert!(seen.first_time("dlv_1"));
        assert!(!seen.first_time("dlv_1"));
        assert!(seen.first_time("dlv_2"));
    }
}
