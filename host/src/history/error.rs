//! Why history could not be read or written, and what that means for the store's callers
//! (`StoreError`: `503` for a read).

use crate::store::StoreError;

/// Why history could not be read or written.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum HistoryError {
    /// PostgreSQL cannot be reached (or is too slow, or restarting): try again later.
    #[error("history in PostgreSQL is unavailable: {0}")]
    Unavailable(String),
    /// PostgreSQL refused a statement.
    #[error("history in PostgreSQL: {0}")]
    Refused(String),
}

impl From<tokio_postgres::Error> for HistoryError {
    fn from(e: tokio_postgres::Error) -> HistoryError {
        let code = e.code().map(|c| c.code().to_owned());
        let cause = std::error::Error::source(&e).map(|s| format!("{e}: {s}")).unwrap_or_else(|| e.to_string());
        match code.as_deref() {
            // Connection failures, an operator shutting the server down, no resources.
            None => HistoryError::Unavailable(cause),
            Some(c) if c.starts_with("08") || c.starts_with("57P") || c.starts_with("53") => {
                HistoryError::Unavailable(cause)
            }
            Some(_) => HistoryError::Refused(cause),
        }
    }
}

impl From<HistoryError> for StoreError {
    fn from(e: HistoryError) -> StoreError {
        match e {
            HistoryError::Unavailable(_) => StoreError::HistoryUnavailable(e.to_string()),
            HistoryError::Refused(_) => StoreError::History(e.to_string()),
        }
    }
}
