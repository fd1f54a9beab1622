//! The doors of the domain, made once for the surfaces (`crate::service` builds them from
//! the process's parts): one handle per part of the domain, each holding only the parts it
//! uses.

use std::sync::Arc;

use super::{access, deliveries, events, exports, operations, plugins, portal, replay, sources, usage, webhooks};

/// Every door of the domain, made once for the surfaces (`crate::service` builds it). Each
/// is shared: the surfaces clone the handles for every request.
#[derive(Debug, Clone)]
pub(crate) struct Handles {
    pub access: Arc<access::Access>,
    pub webhooks: Arc<webhooks::Webhooks>,
    pub deliveries: Arc<deliveries::Deliveries>,
    pub events: Arc<events::Events>,
    pub replays: Arc<replay::Replays>,
    pub plugins: Arc<plugins::Plugins>,
    pub exports: Arc<exports::Exports>,
    pub operations: Arc<operations::Operations>,
    pub portal: Arc<portal::PortalLinks>,
    pub usage: Arc<usage::Usage>,
    pub sources: Arc<sources::Sources>,
}
