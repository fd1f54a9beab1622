//! What the sources' door is made of, and the sealing context of a source's secrets.

use std::sync::Arc;

use crate::domain::events::Publishing;
use crate::metrics::Metrics;
use crate::plans::Plans;
use crate::shared::SecretKeys;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::source_requests::SourceRequests;
use crate::store::tenants::sources::SourceRecords;
use crate::store::versions::Versions;

/// What [`Sources`] is made of.
#[derive(Debug)]
pub(crate) struct SourceParts {
    pub records: SourceRecords,
    /// Their requests' listings and duplicate marks.
    pub requests: SourceRequests,
    /// The organisations' versions, which a kept source is held to.
    pub versions: Versions,
    pub secret_keys: Arc<SecretKeys>,
    pub public_url: String,
    pub publishing: Publishing,
    pub orgs: Orgs,
    pub plans: Arc<Plans>,
    pub metrics: Arc<Metrics>,
    /// Where a request's span goes.
    pub telemetry: Arc<crate::telemetry::Telemetry>,
}

/// The sealing context of a source's secrets and token.
pub(super) fn context(org_id: &str, id: &str) -> String {
    format!("source:{org_id}:{id}")
}
