//! The plugin runtime of one process: the wasmtime engine (fuel, epoch deadlines, the
//! pooling allocator), the compiled plugins, the slots calls run in, and its counters. Its
//! methods live beside what they do: compiling in `compile`, calling in `call`.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::meters::Counter;

use wasmtime::{Config as EngineConfig, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::bindings::FilterPre;
use super::budget::Budget;
use super::cache::{Disk, Memory};
use super::state::CallState;
use super::ticker::Ticker;
use crate::slots::Slots;

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
    /// Most bytes of compiled plugins kept on disk (`WEIR_DATA_DIR/plugin-cache`).
    pub cache_disk: u64,
    /// Most bytes of compiled code kept in memory.
    pub cache_memory: usize,
}

/// Why the runtime could not start.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("cannot start the plugin runtime: {0}")]
    Engine(wasmtime::Error),
    #[error("cannot start the plugin runtime: {path}: {source}")]
    CacheDir { path: PathBuf, source: std::io::Error },
    #[error("cannot start the plugin runtime: the epoch thread: {0}")]
    Ticker(std::io::Error),
    #[error("cannot start the plugin runtime: the compile threads: {0}")]
    Compiler(std::io::Error),
}

/// A compiled, pre-instantiated plugin.
pub(super) struct Compiled {
    pub pre: FilterPre<CallState>,
}

/// Frames of a trap's backtrace kept (the innermost ones).
pub(super) const BACKTRACE_FRAMES: usize = 256;

/// Counters `/metrics` shows (clones share their value).
#[derive(Debug, Default, Clone)]
pub struct Counters {
    /// Components compiled from WebAssembly (not loaded from a cache).
    pub(crate) compiled: Counter,
    /// Components loaded from the disk cache.
    pub(crate) cache_loads: Counter,
    /// Calls made.
    pub(crate) calls: Counter,
}

/// The plugin runtime of one process. Cheap to share behind an `Arc`.
pub struct Runtime {
    pub(super) engine: Engine,
    pub(super) limits: Limits,
    pub(super) memory: Memory<Compiled>,
    pub(super) disk: Disk,
    pub(super) budget: Arc<Budget>,
    pub(super) pool: Slots,
    pub counters: Counters,
    pub(super) ticker: Arc<Ticker>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl Runtime {
    pub fn new(limits: Limits, cache_dir: PathBuf) -> Result<Runtime, RuntimeError> {
        const CORE_INSTANCES: u32 = 64;
        let mut config = EngineConfig::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        config.epoch_interruption(true);
        config.max_wasm_stack(512 * 1024);
        // Enough frames to tell runaway recursion from an ordinary trap (see `call::classify`).
        config.wasm_backtrace_max_frames(std::num::NonZeroUsize::new(BACKTRACE_FRAMES));
        let slots = (limits.concurrency as u32 + 4).max(8);
        let mut pool = PoolingAllocationConfig::default();
        // A Python component (CPython and its adapters) has some 40 core instances and
        // tables; JavaScript and Rust ones a handful.
        pool.total_component_instances(slots)
            .total_core_instances(slots * CORE_INSTANCES)
            .total_memories(slots * 2)
            .total_tables(slots * CORE_INSTANCES)
            .max_core_instances_per_component(CORE_INSTANCES)
            .max_memories_per_component(2)
            .max_tables_per_component(CORE_INSTANCES)
            .max_memory_size(limits.memory)
            // Reset only the pages a call dirtied, in place, instead of unmapping them (no
            // page faults on the next call; Linux 6.7+, else it falls back): up to 16 MiB of
            // memory and 1 MiB of tables stay resident per slot. Interpreters (JavaScript,
            // Python) dirty megabytes of their pre-initialised heap each call: this halves
            // a JavaScript call (measured: 0.89 → 0.45 ms) and shortens a Python one.
            .pagemap_scan(wasmtime::Enabled::Auto)
            .linear_memory_keep_resident(16 * 1024 * 1024)
            .table_keep_resident(1024 * 1024);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&config).map_err(RuntimeError::Engine)?;
        std::fs::create_dir_all(&cache_dir)
            .map_err(|source| RuntimeError::CacheDir { path: cache_dir.clone(), source })?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let disk = Disk::new(cache_dir, format!("{:016x}", hasher.finish()), limits.cache_disk);
        let budget = Arc::new(Budget::new().map_err(RuntimeError::Compiler)?);

        let ticker = Ticker::start(engine.clone()).map_err(RuntimeError::Ticker)?;

        Ok(Runtime {
            engine,
            limits,
            memory: Memory::new(limits.cache_memory),
            disk,
            budget,
            pool: Slots::new(limits.concurrency, limits.concurrency_per_org),
            counters: Counters::default(),
            ticker,
        })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticker.stop();
    }
}

/// Hex SHA-256 of a plugin's bytes: its identity for compilation and caching.
pub fn sha256_hex(wasm: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(wasm))
}
