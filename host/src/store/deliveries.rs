//! Delivery records, as the API reads them. The queue (`crate::queue`) writes them.
//!
//! `P:dlv:{id}` is a hash: `id`, `org_id`, `webhook_id`, `event_id`, `action`, `status`,
//! `event_created_at`, `created_at` — written at publish — and, as work happens:
//! `attempts` (JSON array, appended to by each attempt; absent: none), `attempt_count`
//! (absent: 0), `attempt_budget` (the last attempt number allowed, set by a manual retry;
//! absent: the retry schedule), `updated_at` (absent: `created_at`), `next_attempt_at`
//! (empty once final), `lease_until` (ms; set while a worker holds it), `signature` (of the
//! latest request: its other headers follow from the record), and, once plugins have run,
//! `body` (the rendered body; absent: the event envelope as published), `headers` (JSON
//! pairs of extra headers) and `plugins` (JSON array of outcomes).
//! It expires `delivery_retention` after its last change.

use std::collections::HashMap;

use redis::AsyncCommands;
use serde::Serialize;
use serde_json::value::RawValue;

use super::{Result, Store};

/// A delivery's status (contract §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Succeeded,
    Failed,
    Filtered,
    Cancelled,
}

impl Status {
    pub fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "pending" => Status::Pending,
            "succeeded" => Status::Succeeded,
            "failed" => Status::Failed,
            "filtered" => Status::Filtered,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }
}

/// The request of a delivery: the exact headers of its latest attempt and the body.
#[derive(Debug, Serialize)]
pub struct Request {
    pub headers: Box<RawValue>,
    pub body: String,
}

/// A delivery record as the API shows it.
#[derive(Debug, Serialize)]
pub struct Delivery {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub action: String,
    pub status: Status,
    pub attempts: Box<RawValue>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub request: Request,
    pub plugins: Box<RawValue>,
    /// Why the delivery was taken out of the queue without an outcome (a record that could
    /// not be read); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip)]
    pub org_id: String,
}

/// A JSON field of a record; one that cannot be parsed reads as `default` (and is logged),
/// so that one damaged record cannot make a listing fail.
fn raw(key: &str, text: Option<&String>, default: &'static str) -> Box<RawValue> {
    let text = text.filter(|t| !t.is_empty()).map_or(default, |t| t.as_str());
    RawValue::from_string(text.to_owned()).unwrap_or_else(|e| {
        tracing::warn!(%key, error = %e, "a delivery record has a field that is not JSON");
        RawValue::from_string(default.to_owned()).unwrap_or_default()
    })
}

impl Store {
    /// The delivery if it exists and belongs to `org_id`.
    pub async fn get_delivery(&self, org_id: &str, id: &str) -> Result<Option<Delivery>> {
        let found = self.get_deliveries(&[id.to_owned()]).await?;
        Ok(found.into_iter().flatten().next().filter(|d| d.org_id == org_id))
    }

    /// Several deliveries by id (`None` for expired ones), with their bodies.
    pub async fn get_deliveries(&self, ids: &[String]) -> Result<Vec<Option<Delivery>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.hgetall(self.key(&["dlv", id]));
        }
        let rows: Vec<HashMap<String, String>> = pipe.query_async(&mut self.conn()).await?;
        // Bodies that were not rendered by plugins are the event envelope.
        let mut envelope_keys = Vec::new();
        for row in &rows {
            if !row.is_empty() && row.get("body").is_none_or(String::is_empty) {
                let org = row.get("org_id").map_or("", |s| s.as_str());
                let evt = row.get("event_id").map_or("", |s| s.as_str());
                envelope_keys.push(self.key(&["evt", org, evt]));
            }
        }
        let envelopes: Vec<Option<String>> = if envelope_keys.is_empty() {
            Vec::new()
        } else if envelope_keys.len() == 1 {
            vec![self.conn().get(&envelope_keys[0]).await?]
        } else {
            self.conn().mget(&envelope_keys).await?
        };
        let mut envelopes = envelopes.into_iter();
        let mut out = Vec::with_capacity(rows.len());
        for (id, row) in ids.iter().zip(rows) {
            if row.is_empty() {
                out.push(None);
                continue;
            }
            let key = self.key(&["dlv", id]);
            let body = match row.get("body").filter(|b| !b.is_empty()) {
                Some(body) => body.clone(),
                None => envelopes.next().flatten().unwrap_or_default(),
            };
            let text = |name: &str| row.get(name).cloned().unwrap_or_default();
            let mut error = row.get("error").filter(|e| !e.is_empty()).cloned();
            let status = Status::parse(&text("status")).unwrap_or_else(|| {
                // A damaged record shows as failed (the workers dead-letter it when they meet it).
                error.get_or_insert_with(|| "the delivery record cannot be read: unknown status".into());
                Status::Failed
            });
            let created_at = text("created_at");
            let next_attempt_at = match row.get("next_attempt_at") {
                Some(at) if !at.is_empty() => Some(at.clone()),
                None if status == Status::Pending => Some(created_at.clone()),
                _ => None,
            };
            let attempts: usize = row.get("attempt_count").and_then(|n| n.parse().ok()).unwrap_or(0);
            let headers = match row.get("signature").filter(|_| attempts > 0) {
                Some(signature) => {
                    let extra: Vec<(String, String)> =
                        row.get("headers").and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
                    let pairs = crate::delivery::sign::headers_with_signature(
                        signature.clone(),
                        id,
                        attempts,
                        &text("event_created_at"),
                        &extra,
                    );
                    let map: serde_json::Map<String, serde_json::Value> =
                        pairs.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
                    serde_json::Value::Object(map).to_string()
                }
                None => "{}".to_owned(),
            };
            out.push(Some(Delivery {
                id: text("id"),
                webhook_id: text("webhook_id"),
                event_id: text("event_id"),
                action: text("action"),
                status,
                attempts: raw(&key, row.get("attempts"), "[]"),
                next_attempt_at,
                updated_at: row.get("updated_at").cloned().unwrap_or_else(|| created_at.clone()),
                created_at,
                request: Request { headers: raw(&key, Some(&headers), "{}"), body },
                plugins: raw(&key, row.get("plugins"), "[]"),
                error,
                org_id: text("org_id"),
            }));
        }
        Ok(out)
    }

    /// A page of delivery ids from an index, newest first, keeping those `keep` accepts
    /// among their (status, action, webhook) — scanning at most `scan` entries. Returns the
    /// kept ids and the cursor to continue from (`None` at the end).
    pub async fn scan_deliveries(
        &self,
        index: &str,
        cursor: Option<&str>,
        limit: usize,
        scan: usize,
        keep: impl Fn(&str, &str, &str) -> bool,
    ) -> Result<(Vec<String>, Option<String>)> {
        let mut kept = Vec::new();
        let mut cursor = cursor.map(str::to_owned);
        let mut scanned = 0;
        loop {
            let batch = (limit - kept.len()).clamp(10, 200);
            let (ids, next) = self.page_ids(index, cursor.as_deref(), batch).await?;
            if ids.is_empty() {
                return Ok((kept, None));
            }
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.cmd("HMGET").arg(self.key(&["dlv", id])).arg("status").arg("action").arg("webhook_id");
            }
            let rows: Vec<(Option<String>, Option<String>, Option<String>)> =
                pipe.query_async(&mut self.conn()).await?;
            for (id, (status, action, webhook)) in ids.iter().zip(rows) {
                scanned += 1;
                cursor = Some(id.clone());
                if let (Some(s), Some(a), Some(w)) = (status, action, webhook)
                    && keep(&s, &a, &w)
                {
                    kept.push(id.clone());
                    if kept.len() == limit {
                        let more = next.is_some() || id != ids.last().map_or("", |s| s.as_str());
                        return Ok((kept, more.then_some(id.clone())));
                    }
                }
            }
            if next.is_none() {
                return Ok((kept, None));
            }
            if scanned >= scan {
                return Ok((kept, cursor));
            }
        }
    }
}

impl Store {
    /// The envelope of an event of the organisation, as published; `None` once expired.
    pub async fn event_envelope(&self, org_id: &str, event_id: &str) -> Result<Option<String>> {
        if !crate::ids::is_event_id(event_id) {
            return Ok(None);
        }
        Ok(self.conn().get(self.key(&["evt", org_id, event_id])).await?)
    }

    /// Drops index entries of deliveries created before `cutoff_ms` (their records have
    /// expired or soon will), so the indexes stay bounded under steady load.
    pub async fn trim_delivery_indexes(&self, cutoff_ms: u64) -> Result<()> {
        let bound = format!("({}", crate::ids::lower_bound(crate::ids::Kind::Delivery, cutoff_ms));
        for org in self.org_ids().await? {
            let webhooks: Vec<String> = self.conn().zrange(self.key(&["org", &org, "webhooks"]), 0, -1).await?;
            let mut pipe = redis::pipe();
            pipe.cmd("ZREMRANGEBYLEX").arg(self.key(&["org", &org, "dlvs"])).arg("-").arg(&bound).ignore();
            for wh in webhooks {
                pipe.cmd("ZREMRANGEBYLEX").arg(self.key(&["wh", &wh, "dlvs"])).arg("-").arg(&bound).ignore();
            }
            pipe.query_async::<()>(&mut self.conn()).await?;
        }
        Ok(())
    }
}
