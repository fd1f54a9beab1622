//! Which imports a plugin may have, and what satisfies them.
//!
//! - `weir:plugin/*`: the world itself (`host.log`, the `event` resource).
//! - WASI streams, stdio and environment (`wasi:io/*`,
//!   `wasi:cli/stdin|stdout|stderr|exit|terminal-*|environment`), which every Rust `std`
//!   guest imports: real implementations with nothing in them — stdout and stderr go to
//!   the call's log, stdin is empty, and so are the environment and the arguments. (The
//!   environment is empty rather than a trap because Rust's `std` reads it when it
//!   panics; a trap there would hide every panic message.)
//! - Any other `wasi:*` interface (environment, clocks, random, filesystem, sockets, …):
//!   each function traps with [`Forbidden`], naming what the plugin tried to use. The
//!   imports are satisfied (wasmtime-wasi's definitions, functions shadowed by traps), so
//!   a `std` guest instantiates; using them stops the call. Nothing is ever granted: the
//!   WASI context has no environment, arguments, directories or sockets.
//! - Anything else: refused when the plugin is uploaded.

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, ResourceType};

use super::bindings::Filter;
use super::state::CallState;

/// Why a body is not a usable plugin. Shown to the uploader.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ValidationError {
    #[error("not a WebAssembly component: {0}")]
    NotComponent(String),
    #[error("imports `{0}`, which Weir does not provide (plugins may import weir:plugin and WASI only)")]
    UnsupportedImport(String),
    #[error("is not a component of the weir:plugin/filter world: {0}")]
    WrongWorld(String),
    #[error("cannot be linked: {0}")]
    Link(String),
}

/// Adds the world's imports (`host.log`, the `event` resource) to a linker.
fn add_world(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    Filter::add_to_linker::<CallState, wasmtime::component::HasSelf<CallState>>(linker, |state| state)
}

/// A plugin called a WASI function that plugins cannot use.
#[derive(Debug, Clone, thiserror::Error)]
#[error("plugins cannot use {what}: the plugin called `{import}`")]
pub(super) struct Forbidden {
    pub import: String,
    pub what: &'static str,
}

fn provided(name: &str) -> bool {
    name.starts_with("weir:plugin/")
        || name.starts_with("wasi:io/")
        || ["stdin", "stdout", "stderr", "exit", "terminal-", "environment"]
            .iter()
            .any(|i| name.starts_with(&format!("wasi:cli/{i}")))
}

fn what(interface: &str) -> &'static str {
    let table: &[(&str, &'static str)] = &[
        ("wasi:clocks/", "clocks"),
        ("wasi:random/", "randomness"),
        ("wasi:filesystem/", "files"),
        ("wasi:sockets/", "the network"),
        ("wasi:http/", "the network"),
    ];
    table.iter().find(|(prefix, _)| interface.starts_with(prefix)).map_or("this interface", |(_, w)| w)
}

/// The WASI version wasmtime-wasi 48 implements; imports of any `0.2.x` resolve to it.
const WASI_VERSION: &str = "0.2.12";

/// Whether wasmtime-wasi defines this interface (and the resources in it).
fn in_wasmtime_wasi(interface: &str) -> bool {
    ["wasi:cli/", "wasi:clocks/", "wasi:filesystem/", "wasi:random/", "wasi:sockets/", "wasi:io/"]
        .iter()
        .any(|p| interface.starts_with(p))
}

/// Builds the linker for one component: the world, WASI, and — shadowing WASI — a trap
/// for every function of an interface plugins may not use. Resources keep WASI's own
/// definitions, so types shared between interfaces (`input-stream`…) still match.
pub(super) fn linker_for(engine: &Engine, component: &Component) -> Result<Linker<CallState>, ValidationError> {
    let mut linker: Linker<CallState> = Linker::new(engine);
    let setup = |e: wasmtime::Error| ValidationError::Link(e.to_string());
    add_world(&mut linker).map_err(setup)?;
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(setup)?;
    linker.allow_shadowing(true);

    let ty = component.component_type();
    for (name, item) in ty.imports(engine) {
        // A world's `use` imports type names (`event`): nothing to provide.
        if provided(name) || matches!(item.ty, ComponentItem::Type(_) | ComponentItem::Resource(_)) {
            continue;
        }
        if !name.starts_with("wasi:") {
            return Err(ValidationError::UnsupportedImport(name.to_owned()));
        }
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            return Err(ValidationError::UnsupportedImport(name.to_owned()));
        };
        let interface = name.split('@').next().unwrap_or(name);
        let known = in_wasmtime_wasi(interface);
        let target = if known { format!("{interface}@{WASI_VERSION}") } else { name.to_owned() };
        let mut stubs = linker.instance(&target).map_err(setup)?;
        for (export, export_item) in instance.exports(engine) {
            match export_item.ty {
                ComponentItem::ComponentFunc(_) => {
                    let forbidden = Forbidden { import: format!("{interface}#{export}"), what: what(interface) };
                    stubs
                        .func_new(export, move |_, _, _, _| Err(wasmtime::Error::new(forbidden.clone())))
                        .map_err(setup)?;
                }
                ComponentItem::Resource(_) if !known => {
                    stubs.resource(export, ResourceType::host::<()>(), |_, _| Ok(())).map_err(setup)?;
                }
                _ => {}
            }
        }
    }
    Ok(linker)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_streams_stdio_and_an_empty_environment_are_provided() {
        for name in
            ["wasi:io/streams@0.2.3", "wasi:cli/stderr@0.2.3", "wasi:cli/environment@0.2.3", "weir:plugin/host@0.1.0"]
        {
            assert!(provided(name), "{name}");
        }
        for name in ["wasi:clocks/wall-clock@0.2.3", "wasi:filesystem/preopens@0.2.3", "wasi:random/random@0.2.0"] {
            assert!(!provided(name), "{name}");
        }
        assert_eq!(what("wasi:random/insecure-seed@0.2.3"), "randomness");
        assert_eq!(what("wasi:sockets/tcp@0.2.3"), "the network");
    }
}
