//! What the sources' door is made of, and the sealing context of a source's secrets.

use std::sync::Arc;

use crate::domain::events::Publishing;
use crate::metrics::Metrics;
use crate::plans::Plans;
use crate::shared::SecretKeys;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::sources::SourceRecords;

/// What [`Sources`] is made of.
#[derive(Debug)]
pub(crate) struct SourceParts {
    pub records: SourceRecords,
    pub secret_keys: Arc<SecretKeys>,
    pub public_url: String,
    pub publishing: Publishing,
    pub orgs: Orgs,
    pub plans: Arc<Plans>,
    pub metrics: Arc<Metrics>,
}

/// The sealing context of a source's secrets and token.
pub(super) fn context(org_id: &str, id: &str) -> String {
    format!("source:{org_id}:{id}")
}
