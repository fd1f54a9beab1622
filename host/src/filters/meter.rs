//! The meter of one evaluation: its deadline, checked as it goes, so that no evaluation
//! runs past [`TIME_LIMIT`] whatever its filter and event — the save-time bound
//! (`super::check`) keeps what is admitted well inside it, this ends what the bound did not
//! foresee. It is checked where an evaluation can spend time without bound:
//!
//! - every macro iteration (`@tick`, which the macros' expansions call: `super::macros`),
//!   however the loops nest;
//! - inside `matches`: a pattern is a lazy DFA (regex-automata's hybrid engine, compiled
//!   once per filter) run byte by byte, so a pattern whose automaton keeps growing on some
//!   input (`a[ab]{20}c` on a random run of `a`s and `b`s: 240 ms per MiB) is stopped too.
//!
//! The meter is the evaluating thread's own (`evaluate` sets it for the call), so the
//! functions CEL calls find it without any state of their own.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cel::ExecutionError;
use cel::common::types::{CelBool, CelString};
use cel::common::value::CowVal;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Input, nfa::thompson};

/// The longest one evaluation may run.
pub const TIME_LIMIT: Duration = Duration::from_millis(50);
/// Iterations between two looks at the clock.
const TICKS_PER_LOOK: u32 = 64;
/// Bytes a pattern reads between two looks at the clock.
const BYTES_PER_LOOK: usize = 1024;
/// The largest automaton a pattern may compile to (its NFA, in bytes of memory).
const MAX_PATTERN_NFA: usize = 256 * 1024;

/// A filter's compiled patterns, by their text.
pub(super) type Patterns = HashMap<String, Arc<Pattern>>;

/// One evaluation's meter.
struct Meter {
    deadline: Instant,
    ticks: u32,
    patterns: Arc<Patterns>,
}

thread_local! {
    static METER: RefCell<Option<Meter>> = const { RefCell::new(None) };
}

/// Runs `evaluate` with a meter of `patterns` and a deadline `limit` from now.
pub(super) fn metered<T>(patterns: &Arc<Patterns>, limit: Duration, evaluate: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            METER.with(|m| m.borrow_mut().take());
        }
    }
    METER.with(|m| {
        *m.borrow_mut() = Some(Meter { deadline: Instant::now() + limit, ticks: 0, patterns: patterns.clone() })
    });
    let _reset = Reset;
    evaluate()
}

fn past_deadline() -> ExecutionError {
    ExecutionError::function_error(
        "filter",
        format!("the evaluation took longer than {} ms and was stopped", TIME_LIMIT.as_millis()),
    )
}

/// `@tick(x)`: `x`, once the meter allows another iteration.
pub(super) fn tick<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let over = METER.with(|m| match m.borrow_mut().as_mut() {
        Some(meter) => {
            meter.ticks += 1;
            meter.ticks.is_multiple_of(TICKS_PER_LOOK) && Instant::now() > meter.deadline
        }
        None => false,
    });
    if over {
        return Err(past_deadline());
    }
    args.pop().ok_or_else(|| ExecutionError::invalid_argument_count(1, 0))
}

/// `text.matches(pattern)` (and `matches(text, pattern)`), with the filter's compiled pattern.
pub(super) fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let strings: Vec<&str> = args.iter().filter_map(|a| a.downcast_ref::<CelString>().map(|s| s.inner())).collect();
    let [text, pattern] = strings[..] else {
        return Err(ExecutionError::function_error("matches", "takes a string and a pattern"));
    };
    let (compiled, deadline) = METER.with(|m| {
        let meter = m.borrow();
        let meter = meter.as_ref();
        let compiled = meter.and_then(|m| m.patterns.get(pattern).cloned());
        (compiled, meter.map(|m| m.deadline))
    });
    let compiled = match compiled {
        Some(compiled) => compiled,
        // Only filters the check accepted are evaluated, and it compiles their patterns.
        None => Arc::new(Pattern::compile(pattern).map_err(|e| ExecutionError::function_error("matches", e))?),
    };
    let deadline = deadline.unwrap_or_else(|| Instant::now() + TIME_LIMIT);
    let found = compiled.is_match(text, deadline)?;
    Ok(CowVal::owned(CelBool::from(found)))
}

/// A pattern of `matches`: its lazy DFA and the caches searches use.
pub(super) struct Pattern {
    dfa: DFA,
    caches: Mutex<Vec<Cache>>,
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pattern").finish_non_exhaustive()
    }
}

impl Pattern {
    /// Compiles `pattern`, or says why it cannot be.
    pub(super) fn compile(pattern: &str) -> Result<Pattern, String> {
        let dfa = DFA::builder()
            .configure(DFA::config().unicode_word_boundary(true))
            .thompson(thompson::Config::new().nfa_size_limit(Some(MAX_PATTERN_NFA)))
            .build(pattern)
            .map_err(|e| {
                let mut text = e.to_string();
                let mut cause = std::error::Error::source(&e);
                while let Some(c) = cause {
                    text = format!("{text}: {c}");
                    cause = c.source();
                }
                if text.contains("exceed") && text.contains("limit") {
                    "the pattern is too large once compiled (repetitions such as {1000} multiply it)".to_owned()
                } else {
                    format!("the pattern is not a regular expression: {text}")
                }
            })?;
        Ok(Pattern { dfa, caches: Mutex::new(Vec::new()) })
    }

    /// Whether `text` holds a match, read byte by byte with a look at the clock every
    /// [`BYTES_PER_LOOK`] bytes: an error past `deadline`.
    fn is_match(&self, text: &str, deadline: Instant) -> Result<bool, ExecutionError> {
        let taken = self.caches.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut cache = taken.unwrap_or_else(|| self.dfa.create_cache());
        let found = self.search(&mut cache, text.as_bytes(), deadline);
        let mut caches = self.caches.lock().unwrap_or_else(|e| e.into_inner());
        if caches.len() < 8 {
            caches.push(cache);
        }
        found
    }

    fn search(&self, cache: &mut Cache, bytes: &[u8], deadline: Instant) -> Result<bool, ExecutionError> {
        let failed = |e: &dyn std::fmt::Display| ExecutionError::function_error("matches", e);
        let unreadable = || {
            ExecutionError::function_error(
                "matches",
                "the pattern's \\b cannot read non-ASCII text; write (?-u:\\b) for an ASCII word boundary",
            )
        };
        let mut state = self.dfa.start_state_forward(cache, &Input::new(bytes)).map_err(|e| failed(&e))?;
        for (i, &byte) in bytes.iter().enumerate() {
            if i % BYTES_PER_LOOK == BYTES_PER_LOOK - 1 && Instant::now() > deadline {
                return Err(past_deadline());
            }
            state = self.dfa.next_state(cache, state, byte).map_err(|e| failed(&e))?;
            if state.is_tagged() {
                if state.is_match() {
                    return Ok(true);
                }
                if state.is_dead() {
                    return Ok(false);
                }
                if state.is_quit() {
                    return Err(unreadable());
                }
            }
        }
        let end = self.dfa.next_eoi_state(cache, state).map_err(|e| failed(&e))?;
        if end.is_quit() {
            return Err(unreadable());
        }
        Ok(end.is_match())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_match(pattern: &str, text: &str) -> bool {
        Pattern::compile(pattern).unwrap().is_match(text, Instant::now() + TIME_LIMIT).unwrap()
    }

    #[test]
    fn patterns_match_as_regular_expressions_do() {
        for (pattern, text) in [("^A.a$", "Ada"), ("b+", "abbc"), ("", ""), ("x$", "abx"), ("(?i)ADA", "ada")] {
            assert!(is_match(pattern, text), "{pattern} {text}");
        }
        for (pattern, text) in [("^A.a$", "Adam"), ("^b", "ab"), ("x$", "xa"), ("\\d", "abc")] {
            assert!(!is_match(pattern, text), "{pattern} {text}");
        }
    }

    #[test]
    fn a_pattern_whose_automaton_keeps_growing_is_stopped_at_the_deadline() {
        let pattern = Pattern::compile("a[ab]{40}c").unwrap();
        let mut x: u64 = 88_172_645_463_325_252;
        let text: String = (0..(1 << 20))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if (x >> 20).is_multiple_of(2) { 'a' } else { 'b' }
            })
            .collect();
        let started = Instant::now();
        let limit = Duration::from_millis(20);
        let result = pattern.is_match(&text, started + limit);
        assert!(result.unwrap_err().to_string().contains("longer than"));
        assert!(started.elapsed() < limit * 10, "stopped soon after: {:?}", started.elapsed());
    }

    #[test]
    fn patterns_too_large_once_compiled_are_refused() {
        let e = Pattern::compile("(a{1000}){1000}").unwrap_err();
        assert!(e.contains("too large"), "{e}");
        assert!(Pattern::compile("(").unwrap_err().contains("not a regular expression"));
    }

    #[test]
    fn a_unicode_word_boundary_on_non_ascii_text_says_why_it_cannot_read_it() {
        let pattern = Pattern::compile(r"\bé").unwrap();
        let e = pattern.is_match("café", Instant::now() + TIME_LIMIT).unwrap_err();
        assert!(e.to_string().contains("(?-u:\\b)"), "{e}");
    }
}
