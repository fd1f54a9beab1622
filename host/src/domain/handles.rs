//! The doors of the domain, made once for the surfaces (`crate::service` builds them):
//! one handle per part, each holding the process's state privately.

use std::sync::Arc;

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

impl Handles {
    pub(crate) fn new(app: &Arc<crate::app::App>) -> Handles {
        Handles {
            access: access::Access::new(app.clone()),
            webhooks: webhooks::Webhooks::new(app.clone()),
            deliveries: deliveries::Deliveries::new(app.clone()),
            events: events::Events::new(app.clone()),
            replays: replay::Replays::new(app.clone()),
            plugins: plugins::Plugins::new(app.clone()),
            exports: exports::Exports::new(app.clone()),
            operations: operations::Operations::new(app.clone()),
        }
    }
}
