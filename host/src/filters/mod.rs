//! Filters (contract §8): a webhook's `filter`, an expression in CEL (the Common Expression
//! Language, cel.dev), decides which of its subscribed events it receives. The only module
//! that knows CEL (the `cel` crate).
//!
//! - [`Filter::compile`]: parsed, then checked (`check`): every name is a variable of the
//!   envelope, every function one of those listed, and what an evaluation can cost — in
//!   time and in memory, whatever the event within the body limit — is bounded before the
//!   filter is accepted. Compiled once per webhook version.
//! - [`Envelope`]: an event's envelope as CEL values, made once per event and shared by
//!   every filter it meets: each top-level key a variable, `event` the whole envelope
//!   (made only for the filters that name it).
//!   JSON numbers without a fraction that fit in 64 bits signed are CEL `int`, the others
//!   `double` (CEL compares `int` and `double` with each other).
//! - [`Filter::evaluate`]: `true` selects; `false`, another value or an error does not.

mod check;
mod envelope;
mod error;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

pub use self::check::{COST_BUDGET, EVENT_BOUND, MAX_PATTERN};
pub use self::envelope::Envelope;
use self::envelope::env;
pub use self::error::FilterError;

/// The longest filter, in bytes.
pub const MAX_BYTES: usize = 4096;
/// The most elements (of lists, and entries of objects, in all) an event may hold for a
/// filter with macros to be evaluated on it: the interpreter takes about a microsecond an
/// element and step, so this keeps the costliest filter the check admits to about 20 ms;
/// on a larger event such a filter does not select it (an evaluation error).
pub const MAX_MACRO_ELEMENTS: usize = 20_000;

/// A compiled filter.
pub struct Filter {
    source: String,
    program: cel::Program,
    /// The bound `check` found on an evaluation's cost.
    cost: u64,
    /// Whether it has macros (`all`, `exists`, `map`, …), which go through lists one element
    /// at a time.
    macros: bool,
    /// Whether it names `event`, the whole envelope (made for it at each evaluation).
    whole: bool,
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filter").field("source", &self.source).field("cost", &self.cost).finish()
    }
}

/// What a filter made of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
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
                message: first.map_or_else(|| "does not parse".to_owned(), |e| format!("does not parse: {}", e.msg)),
            }
        })?;
        let (cost, macros) = check::check(&program, source)?;
        let whole = program.references().has_variable("event");
        Ok(Filter { source: source.to_owned(), program, cost, macros, whole })
    }

    /// The filter as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The bound on an evaluation's cost `check` found (units: about one byte looked at).
    pub fn cost_bound(&self) -> u64 {
        self.cost
    }

    /// Whether `event` is selected.
    pub fn evaluate(&self, event: &Envelope) -> Verdict {
        if self.macros && event.elements > MAX_MACRO_ELEMENTS {
            return Verdict::Error(format!(
                "the event holds {} list elements and object entries, more than a filter's macros go through ({MAX_MACRO_ELEMENTS})",
                event.elements
            ));
        }
        let result = if self.whole {
            let mut scope = event.context.new_inner_scope();
            scope.add_variable_as_val("event", event.whole());
            self.program.execute(&scope)
        } else {
            self.program.execute(&event.context)
        };
        match result {
            Ok(cel::Value::Bool(true)) => Verdict::Selected,
            Ok(_) => Verdict::NotSelected,
            Err(e) => Verdict::Error(e.to_string()),
        }
    }
}

/// The filters one process compiled, by their text: each is compiled once (a webhook's new
/// filter is new text). At most [`Compiled::MOST`] are kept; past that, all are dropped.
#[derive(Debug, Default)]
pub struct Compiled {
    filters: Mutex<HashMap<String, Arc<Filter>>>,
}

impl Compiled {
    const MOST: usize = 4096;

    /// The compiled filter of `source`.
    pub fn get(&self, source: &str) -> Result<Arc<Filter>, FilterError> {
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

#[cfg(test)]
mod tests;
