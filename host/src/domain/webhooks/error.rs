//! Why a webhook change did not happen.

use crate::domain::Invalid;
use crate::domain::quota::QuotaExceeded;
use crate::store::StoreError;

/// Why a webhook change did not happen.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WebhookError {
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("webhook not found")]
    NotFound,
    #[error(transparent)]
    Quota(QuotaExceeded),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<Invalid> for WebhookError {
    fn from(invalid: Invalid) -> WebhookError {
        WebhookError::Invalid(invalid)
    }
}
