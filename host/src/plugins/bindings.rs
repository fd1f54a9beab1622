//! The host side of the `weir:plugin/filter` world, generated from `wit/`. Only this
//! module sees generated names; the rest of `plugins` uses the re-exports.

mod generated {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "filter",
        with: {
            "weir:plugin/types.event": super::EventHandle,
        },
    });
}

/// The host's stand-in for the `event` resource: a call has exactly one event, held in
/// the store's state, so the handle carries nothing.
#[derive(Debug)]
#[allow(unreachable_pub)]
pub struct EventHandle;

pub(super) use generated::weir::plugin::host::Host as LogHost;
#[cfg(test)]
pub(super) use generated::weir::plugin::types::{Delivery, Header};
pub(super) use generated::weir::plugin::types::{Host as TypesHost, HostEvent, Level, Verdict};
pub(super) use generated::{Filter, FilterPre};
