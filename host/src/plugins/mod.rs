//! Tenant plugins: the only module that knows wasmtime.
//!
//! A plugin is a WebAssembly component of the `weir:plugin/filter` world (`wit/`). It runs
//! when a delivery is prepared, before the body is signed, so it never sees a secret.
//!
//! - `bindings`: the host side of the WIT world (generated; nothing else sees its names).
//! - `state`: what one call's store holds — the event, the log, the limits — and the host
//!   functions a plugin can call (`host.log`, the `event` resource).
//! - `link`: which imports a plugin may have. WASI interfaces that Rust `std` guests carry
//!   are satisfied with nothing granted: streams and stdio (captured into the log), and
//!   every other WASI function — environment, files, clocks, randomness, sockets — traps
//!   with [`Forbidden`] naming it. Imports from anywhere else are refused at upload.
//! - `compile`: components compiled once per process per SHA-256, kept in memory and in a
//!   disk cache keyed by wasmtime's compatibility hash, then pre-instantiated.
//! - `call`: one call in a fresh instance with a deterministic fuel budget, a wall-clock
//!   deadline (epoch interruption), a memory cap and an output cap; never on an async
//!   worker thread.
//! - `pool`: the slots calls run in, with a per-organisation share so no tenant can take
//!   them all.
//! - `chain`: a webhook's attachments run in order, with their `on_error` policy.
//! - `pointer`: JSON pointers answered over raw JSON text, for `event.get`.

mod bindings;
pub mod call;
pub mod chain;
mod compile;
mod link;
pub mod pointer;
mod pool;
mod state;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use prometheus_client::metrics::counter::Counter;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::{Config as EngineConfig, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

pub use call::{CallReport, EventMeta, LogLine, PluginError, Verdict};
pub use compile::ValidationError;

/// The limits of one plugin call.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Deterministic CPU budget, in wasmtime fuel units (about one per instruction).
    pub fuel: u64,
    /// Wall-clock deadline.
    pub timeout: Duration,
    /// Largest linear memory, bytes.
    pub memory: usize,
    /// Largest body a plugin may return, bytes.
    pub max_output: usize,
    /// Most calls at once in this process.
    pub concurrency: usize,
    /// Most calls of one organisation at once in this process.
    pub concurrency_per_org: usize,
}

/// Largest log a call keeps, bytes; the rest is cut.
pub const MAX_LOG_BYTES: usize = 1024;

/// Why the runtime could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the plugin runtime: {0}")]
pub struct RuntimeError(String);

/// Counters `/metrics` shows (clones share their value).
#[derive(Debug, Default, Clone)]
pub struct Counters {
    /// Components compiled from WebAssembly (not loaded from a cache).
    pub compiled: Counter,
    /// Components loaded from the disk cache.
    pub cache_loads: Counter,
    /// Calls made.
    pub calls: Counter,
}

/// The plugin runtime of one process. Cheap to share behind an `Arc`.
pub struct Runtime {
    engine: Engine,
    limits: Limits,
    cache_dir: PathBuf,
    compiled: Mutex<HashMap<String, Arc<compile::Compiled>>>,
    pool: pool::Pool,
    pub counters: Counters,
    stop_ticker: Arc<AtomicBool>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// How often the wall-clock deadline is checked.
const EPOCH_TICK: Duration = Duration::from_millis(1);

impl Runtime {
    pub fn new(limits: Limits, cache_dir: PathBuf) -> Result<Runtime, RuntimeError> {
        let mut config = EngineConfig::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        config.epoch_interruption(true);
        config.max_wasm_stack(512 * 1024);
        // Enough frames to tell runaway recursion from an ordinary trap (see `call::classify`).
        config.wasm_backtrace_max_frames(std::num::NonZeroUsize::new(call::BACKTRACE_FRAMES));
        let slots = (limits.concurrency as u32 + 4).max(8);
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(slots)
            .total_core_instances(slots * 16)
            .total_memories(slots * 2)
            .total_tables(slots * 16)
            .max_core_instances_per_component(16)
            .max_memories_per_component(2)
            .max_tables_per_component(16)
            .max_memory_size(limits.memory)
            // Reset only the pages a call dirtied, in place, instead of unmapping them
            // (no page faults on the next call); needs Linux 6.7+, else falls back.
            .pagemap_scan(wasmtime::Enabled::No)
            .linear_memory_keep_resident(512 * 1024)
            .table_keep_resident(64 * 1024);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config).map_err(|e| RuntimeError(e.to_string()))?;
        std::fs::create_dir_all(&cache_dir).map_err(|e| RuntimeError(format!("{}: {e}", cache_dir.display())))?;

        // One thread advances the epoch: a call's deadline is a number of ticks.
        let stop_ticker = Arc::new(AtomicBool::new(false));
        let (ticker_engine, stop) = (engine.clone(), stop_ticker.clone());
        std::thread::Builder::new()
            .name("weir-plugin-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    ticker_engine.increment_epoch();
                }
            })
            .map_err(|e| RuntimeError(e.to_string()))?;

        Ok(Runtime {
            engine,
            limits,
            cache_dir,
            compiled: Mutex::new(HashMap::new()),
            pool: pool::Pool::new(limits.concurrency, limits.concurrency_per_org),
            counters: Counters::default(),
            stop_ticker,
        })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

/// Hex SHA-256 of a plugin's bytes: its identity for compilation and caching.
pub fn sha256_hex(wasm: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(wasm))
}
