//! Compiling plugins: once per process per SHA-256, with a disk cache that survives
//! restarts. The cache file name carries wasmtime's compatibility hash, so a different
//! wasmtime build (or engine settings) never loads a stale artifact.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::component::Component;

use super::bindings::FilterPre;
use super::link::{self, ValidationError};
use super::runtime::{Compiled, Runtime, sha256_hex};

impl Runtime {
    fn cache_path(&self, sha256: &str) -> PathBuf {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.engine.precompile_compatibility_hash().hash(&mut hasher);
        self.cache_dir.join(format!("{sha256}-{:016x}.cwasm", hasher.finish()))
    }

    /// The compiled plugin for `sha256`, from memory, the disk cache, or `wasm` (fetched
    /// only when needed). Blocking: call it off the async workers.
    pub(super) fn compiled_blocking(
        &self,
        sha256: &str,
        wasm: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Result<Arc<Compiled>, ValidationError> {
        if let Some(found) = self.compiled.lock().unwrap_or_else(|e| e.into_inner()).get(sha256) {
            return Ok(found.clone());
        }
        let path = self.cache_path(sha256);
        let component = match self.load_cached(&path) {
            Some(component) => {
                self.counters.cache_loads.inc();
                component
            }
            None => {
                let bytes =
                    wasm().ok_or_else(|| ValidationError::NotComponent("the plugin's code is missing".into()))?;
                let component = self.compile(&bytes)?;
                self.store_cached(&path, &component);
                component
            }
        };
        let compiled = Arc::new(self.prepare(&component)?);
        self.compiled.lock().unwrap_or_else(|e| e.into_inner()).insert(sha256.to_owned(), compiled.clone());
        Ok(compiled)
    }

    /// Checks that `wasm` is a usable plugin (and keeps it compiled). Blocking.
    pub fn validate_blocking(&self, wasm: &[u8]) -> Result<String, ValidationError> {
        let sha256 = sha256_hex(wasm);
        self.compiled_blocking(&sha256, || Some(wasm.to_vec()))?;
        Ok(sha256)
    }

    fn compile(&self, wasm: &[u8]) -> Result<Component, ValidationError> {
        if wasm.len() >= 8 && wasm[..4] == *b"\0asm" && wasm[4..8] == [1, 0, 0, 0] {
            return Err(ValidationError::NotComponent(
                "this is a core WebAssembly module; build a component (target wasm32-wasip2)".into(),
            ));
        }
        self.counters.compiled.inc();
        Component::new(&self.engine, wasm).map_err(|e| ValidationError::NotComponent(first_line(&e)))
    }

    fn prepare(&self, component: &Component) -> Result<Compiled, ValidationError> {
        let linker = link::linker_for(&self.engine, component)?;
        let instance_pre = linker.instantiate_pre(component).map_err(|e| ValidationError::Link(first_line(&e)))?;
        let pre = FilterPre::new(instance_pre).map_err(|e| ValidationError::WrongWorld(first_line(&e)))?;
        Ok(Compiled { pre })
    }

    fn load_cached(&self, path: &std::path::Path) -> Option<Component> {
        if !path.exists() {
            return None;
        }
        // SAFETY: the file was written by `store_cached` from `Component::serialize` of
        // this engine configuration (its name carries the compatibility hash), in a
        // directory only Weir writes to. A file that does not load is recompiled.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(&self.engine, path) };
        match loaded {
            Ok(component) => Some(component),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring an unusable plugin cache file");
                None
            }
        }
    }

    fn store_cached(&self, path: &std::path::Path, component: &Component) {
        let Ok(bytes) = component.serialize() else { return };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).is_err() {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(path = %path.display(), "cannot write the plugin cache");
        }
    }
}

/// The first line of an error's message (wasmtime errors can carry long chains).
fn first_line(e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or_default().chars().take(500).collect()
}
