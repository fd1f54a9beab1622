//! Whether the store answers: the one question readiness asks of it.

use super::base::Base;
use crate::store::error::Result;

/// The concern's handle: a `PING` over the store's connection.
#[derive(Debug, Clone)]
pub struct Health {
    base: Base,
}

impl Health {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Health {
        Health { base: base.clone() }
    }

    /// `Ok` when Redis answers a `PING`.
    pub async fn ping(&self) -> Result<()> {
        self.base.ping().await
    }
}
