//! What one call's store holds, and the host functions a plugin can call.

use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use serde::Serialize;

use super::bindings::{EventHandle, HostEvent, Level, LogHost, TypesHost};
use super::pointer;

/// Largest log a call keeps, bytes; the rest is cut.
pub const MAX_LOG_BYTES: usize = 1024;

/// What a plugin can ask about the event without reading the body.
#[derive(Debug, Clone, Default)]
pub struct EventMeta {
    pub id: String,
    pub action: String,
    pub organisation_id: String,
    pub creator_id: String,
    pub subject_type: String,
    pub subject_id: String,
}

/// A line of a plugin's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    pub level: &'static str,
    pub message: String,
}

/// A plugin tried to grow its memory past the cap.
#[derive(Debug, thiserror::Error)]
#[error("memory limit of {limit} bytes exceeded (asked for {asked})")]
pub(super) struct MemoryExceeded {
    pub limit: usize,
    pub asked: usize,
}

/// Caps linear memories and tables of a call.
#[derive(Debug)]
pub(super) struct Limiter {
    pub memory: usize,
    /// The linear memory of every instance of the call, together, at its largest (bytes).
    pub(super) peak: usize,
    in_use: usize,
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.memory {
            return Err(wasmtime::Error::new(MemoryExceeded { limit: self.memory, asked: desired }));
        }
        self.in_use = self.in_use.saturating_add(desired.saturating_sub(current));
        self.peak = self.peak.max(self.in_use);
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// The store data of one call.
pub(super) struct CallState {
    pub limiter: Limiter,
    table: ResourceTable,
    /// Created only if the plugin touches WASI (a `std` guest writing to stdout, say).
    wasi: Option<WasiCtx>,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
    pub event: Arc<EventMeta>,
    /// The body this plugin sees (the previous plugin's output in a chain).
    pub body: Arc<str>,
    pub logs: Vec<LogLine>,
    log_bytes: usize,
    pub log_truncated: bool,
    /// Spans of JSON pointers already looked up in `body`.
    lookups: pointer::Cache,
}

impl CallState {
    pub(super) fn new(event: Arc<EventMeta>, body: Arc<str>, memory: usize) -> CallState {
        CallState {
            limiter: Limiter { memory, peak: 0, in_use: 0 },
            table: ResourceTable::new(),
            wasi: None,
            stdout: MemoryOutputPipe::new(MAX_LOG_BYTES),
            stderr: MemoryOutputPipe::new(MAX_LOG_BYTES),
            event,
            body,
            logs: Vec::new(),
            log_bytes: 0,
            log_truncated: false,
            lookups: pointer::Cache::default(),
        }
    }

    /// Adds a log line, within the per-call log budget.
    pub(super) fn push_log(&mut self, level: &'static str, message: &str) {
        if self.log_truncated {
            return;
        }
        let room = MAX_LOG_BYTES.saturating_sub(self.log_bytes);
        if message.len() > room {
            let mut cut = room;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            if cut > 0 {
                self.logs.push(LogLine { level, message: message[..cut].to_owned() });
            }
            self.log_truncated = true;
            return;
        }
        self.log_bytes += message.len();
        self.logs.push(LogLine { level, message: message.to_owned() });
    }

    /// Moves what the plugin printed to stdout and stderr into the log.
    pub(super) fn collect_output(&mut self) {
        for (level, pipe) in [("info", self.stdout.contents()), ("warn", self.stderr.contents())] {
            let text = String::from_utf8_lossy(&pipe).into_owned();
            for line in text.lines().filter(|l| !l.is_empty()) {
                self.push_log(level, line);
            }
        }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let (stdout, stderr) = (self.stdout.clone(), self.stderr.clone());
        let ctx = self.wasi.get_or_insert_with(|| {
            // No environment, arguments, directories or sockets; stdio goes to the log.
            WasiCtx::builder().stdout(stdout).stderr(stderr).build()
        });
        WasiCtxView { ctx, table: &mut self.table }
    }
}

impl TypesHost for CallState {}

impl HostEvent for CallState {
    fn action(&mut self, _event: Resource<EventHandle>) -> String {
        self.event.action.clone()
    }

    fn id(&mut self, _event: Resource<EventHandle>) -> String {
        self.event.id.clone()
    }

    fn organisation_id(&mut self, _event: Resource<EventHandle>) -> String {
        self.event.organisation_id.clone()
    }

    fn creator_id(&mut self, _event: Resource<EventHandle>) -> String {
        self.event.creator_id.clone()
    }

    fn subject_type(&mut self, _event: Resource<EventHandle>) -> String {
        self.event.subject_type.clone()
    }

    fn subject_id(&mut self, _event: Resource<EventHandle>) -> String {
        self.event.subject_id.clone()
    }

    fn body(&mut self, _event: Resource<EventHandle>) -> String {
        self.body.to_string()
    }

    fn get(&mut self, _event: Resource<EventHandle>, pointer: String) -> Option<String> {
        pointer::lookup_cached(&self.body, &pointer, &mut self.lookups).map(str::to_owned)
    }

    fn get_string(&mut self, _event: Resource<EventHandle>, pointer: String) -> Option<String> {
        pointer::lookup_cached(&self.body, &pointer, &mut self.lookups).and_then(pointer::string_of)
    }

    fn drop(&mut self, _event: Resource<EventHandle>) -> wasmtime::Result<()> {
        Ok(())
    }
}

impl LogHost for CallState {
    fn log(&mut self, level: Level, message: String) {
        let level = match level {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        self.push_log(level, &message);
    }
}
