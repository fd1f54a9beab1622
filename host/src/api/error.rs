//! The API's error type and its one mapping to HTTP: the contract's body
//! `{"error": {"code", "message", "details"?}}` with the status of each code.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::auth::Denied;
use crate::domain::Invalid;
use crate::domain::StoreError;
use crate::domain::deliveries::RetryError;
use crate::domain::replay::ReplayError;
use crate::domain::webhooks::WebhookError;
use crate::web::BodyError;

pub(crate) use crate::domain::FieldError;

/// The error codes of contract §2, plus `method_not_allowed` and `unavailable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    InvalidToken,
    /// A source's request: its signature (contract §10).
    InvalidSignature,
    MissingSignature,
    TimestampOutOfTolerance,
    PlanRequired,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    RequestTimeout,
    Conflict,
    Gone,
    PayloadTooLarge,
    UnsupportedMediaType,
    ValidationFailed,
    RateLimited,
    /// A plan's count limit (403).
    QuotaExceeded,
    /// A plan's events of the day used up (429).
    DailyQuotaExceeded,
    Internal,
    Unavailable,
}

impl Code {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Code::InvalidToken => "invalid_token",
            Code::InvalidSignature => "invalid_signature",
            Code::MissingSignature => "missing_signature",
            Code::TimestampOutOfTolerance => "timestamp_out_of_tolerance",
            Code::PlanRequired => "plan_required",
            Code::Forbidden => "forbidden",
            Code::NotFound => "not_found",
            Code::MethodNotAllowed => "method_not_allowed",
            Code::RequestTimeout => "request_timeout",
            Code::Conflict => "conflict",
            Code::Gone => "gone",
            Code::PayloadTooLarge => "payload_too_large",
            Code::UnsupportedMediaType => "unsupported_media_type",
            Code::ValidationFailed => "validation_failed",
            Code::RateLimited => "rate_limited",
            Code::QuotaExceeded | Code::DailyQuotaExceeded => "quota_exceeded",
            Code::Internal => "internal",
            Code::Unavailable => "unavailable",
        }
    }

    pub(crate) fn status(self) -> StatusCode {
        match self {
            Code::InvalidToken | Code::InvalidSignature | Code::MissingSignature | Code::TimestampOutOfTolerance => {
                StatusCode::UNAUTHORIZED
            }
            Code::PlanRequired => StatusCode::PAYMENT_REQUIRED,
            Code::Forbidden => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Code::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Code::Conflict => StatusCode::CONFLICT,
            Code::Gone => StatusCode::GONE,
            Code::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Code::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Code::ValidationFailed => StatusCode::UNPROCESSABLE_ENTITY,
            Code::RateLimited | Code::DailyQuotaExceeded => StatusCode::TOO_MANY_REQUESTS,
            Code::QuotaExceeded => StatusCode::FORBIDDEN,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code for a status produced outside the handlers (routing, framework rejections).
    pub(crate) fn for_status(status: StatusCode) -> Code {
        match status.as_u16() {
            401 => Code::InvalidToken,
            402 => Code::PlanRequired,
            403 => Code::Forbidden,
            404 => Code::NotFound,
            405 => Code::MethodNotAllowed,
            408 => Code::RequestTimeout,
            409 => Code::Conflict,
            410 => Code::Gone,
            413 => Code::PayloadTooLarge,
            415 => Code::UnsupportedMediaType,
            429 => Code::RateLimited,
            503 => Code::Unavailable,
            400..=499 => Code::ValidationFailed,
            _ => Code::Internal,
        }
    }
}

/// An API error, answered in the contract's shape.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub code: Code,
    pub message: String,
    pub details: Vec<FieldError>,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(code: Code, message: impl Into<String>) -> ApiError {
        ApiError { code, message: message.into(), details: Vec::new(), retry_after: None }
    }

    pub(crate) fn invalid_token() -> ApiError {
        ApiError::new(Code::InvalidToken, "a valid bearer token is required")
    }

    pub(crate) fn not_found(what: &str) -> ApiError {
        ApiError::new(Code::NotFound, format!("{what} not found"))
    }

    pub(crate) fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(Code::Conflict, message)
    }

    pub(crate) fn validation(details: Vec<FieldError>) -> ApiError {
        ApiError { details, ..ApiError::new(Code::ValidationFailed, "the request is not valid") }
    }

    pub(crate) fn field(field: &str, message: impl Into<String>) -> ApiError {
        ApiError::validation(vec![FieldError::new(field, message)])
    }

    pub(crate) fn internal() -> ApiError {
        ApiError::new(Code::Internal, "internal error")
    }

    /// 429 with `Retry-After` in whole seconds (at least 1).
    pub(crate) fn rate_limited(wait: std::time::Duration) -> ApiError {
        ApiError::too_many(wait, "too many requests from this client; retry later")
    }

    /// 429 `rate_limited` saying which bound was met, with `Retry-After` in whole seconds
    /// (at least 1).
    pub(crate) fn too_many(wait: std::time::Duration, message: impl Into<String>) -> ApiError {
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        ApiError { retry_after: Some(secs.max(1)), ..ApiError::new(Code::RateLimited, message) }
    }

    pub(crate) fn unavailable() -> ApiError {
        ApiError { retry_after: Some(1), ..ApiError::new(Code::Unavailable, "storage is unavailable; retry shortly") }
    }
}

impl From<crate::domain::quota::QuotaExceeded> for ApiError {
    /// `403 quota_exceeded` naming the limit as the field, or `429` with `Retry-After` for
    /// the events of the day (contract §9 "Plans").
    fn from(e: crate::domain::quota::QuotaExceeded) -> ApiError {
        let details = vec![FieldError::new(e.quota.key(), e.message.clone())];
        match e.retry_after {
            Some(wait) => {
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                ApiError {
                    details,
                    retry_after: Some(secs.max(1)),
                    ..ApiError::new(Code::DailyQuotaExceeded, e.message)
                }
            }
            None => ApiError { details, ..ApiError::new(Code::QuotaExceeded, e.message) },
        }
    }
}

impl From<crate::domain::events::PublishError> for ApiError {
    fn from(e: crate::domain::events::PublishError) -> ApiError {
        match e {
            crate::domain::events::PublishError::Quota(quota) => quota.into(),
            crate::domain::events::PublishError::Store(e) => e.into(),
            crate::domain::events::PublishError::Unauthorized => ApiError::invalid_token(),
        }
    }
}

impl From<Denied> for ApiError {
    fn from(denied: Denied) -> ApiError {
        let code = match denied {
            Denied::PlanRequired => Code::PlanRequired,
            Denied::NotAdmin | Denied::NotPublisher => Code::Forbidden,
        };
        ApiError::new(code, denied.to_string())
    }
}

impl From<BodyError> for ApiError {
    fn from(e: BodyError) -> ApiError {
        match e {
            BodyError::TooLarge { .. } => ApiError::new(Code::PayloadTooLarge, e.to_string()),
            BodyError::Unreadable => ApiError::field("body", e.to_string()),
            BodyError::Stalled => ApiError::new(Code::RequestTimeout, e.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        if e.is_unavailable() {
            noted(&e);
            ApiError::unavailable()
        } else {
            tracing::error!(error = %e, "store error");
            ApiError::internal()
        }
    }
}

/// How often requests answered `503` for one outage are logged at most.
const UNAVAILABLE_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// Logs a request answered `503` because the store cannot serve: the first of an outage,
/// then at most one line a minute saying how many more there were — not one per request.
fn noted(e: &StoreError) {
    use std::sync::Mutex;
    use std::time::Instant;
    static LAST: Mutex<Option<(Instant, u64)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let now = Instant::now();
    let (logged, since) = match *last {
        Some((at, since)) if now.duration_since(at) < UNAVAILABLE_LOG_EVERY => {
            *last = Some((at, since + 1));
            return;
        }
        Some((_, since)) => (now, since),
        None => (now, 0),
    };
    *last = Some((logged, 0));
    drop(last);
    if e.needs_an_operator() {
        tracing::error!(error = %e, answered_503_since = since, "the store refused a request's work; answered 503");
    } else {
        tracing::warn!(error = %e, answered_503_since = since, "store unavailable; answered 503");
    }
}

impl From<Invalid> for ApiError {
    fn from(invalid: Invalid) -> ApiError {
        ApiError::validation(invalid.0)
    }
}

impl From<WebhookError> for ApiError {
    fn from(e: WebhookError) -> ApiError {
        match e {
            WebhookError::Invalid(invalid) => invalid.into(),
            WebhookError::NotFound => ApiError::not_found("webhook"),
            WebhookError::Quota(quota) => quota.into(),
            WebhookError::Store(e) => e.into(),
        }
    }
}

impl From<crate::domain::events::test_event::TestEventError> for ApiError {
    fn from(e: crate::domain::events::test_event::TestEventError) -> ApiError {
        use crate::domain::events::test_event::TestEventError;
        match e {
            TestEventError::Invalid(invalid) => invalid.into(),
            TestEventError::NotFound => ApiError::not_found("webhook"),
            TestEventError::Inactive => ApiError::conflict(e.to_string()),
            TestEventError::TooMany { wait, .. } => ApiError::too_many(wait, e.to_string()),
            TestEventError::Store(e) => e.into(),
        }
    }
}

impl From<crate::domain::portal::LinkError> for ApiError {
    fn from(e: crate::domain::portal::LinkError) -> ApiError {
        match e {
            crate::domain::portal::LinkError::Invalid(invalid) => invalid.into(),
            crate::domain::portal::LinkError::TooMany(wait) => ApiError::too_many(wait, e.to_string()),
            crate::domain::portal::LinkError::Store(e) => e.into(),
        }
    }
}

impl From<crate::domain::filtering::TestError> for ApiError {
    fn from(e: crate::domain::filtering::TestError) -> ApiError {
        use crate::domain::filtering::TestError;
        match e {
            TestError::Invalid(invalid) => invalid.into(),
            TestError::UnknownEvent(_) => ApiError::not_found("event"),
            TestError::Store(e) => e.into(),
        }
    }
}

impl From<RetryError> for ApiError {
    fn from(e: RetryError) -> ApiError {
        match e {
            RetryError::NotFound => ApiError::not_found("delivery"),
            RetryError::WebhookNotFound => ApiError::not_found("webhook"),
            RetryError::Invalid(invalid) => invalid.into(),
            RetryError::WebhookGone => ApiError::conflict("the webhook of this delivery was deleted"),
            RetryError::Inactive => {
                ApiError::conflict("the webhook is inactive; reactivate it first (PATCH active: true)")
            }
            RetryError::Filtered => ApiError::conflict("a plugin filtered this delivery: there is no request to send"),
            RetryError::Store(e) => e.into(),
        }
    }
}

impl From<ReplayError> for ApiError {
    fn from(e: ReplayError) -> ApiError {
        match e {
            ReplayError::NotFound => ApiError::not_found("webhook"),
            ReplayError::Invalid(invalid) => invalid.into(),
            ReplayError::Inactive => {
                ApiError::conflict("the webhook is inactive; reactivate it first (PATCH active: true)")
            }
            ReplayError::Running => ApiError::conflict(
                "a replay of this webhook is still running (GET /api/v2/webhooks/{id}/replay shows how far it got)",
            ),
            ReplayError::Store(e) => e.into(),
        }
    }
}

/// Every API error's body (contract §2).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ErrorDetail<'a> {
    /// `invalid_token`, `plan_required`, `forbidden`, `not_found`, `method_not_allowed`,
    /// `conflict`, `gone`, `payload_too_large`, `unsupported_media_type`,
    /// `validation_failed`, `rate_limited`, `quota_exceeded` (403 over a plan's count, 429
    /// over its events of the day), `internal`, `unavailable`.
    code: &'a str,
    message: &'a str,
    /// Only for `validation_failed` (each invalid field) and `quota_exceeded` (the plan's
    /// limit met: `events_per_day`, `webhooks`, `plugins` or `plugin_bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<FieldError>>)]
    details: Option<&'a [FieldError]>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let with_details = matches!(self.code, Code::ValidationFailed | Code::QuotaExceeded | Code::DailyQuotaExceeded);
        let details = with_details.then_some(self.details.as_slice());
        let body = ErrorBody { error: ErrorDetail { code: self.code.as_str(), message: &self.message, details } };
        let mut response = (self.code.status(), axum::Json(body)).into_response();
        let headers = response.headers_mut();
        if self.code == Code::InvalidToken {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"weir\""));
        }
        if let Some(secs) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.code == Code::RequestTimeout {
            // The client stopped sending: what is left of its request cannot be read.
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;
