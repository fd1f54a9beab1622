//! One plugin call: a fresh instance in a fresh store, under every limit, off the async
//! workers; its verdict checked before anything is sent.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Resource;
use wasmtime::{Store, Trap};

use super::bindings::{self, EventHandle};
use super::link::Forbidden;
use super::runtime::{BACKTRACE_FRAMES, Runtime};
use super::state::{CallState, EventMeta, LogLine, MemoryExceeded};
use super::ticker::EPOCH_TICK;

/// A plugin's decision, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver; `body: None` keeps the current body.
    Deliver {
        body: Option<String>,
        headers: Vec<(String, String)>,
    },
    Drop(String),
}

/// Why a call failed. The messages are recorded on deliveries and shown to plugin authors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    #[error("exceeded its CPU budget of {0} fuel")]
    OutOfFuel(u64),
    #[error("exceeded its time limit of {0:?}")]
    Timeout(Duration),
    #[error("{0}")]
    Memory(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("stack overflow (too deep recursion)")]
    StackOverflow,
    #[error("panicked: {0}")]
    Panicked(String),
    #[error("trapped: {0}")]
    Trap(String),
    #[error("exited with status {0}")]
    Exited(i32),
    #[error("returned a body of {size} bytes; the limit is {limit}")]
    OutputTooLarge { size: usize, limit: usize },
    #[error("returned a body that is not JSON: {0}")]
    InvalidBody(String),
    #[error("returned an invalid header: {0}")]
    InvalidHeader(String),
    #[error("is unavailable: {0}")]
    Unavailable(String),
}

/// Everything one call produced.
#[derive(Debug, Clone)]
pub struct CallReport {
    pub result: Result<Verdict, PluginError>,
    pub logs: Vec<LogLine>,
    pub fuel_used: u64,
    pub duration: Duration,
    /// Of `duration`, the time spent instantiating the plugin (a fresh instance per call).
    pub instantiation: Duration,
    /// The call's linear memory at its largest, every instance together (bytes).
    pub memory_peak: usize,
}

impl CallReport {
    /// A call that failed before the plugin ran.
    pub fn failed(error: PluginError, duration: Duration) -> CallReport {
        CallReport {
            result: Err(error),
            logs: Vec::new(),
            fuel_used: 0,
            duration,
            instantiation: Duration::ZERO,
            memory_peak: 0,
        }
    }
}

/// Most headers a plugin may add.
const MAX_HEADERS: usize = 32;

/// The code a call runs: its hash, and its bytes when it may need compiling (they are not
/// read when it is compiled already).
#[derive(Debug, Clone)]
pub struct Code {
    pub sha256: String,
    pub wasm: Option<Vec<u8>>,
}

/// Calls a plugin of `org_id` on `runtime`. Its `wasm` is needed only when it is not
/// compiled yet ([`Runtime::is_compiled`]). Runs on the blocking pool, at most
/// `limits.concurrency` at once and `limits.concurrency_per_org` for one organisation.
pub async fn call(
    runtime: &Arc<Runtime>,
    org_id: &str,
    code: Code,
    event: Arc<EventMeta>,
    body: Arc<str>,
    config: String,
) -> CallReport {
    let Code { sha256, wasm } = code;
    let started = Instant::now();
    let Some(_slot) = runtime.pool.acquire(org_id).await else {
        return CallReport::failed(
            PluginError::Unavailable("the plugin runtime is shutting down".into()),
            started.elapsed(),
        );
    };
    let runtime = runtime.clone();
    let joined =
        tokio::task::spawn_blocking(move || call_blocking(&runtime, &sha256, wasm, event, body, &config)).await;
    joined.unwrap_or_else(|e| {
        CallReport::failed(PluginError::Trap(format!("the host failed running it: {e}")), started.elapsed())
    })
}

/// [`call`], on the current thread.
pub fn call_blocking(
    runtime: &Runtime,
    sha256: &str,
    wasm: Option<Vec<u8>>,
    event: Arc<EventMeta>,
    body: Arc<str>,
    config: &str,
) -> CallReport {
    let started = Instant::now();
    let limits = runtime.limits;
    let compiled = match runtime.compiled_blocking(sha256, || wasm) {
        Ok(compiled) => compiled,
        Err(e) => return CallReport::failed(PluginError::Unavailable(e.to_string()), started.elapsed()),
    };
    runtime.counters.calls.inc();
    let mut store = Store::new(&runtime.engine, CallState::new(event, body, limits.memory));
    store.limiter(|state| &mut state.limiter);
    let _ = store.set_fuel(limits.fuel);
    let ticks = (limits.timeout.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64;
    store.set_epoch_deadline(ticks);
    let _running = runtime.ticker.running();
    let instantiating = Instant::now();
    let mut instantiation = Duration::ZERO;
    let outcome = compiled.pre.instantiate(&mut store).and_then(|filter| {
        instantiation = instantiating.elapsed();
        let handle: Resource<EventHandle> = Resource::new_borrow(0);
        filter.call_handle(&mut store, handle, config)
    });
    let fuel_used = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let state = store.data_mut();
    let memory_peak = state.limiter.peak;
    state.collect_output();
    let logs = std::mem::take(&mut state.logs);
    let result = match outcome {
        Ok(verdict) => check(verdict, limits.max_output),
        Err(e) => Err(classify(&e, limits.fuel, limits.timeout, &logs)),
    };
    CallReport { result, logs, fuel_used, duration: started.elapsed(), instantiation, memory_peak }
}

/// Whether a trap happened deep in recursion: a full backtrace, mostly one function.
fn runaway_recursion(backtrace: Option<&wasmtime::WasmBacktrace>) -> bool {
    let Some(frames) = backtrace.map(|b| b.frames()) else { return false };
    if frames.len() < BACKTRACE_FRAMES / 2 {
        return false;
    }
    let mut counts = std::collections::HashMap::new();
    for frame in frames {
        *counts.entry(frame.func_index()).or_insert(0usize) += 1;
    }
    counts.values().max().is_some_and(|most| most * 2 >= frames.len())
}

/// Turns a call's error into a [`PluginError`], by type. `logs` is what the plugin wrote
/// (a Rust guest's panic message goes to stderr, hence to the log).
fn classify(e: &wasmtime::Error, fuel: u64, timeout: Duration, logs: &[LogLine]) -> PluginError {
    if let Some(trap) = e.downcast_ref::<Trap>() {
        return match trap {
            Trap::OutOfFuel => PluginError::OutOfFuel(fuel),
            Trap::Interrupt => PluginError::Timeout(timeout),
            Trap::StackOverflow => PluginError::StackOverflow,
            // A guest's own stack lives in its linear memory: recursing past its end shows
            // up as an access out of bounds, deep in the same calls.
            Trap::MemoryOutOfBounds if runaway_recursion(e.downcast_ref()) => PluginError::StackOverflow,
            Trap::UnreachableCodeReached => match panic_message(logs).or_else(|| uncaught(logs)) {
                Some(message) => PluginError::Panicked(message),
                None => PluginError::Trap("reached unreachable code (a panic or abort)".into()),
            },
            other => PluginError::Trap(other.to_string()),
        };
    }
    if let Some(memory) = e.downcast_ref::<MemoryExceeded>() {
        return PluginError::Memory(memory.to_string());
    }
    if let Some(forbidden) = e.downcast_ref::<Forbidden>() {
        return PluginError::Forbidden(forbidden.to_string());
    }
    if let Some(exit) = e.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return PluginError::Exited(exit.0);
    }
    let text = format!("{e:#}");
    PluginError::Trap(text.lines().next().unwrap_or_default().chars().take(500).collect())
}

/// The message of a Rust panic, from what the standard panic hook printed: a line
/// `thread '…' panicked at FILE:LINE:COL:`, then the message (up to a `note:` line).
fn panic_message(logs: &[LogLine]) -> Option<String> {
    let at = logs.iter().position(|l| l.message.contains("panicked at "))?;
    let location = logs[at].message.split("panicked at ").nth(1).unwrap_or("").trim_end_matches(':').trim();
    let message: Vec<&str> =
        logs[at + 1..].iter().map(|l| l.message.as_str()).take_while(|m| !m.starts_with("note: ")).collect();
    let message = message.join("\n");
    let message = message.trim();
    Some(match (message.is_empty(), location.is_empty()) {
        (false, false) => format!("{message} (at {location})"),
        (false, true) => message.to_owned(),
        (true, _) => format!("at {location}"),
    })
}

/// An exception the JavaScript or Python SDK logged as it left the plugin (`uncaught …`):
/// the language's own message and the line it came from.
fn uncaught(logs: &[LogLine]) -> Option<String> {
    let line = logs.iter().rev().find(|l| l.level == "error" && l.message.starts_with("uncaught "))?;
    Some(line.message.trim_start_matches("uncaught ").to_owned())
}

/// Checks a verdict: body size and JSON, header names and values.
fn check(verdict: bindings::Verdict, max_output: usize) -> Result<Verdict, PluginError> {
    match verdict {
        bindings::Verdict::Drop(reason) => Ok(Verdict::Drop(reason.chars().take(1000).collect())),
        bindings::Verdict::Deliver(delivery) => {
            if let Some(body) = &delivery.body {
                if body.len() > max_output {
                    return Err(PluginError::OutputTooLarge { size: body.len(), limit: max_output });
                }
                if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(body) {
                    return Err(PluginError::InvalidBody(e.to_string()));
                }
            }
            if delivery.headers.len() > MAX_HEADERS {
                return Err(PluginError::InvalidHeader(format!("more than {MAX_HEADERS} headers")));
            }
            let mut headers = Vec::with_capacity(delivery.headers.len());
            for h in delivery.headers {
                if hyper::header::HeaderName::from_bytes(h.name.as_bytes()).is_err() {
                    return Err(PluginError::InvalidHeader(format!("`{}` is not a header name", h.name)));
                }
                if h.value.len() > 8192 || hyper::header::HeaderValue::from_str(&h.value).is_err() {
                    return Err(PluginError::InvalidHeader(format!(
                        "the value of `{}` is not a valid header value",
                        h.name
                    )));
                }
                headers.push((h.name, h.value));
            }
            Ok(Verdict::Deliver { body: delivery.body, headers })
        }
    }
}

impl EventMeta {
    /// Reads the fields a plugin can ask about from an envelope (service document §2).
    pub fn from_envelope(envelope: &str) -> Option<EventMeta> {
        #[derive(serde::Deserialize)]
        struct Actor<'a> {
            #[serde(borrow)]
            id: std::borrow::Cow<'a, str>,
        }
        #[derive(serde::Deserialize)]
        struct Subject<'a> {
            #[serde(borrow, rename = "type")]
            kind: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            id: std::borrow::Cow<'a, str>,
        }
        #[derive(serde::Deserialize)]
        struct Envelope<'a> {
            #[serde(borrow)]
            id: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            action: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            organisation: Actor<'a>,
            #[serde(borrow)]
            creator: Actor<'a>,
            #[serde(borrow)]
            subject: Subject<'a>,
        }
        let e: Envelope<'_> = serde_json::from_str(envelope).ok()?;
        Some(EventMeta {
            id: e.id.into_owned(),
            action: e.action.into_owned(),
            organisation_id: e.organisation.id.into_owned(),
            creator_id: e.creator.id.into_owned(),
            subject_type: e.subject.kind.into_owned(),
            subject_id: e.subject.id.into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_meta_from_an_envelope() {
        let envelope = r#"{"id":"evt_1","action":"form_completed","created_at":"x","organisation":{"id":"org_1"},"creator":{"id":"usr_\u0031","name":"A"},"subject":{"type":"Form","id":"frm_1"},"form":{"big":[1,2,3]}}"#;
        let meta = EventMeta::from_envelope(envelope).unwrap();
        assert_eq!(meta.action, "form_completed");
        assert_eq!(meta.creator_id, "usr_1");
        assert_eq!(meta.organisation_id, "org_1");
        assert_eq!((meta.subject_type.as_str(), meta.subject_id.as_str()), ("Form", "frm_1"));
        assert!(EventMeta::from_envelope("{}").is_none());
    }

    #[test]
    fn a_panic_message_is_read_from_the_log() {
        let line = |m: &str| LogLine { level: "warn", message: m.into() };
        let logs = vec![
            line("starting"),
            line("thread '<unnamed>' panicked at src/lib.rs:71:24:"),
            line("boom"),
            line("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"),
        ];
        assert_eq!(panic_message(&logs).as_deref(), Some("boom (at src/lib.rs:71:24)"));
        assert_eq!(panic_message(&[line("no panic here")]), None);
    }

    #[test]
    fn verdicts_are_checked() {
        use super::bindings::{Delivery, Header};
        let deliver = |body: Option<&str>, headers: Vec<(&str, &str)>| {
            bindings::Verdict::Deliver(Delivery {
                body: body.map(str::to_owned),
                headers: headers.into_iter().map(|(n, v)| Header { name: n.into(), value: v.into() }).collect(),
            })
        };
        assert!(check(deliver(Some("{\"a\":1}"), vec![("x-team", "ops")]), 100).is_ok());
        assert_eq!(
            check(deliver(Some("{\"a\":1}"), vec![]), 3),
            Err(PluginError::OutputTooLarge { size: 7, limit: 3 })
        );
        assert!(matches!(check(deliver(Some("nope"), vec![]), 100), Err(PluginError::InvalidBody(_))));
        assert!(matches!(check(deliver(None, vec![("bad name", "v")]), 100), Err(PluginError::InvalidHeader(_))));
        assert!(matches!(check(deliver(None, vec![("x", "a\nb")]), 100), Err(PluginError::InvalidHeader(_))));
        assert_eq!(check(bindings::Verdict::Drop("no".into()), 1), Ok(Verdict::Drop("no".into())));
    }
}
