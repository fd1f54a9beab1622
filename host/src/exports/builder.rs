//! The export builders: claim queued exports (a lease queue, as deliveries have), build
//! them, publish `report_export_completed`. An export leaves the queue only when it is
//! completed (or has failed) *and* its event is published; a builder that dies leaves its
//! lease to run out, and another builder takes the export over.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::MAX_EXPORT_BYTES;
use super::render::{self, Document};
use crate::domain::Invalid;
use crate::domain::exports::{Format, link};
use crate::domain::moved::Moved;
use crate::domain::notices::Notices;
use crate::jobs::{Ended, Job, Stopping};
use crate::store::StoreError;
use crate::store::core::jobs::JobQueue;
use crate::store::events::exports::{Export, ExportRecords};
use crate::telemetry::Telemetry;

/// How long a builder holds an export before another may take it over (it renews the
/// lease while building).
const LEASE: Duration = Duration::from_secs(60);
/// How often an idle builder looks for queued exports.
const POLL: Duration = Duration::from_millis(500);

/// Why an export could not be built now (it is taken over later).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The completion event Weir made does not pass its own validation (a bug, not data).
    #[error("the report_export_completed event is not valid: {0:?}")]
    Event(Invalid),
}

/// The export builders of a process (`crate::jobs` runs them: claiming queued exports,
/// renewing each one's lease while it is built).
#[derive(Debug)]
pub(crate) struct Builds {
    records: ExportRecords,
    moved: Moved,
    /// Where `report_export_completed` goes out.
    notices: Notices,
    telemetry: Arc<Telemetry>,
    /// How long a download link lives, and the base URL it starts with.
    link: (Duration, String),
}

impl Builds {
    pub(crate) fn new(
        (records, notices): (ExportRecords, &Notices),
        moved: &Moved,
        telemetry: &Arc<Telemetry>,
        (url_ttl, public_url): (Duration, String),
    ) -> Builds {
        Builds {
            records,
            moved: moved.clone(),
            notices: notices.clone(),
            telemetry: telemetry.clone(),
            link: (url_ttl, public_url),
        }
    }
}

impl Job for Builds {
    const QUEUE: JobQueue = JobQueue::Exports;
    const LEASE: Duration = LEASE;
    const POLL: Duration = POLL;
    const AT_ONCE: usize = 4;
    type Error = BuildError;

    /// Builds the export (or finishes publishing it); it is done once built and published.
    async fn run(&self, id: &str, _stopping: &Stopping) -> Result<Ended, BuildError> {
        let start = std::time::SystemTime::now();
        let built = build(self, id).await;
        let error = built.as_ref().err().map(ToString::to_string);
        self.telemetry.job("export build", vec![("weir.export.id", id.to_owned())], start, error);
        built.map(|()| Ended::Done)
    }
}

/// Builds one export (or finishes publishing it). `Ok` means nothing is left to do.
async fn build(builds: &Builds, id: &str) -> Result<(), BuildError> {
    let Some(export) = builds.records.export_any_org(id).await? else { return Ok(()) };
    match export.status.as_str() {
        "failed" => return Ok(()),
        "completed" if export.published => return Ok(()),
        "completed" => return publish(builds, &export).await,
        _ => {}
    }
    builds.records.set_export_fields(id, &[("status", "building")]).await?;
    let kind = export.exportable.kind.clone();
    let record_id = export.exportable.id.clone();
    let reads = builds.moved.reads();
    let Some(snapshot) = reads.snapshot(&export.org_id, &kind, &record_id).await? else {
        return fail(builds, id, &format!("Weir no longer has a snapshot of {kind} {record_id}")).await;
    };
    // Publish refuses what cannot be read back; a snapshot stored before it did fails the
    // export with why, never an empty success.
    let record: Value = match serde_json::from_str(&snapshot) {
        Ok(record) => record,
        Err(e) => return fail(builds, id, &format!("the snapshot of {kind} {record_id} cannot be read: {e}")).await,
    };
    let Some(format) = Format::parse(&export.format) else {
        return fail(builds, id, "unknown format").await;
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
        return fail(builds, id, "the export could not be rendered").await;
    }
    if bytes.len() > MAX_EXPORT_BYTES {
        return fail(
            builds,
            id,
            &format!("the export would be {} bytes, more than the {MAX_EXPORT_BYTES} allowed", bytes.len()),
        )
        .await;
    }
    let ttl = builds.link.0;
    let expires = crate::time::now_millis() / 1000 + ttl.as_secs();
    let key = builds.records.export_link_key().await?;
    let url = link::url(&builds.link.1, &key, id, expires);
    builds.records.complete_export(id, &bytes, ttl.as_millis() as u64, &generated_at, &url).await?;
    let completed =
        Export { status: "completed".into(), completed_at: Some(generated_at), download_url: Some(url), ..export };
    publish(builds, &completed).await
}

async fn fail(builds: &Builds, id: &str, reason: &str) -> Result<(), BuildError> {
    tracing::info!(export = id, reason, "report export failed");
    Ok(builds.records.set_export_fields(id, &[("status", "failed"), ("error", reason)]).await?)
}

/// Emits `report_export_completed` (service document §6) for a completed export. The event
/// id derives from the export id, so doing it twice publishes once.
async fn publish(builds: &Builds, export: &Export) -> Result<(), BuildError> {
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
    builds.notices.publish(&export.org_id, &event).await?;
    Ok(builds.records.set_export_fields(&export.id, &[("published", "1")]).await?)
}
