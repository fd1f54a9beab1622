//! Plugins under test: the built components, their limits without a Weir, and the API calls
//! that upload, attach and dry-run them.

use serde_json::{Value, json};

use super::weir::Api;

/// The plugin time limit under test, where the shipped default is 50 ms. The limit is wall
/// time, and a debug build on a CI machine running a dozen tests at once has cut plugin calls
/// short with it (a filter's delivery dropped, a panic read as a timeout) in tests about
/// something else. Fuel stays the deterministic bound; tests of the time limit itself set
/// `WEIR_PLUGIN_TIMEOUT`.
pub const PLUGIN_TIMEOUT: &str = "5s";

/// The shipped plugin limits but for the time limit ([`PLUGIN_TIMEOUT`]), for tests that run
/// plugins without a Weir.
pub fn plugin_limits() -> weir::plugins::Limits {
    let config = weir::config::load_with(None, |k| (k == "WEIR_PLUGIN_TIMEOUT").then(|| PLUGIN_TIMEOUT.to_owned()))
        .expect("the default configuration with the test's time limit");
    config.plugin_limits()
}

/// A delivered `work_order_created` envelope as the plugin runtime takes it, for tests that
/// call a plugin in-process: what the host reads of it, and its text.
pub fn plugin_input() -> (std::sync::Arc<weir::plugins::EventMeta>, std::sync::Arc<str>) {
    let body = json!({"id": "evt_1", "action": "work_order_created", "created_at": "2026-11-25T10:00:00.000Z",
                      "organisation": {"id": "org_1"}, "creator": {"id": "u", "name": "U"},
                      "subject": {"type": "WorkOrder", "id": "wo_1"}, "work_order": {"id": "wo_1"}})
    .to_string();
    let meta = weir::plugins::EventMeta::from_envelope(&body).expect("a valid envelope");
    (std::sync::Arc::new(meta), std::sync::Arc::from(body.as_str()))
}

/// A plugin built by `scripts/build-plugins.sh` (`report_export_filter`, `hostile`, …).
pub fn plugin_wasm(name: &str) -> Vec<u8> {
    let exe = std::env::current_exe().expect("test binary path");
    let target = exe.parent().and_then(|d| d.parent()).and_then(|d| d.parent()).expect("target dir");
    let path = target.join("wasm32-wasip2").join("release").join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|_| panic!("{} is missing: run scripts/build-plugins.sh", path.display()))
}

impl Api {
    /// Uploads a plugin; returns its JSON.
    pub async fn upload_plugin(&self, name: &str, wasm: Vec<u8>) -> Value {
        let resp = self
            .http
            .post(&format!("/api/v2/plugins?name={name}"))
            .bearer(&self.token)
            .raw("application/wasm", wasm)
            .send()
            .await
            .expect(201);
        resp.json()
    }

    /// Creates a webhook with plugins attached; returns its JSON.
    pub async fn create_webhook_with(&self, url: &str, actions: &[&str], plugins: Value) -> Value {
        self.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": actions, "plugins": plugins}))
            .await
            .expect(201)
            .json()
    }

    /// Dry-runs a plugin on an event with a config.
    pub async fn test_plugin(&self, plugin_id: &str, event: &Value, config: Value) -> Value {
        self.post(&format!("/api/v2/plugins/{plugin_id}/test"), &json!({"event": event, "config": config}))
            .await
            .expect(200)
            .json()
    }
}
