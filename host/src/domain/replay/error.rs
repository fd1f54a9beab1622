//! Why a replay was refused.

use crate::domain::Invalid;
use crate::store::StoreError;

/// Why a replay was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplayError {
    #[error("webhook not found")]
    NotFound,
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("the webhook is inactive")]
    Inactive,
    #[error("a replay of this webhook is still running")]
    Running,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for ReplayError {
    fn from(invalid: Invalid) -> ReplayError {
        ReplayError::Invalid(invalid)
    }
}
