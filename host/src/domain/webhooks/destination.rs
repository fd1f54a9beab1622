//! A webhook's `destination` (contract §9): read and checked (`crate::destinations`), its
//! broker host held to the public-address rule as a URL's host is, its credentials sealed for
//! this webhook before they reach Redis.

use serde_json::Value;

use crate::destinations::{self, Parsed};
use crate::domain::fields::Fields;
use crate::netguard::UrlRule;
use crate::shared::SecretKeys;
use crate::store::tenants::webhooks::StoredDestination;

use super::input::vet_url;

/// `destination`: absent → `None`; `null` or `{"type": "http"}` → `Some(None)` (HTTP);
/// else the destination to store, or `None` with the error recorded in `fields`.
pub(super) async fn destination(
    (rule, keys): (&UrlRule, &SecretKeys),
    org_id: &str,
    webhook_id: &str,
    fields: &mut Fields,
) -> Option<Option<StoredDestination>> {
    let value: Value = fields.value("destination")?;
    let Parsed { spec, credentials } = match destinations::parse(&value) {
        Ok(None) => return Some(None),
        Ok(Some(parsed)) => parsed,
        Err(refusal) => {
            fields.error(refusal.field, refusal.why);
            return None;
        }
    };
    for host in spec.hosts() {
        if let Err(e) = rule.vet_host(&host.name, host.port).await {
            fields.error(host.field, e.to_string());
            return None;
        }
    }
    let sealed_credentials = match credentials {
        None => String::new(),
        Some(credentials) => {
            let plain = serde_json::to_vec(&credentials).unwrap_or_default();
            let context = destinations::credentials_context(org_id, webhook_id);
            match crate::domain::egress::seal(keys, &context, &plain) {
                Ok(sealed) => sealed,
                Err(e) => {
                    tracing::error!(error = %e, "cannot seal a destination's credentials");
                    fields.error(
                        "destination.url",
                        "the credentials cannot be stored now (the server's secret key is unavailable)",
                    );
                    return None;
                }
            }
        }
    };
    let spec = serde_json::to_value(&spec).unwrap_or_default();
    Some(Some(StoredDestination { spec, sealed_credentials }))
}

/// The address a stored destination shows as its webhook's `url` (no credentials).
pub(super) fn address_of(destination: &StoredDestination) -> String {
    serde_json::from_value::<destinations::Spec>(destination.spec.clone())
        .map(|spec| spec.address().to_owned())
        .unwrap_or_default()
}

/// A new webhook's URL: the one given (vetted), or its destination's address; one of the
/// two, not both.
pub(super) async fn new_url(
    rule: &UrlRule,
    url: Option<String>,
    destination: Option<&StoredDestination>,
    fields: &mut Fields,
) -> Option<String> {
    match (url, destination) {
        (Some(_), Some(_)) => {
            fields.error("url", "is not given with a destination other than http (its address is destination.url)");
            None
        }
        (None, Some(d)) => Some(address_of(d)),
        (Some(url), None) => vet_url(rule, &url, fields).await,
        (None, None) => {
            // (A destination that was refused has said so already.)
            if !fields.has_errors() {
                fields.error("url", "is required");
            }
            None
        }
    }
}
