//! The seam every kind of source is behind: its signature rule, its delivery id, its event's
//! action.

use super::inbound::{Inbound, Key, Refusal};

/// The action of a request whose kind names none (contract §10).
pub(crate) const GENERIC_ACTION: &str = "source.request";

/// One kind of source: how its requests are verified, named and told apart.
pub(crate) trait Provider: Sync + std::fmt::Debug {
    /// Whether the request is the provider's, signed with one of the source's secrets.
    fn verify(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<(), Refusal>;

    /// The provider's id of this delivery, the same on each of its retries.
    fn delivery_id(&self, _request: &Inbound<'_>) -> Option<String> {
        None
    }

    /// The provider's name of the event (`None`: [`GENERIC_ACTION`]).
    fn action(&self, _request: &Inbound<'_>) -> Option<String> {
        None
    }

    /// Why `secret` cannot be this kind's (`None`: it can).
    fn secret_problem(&self, _secret: &str) -> Option<&'static str> {
        None
    }
}
