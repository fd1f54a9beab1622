//! A compiled filter: parsed, checked, and evaluated under its meter.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use super::check::{self, MAX_MACRO_ELEMENTS};
use super::envelope::{Envelope, env};
use super::error::FilterError;
use super::meter::{self, Patterns, TIME_LIMIT};

/// The most a filter evaluated where it is asked for (`super::Evaluator`) may cost on the
/// largest event, estimated (ns).
pub const INLINE_NS: u64 = 1_000_000;
/// The longest filter, in bytes.
pub const MAX_BYTES: usize = 4096;
/// A compiled filter.
pub struct Filter {
    source: String,
    program: cel::Program,
    /// The bound `check` found on an evaluation's time, estimated (ns).
    cost: u64,
    /// Whether it has macros (`all`, `exists`, `map`, …), which go through lists one element
    /// at a time.
    macros: bool,
    /// Whether it names `event`, the whole envelope (made for it at each evaluation).
    whole: bool,
    /// Its `matches` patterns, compiled.
    patterns: Arc<Patterns>,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter").field("source", &self.source).field("cost", &self.cost).finish()
    }
}

/// What a filter made of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Selected,
    /// `false`, or a value that is not a boolean.
    NotSelected,
    /// The evaluation failed (a missing field, a type mismatch): not selected either.
    Error(String),
}

impl Filter {
    /// Parses and checks `source` (see the module's documentation).
    pub fn compile(source: &str) -> Result<Filter, FilterError> {
        if source.len() > MAX_BYTES {
            return Err(FilterError { at: None, message: format!("is longer than {MAX_BYTES} bytes") });
        }
        if source.trim().is_empty() {
            return Err(FilterError { at: None, message: "is empty (null removes the filter)".to_owned() });
        }
        let program = env().compile(source).map_err(|errors| {
            let first = errors.errors.first();
            FilterError {
                at: first.and_then(|e| (e.pos.0 > 0 && e.pos.1 > 0).then_some((e.pos.0 as usize, e.pos.1 as usize))),
                message: first.map_or_else(|| "does not parse".to_owned(), |e| parse_error(&e.msg)),
            }
        })?;
        let checked = check::check(&program, source)?;
        let whole = program.references().has_variable("event");
        Ok(Filter {
            source: source.to_owned(),
            program,
            cost: checked.cost,
            macros: checked.macros,
            whole,
            patterns: Arc::new(checked.patterns),
        })
    }

    /// The filter as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The bound on an evaluation's time `check` found, estimated (ns, a release build).
    pub fn cost_bound(&self) -> u64 {
        self.cost
    }

    /// Whether an evaluation is cheap enough to run where it is asked for
    /// ([`Evaluator`]): no macro, no pattern, and a bound within [`INLINE_NS`].
    pub fn runs_inline(&self) -> bool {
        !self.macros && self.patterns.is_empty() && self.cost <= INLINE_NS
    }

    /// Whether `event` is selected; an evaluation past [`TIME_LIMIT`] is stopped (an error).
    pub fn evaluate(&self, event: &Envelope) -> Selection {
        self.evaluate_within(event, TIME_LIMIT)
    }

    /// [`Filter::evaluate`] with a deadline `limit` from now.
    pub fn evaluate_within(&self, event: &Envelope, limit: std::time::Duration) -> Selection {
        if self.macros && event.elements > MAX_MACRO_ELEMENTS {
            return Selection::Error(format!(
                "the event holds {} list elements and object entries, more than a filter's macros go through ({MAX_MACRO_ELEMENTS})",
                event.elements
            ));
        }
        let result = meter::metered(&self.patterns, limit, || {
            if self.whole {
                let mut scope = event.context.new_inner_scope();
                scope.add_variable_as_val("event", event.whole());
                self.program.execute(&scope)
            } else {
                self.program.execute(&event.context)
            }
        });
        match result {
            Ok(cel::Value::Bool(true)) => Selection::Selected,
            Ok(_) => Selection::NotSelected,
            Err(e) => Selection::Error(e.to_string()),
        }
    }
}

/// What a parse error says, in words (the parser's own is sometimes its debug text).
fn parse_error(message: &str) -> String {
    if message.contains("Error(") || message.contains("Error {") {
        "does not parse: the expression is not complete or not well formed".to_owned()
    } else {
        format!("does not parse: {message}")
    }
}

/// The filters one process compiled, by their text: each is compiled once (a webhook's new
/// filter is new text). At most [`Compiled::MOST`] are kept; past that, all are dropped.
#[derive(Debug, Default)]
pub(super) struct Compiled {
    filters: Mutex<HashMap<String, Arc<Filter>>>,
}

impl Compiled {
    const MOST: usize = 4096;

    /// The compiled filter of `source`.
    pub(super) fn get(&self, source: &str) -> Result<Arc<Filter>, FilterError> {
        if let Some(filter) = self.filters.lock().unwrap_or_else(|e| e.into_inner()).get(source) {
            return Ok(filter.clone());
        }
        let filter = Arc::new(Filter::compile(source)?);
        let mut filters = self.filters.lock().unwrap_or_else(|e| e.into_inner());
        if filters.len() >= Self::MOST {
            filters.clear();
        }
        filters.insert(source.to_owned(), filter.clone());
        Ok(filter)
    }
}
