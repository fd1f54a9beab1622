//! Preparing a delivery's body: its webhook's plugins run on the first attempt, once,
//! before anything is signed; later attempts send what they produced then. A source's event
//! is sent as the provider sent it (its plugins get that body as the event).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::plugins::EventMeta;
use crate::plugins::Runtime;
use crate::plugins::chain::{self, ChainOutcome, PluginRun, Step};
use crate::shared::PluginHashes;
use crate::store::events::stored::StoredEvent;
use crate::store::queue::claim::Member;
use crate::store::queue::row::RowChanges;
use crate::store::queue::targets::WebhookTarget;
use crate::store::queue::work::Loaded;
use crate::store::tenants::plugins::PluginRecords;
use crate::store::tenants::webhooks::Attachment;
use crate::telemetry::PluginCall;

/// What to do with a delivery once its plugins have run.
pub(in crate::delivery) enum Prepared {
    /// Send this body with these extra headers; store `fields` (rendered body, headers,
    /// plugin outcomes) with the outcome.
    /// `calls`: the plugins that ran (for the attempt's span).
    Send { body: String, extra_headers: Vec<(String, String)>, changes: RowChanges, calls: Vec<PluginCall> },
    /// A plugin dropped it.
    Filtered { changes: RowChanges, calls: Vec<PluginCall> },
    /// The event expired before its first attempt.
    EventMissing,
    /// What an earlier attempt stored cannot be read.
    Corrupt(String),
    /// The store could not be read.
    StoreDown,
}

/// Runs a webhook's plugins on a delivery's body: the organisation's plugins by their code's
/// hash, compiled once (their code read from the store when not compiled yet).
#[derive(Debug)]
pub(super) struct Preparer {
    /// Where a plugin's code is read when it is not compiled yet.
    pub records: PluginRecords,
    pub plugins: Arc<Runtime>,
    pub plugin_hashes: Arc<PluginHashes>,
}

impl Preparer {
    /// Runs the webhook's plugins on the first attempt; later attempts send what they
    /// produced then (the same body every time). Any failure to read the attachments, load
    /// or run a plugin follows the attachment's `on_error` (default `drop`): the body is
    /// never sent unfiltered.
    pub(super) async fn prepare(
        &self,
        member: &Member,
        loaded: &mut Loaded,
        event: Option<&StoredEvent>,
        webhook: &WebhookTarget,
    ) -> Prepared {
        if loaded.plugins.is_some() {
            return Self::produced_before(loaded, event);
        }
        let Some(envelope) = event.map(|e| e.envelope.clone()) else { return Prepared::EventMissing };
        let (envelope, source_headers) = outgoing(envelope);
        let attachments: Vec<Attachment> = match webhook.plugins.as_deref() {
            None | Some("") => Vec::new(),
            Some(text) => match serde_json::from_str(text) {
                Ok(attachments) => attachments,
                Err(e) => {
                    let error = format!("the webhook's plugin attachments cannot be read ({e}); dropped by default");
                    tracing::error!(delivery_id = %member.delivery, org_id = %member.org, "{error}");
                    let plugins =
                        serde_json::to_string(&[PluginRun::failed("", error)]).unwrap_or_else(|_| "[]".into());
                    return Prepared::Filtered {
                        changes: RowChanges { plugins: Some(plugins), ..RowChanges::default() },
                        calls: Vec::new(),
                    };
                }
            },
        };
        if attachments.is_empty() {
            return Prepared::Send {
                body: envelope,
                extra_headers: source_headers,
                changes: RowChanges { plugins: Some("[]".into()), ..RowChanges::default() },
                calls: Vec::new(),
            };
        }
        let Some(steps) = self.steps(member, attachments).await else { return Prepared::StoreDown };
        let meta = EventMeta::from_envelope(&envelope).unwrap_or_default();
        let started = SystemTime::now();
        let (outcome, runs) = chain::run(&self.plugins, &member.org, steps, Arc::new(meta), &envelope).await;
        let calls = calls_of(&runs, started);
        let plugins = Some(serde_json::to_string(&runs).unwrap_or_else(|_| "[]".into()));
        let mut changes = RowChanges { plugins, ..RowChanges::default() };
        match outcome {
            ChainOutcome::Filtered { .. } => Prepared::Filtered { changes, calls },
            ChainOutcome::Deliver { body, headers } => {
                if !headers.is_empty() {
                    changes.headers = Some(serde_json::to_string(&headers).unwrap_or_else(|_| "[]".into()));
                }
                let headers = with_source_headers(source_headers, headers);
                let body = match body {
                    Some(body) => {
                        changes.body = Some(body.clone());
                        body
                    }
                    None => envelope,
                };
                Prepared::Send { body, extra_headers: headers, changes, calls }
            }
        }
    }

    /// A later attempt: the body and headers the first attempt's plugins produced.
    fn produced_before(loaded: &mut Loaded, event: Option<&StoredEvent>) -> Prepared {
        let extra_headers = match loaded.headers.as_deref() {
            None | Some("") => Vec::new(),
            Some(h) => match serde_json::from_str::<Vec<(String, String)>>(h) {
                Ok(headers) => headers,
                Err(e) => {
                    return Prepared::Corrupt(format!("the headers its plugins produced cannot be read: {e}"));
                }
            },
        };
        let Some((envelope, source_headers)) = event.map(|e| outgoing(e.envelope.clone())) else {
            return Prepared::EventMissing;
        };
        let extra_headers = with_source_headers(source_headers, extra_headers);
        let body = loaded.body.take().unwrap_or(envelope);
        Prepared::Send { body, extra_headers, changes: RowChanges::default(), calls: Vec::new() }
    }

    /// The plugin chain's steps, each plugin's code read from the store unless compiled
    /// already; `None` when the store cannot be read.
    async fn steps(&self, member: &Member, attachments: Vec<Attachment>) -> Option<Vec<Step>> {
        let mut steps = Vec::with_capacity(attachments.len());
        for attachment in attachments {
            let sha256 = self.plugin_hashes.hash(&member.org, &attachment.plugin_id).await.ok()?;
            let wasm = match &sha256 {
                Some(sha) if !self.plugins.is_compiled(sha) => {
                    self.records.get_plugin_wasm(&member.org, &attachment.plugin_id).await.ok()?
                }
                _ => None,
            };
            steps.push(Step {
                plugin_id: attachment.plugin_id,
                sha256,
                wasm,
                config: attachment.config.to_string(),
                on_error: attachment.on_error,
            });
        }
        Some(steps)
    }
}

/// What a delivery of the event `envelope` sends before its plugins run: the envelope, or a
/// source's request as the provider sent it — its body byte for byte and its headers, with
/// `X-Weir-Source` (contract §10).
fn outgoing(envelope: String) -> (String, Vec<(String, String)>) {
    match crate::sources::forward::forwarded(&envelope) {
        Some(forwarded) => {
            let mut headers = forwarded.headers;
            headers.push(("x-weir-source".to_owned(), forwarded.source));
            (forwarded.body, headers)
        }
        None => (envelope, Vec::new()),
    }
}

/// A source's headers, then the plugins' (which replace any of the same name).
fn with_source_headers(source: Vec<(String, String)>, plugins: Vec<(String, String)>) -> Vec<(String, String)> {
    if source.is_empty() {
        return plugins;
    }
    let mut out: Vec<(String, String)> =
        source.into_iter().filter(|(name, _)| !plugins.iter().any(|(set, _)| set.eq_ignore_ascii_case(name))).collect();
    out.extend(plugins);
    out
}

/// The plugin calls of a chain that began at `started`, one after the other as they ran.
fn calls_of(runs: &[PluginRun], started: SystemTime) -> Vec<PluginCall> {
    let mut at = started;
    runs.iter()
        .map(|run| {
            let end = at + Duration::from_micros(run.duration_us);
            let call = PluginCall {
                plugin_id: run.plugin_id.clone(),
                verdict: run.outcome,
                fuel: run.fuel_used,
                start: at,
                end,
            };
            at = end;
            call
        })
        .collect()
}
