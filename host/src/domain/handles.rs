//! The doors of the domain, made once for the surfaces (`crate::service` builds them from
//! the process's parts): one handle per part of the domain, each holding only the parts it
//! uses.

use super::{access, deliveries, events, exports, operations, plugins, replay, webhooks};

/// Every door of the domain, made once for the surfaces (`crate::service` builds it).
#[derive(Debug, Clone)]
pub(crate) struct Handles {
    pub access: access::Access,
    pub webhooks: webhooks::Webhooks,
    pub deliveries: deliveries::Deliveries,
    pub events: events::Events,
    pub replays: replay::Replays,
    pub plugins: plugins::Plugins,
    pub exports: exports::Exports,
    pub operations: operations::Operations,
}
