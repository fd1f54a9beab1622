//! The export builders: claim queued exports (a lease queue, as deliveries have), build
//! them, publish `report_export_completed`. An export leaves the queue only when it is
//! completed (or has failed) *and* its event is published; a builder that dies leaves its
//! lease to run out, and another builder takes the export over.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::MAX_EXPORT_BYTES;
use super::render::{self, Document};
use crate::app::App;
use crate::domain::Invalid;
use crate::domain::exports::{Format, link};
use crate::store::StoreError;
use crate::store::events::exports::Export;

/// How long a builder holds an export before another may take it over (it renews the
/// lease while building).
const LEASE: Duration = Duration::from_secs(60);
/// How often an idle builder looks for queued exports.
const POLL: Duration = Duration::from_millis(500);

/// Why an export could not be built now (it is taken over later).
#[derive(Debug, thiserror::Error)]
enum BuildError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The completion event Weir made does not pass its own validation (a bug, not data).
    #[error("the report_export_completed event is not valid: {0:?}")]
    Event(Invalid),
}

/// The running builders of a process.
#[derive(Debug)]
pub(crate) struct BuilderHandle {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl BuilderHandle {
    /// Starts the builders.
    pub(crate) fn start(app: Arc<App>) -> BuilderHandle {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run(app, stopped));
        BuilderHandle { stop, task }
    }

    /// Stops after the export being built (if any) is done.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn run(app: Arc<App>, mut stopped: watch::Receiver<bool>) {
    while !*stopped.borrow() {
        let claimed = match app.store.claim_exports(4, LEASE).await {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, "cannot look for queued exports");
                Vec::new()
            }
        };
        if claimed.is_empty() {
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = stopped.changed() => {}
            }
            continue;
        }
        for id in claimed {
            // The lease is renewed while the export is being built.
            let building = build(&app, &id);
            tokio::pin!(building);
            let mut renew = tokio::time::interval_at(tokio::time::Instant::now() + LEASE / 3, LEASE / 3);
            let done = loop {
                tokio::select! {
                    done = &mut building => break done,
                    _ = renew.tick() => {
                        if let Err(e) = app.store.renew_export(&id, LEASE).await {
                            tracing::warn!(error = %e, export = %id, "cannot renew an export's lease");
                        }
                    }
                }
            };
            match done {
                Ok(()) => {
                    if let Err(e) = app.store.export_done(&id).await {
                        tracing::warn!(error = %e, export = %id, "cannot mark an export done; it will be looked at again");
                    }
                }
                Err(e) => tracing::warn!(error = %e, export = %id, "cannot build an export now; it will be taken over"),
            }
        }
    }
}

/// Builds one export (or finishes publishing it). `Ok` means nothing is left to do.
async fn build(app: &App, id: &str) -> Result<(), BuildError> {
    let Some(export) = app.store.export_any_org(id).await? else { return Ok(()) };
    match export.status.as_str() {
        "failed" => return Ok(()),
        "completed" if export.published => return Ok(()),
        "completed" => return publish(app, &export).await,
        _ => {}
    }
    app.store.set_export_fields(id, &[("status", "building")]).await?;
    let kind = export.exportable.kind.clone();
    let record_id = export.exportable.id.clone();
    let Some(snapshot) = app.store.snapshot(&export.org_id, &kind, &record_id).await? else {
        return fail(app, id, &format!("Weir no longer has a snapshot of {kind} {record_id}")).await;
    };
    // Publish refuses what cannot be read back; a snapshot stored before it did fails the
    // export with why, never an empty success.
    let record: Value = match serde_json::from_str(&snapshot) {
        Ok(record) => record,
        Err(e) => return fail(app, id, &format!("the snapshot of {kind} {record_id} cannot be read: {e}")).await,
    };
    let Some(format) = Format::parse(&export.format) else {
        return fail(app, id, "unknown format").await;
    };
    let generated_at = crate::time::now_rfc3339();
    let (export_id, generated) = (id.to_owned(), generated_at.clone());
    let bytes = tokio::task::spawn_blocking(move || {
        let doc = Document {
            export_id: &export_id,
            exportable_type: &kind,
            exportable_id: &record_id,
            generated_at: &generated,
            record: &record,
        };
        render::render(format, &doc)
    })
    .await
    .unwrap_or_default();
    if bytes.is_empty() {
        return fail(app, id, "the export could not be rendered").await;
    }
    if bytes.len() > MAX_EXPORT_BYTES {
        return fail(
            app,
            id,
            &format!("the export would be {} bytes, more than the {MAX_EXPORT_BYTES} allowed", bytes.len()),
        )
        .await;
    }
    let ttl = app.config.export_url_ttl;
    let expires = crate::time::now_millis() / 1000 + ttl.as_secs();
    let key = app.store.export_link_key().await?;
    let url = link::url(&app.config.public_url(), &key, id, expires);
    app.store.complete_export(id, &bytes, ttl.as_millis() as u64, &generated_at, &url).await?;
    let completed =
        Export { status: "completed".into(), completed_at: Some(generated_at), download_url: Some(url), ..export };
    publish(app, &completed).await
}

async fn fail(app: &App, id: &str, reason: &str) -> Result<(), BuildError> {
    tracing::info!(export = id, reason, "report export failed");
    Ok(app.store.set_export_fields(id, &[("status", "failed"), ("error", reason)]).await?)
}

/// Emits `report_export_completed` (service document §6) for a completed export. The event
/// id derives from the export id, so doing it twice publishes once.
async fn publish(app: &App, export: &Export) -> Result<(), BuildError> {
    let body = json!({
        "id": format!("evt_{}", export.id),
        "action": "report_export_completed",
        "created_at": export.completed_at,
        "creator": {"id": export.client_id, "name": export.client_name},
        "subject": {"type": "ReportExport", "id": export.id},
        "report_export": {
            "id": export.id,
            "status": "completed",
            "format": export.format,
            "exportable": {"type": export.exportable.kind, "id": export.exportable.id},
            "created_at": export.created_at,
            "completed_at": export.completed_at,
            "download_url": export.download_url,
        },
    })
    .to_string();
    let fields: BTreeMap<String, &RawValue> =
        serde_json::from_str(&body).map_err(|e| BuildError::Event(Invalid::field("body", e.to_string())))?;
    let event = crate::domain::events::validate(fields).map_err(BuildError::Event)?;
    crate::domain::events::publish(app, &export.org_id, &event).await?;
    Ok(app.store.set_export_fields(&export.id, &[("published", "1")]).await?)
}
