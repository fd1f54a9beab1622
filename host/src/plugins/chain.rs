//! A webhook's plugins, run in order: each sees the previous one's output. A plugin error
//! either drops the delivery (`on_error: drop`, the default) or is passed over, keeping the
//! body as it was before that plugin (`on_error: deliver`).

use std::sync::Arc;

use serde::Serialize;

use super::call::{CallReport, Code, PluginError, Verdict};
use super::runtime::Runtime;
use super::state::{EventMeta, LogLine};
use crate::store::tenants::webhooks::OnError;

/// One attached plugin, resolved for a call.
#[derive(Debug, Clone)]
pub struct Step {
    pub plugin_id: String,
    /// `None` when the plugin no longer exists.
    pub sha256: Option<String>,
    /// The code, when it is not compiled in this process yet.
    pub wasm: Option<Vec<u8>>,
    pub config: String,
    pub on_error: OnError,
}

/// What one plugin did, as recorded on the delivery.
#[derive(Debug, Clone, Serialize)]
pub struct PluginRun {
    pub plugin_id: String,
    /// `deliver`, `drop` or `error`.
    pub outcome: &'static str,
    pub logs: Vec<LogLine>,
    pub error: Option<String>,
    /// For a `drop`: the plugin's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub fuel_used: u64,
    pub duration_us: u64,
}

impl PluginRun {
    /// A plugin that could not run at all.
    pub fn failed(plugin_id: &str, error: String) -> PluginRun {
        PluginRun {
            plugin_id: plugin_id.to_owned(),
            outcome: "error",
            logs: Vec::new(),
            error: Some(error),
            reason: None,
            fuel_used: 0,
            duration_us: 0,
        }
    }
}

/// The result of the whole chain.
#[derive(Debug, Clone)]
pub enum ChainOutcome {
    /// Deliver; `body: None` means the body is unchanged.
    Deliver { body: Option<String>, headers: Vec<(String, String)> },
    /// A plugin dropped it (or failed with `on_error: drop`).
    Filtered { reason: String },
}

/// Runs the steps of a webhook of `org_id` in order.
pub async fn run(
    runtime: &Arc<Runtime>,
    org_id: &str,
    steps: Vec<Step>,
    event: Arc<EventMeta>,
    envelope: &str,
) -> (ChainOutcome, Vec<PluginRun>) {
    let mut body: Arc<str> = Arc::from(envelope);
    let mut changed = false;
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut records = Vec::with_capacity(steps.len());
    for step in steps {
        let report = match &step.sha256 {
            Some(sha256) => {
                let code = Code { sha256: sha256.clone(), wasm: step.wasm };
                super::call::call(runtime, org_id, code, event.clone(), body.clone(), step.config.clone()).await
            }
            None => CallReport::failed(PluginError::Unavailable("the plugin was deleted".into()), Default::default()),
        };
        let mut record = PluginRun {
            plugin_id: step.plugin_id.clone(),
            outcome: "deliver",
            logs: report.logs,
            error: None,
            reason: None,
            fuel_used: report.fuel_used,
            duration_us: report.duration.as_micros() as u64,
        };
        match report.result {
            Ok(Verdict::Deliver { body: new_body, headers: extra }) => {
                if let Some(new_body) = new_body {
                    body = Arc::from(new_body);
                    changed = true;
                }
                for (name, value) in extra {
                    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
                    headers.push((name, value));
                }
                records.push(record);
            }
            Ok(Verdict::Drop(reason)) => {
                record.outcome = "drop";
                record.reason = Some(reason.clone());
                records.push(record);
                return (ChainOutcome::Filtered { reason: format!("{}: {reason}", step.plugin_id) }, records);
            }
            Err(error) => {
                record.outcome = "error";
                record.error = Some(error.to_string());
                records.push(record);
                if step.on_error == OnError::Drop {
                    return (ChainOutcome::Filtered { reason: format!("{} {error}", step.plugin_id) }, records);
                }
            }
        }
    }
    let body = changed.then(|| body.to_string());
    (ChainOutcome::Deliver { body, headers }, records)
}
