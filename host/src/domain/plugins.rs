//! Plugins below HTTP: uploads — the bytes checked and compiled within the process's
//! compile budget (`crate::plugins`), then stored within the organisation's plan (its
//! plugins, and its bytes of code, each distinct code counted once: an upload of bytes the
//! organisation stores already stores no second copy; the compiled plugin is kept only once
//! stored) — listing, reading, deleting, and dry runs on an event or a real delivery's.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::fields::Fields;
use super::quota::QuotaExceeded;
use super::views::PluginView;
use super::{FieldError, Invalid};
use crate::ids::{self, Kind};
use crate::plans::{Quota, Rules};
use crate::plugins::Runtime;
use crate::plugins::{BudgetError, Code, EventMeta, UploadError as CompileError, Verdict};
use crate::shared::PluginHashes;
use crate::store::Keys;
use crate::store::StoreError;
use crate::store::events::publish::EventWrites;
use crate::store::tenants::plugins::{Deleted, Plugin, PluginQuota, PluginRecords, Refused};

/// Why an upload was not stored.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UploadRefused {
    /// Not a plugin (the reason names what is wrong with the body).
    #[error("{0}")]
    Invalid(String),
    /// The organisation's plan allows no more.
    #[error(transparent)]
    Quota(QuotaExceeded),
    /// Another upload of the organisation is compiling.
    #[error("{0}")]
    OrganisationBusy(String),
    /// The compiler is busy, or the compile took too long.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a plugin could not be read, deleted or run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PluginRequestError {
    #[error("plugin not found")]
    NotFound,
    #[error("the plugin is attached to a webhook; detach it first")]
    Attached,
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for PluginRequestError {
    fn from(invalid: Invalid) -> PluginRequestError {
        PluginRequestError::Invalid(invalid)
    }
}

/// The report of a dry run.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct DryRun {
    /// `deliver`, `drop` or `error`.
    pub outcome: &'static str,
    /// Why it dropped the event.
    pub reason: Option<String>,
    /// The body a delivery would carry.
    pub body: Option<String>,
    /// Extra headers a delivery would carry.
    pub headers: Vec<Header>,
    #[schema(value_type = Vec<Object>)]
    pub logs: Vec<crate::plugins::LogLine>,
    pub error: Option<String>,
    pub fuel_used: u64,
    pub fuel_budget: u64,
    pub duration_us: u64,
}

/// A header a plugin set.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct Header {
    pub name: String,
    pub value: String,
}

/// What the plugins' door is made of (the wiring hands each part over).
pub(crate) struct PluginParts<'a> {
    pub records: PluginRecords,
    pub events: EventWrites,
    pub keys: &'a Keys,
    pub runtime: &'a Arc<Runtime>,
    pub plugin_hashes: &'a Arc<PluginHashes>,
    pub moved: &'a super::moved::Moved,
    pub metrics: &'a Arc<crate::metrics::Metrics>,
}

/// Plugins, for the surfaces: upload, list, read, delete, dry-run.
#[derive(Debug, Clone)]
pub(crate) struct Plugins {
    records: PluginRecords,
    /// Where a real delivery's event is read for a dry run.
    events: EventWrites,
    keys: Keys,
    runtime: Arc<Runtime>,
    plugin_hashes: Arc<PluginHashes>,
    moved: super::moved::Moved,
    metrics: Arc<crate::metrics::Metrics>,
}

impl Plugins {
    pub(crate) fn new(parts: PluginParts<'_>) -> Plugins {
        let PluginParts { records, events, keys, runtime: plugins, plugin_hashes, moved, metrics } = parts;
        Plugins {
            metrics: metrics.clone(),
            records,
            events,
            keys: keys.clone(),
            runtime: plugins.clone(),
            plugin_hashes: plugin_hashes.clone(),
            moved: moved.clone(),
        }
    }
}

impl Plugins {
    /// Checks, compiles and stores an upload of `org_id` as the next version of `name`.
    pub(crate) async fn upload(
        &self,
        org_id: &str,
        plan: &Rules,
        name: String,
        wasm: bytes::Bytes,
    ) -> Result<PluginView, UploadRefused> {
        upload(self, org_id, plan, name, wasm).await.map(|p| PluginView::from(&p))
    }

    /// A page of the organisation's plugins, newest first; with `name`, the versions of
    /// that name.
    pub(crate) async fn list(
        &self,
        org_id: &str,
        name: Option<&str>,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<(Vec<PluginView>, Option<String>), StoreError> {
        let (plugins, next) = match name {
            Some(name) => self.records.plugin_versions(org_id, name.trim(), cursor, limit).await?,
            None => self.records.list_plugins(org_id, cursor, limit).await?,
        };
        Ok((plugins.iter().map(PluginView::from).collect(), next))
    }

    /// The organisation's plugin.
    pub(crate) async fn find(&self, org_id: &str, id: &str) -> Result<PluginView, PluginRequestError> {
        Ok(PluginView::from(&self.record(org_id, id).await?))
    }

    async fn record(&self, org_id: &str, id: &str) -> Result<Plugin, PluginRequestError> {
        if !ids::is_valid(Kind::Plugin, id) {
            return Err(PluginRequestError::NotFound);
        }
        self.records.get_plugin(org_id, id).await?.ok_or(PluginRequestError::NotFound)
    }

    /// Deletes the organisation's plugin unless a webhook has it attached.
    pub(crate) async fn delete(&self, org_id: &str, id: &str) -> Result<(), PluginRequestError> {
        if !ids::is_valid(Kind::Plugin, id) {
            return Err(PluginRequestError::NotFound);
        }
        match self.records.delete_plugin(org_id, id).await? {
            Deleted::Deleted => {
                self.plugin_hashes.deleted(id);
                Ok(())
            }
            Deleted::NotFound => Err(PluginRequestError::NotFound),
            Deleted::Attached => Err(PluginRequestError::Attached),
        }
    }

    /// Runs the plugin once and reports everything. The body names the event as `event` —
    /// in the shape `POST /api/v2/events` takes, or the envelope exactly as a subscriber
    /// received it (with `organisation`) — or as `delivery_id`, to rerun the plugin on the
    /// event of a real delivery; `config` is the attachment's config.
    pub(crate) async fn dry_run(
        &self,
        org_id: &str,
        id: &str,
        body: Map<String, Value>,
    ) -> Result<DryRun, PluginRequestError> {
        let plugin = self.record(org_id, id).await?;
        let mut fields = Fields::new(body);
        let event = fields.object("event", false);
        let delivery_id = fields.string("delivery_id");
        let config = fields.object("config", false).unwrap_or_default();
        if event.is_some() == delivery_id.is_some() && !fields.has_errors() {
            fields.error("event", "give either `event` or `delivery_id`");
        }
        fields.finish()?;
        let envelope = match (event, delivery_id) {
            (Some(event), _) => envelope_of_event(event, org_id)?,
            (None, Some(delivery_id)) => envelope_of_delivery(self, org_id, &delivery_id).await?,
            (None, None) => return Err(Invalid::field("event", "give either `event` or `delivery_id`").into()),
        };
        let meta = EventMeta::from_envelope(&envelope).ok_or_else(|| Invalid::field("event", "is not an envelope"))?;
        let wasm = if self.runtime.is_compiled(&plugin.sha256) {
            None
        } else {
            self.records.get_plugin_wasm(org_id, &plugin.id).await?
        };
        let config = Value::Object(config).to_string();
        let code = Code { sha256: plugin.sha256.clone(), wasm };
        let report =
            crate::plugins::call(&self.runtime, org_id, code, Arc::new(meta), Arc::from(envelope.as_str()), config)
                .await;
        let (outcome, reason, out_body, headers, error) = match report.result {
            Ok(Verdict::Deliver { body, headers }) => ("deliver", None, Some(body.unwrap_or(envelope)), headers, None),
            Ok(Verdict::Drop(reason)) => ("drop", Some(reason), None, Vec::new(), None),
            Err(e) => ("error", None, None, Vec::new(), Some(e.to_string())),
        };
        // Only the headers a delivery would carry: Weir sets its own (the signature among
        // them; a dry run has no secret to sign with).
        let headers: Vec<Header> = headers
            .into_iter()
            .map(|(name, value)| (name.to_ascii_lowercase(), value))
            .filter(|(name, _)| !crate::sign::is_reserved(name))
            .map(|(name, value)| Header { name, value })
            .collect();
        Ok(DryRun {
            outcome,
            reason,
            body: out_body,
            headers,
            logs: report.logs,
            error,
            fuel_used: report.fuel_used,
            fuel_budget: self.runtime.limits().fuel,
            duration_us: report.duration.as_micros() as u64,
        })
    }
}

/// The envelope of an event given to a dry run: validated like a published one. A
/// delivered envelope's `organisation` is accepted (the dry run runs as the caller's).
fn envelope_of_event(mut event: Map<String, Value>, org_id: &str) -> Result<String, Invalid> {
    if let Some(organisation) = event.remove("organisation") {
        let ok = organisation.as_object().is_some_and(|o| o.len() == 1 && o.get("id").is_some_and(Value::is_string));
        if !ok {
            return Err(Invalid::field("event.organisation", "must be an object {\"id\": \"org_…\"}"));
        }
    }
    let event_text = Value::Object(event).to_string();
    let raw: BTreeMap<String, &RawValue> =
        serde_json::from_str(&event_text).map_err(|e| Invalid(vec![FieldError::new("event", e.to_string())]))?;
    let event = super::events::validate(raw).map_err(|e| e.within("event"))?;
    Ok(event.envelope(org_id))
}

/// The envelope of a delivery's event, as published (before any plugin ran).
async fn envelope_of_delivery(
    plugins: &Plugins,
    org_id: &str,
    delivery_id: &str,
) -> Result<String, PluginRequestError> {
    let not_found = || Invalid::field("delivery_id", "no such delivery in this organisation");
    if !ids::is_valid(Kind::Delivery, delivery_id) {
        return Err(not_found().into());
    }
    let delivery = plugins.moved.reads().row(org_id, delivery_id).await?.ok_or_else(not_found)?;
    let expired = || Invalid::field("delivery_id", "the event of this delivery has expired");
    let p = plugins.keys.partition_of_delivery(delivery_id).ok_or_else(not_found)?;
    let event = plugins.events.event(p, org_id, &delivery.event_id).await?.ok_or_else(expired)?;
    Ok(event.envelope)
}

/// Checks, compiles and stores an upload of `org_id` as the next version of `name`.
async fn upload(
    plugins: &Plugins,
    org_id: &str,
    plan: &Rules,
    name: String,
    wasm: bytes::Bytes,
) -> Result<Plugin, UploadRefused> {
    let limits = &plan.limits;
    let quota = PluginQuota {
        plugins: limits.plugins.map_or(usize::MAX, |n| n as usize),
        bytes: limits.plugin_bytes.unwrap_or(u64::MAX),
    };
    let wasm: Arc<[u8]> = Arc::from(wasm.as_ref());
    let hashing = wasm.clone();
    let sha256 = tokio::task::spawn_blocking(move || crate::plugins::sha256_hex(&hashing))
        .await
        .map_err(|_| UploadRefused::Busy("the upload could not be read; retry".into()))?;
    let size = wasm.len() as u64;
    // The plan first: nothing is compiled for an upload that could not be stored.
    let (usage, stored) = plugins.records.plugin_usage(org_id, &sha256).await?;
    if usage.plugins >= quota.plugins {
        return Err(refused(plugins, Refused::Plugins, quota, plan));
    }
    if !stored && usage.bytes + size > quota.bytes {
        return Err(refused(plugins, Refused::Bytes, quota, plan));
    }
    let staged = plugins.runtime.compile_upload(org_id, wasm.clone()).await.map_err(|e| match e {
        CompileError::Invalid(why) => UploadRefused::Invalid(why.to_string()),
        CompileError::Budget(e @ BudgetError::OrganisationBusy) => UploadRefused::OrganisationBusy(e.to_string()),
        CompileError::Budget(e) => UploadRefused::Busy(e.to_string()),
    })?;
    let plugin = Plugin {
        id: ids::new(Kind::Plugin),
        name,
        sha256,
        size,
        created_at: crate::time::now_rfc3339(),
        version: 0,
        org_id: org_id.to_owned(),
    };
    let plugin =
        plugins.records.create_plugin(&plugin, &wasm, quota).await?.map_err(|r| refused(plugins, r, quota, plan))?;
    let runtime = plugins.runtime.clone();
    let _ = tokio::task::spawn_blocking(move || runtime.keep(staged)).await;
    Ok(plugin)
}

fn refused(plugins: &Plugins, why: Refused, quota: PluginQuota, plan: &Rules) -> UploadRefused {
    let kind = match why {
        Refused::Plugins => Quota::Plugins,
        Refused::Bytes => Quota::PluginBytes,
    };
    plugins.metrics.quota_refused(&plan.name, kind);
    UploadRefused::Quota(match why {
        Refused::Plugins => {
            let what =
                format!("the organisation already has {} plugins (delete versions it no longer uses)", quota.plugins);
            QuotaExceeded::count(Quota::Plugins, plan, what)
        }
        Refused::Bytes => {
            let what = format!(
                "the organisation's plugins would take more than {} bytes of code (delete versions it no longer uses)",
                quota.bytes
            );
            QuotaExceeded::count(Quota::PluginBytes, plan, what)
        }
    })
}
