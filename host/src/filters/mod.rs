//! Filters (contract §8): a webhook's `filter`, an expression in CEL (the Common Expression
//! Language, cel.dev), decides which of its subscribed events it receives. The only module
//! that knows CEL (the `cel` crate).
//!
//! - [`Filter::compile`]: parsed, then checked (`check`): every name is a variable of the
//!   envelope, every function one of those listed, every operation one its operands'
//!   types may take, and what an evaluation can cost — in time and in memory, whatever the
//!   event within the body limit — is bounded before the filter is accepted. Compiled once
//!   per webhook version. CEL's macros are expanded by `macros` (each iteration counted),
//!   `matches` is run by `meter` (a lazy DFA read byte by byte).
//! - [`Envelope`]: an event's envelope as CEL values, made once per event and shared by
//!   every filter it meets: each top-level key a variable, `event` the whole envelope
//!   (made only for the filters that name it).
//!   JSON numbers without a fraction that fit in 64 bits signed are CEL `int`, the others
//!   `double` (CEL compares `int` and `double` with each other).
//! - [`Filter::evaluate`]: `true` selects; `false`, another value or an error does not.
//!   Every evaluation is metered (`meter`): past [`TIME_LIMIT`] it ends, as an error.
//! - [`Evaluator`]: where evaluations run — a cheap filter where it is asked for, any
//!   other on threads of their own, in its organisation's share, off the threads requests
//!   need.

mod check;
mod envelope;
mod error;
mod evaluator;
mod filter;
mod macros;
mod meter;

pub use self::check::{COST_BUDGET, EVENT_BOUND, MAX_MACRO_ELEMENTS, MAX_PATTERN};
pub use self::envelope::Envelope;
pub use self::error::FilterError;
pub use self::evaluator::Evaluator;
pub use self::filter::{Filter, INLINE_NS, MAX_BYTES, Selection};
pub use self::meter::TIME_LIMIT;

#[cfg(test)]
mod tests;
