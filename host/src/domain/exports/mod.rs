//! Report exports below HTTP (the service document's "Create a report export"): a request
//! checked and queued for the builders (`crate::exports`), an export read back, and a
//! download checked against its signed link (`link`).

pub(crate) mod link;

use serde_json::{Map, Value};

use self::link::LinkError;
use super::Invalid;
use super::fields::{Fields, short_text};
use super::views::ExportView;
use crate::auth::Caller;
use crate::catalog;
use crate::ids::{self, Kind};
use crate::store::StoreError;
use crate::store::events::exports::{Export, ExportRecords, Exportable};

/// Export formats (contract §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Pdf,
    Csv,
    Json,
}

impl Format {
    pub(crate) fn parse(text: &str) -> Option<Format> {
        match text {
            "pdf" => Some(Format::Pdf),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Format::Pdf => "pdf",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }

    /// The `Content-Type` of a download.
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Format::Pdf => "application/pdf",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Json => "application/json",
        }
    }
}

/// Why an export request or download was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExportError {
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("report export not found")]
    NotFound,
    /// The download link was altered.
    #[error("this download link is not valid")]
    Altered,
    /// The download link expired, or the export is gone.
    #[error("{0}")]
    Gone(&'static str),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for ExportError {
    fn from(invalid: Invalid) -> ExportError {
        ExportError::Invalid(invalid)
    }
}

/// A built export's file, to download.
#[derive(Debug)]
pub(crate) struct Download {
    pub export_id: String,
    pub format: Format,
    pub bytes: Vec<u8>,
}

/// Report exports, for the surfaces: request, read, download.
#[derive(Debug, Clone)]
pub(crate) struct Exports {
    records: ExportRecords,
    moved: crate::domain::moved::Moved,
    link_key: std::sync::Arc<crate::shared::LinkKey>,
    delivery_retention: std::time::Duration,
}

impl Exports {
    pub(crate) fn new(
        records: ExportRecords,
        moved: &crate::domain::moved::Moved,
        link_key: &std::sync::Arc<crate::shared::LinkKey>,
        delivery_retention: std::time::Duration,
    ) -> Exports {
        Exports { records, moved: moved.clone(), link_key: link_key.clone(), delivery_retention }
    }
}

impl Exports {
    /// Checks a request (`{"exportable": {"type", "id"}, "format"}`) and queues the export.
    pub(crate) async fn create(&self, caller: &Caller, body: Map<String, Value>) -> Result<ExportView, ExportError> {
        let mut fields = Fields::new(body);
        let exportable = fields.object("exportable", true);
        let format = fields.required_string("format");
        let format = match format.as_deref().map(Format::parse) {
            Some(Some(f)) => Some(f),
            Some(None) => {
                fields.error("format", "must be pdf, csv or json");
                None
            }
            None => None,
        };
        let target = exportable.and_then(|map| exportable_of(map, &mut fields));
        fields.finish()?;
        let ((kind, record_id), format) =
            target.zip(format).ok_or_else(|| Invalid::field("exportable", "is required"))?;
        if self.moved.reads().snapshot(&caller.org_id, &kind, &record_id).await?.is_none() {
            return Err(Invalid::field(
                "exportable",
                format!("Weir has not seen {kind} {record_id} in any published event, so it has nothing to export"),
            )
            .into());
        }
        let export = Export {
            id: ids::new(Kind::ReportExport),
            status: "queued".into(),
            format: format.as_str().into(),
            exportable: Exportable { kind, id: record_id },
            created_at: crate::time::now_rfc3339(),
            completed_at: None,
            download_url: None,
            error: None,
            org_id: caller.org_id.clone(),
            client_id: caller.client_id.clone(),
            client_name: caller.client_name.clone(),
            published: false,
        };
        self.records.create_export(&export, self.delivery_retention.as_millis() as u64).await?;
        Ok(ExportView::from(&export))
    }

    /// The organisation's export.
    pub(crate) async fn get(&self, org_id: &str, id: &str) -> Result<ExportView, ExportError> {
        if !ids::is_valid(Kind::ReportExport, id) {
            return Err(ExportError::NotFound);
        }
        let export = self.records.get_export(org_id, id).await?.ok_or(ExportError::NotFound)?;
        Ok(ExportView::from(&export))
    }

    /// The file of an export, if `expires` and `sig` make a genuine, unexpired link to it.
    pub(crate) async fn download(&self, id: &str, expires: &str, sig: &str) -> Result<Download, ExportError> {
        let key = self.link_key.get().await?;
        let now = crate::time::now_millis() / 1000;
        match link::verify(&key, id, expires, sig, now) {
            Err(LinkError::Altered) => return Err(ExportError::Altered),
            Err(LinkError::Expired) => return Err(ExportError::Gone("this download link has expired")),
            Ok(()) => {}
        }
        let export = self.records.export_any_org(id).await?;
        let file = self.records.export_file(id).await?;
        let (Some(export), Some(bytes)) = (export, file) else {
            return Err(ExportError::Gone("this export is no longer available"));
        };
        let format = Format::parse(&export.format).unwrap_or(Format::Json);
        Ok(Download { export_id: export.id, format, bytes })
    }
}

/// `exportable`'s type and id, its errors reported as `exportable.…`.
fn exportable_of(map: Map<String, Value>, fields: &mut Fields) -> Option<(String, String)> {
    let mut inner = Fields::new(map);
    let kind = inner.required_string("type");
    let id = inner.required_string("id").and_then(|id| short_text(&mut inner, "id", id));
    if let Some(k) = &kind
        && catalog::snapshot_key_of_type(k).is_none()
    {
        inner.error("type", "is not a record type Weir knows (Form, WorkOrder, Asset, …)");
    }
    for name in inner.remaining() {
        inner.error(name, "unknown field");
    }
    let errors = inner.into_errors();
    let target = if errors.is_empty() { kind.zip(id) } else { None };
    for e in errors {
        fields.error(format!("exportable.{}", e.field), e.message);
    }
    target
}
