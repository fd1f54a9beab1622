//! The load generator: publishers on keep-alive HTTP/1.1 connections.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

/// One keep-alive HTTP/1.1 connection.
pub struct Http {
    sender: SendRequest<Full<Bytes>>,
    host: String,
}

impl Http {
    pub async fn connect(base: &str) -> Http {
        let host = base.trim_start_matches("http://").to_owned();
        let sender = handshake(&host).await.unwrap_or_else(|e| panic!("bench connection to {base}: {e}"));
        Http { sender, host }
    }

    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        token: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> (u16, String) {
        self.try_send(method, path, token, content_type, body).await.expect("response")
    }

    /// A `POST` of `body` to `path` with `headers` (no token): a provider's request.
    pub async fn post_with(&mut self, path: &str, headers: &[(&str, String)], body: Vec<u8>) -> u16 {
        let mut request = hyper::Request::builder().method("POST").uri(path).header("host", &self.host);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let request = request.body(Full::new(Bytes::from(body))).expect("a request");
        self.sender.ready().await.expect("the connection");
        let response = self.sender.send_request(request).await.expect("an answer");
        let status = response.status().as_u16();
        let _ = response.into_body().collect().await;
        status
    }

    /// [`Http::send`], or why the exchange failed (the connection closed, refused…).
    pub async fn try_send(
        &mut self,
        method: &str,
        path: &str,
        token: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<(u16, String), String> {
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host)
            .header("content-type", content_type);
        if !token.is_empty() {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request.body(Full::new(Bytes::from(body))).map_err(|e| e.to_string())?;
        // The connection may still be finishing the previous exchange (a large body).
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let response = self.sender.send_request(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }
}

/// Opens a keep-alive HTTP/1.1 connection to `authority` (`host:port`, no delay), its
/// connection task running on the current runtime (a failure there is printed).
pub async fn handshake(authority: &str) -> Result<SendRequest<Full<Bytes>>, Box<dyn std::error::Error>> {
    let stream = tokio::net::TcpStream::connect(authority).await?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    let authority = authority.to_owned();
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("bench connection to {authority}: {e}");
        }
    });
    Ok(sender)
}

/// A published event: its id, when publishing started and how long it took.
#[derive(Debug, Clone)]
pub struct PublishedEvent {
    pub id: String,
    pub started: Instant,
    pub latency: Duration,
}

pub struct Publisher {
    base: String,
    token: String,
}

impl Publisher {
    pub fn new(base: &str, token: &str) -> Publisher {
        Publisher { base: base.to_owned(), token: token.to_owned() }
    }

    /// Publishes `events` events of about 1 KB over `connections` connections, each as soon
    /// as a connection is free (closed loop: as fast as Weir takes them).
    pub async fn run(&self, events: usize, connections: usize, kind: Kind) -> Vec<PublishedEvent> {
        self.publish(events, connections, kind, None).await
    }

    /// Publishes `events` events at `rate` per second (open loop): event `i` is due at
    /// `i / rate`, and its latencies count from when it was due, so a slow answer does not
    /// hide the wait of the events behind it.
    pub async fn run_paced(&self, events: usize, rate: f64, kind: Kind) -> Vec<PublishedEvent> {
        self.publish(events, 128, kind, Some(rate)).await
    }

    async fn publish(&self, events: usize, connections: usize, kind: Kind, rate: Option<f64>) -> Vec<PublishedEvent> {
        let t0 = Instant::now() + Duration::from_millis(50);
        let next = Arc::new(AtomicUsize::new(0));
        let run_id = std::process::id() as u64 * 1_000_000
            + (std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0)
                % 1_000_000);
        let mut tasks = Vec::new();
        for _ in 0..connections {
            let (next, base, token) = (next.clone(), self.base.clone(), self.token.clone());
            tasks.push(tokio::spawn(async move {
                let mut http = Http::connect(&base).await;
                let mut done = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= events {
                        return done;
                    }
                    let id = format!("evt_b{run_id}x{i}");
                    let body = match kind {
                        Kind::WorkOrder => event(&id, i),
                        Kind::WorkOrderUpdate => event(&id, i % UPDATED_RECORDS),
                        Kind::Subjects(n) => event(&id, i % n.max(1)),
                        Kind::ReportExport => {
                            let mut e: serde_json::Value =
                                serde_json::from_slice(&export_event(&format!("rex_{i}"), "frm_1", "cli_bench"))
                                    .expect("json");
                            e["id"] = serde_json::json!(id);
                            serde_json::to_vec(&e).expect("json")
                        }
                    };
                    let started = match rate {
                        Some(rate) => {
                            let due = t0 + Duration::from_secs_f64(i as f64 / rate);
                            tokio::time::sleep_until(due.into()).await;
                            due
                        }
                        None => Instant::now(),
                    };
                    let (status, text) = http.send("POST", "/api/v2/events", &token, "application/json", body).await;
                    assert_eq!(status, 202, "publish: {text}");
                    done.push(PublishedEvent { id, started, latency: started.elapsed() });
                }
            }));
        }
        let mut all = Vec::with_capacity(events);
        for task in tasks {
            all.extend(task.await.expect("publisher task"));
        }
        all
    }
}

/// How many records [`Kind::WorkOrderUpdate`] events are about.
const UPDATED_RECORDS: usize = 100;

/// Which events the publisher sends.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// ~1 KB `work_order_created`, each about a new work order.
    WorkOrder,
    /// The same, about 100 work orders over and over (each event supersedes the last
    /// snapshot of its record).
    WorkOrderUpdate,
    /// The same, about this many work orders in turn.
    Subjects(usize),
    ReportExport,
}

/// A `report_export_completed` envelope of about 1 KB (for the plugin benchmark).
pub fn export_envelope(rex: &str, form: &str, creator: &str) -> String {
    envelope_of(&export_event(rex, form, creator), "report_export")
}

/// The envelope of the loads' ~1 KB `work_order_created` event (for the compression benchmark).
pub fn work_order_envelope(i: usize) -> String {
    envelope_of(&event("evt_bench", i), "work_order")
}

/// The envelope Weir makes of a published event (its fields in the envelope's order).
fn envelope_of(event: &[u8], snapshot_key: &str) -> String {
    let e: serde_json::Value = serde_json::from_slice(event).expect("json");
    let mut envelope = serde_json::json!({"id": "evt_bench", "action": e["action"], "created_at": "2026-11-22T11:00:38.123Z", "organisation": {"id": "org_bench"}});
    for key in ["creator", "subject", snapshot_key] {
        envelope[key] = e[key].clone();
    }
    envelope.to_string()
}

/// A `report_export_completed` event of about 1 KB.
fn export_event(rex: &str, form: &str, creator: &str) -> Vec<u8> {
    let notes = "Quarterly pump inspection report exported for the maintenance planning meeting. ".repeat(8);
    serde_json::to_vec(&serde_json::json!({
        "action": "report_export_completed",
        "creator": {"id": creator, "name": "Bench Client"},
        "subject": {"type": "ReportExport", "id": rex},
        "report_export": {
            "id": rex, "status": "completed", "format": "pdf",
            "exportable": {"type": "Form", "id": form},
            "created_at": "2026-11-22T10:00:00.000Z", "completed_at": "2026-11-22T10:00:05.000Z",
            "download_url": format!("https://weir.example/exports/{rex}?expires=1795345238&sig=0123456789abcdef"),
            "notes": notes,
        },
    }))
    .expect("json")
}

/// A `work_order_created` event whose envelope is about 1 KB.
/// A `work_order_created` event of about 1 KB, as a publisher sends it.
pub fn work_order_event(id: &str, i: usize) -> Vec<u8> {
    event(id, i)
}

fn event(id: &str, i: usize) -> Vec<u8> {
    let description =
        "Replace the worn mechanical seal on the feed pump and check the impeller for cavitation damage. ".repeat(7);
    serde_json::to_vec(&serde_json::json!({
        "id": id,
        "action": "work_order_created",
        "creator": {"id": "usr_bench", "name": "Bench Publisher"},
        "subject": {"type": "WorkOrder", "id": format!("wo_{i}")},
        "work_order": {"id": format!("wo_{i}"), "title": "Pump maintenance", "status": "open", "priority": 2, "description": description},
    }))
    .expect("json")
}

/// The `p`th percentile (sorts in place).
pub fn percentile(values: &mut [Duration], p: f64) -> Duration {
    if values.is_empty() {
        return Duration::ZERO;
    }
    values.sort_unstable();
    let rank = ((p / 100.0) * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)]
}
