//! The test's side of the API: client credentials, an organisation's clients, and the
//! calls tests make with them (publish, webhooks, deliveries), and the example events.

use std::time::Duration;

use serde_json::{Value, json};

use super::eventually;
use super::http::{Http, Resp};

/// Client credentials.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub client_id: String,
    pub client_secret: String,
}

/// An organisation under test.
pub struct Tenant {
    pub org_id: String,
    pub admin: Api,
    pub publisher: Api,
}

/// An authenticated API client.
#[derive(Clone)]
pub struct Api {
    pub http: Http,
    pub token: String,
    pub creds: Credentials,
}

impl Api {
    /// One series' value in `/metrics` (`None`: not there).
    pub async fn metric(&self, series: &str) -> Option<f64> {
        let text = self.http.get("/metrics").send().await.expect(200).text();
        text.lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))?
            .rsplit(' ')
            .next()?
            .parse()
            .ok()
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.http.get(path).bearer(&self.token).send().await
    }

    pub async fn post(&self, path: &str, body: &Value) -> Resp {
        self.http.post(path).bearer(&self.token).json(body).send().await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> Resp {
        self.http.patch(path).bearer(&self.token).json(body).send().await
    }

    pub async fn delete(&self, path: &str) -> Resp {
        self.http.delete(path).bearer(&self.token).send().await
    }

    /// Creates a webhook to `url` for `actions`; returns its JSON.
    pub async fn create_webhook(&self, url: &str, actions: &[&str]) -> Value {
        self.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": actions})).await.expect(201).json()
    }
}

/// A valid `work_order_created` event about work order `wo`.
pub fn work_order_event(wo: &str) -> Value {
    json!({
        "action": "work_order_created",
        "creator": {"id": "usr_7", "name": "Ada Lovelace"},
        "subject": {"type": "WorkOrder", "id": wo},
        "work_order": {"id": wo, "title": "Replace pump seal", "status": "open", "priority": 2},
    })
}

impl Api {
    /// Publishes an event (as a publisher client); returns its id.
    pub async fn publish(&self, event: &Value) -> String {
        let resp = self.post("/api/v2/events", event).await.expect(202);
        resp.json()["id"].as_str().expect("event id").to_owned()
    }

    /// Publishes an event with a `traceparent` header (W3C trace context); its id.
    pub async fn publish_traced(&self, event: &Value, traceparent: &str) -> String {
        let resp = self
            .http
            .post("/api/v2/events")
            .bearer(&self.token)
            .header("traceparent", traceparent)
            .json(event)
            .send()
            .await
            .expect(202);
        resp.json()["id"].as_str().expect("event id").to_owned()
    }

    /// The deliveries of a webhook, newest first (up to 100).
    pub async fn deliveries_of(&self, webhook_id: &str) -> Vec<Value> {
        let resp = self.get(&format!("/api/v2/webhook_deliveries?webhook_id={webhook_id}&limit=100")).await.expect(200);
        resp.json()["data"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until every delivery of a webhook has left `pending` (and there are `n`).
    pub async fn settled(&self, webhook_id: &str, n: usize) -> Vec<Value> {
        eventually(&format!("{n} settled deliveries"), Duration::from_secs(30), async || {
            let all = self.deliveries_of(webhook_id).await;
            (all.len() == n && all.iter().all(|d| d["status"] != "pending")).then_some(all)
        })
        .await
    }
}

/// A `report_export_completed` event: export `rex` of `exportable` (type, id) by `creator`.
pub fn export_event(rex: &str, exportable: (&str, &str), creator: &str) -> Value {
    json!({
        "action": "report_export_completed",
        "creator": {"id": creator, "name": format!("Client {creator}")},
        "subject": {"type": "ReportExport", "id": rex},
        "report_export": {
            "id": rex, "status": "completed", "format": "pdf",
            "exportable": {"type": exportable.0, "id": exportable.1},
            "created_at": "2026-11-22T10:00:00.000Z", "completed_at": "2026-11-22T10:00:05.000Z",
            "download_url": format!("https://weir.example/exports/{rex}?sig=abc"),
        },
    })
}
