//! The surfaces' state: the domain's doors ([`Handles`]); each handler takes the one handle
//! it uses (`State<Webhooks>`…), so its signature says what it may touch.

use axum::extract::FromRef;

use crate::domain::access::Access;
use crate::domain::deliveries::Deliveries;
use crate::domain::events::Events;
use crate::domain::exports::Exports;
use crate::domain::handles::Handles;
use crate::domain::operations::Operations;
use crate::domain::plugins::Plugins;
use crate::domain::replay::Replays;
use crate::domain::webhooks::Webhooks;

macro_rules! door {
    ($handle:ty, $field:ident) => {
        impl FromRef<Handles> for $handle {
            fn from_ref(handles: &Handles) -> $handle {
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
