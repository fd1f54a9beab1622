//! Compiling plugins: once per process per SHA-256, within the compile budget (`budget`),
//! kept in memory and on disk (`cache`).
//!
//! An upload is checked first (`shape`: microseconds), then compiled and linked
//! ([`Runtime::compile_upload`]); what it made is kept ([`Runtime::keep`]) only once the
//! plugin is stored, so an upload that is refused, fails or is abandoned leaves nothing
//! behind. A stored plugin not compiled in this process is loaded from the disk cache, or
//! compiled from its code, when a call first needs it ([`Runtime::compiled_blocking`]).

use std::sync::Arc;

use wasmtime::component::Component;

use super::bindings::FilterPre;
use super::budget::{BudgetError, UPLOAD_WAIT};
use super::link::{self, ValidationError};
use super::runtime::{Compiled, Runtime, sha256_hex};

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

impl Runtime {
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
