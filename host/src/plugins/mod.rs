//! Tenant plugins: the only module that knows wasmtime.
//!
//! A plugin is a WebAssembly component of the `weir:plugin/filter` world (`wit/`). It runs
//! when a delivery is prepared, before the body is signed, so it never sees a secret.
//!
//! - `runtime`: the engine, its limits and counters, the compiled plugins.
//! - `bindings`: the host side of the WIT world (generated; nothing else sees its names).
//! - `state`: what one call's store holds — the event, the log, the limits — and the host
//!   functions a plugin can call (`host.log`, the `event` resource).
//! - `link`: which imports a plugin may have. WASI interfaces that Rust `std` guests carry
//!   are satisfied with nothing granted: streams and stdio (captured into the log), and
//!   every other WASI function — environment, files, clocks, randomness, sockets — traps
//!   with [`Forbidden`] naming it. Imports from anywhere else are refused at upload.
//! - `shape`: an upload's imports and exports, read before anything is compiled.
//! - `budget`: compiles one at a time at the lowest CPU priority, one upload per
//!   organisation, a bounded queue and wait.
//! - `compile`: components compiled once per process per SHA-256, then pre-instantiated;
//!   an upload's kept only once its plugin is stored.
//! - `cache`: compiled plugins in memory and on disk, each bounded, least recently used out.
//! - `call`: one call in a fresh instance with a deterministic fuel budget, a wall-clock
//!   deadline (epoch interruption), a memory cap and an output cap; never on an async
//!   worker thread.
//! - the slots calls run in are `crate::slots`' (a per-organisation share, so no tenant can
//!   take them all), as filter evaluations' are.
//! - `chain`: a webhook's attachments run in order, with their `on_error` policy.
//! - `pointer`: JSON pointers answered over raw JSON text, for `event.get`.

mod bindings;
mod budget;
mod cache;
pub mod call;
pub mod chain;
mod link;
pub mod pointer;
mod runtime;
mod shape;
mod state;
mod ticker;

pub use budget::BudgetError;
pub use call::{CallReport, Code, PluginError, Verdict, call, call_blocking};
pub use link::ValidationError;
pub use runtime::{Counters, Limits, Runtime, RuntimeError, Staged, UploadError, sha256_hex};
pub use state::{EventMeta, LogLine, MAX_LOG_BYTES};
