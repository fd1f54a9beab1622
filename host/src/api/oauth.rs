//! The token endpoint (service document §5): OAuth 2.0 client credentials, answered in
//! RFC 6749's shapes, and token revocation (RFC 7009).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;

use super::error::ApiError;
use crate::domain::access::{Access, Issued, TokenError};
use crate::web::{BodyError, read_body};

/// Largest token request body.
const MAX_FORM_BODY: usize = 16 * 1024;

/// An RFC 6749 §5.2 error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OAuthError {
    InvalidRequest(&'static str),
    InvalidClient,
    UnsupportedGrantType,
    Unavailable,
    /// The body stopped arriving: the API's `408 request_timeout`.
    Stalled,
}

/// The body of an RFC 6749 §5.2 error.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct OAuthErrorBody {
    /// `invalid_request`, `invalid_client`, `unsupported_grant_type` or
    /// `temporarily_unavailable`.
    pub error: &'static str,
    pub error_description: &'static str,
}

/// An issued access token.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct Token {
    pub access_token: String,
    /// `Bearer`.
    pub token_type: &'static str,
    /// Seconds until it expires.
    pub expires_in: u64,
    /// When it was issued (Unix seconds).
    pub created_at: u64,
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        if self == OAuthError::Stalled {
            return ApiError::from(BodyError::Stalled).into_response();
        }
        let (status, error, error_description) = match self {
            OAuthError::Stalled => (StatusCode::REQUEST_TIMEOUT, "invalid_request", "the request stopped arriving"),
            OAuthError::InvalidRequest(why) => (StatusCode::BAD_REQUEST, "invalid_request", why),
            OAuthError::InvalidClient => (StatusCode::UNAUTHORIZED, "invalid_client", "client authentication failed"),
            OAuthError::UnsupportedGrantType => {
                (StatusCode::BAD_REQUEST, "unsupported_grant_type", "only client_credentials is supported")
            }
            OAuthError::Unavailable => {
                (StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", "storage is unavailable; retry shortly")
            }
        };
        let mut response = (status, axum::Json(OAuthErrorBody { error, error_description })).into_response();
        no_store(response.headers_mut());
        if self == OAuthError::InvalidClient {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"weir\""));
        }
        if self == OAuthError::Unavailable {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

impl From<TokenError> for OAuthError {
    fn from(e: TokenError) -> OAuthError {
        match e {
            TokenError::InvalidClient => OAuthError::InvalidClient,
            TokenError::Store(e) => {
                tracing::warn!(error = %e, "token endpoint cannot reach the store");
                OAuthError::Unavailable
            }
        }
    }
}

fn no_store(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

/// The form parameters of a request, each at most once (RFC 6749 §3.2).
struct Form(Vec<(String, String)>);

impl Form {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

async fn read_form(request: Request) -> Result<(HeaderMap, Form), OAuthError> {
    let (parts, body) = request.into_parts();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    if content_type.as_deref() != Some("application/x-www-form-urlencoded") {
        return Err(OAuthError::InvalidRequest("the body must be application/x-www-form-urlencoded"));
    }
    let bytes = read_body(body, MAX_FORM_BODY).await.map_err(|e| match e {
        BodyError::Stalled => OAuthError::Stalled,
        _ => OAuthError::InvalidRequest("the request body is too large"),
    })?;
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_bytes(&bytes).map_err(|_| OAuthError::InvalidRequest("malformed form body"))?;
    for (i, (name, _)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(n, _)| n == name) {
            return Err(OAuthError::InvalidRequest("a parameter is repeated"));
        }
    }
    Ok((parts.headers, Form(pairs)))
}

/// The client's id and secret, from HTTP Basic or the form, never both (RFC 6749 §2.3.1).
fn credentials(headers: &HeaderMap, form: &Form) -> Result<(String, String), OAuthError> {
    let basic = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(value) => {
            let text = value.to_str().map_err(|_| OAuthError::InvalidClient)?;
            let (scheme, encoded) = text.split_once(' ').ok_or(OAuthError::InvalidClient)?;
            if !scheme.eq_ignore_ascii_case("basic") {
                return Err(OAuthError::InvalidClient);
            }
            let decoded = STANDARD.decode(encoded.trim()).map_err(|_| OAuthError::InvalidClient)?;
            let decoded = String::from_utf8(decoded).map_err(|_| OAuthError::InvalidClient)?;
            let (id, secret) = decoded.split_once(':').ok_or(OAuthError::InvalidClient)?;
            let unescape =
                |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned();
            Some((unescape(id), unescape(secret)))
        }
    };
    let in_form = (form.get("client_id"), form.get("client_secret"));
    match (basic, in_form) {
        (Some(_), (Some(_), _) | (_, Some(_))) => {
            Err(OAuthError::InvalidRequest("client credentials must be sent in one place only"))
        }
        (Some(pair), _) => Ok(pair),
        (None, (Some(id), Some(secret))) => Ok((id.to_owned(), secret.to_owned())),
        (None, _) => Err(OAuthError::InvalidClient),
    }
}

/// `POST /oauth/token`
#[utoipa::path(post, path = "/oauth/token", tag = "oauth",
    request_body(content = crate::api::schema::TokenRequest, content_type = "application/x-www-form-urlencoded"),
    security((), ("client" = [])),
    responses(
        (status = 200, description = "An access token (`Cache-Control: no-store`)", body = Token),
        (status = 400, description = "invalid_request or unsupported_grant_type", body = OAuthErrorBody),
        (status = 401, description = "invalid_client", body = OAuthErrorBody),
        (status = 503, description = "temporarily_unavailable", body = OAuthErrorBody),
    ))]
pub(crate) async fn token(State(access): State<Arc<Access>>, request: Request) -> Response {
    match issue(&access, request).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn issue(access: &Access, request: Request) -> Result<Response, OAuthError> {
    let (headers, form) = read_form(request).await?;
    match form.get("grant_type") {
        None => return Err(OAuthError::InvalidRequest("grant_type is required")),
        Some("client_credentials") => {}
        Some(_) => return Err(OAuthError::UnsupportedGrantType),
    }
    let (id, secret) = credentials(&headers, &form)?;
    let Issued { token, ttl } = access.issue_token(&id, &secret).await?;
    let body = Token {
        access_token: token,
        token_type: "Bearer",
        expires_in: ttl.as_secs(),
        created_at: crate::time::now_millis() / 1000,
    };
    let mut response = (StatusCode::OK, axum::Json(body)).into_response();
    no_store(response.headers_mut());
    Ok(response)
}

/// `POST /oauth/revoke` (RFC 7009): the client revokes one of its tokens. The answer is
/// 200 whether or not the token was valid.
#[utoipa::path(post, path = "/oauth/revoke", tag = "oauth",
    request_body(content = crate::api::schema::RevokeRequest, content_type = "application/x-www-form-urlencoded"),
    security((), ("client" = [])),
    responses(
        (status = 200, description = "Revoked (or it was not a live token of the client)"),
        (status = 400, description = "invalid_request", body = OAuthErrorBody),
        (status = 401, description = "invalid_client", body = OAuthErrorBody),
        (status = 503, description = "temporarily_unavailable", body = OAuthErrorBody),
    ))]
pub(crate) async fn revoke(State(access): State<Arc<Access>>, request: Request) -> Response {
    let result = async {
        let (headers, form) = read_form(request).await?;
        let token = form.get("token").ok_or(OAuthError::InvalidRequest("token is required"))?.to_owned();
        let (id, secret) = credentials(&headers, &form)?;
        access.revoke_token(&id, &secret, &token).await?;
        Ok::<_, OAuthError>(())
    }
    .await;
    match result {
        Ok(()) => {
            let mut response = StatusCode::OK.into_response();
            no_store(response.headers_mut());
            response
        }
        Err(e) => e.into_response(),
    }
}
