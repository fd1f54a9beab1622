//! Report exports (the service document's "Create a report export"): a client asks for a
//! record as PDF, CSV or JSON; a builder renders the newest snapshot Weir has of it, stores
//! the file behind a signed, short-lived link, and emits `report_export_completed` through
//! the normal publish path (so plugins and retries apply).
//!
//! - `render`: PDF, CSV and JSON output.
//! - `builder`: the workers that build queued exports (any process with workers; an export
//!   whose builder died is taken over).
//!
//! Requests, reads and downloads (and the signed links) are `crate::domain::exports`; the
//! store side (records, files, snapshots, the job stream) is `crate::store::events::exports`.

pub(crate) mod builder;
pub(crate) mod render;

/// Largest export file.
pub(crate) const MAX_EXPORT_BYTES: usize = 10 * 1024 * 1024;
