//! The doors the settings pages read.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::domain::deliveries::Deliveries;
use crate::domain::handles::Handles;
use crate::domain::plugins::Plugins;
use crate::domain::replay::Replays;
use crate::domain::sources::Sources;
use crate::domain::usage::Usage;
use crate::domain::webhooks::Webhooks;

/// What a webhook's page reads (and the list of webhooks): the webhooks, their deliveries
/// and health, the organisation's plugins, the replays. Handlers that render no such page
/// take the one door they use instead.
#[derive(Debug, Clone)]
pub(in crate::settings) struct Pages {
    pub webhooks: Arc<Webhooks>,
    pub deliveries: Arc<Deliveries>,
    pub plugins: Arc<Plugins>,
    pub replays: Arc<Replays>,
    pub usage: Arc<Usage>,
    /// The sources a webhook's form offers.
    pub sources: Arc<Sources>,
}

impl FromRef<Handles> for Pages {
    fn from_ref(handles: &Handles) -> Pages {
        Pages {
            webhooks: handles.webhooks.clone(),
            deliveries: handles.deliveries.clone(),
            plugins: handles.plugins.clone(),
            replays: handles.replays.clone(),
            usage: handles.usage.clone(),
            sources: handles.sources.clone(),
        }
    }
}
