//! Where compiled plugins are kept, both bounded: in memory (the pre-instantiated plugins a
//! call uses, by the size of their code, least recently used out first) and on disk
//! (`WEIR_DATA_DIR/plugin-cache`: serialized components, which survive restarts, by bytes,
//! least recently used out first). A file's name carries wasmtime's compatibility hash, so
//! another wasmtime build (or engine settings) never loads a stale artifact. Only plugins
//! that were stored get here: an upload that is refused or abandoned leaves nothing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use wasmtime::component::Component;

/// Compiled plugins in memory, by SHA-256.
pub(super) struct Memory<T> {
    max_bytes: usize,
    inner: Mutex<MemoryInner<T>>,
}

struct MemoryInner<T> {
    entries: HashMap<String, Entry<T>>,
    bytes: usize,
    clock: u64,
}

struct Entry<T> {
    compiled: Arc<T>,
    size: usize,
    used: u64,
}

impl<T> Memory<T> {
    pub(super) fn new(max_bytes: usize) -> Memory<T> {
        Memory { max_bytes, inner: Mutex::new(MemoryInner { entries: HashMap::new(), bytes: 0, clock: 0 }) }
    }

    pub(super) fn get(&self, sha256: &str) -> Option<Arc<T>> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.clock += 1;
        let now = inner.clock;
        let entry = inner.entries.get_mut(sha256)?;
        entry.used = now;
        Some(entry.compiled.clone())
    }

    pub(super) fn contains(&self, sha256: &str) -> bool {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).entries.contains_key(sha256)
    }

    /// Keeps `compiled` (its code `size` bytes), dropping the least recently used others
    /// while over the budget. A call in progress keeps its own reference.
    pub(super) fn insert(&self, sha256: &str, compiled: Arc<T>, size: usize) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.clock += 1;
        let used = inner.clock;
        if let Some(old) = inner.entries.insert(sha256.to_owned(), Entry { compiled, size, used }) {
            inner.bytes -= old.size;
        }
        inner.bytes += size;
        while inner.bytes > self.max_bytes && inner.entries.len() > 1 {
            let oldest = inner
                .entries
                .iter()
                .filter(|(sha, _)| sha.as_str() != sha256)
                .min_by_key(|(_, e)| e.used)
                .map(|(sha, _)| sha.clone());
            let Some(oldest) = oldest else { break };
            if let Some(gone) = inner.entries.remove(&oldest) {
                inner.bytes -= gone.size;
            }
        }
    }

    #[cfg(test)]
    fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> =
            self.inner.lock().unwrap_or_else(|e| e.into_inner()).entries.keys().cloned().collect();
        keys.sort();
        keys
    }
}

/// Serialized components on disk.
pub(super) struct Disk {
    dir: PathBuf,
    /// The engine's compatibility hash, in every file name.
    tag: String,
    max_bytes: u64,
    /// Writes and evictions one at a time.
    writing: Mutex<()>,
}

impl Disk {
    pub(super) fn new(dir: PathBuf, tag: String, max_bytes: u64) -> Disk {
        Disk { dir, tag, max_bytes, writing: Mutex::new(()) }
    }

    fn path(&self, sha256: &str) -> PathBuf {
        self.dir.join(format!("{sha256}-{}.cwasm", self.tag))
    }

    pub(super) fn contains(&self, sha256: &str) -> bool {
        self.path(sha256).exists()
    }

    /// The cached component, if there is a usable one (its use is noted for eviction).
    pub(super) fn load(&self, engine: &wasmtime::Engine, sha256: &str) -> Option<Component> {
        let path = self.path(sha256);
        if !path.exists() {
            return None;
        }
        // SAFETY: the file was written by `store` from `Component::serialize` of this
        // engine configuration (its name carries the compatibility hash), in a directory
        // only Weir writes to. A file that does not load is recompiled.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(engine, &path) };
        match loaded {
            Ok(component) => {
                touch(&path);
                Some(component)
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring an unusable plugin cache file");
                None
            }
        }
    }

    /// Writes `component` (atomically: a temporary file renamed), then evicts the least
    /// recently used files while the cache is over its budget.
    pub(super) fn store(&self, sha256: &str, component: &Component) {
        let Ok(bytes) = component.serialize() else { return };
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let path = self.path(sha256);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if let Err(e) = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &path)) {
            let _ = std::fs::remove_file(&tmp);
            tracing::warn!(path = %path.display(), error = %e, "cannot write the plugin cache");
            return;
        }
        self.evict(&path);
    }

    fn evict(&self, keep: &Path) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else { return };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = dir
            .filter_map(Result::ok)
            .filter(|f| f.path().extension().is_some_and(|e| e == "cwasm"))
            .filter_map(|f| {
                let meta = f.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), f.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if path != keep && std::fs::remove_file(&path).is_ok() {
                tracing::info!(path = %path.display(), "plugin cache over its budget: removed the least recently used");
                total -= len;
            }
        }
    }
}

/// Notes a file's use (its modification time is the eviction order).
fn touch(path: &Path) {
    if let Ok(file) = std::fs::File::options().append(true).open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_keeps_the_most_recently_used_within_its_budget() {
        let compiled = || Arc::new(());
        let memory = Memory::new(100);
        memory.insert("a", compiled(), 40);
        memory.insert("b", compiled(), 40);
        assert!(memory.get("a").is_some(), "a used after b");
        memory.insert("c", compiled(), 40);
        assert_eq!(memory.keys(), ["a", "c"], "b, least recently used, went");
        memory.insert("big", compiled(), 500);
        assert_eq!(memory.keys(), ["big"], "one larger than the budget is still kept alone");
    }

    #[test]
    fn the_disk_cache_removes_the_least_recently_used_files_beyond_its_budget() {
        let dir = std::env::temp_dir().join(format!("weir-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let disk = Disk::new(dir.clone(), "tag".into(), 250);
        let now = SystemTime::now();
        for (i, name) in ["old", "mid", "new", "kept"].iter().enumerate() {
            let path = disk.path(name);
            std::fs::write(&path, vec![0u8; 100]).unwrap();
            let file = std::fs::File::options().append(true).open(&path).unwrap();
            file.set_modified(now - std::time::Duration::from_secs(100 - i as u64 * 10)).unwrap();
        }
        std::fs::write(dir.join("notes.txt"), b"not ours").unwrap();
        touch(&disk.path("old"));
        disk.evict(&disk.path("kept"));
        let left: Vec<bool> = ["old", "mid", "new", "kept"].iter().map(|n| disk.contains(n)).collect();
        assert_eq!(left, [true, false, false, true], "mid and new went: old was used just now, kept was written");
        assert!(dir.join("notes.txt").exists(), "other files are left alone");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
