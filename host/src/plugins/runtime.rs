//! The plugin runtime of one process: the wasmtime engine (fuel, epoch deadlines, the
//! pooling allocator), the compiled plugins, the slots calls run in, and its counters. Its
//! calls are `call`'s.
//!
//! Compiling plugins: once per process per SHA-256, within the compile budget (`budget`),
//! kept in memory and on disk (`cache`).
//!
//! An upload is checked first (`shape`: microseconds), then compiled and linked
//! ([`Runtime::compile_upload`]); what it made is kept ([`Runtime::keep`]) only once the
//! plugin is stored, so an upload that is refused, fails or is abandoned leaves nothing
//! behind. A stored plugin not compiled in this process is loaded from the disk cache, or
//! compiled from its code, when a call first needs it ([`Runtime::compiled_blocking`]).

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::meters::Counter;

use wasmtime::{Config as EngineConfig, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use wasmtime::component::Component;

use super::bindings::FilterPre;
use super::budget::{Budget, BudgetError, UPLOAD_WAIT};
use super::cache::{Disk, Memory};
use super::link::{self, ValidationError};
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

/// Why an upload was not compiled.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UploadError {
    /// Not a plugin: the uploader's fault (`422`).
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The budget said no, or the compile took too long (`429`/`503`).
    #[error(transparent)]
    Budget(#[from] BudgetError),
}

/// An upload compiled and linked, not yet kept.
pub struct Staged {
    pub sha256: String,
    /// Compiled now (to be written to the disk cache), not found there.
    component: Option<Component>,
    compiled: Arc<Compiled>,
    size: usize,
}

impl std::fmt::Debug for Staged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staged").field("sha256", &self.sha256).field("size", &self.size).finish_non_exhaustive()
    }
}

fn prepare(engine: &wasmtime::Engine, component: &Component) -> Result<Compiled, ValidationError> {
    let linker = link::linker_for(engine, component)?;
    let instance_pre = linker.instantiate_pre(component).map_err(|e| ValidationError::Link(first_line(&e)))?;
    let pre = FilterPre::new(instance_pre).map_err(|e| ValidationError::WrongWorld(first_line(&e)))?;
    Ok(Compiled { pre })
}

/// The bytes of a component's compiled code (what it keeps in memory).
fn code_size(component: &Component) -> usize {
    let range = component.image_range();
    (range.end as usize).saturating_sub(range.start as usize)
}

/// The first line of an error's message (wasmtime errors can carry long chains).
fn first_line(e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or_default().chars().take(500).collect()
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
    /// Whether the plugin with this hash is compiled: in this process, or in the disk
    /// cache (either way a call needs no code).
    pub fn is_compiled(&self, sha256: &str) -> bool {
        self.memory.contains(sha256) || self.disk.contains(sha256)
    }

    /// The compiled plugin for `sha256`, from memory, the disk cache, or `wasm` (fetched
    /// only when needed). Blocking: call it off the async workers.
    pub(super) fn compiled_blocking(
        &self,
        sha256: &str,
        wasm: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Result<Arc<Compiled>, ValidationError> {
        if let Some(found) = self.memory.get(sha256) {
            return Ok(found);
        }
        let (component, fresh) = match self.disk.load(&self.engine, sha256) {
            Some(component) => {
                self.counters.cache_loads.inc();
                (component, false)
            }
            None => {
                let bytes =
                    wasm().ok_or_else(|| ValidationError::NotComponent("the plugin's code is missing".into()))?;
                (self.budget.run(|| self.compile(&bytes))?, true)
            }
        };
        let compiled = Arc::new(prepare(&self.engine, &component)?);
        if fresh {
            self.disk.store(sha256, &component);
        }
        self.memory.insert(sha256, compiled.clone(), code_size(&component));
        Ok(compiled)
    }

    /// Checks and compiles an upload of `org` within the budget, without keeping it.
    pub async fn compile_upload(self: &Arc<Self>, org: &str, wasm: Arc<[u8]>) -> Result<Staged, UploadError> {
        super::shape::check(&wasm)?;
        let sha256 = sha256_hex(&wasm);
        if let Some(compiled) = self.memory.get(&sha256) {
            return Ok(Staged { sha256, component: None, compiled, size: 0 });
        }
        let turn = self.budget.turn(org)?;
        let runtime = self.clone();
        let sha = sha256.clone();
        let work = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let (component, fresh) = match runtime.disk.load(&runtime.engine, &sha) {
                Some(component) => (component, false),
                None => (runtime.budget.run(|| runtime.compile(&wasm))?, true),
            };
            let compiled = Arc::new(prepare(&runtime.engine, &component)?);
            let size = code_size(&component);
            Ok::<_, ValidationError>(Staged { sha256: sha, component: fresh.then_some(component), compiled, size })
        });
        match tokio::time::timeout(UPLOAD_WAIT, work).await {
            Ok(Ok(staged)) => Ok(staged?),
            Ok(Err(_)) => Err(ValidationError::NotComponent("the compiler failed".into()).into()),
            // Abandoned: the compile ends in the background and its result is dropped.
            Err(_) => Err(BudgetError::TooSlow.into()),
        }
    }

    /// Keeps a staged upload once its plugin is stored: in memory, and on disk when it was
    /// compiled now. Blocking (it writes the cache file).
    pub fn keep(&self, staged: Staged) {
        if let Some(component) = &staged.component {
            self.disk.store(&staged.sha256, component);
        }
        if !self.memory.contains(&staged.sha256) {
            self.memory.insert(&staged.sha256, staged.compiled, staged.size);
        }
    }

    /// Checks that `wasm` is a usable plugin and keeps it compiled (tools and tests: no
    /// organisation, no budget wait). Blocking.
    pub fn validate_blocking(&self, wasm: &[u8]) -> Result<String, ValidationError> {
        super::shape::check(wasm)?;
        let sha256 = sha256_hex(wasm);
        self.compiled_blocking(&sha256, || Some(wasm.to_vec()))?;
        Ok(sha256)
    }

    fn compile(&self, wasm: &[u8]) -> Result<Component, ValidationError> {
        self.counters.compiled.inc();
        Component::new(&self.engine, wasm).map_err(|e| ValidationError::NotComponent(first_line(&e)))
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
