//! Why history could not be read or written, and what that means for the store's callers
//! (`StoreError`: `503` for a read).

use crate::store::StoreError;

/// Why history could not be read or written.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum HistoryError {
    /// PostgreSQL cannot serve now (unreachable, too slow, restarting, cancelling, read
    /// only): try again later.
    #[error("history in PostgreSQL is unavailable: {0}")]
    Unavailable(String),
    /// PostgreSQL refused a statement for another reason (a schema an operator changed, a
    /// permission taken away): not the request's fault either, an operator's to mend.
    #[error("history in PostgreSQL: {0}")]
    Refused(String),
}

impl From<tokio_postgres::Error> for HistoryError {
    fn from(e: tokio_postgres::Error) -> HistoryError {
        let code = e.code().map(|c| c.code().to_owned());
        let cause = std::error::Error::source(&e).map(|s| format!("{e}: {s}")).unwrap_or_else(|| e.to_string());
        match code.as_deref() {
            None => HistoryError::Unavailable(cause),
            Some(c) if passing(c) => HistoryError::Unavailable(cause),
            Some(_) => HistoryError::Refused(cause),
        }
    }
}

/// Whether a failure of SQLSTATE `code` says PostgreSQL cannot serve now but may later:
/// connection failures (08), no resources (53), an operator's intervention — a statement
/// cancelled by `statement_timeout`, a server shutting down (57), a lock not available or
/// an object in use (55), a transaction to try again (40: serialization, deadlock), a
/// read-only standby (25006), the server's own failure (58, XX).
fn passing(code: &str) -> bool {
    ["08", "53", "57", "55", "40", "58", "XX"].iter().any(|class| code.starts_with(class)) || code == "25006"
}

impl From<HistoryError> for StoreError {
    fn from(e: HistoryError) -> StoreError {
        match e {
            HistoryError::Unavailable(_) => StoreError::HistoryUnavailable(e.to_string()),
            HistoryError::Refused(_) => StoreError::History(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::passing;

    #[test]
    fn what_passes_is_told_from_what_an_operator_must_mend() {
        for code in ["08006", "57014", "57P01", "55P03", "40001", "40P01", "25006", "53300", "58030", "XX000"] {
            assert!(passing(code), "{code}");
        }
        for code in ["42P01", "42501", "22P02", "23505"] {
            assert!(!passing(code), "{code}");
        }
    }
}
