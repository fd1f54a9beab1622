//! The surfaces' state: the domain's doors ([`Handles`]); each handler takes the one handle
//! it uses (`State<Arc<Webhooks>>`…: shared, one count per request), so its signature says what it may touch.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::domain::access::Access;
use crate::domain::deliveries::Deliveries;
use crate::domain::events::Events;
use crate::domain::exports::Exports;
use crate::domain::handles::Handles;
use crate::domain::operations::Operations;
use crate::domain::plugins::Plugins;
use crate::domain::portal::PortalLinks;
use crate::domain::replay::Replays;
use crate::domain::sources::Sources;
use crate::domain::usage::Usage;
use crate::domain::webhooks::Webhooks;

macro_rules! door {
    ($handle:ty, $field:ident) => {
        impl FromRef<Handles> for Arc<$handle> {
            fn from_ref(handles: &Handles) -> Arc<$handle> {
                handles.$field.clone()
            }
        }
    };
}

door!(Access, access);
door!(Webhooks, webhooks);
door!(Deliveries, deliveries);
door!(Events, events);
door!(Replays, replays);
door!(Plugins, plugins);
door!(Exports, exports);
door!(Operations, operations);
door!(PortalLinks, portal);
door!(Usage, usage);
door!(Sources, sources);
