//! Why a filter is refused.

use std::fmt;

/// Why a filter is refused: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// Line and column (from 1) of the fault, when it has one.
    pub at: Option<(usize, usize)>,
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((line, column)) => write!(f, "at line {line}, column {column}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}
