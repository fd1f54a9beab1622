//! Request extractors shared by the API handlers: the authenticated caller (checked in
//! the contract's order, with the client's request budget taken right after its token),
//! JSON bodies with the size limit and media type, and the API's rules for query
//! strings. Each rejects with an [`ApiError`], never a framework default.

use std::sync::Arc;

use axum::extract::{FromRef, FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde_json::{Map, Value};

use super::error::{ApiError, Code, FieldError};
use crate::auth::{Authenticated, Caller, Requirement, TokenProof, secrets};
use crate::domain::access::Access;
use crate::offload::LARGE_INPUT;
use crate::web::{Query, is_json, read_body};

/// Largest JSON request body (contract §2).
pub(crate) const MAX_JSON_BODY: usize = 1024 * 1024;

/// The bearer token of a request, if it carries one.
pub(crate) fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

async fn authenticate(parts: &Parts, access: &Access, requirement: Requirement) -> Result<Caller, ApiError> {
    let token = bearer_token(parts).ok_or_else(ApiError::invalid_token)?;
    crate::auth::token_client(token).ok_or_else(ApiError::invalid_token)?;
    let hash = secrets::hash(token);
    // Found at intake when the request has a body (`super::intake`): not looked up twice.
    let found = parts.extensions.get::<Authenticated>().filter(|a| a.token_hash == hash);
    let (owner, version) = match found {
        Some(found) => (Some(found.owner.clone()), found.version),
        None => (access.token_owner(token).await?, None),
    };
    let mut caller = access.caller(owner.ok_or_else(ApiError::invalid_token)?);
    caller.token = version.map(|version| TokenProof { client_id: caller.client_id.clone(), token_hash: hash, version });
    if let Some(wait) = access.take_request(&caller.client_id).await? {
        return Err(ApiError::rate_limited(wait));
    }
    caller.check(requirement)?;
    Ok(caller)
}

macro_rules! caller_extractor {
    ($(#[$doc:meta])* $name:ident, $requirement:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(crate) struct $name(pub Caller);

        impl<S> FromRequestParts<S> for $name
        where
            Arc<Access>: FromRef<S>,
            S: Send + Sync,
        {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
                authenticate(parts, &Arc::<Access>::from_ref(state), $requirement).await.map($name)
            }
        }
    };
}

caller_extractor!(
    /// An organisation admin whose plan includes API integrations.
    Admin,
    Requirement::AdminWithApiPlan
);
caller_extractor!(
    /// A client with the `publisher` role.
    Publisher,
    Requirement::Publisher
);
caller_extractor!(
    /// Any authenticated client.
    AnyClient,
    Requirement::AnyClient
);

/// A JSON object body: `application/json`, at most 1 MiB, well-formed, an object.
#[derive(Debug)]
pub(crate) struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        if !is_json(req.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::new(Code::UnsupportedMediaType, "the request body must be application/json"));
        }
        let bytes = read_body(req.into_body(), MAX_JSON_BODY).await?;
        parse_object_off_thread(bytes).await.map(JsonObject)
    }
}

/// A JSON object body that may also be empty or `null` (for actions whose body is optional).
#[derive(Debug)]
pub(crate) struct OptionalJsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for OptionalJsonObject {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let json = is_json(req.headers().get(header::CONTENT_TYPE));
        let has_type = req.headers().contains_key(header::CONTENT_TYPE);
        let bytes = read_body(req.into_body(), MAX_JSON_BODY).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) || bytes.trim_ascii() == b"null" {
            return Ok(OptionalJsonObject(Map::new()));
        }
        if has_type && !json {
            return Err(ApiError::new(Code::UnsupportedMediaType, "the request body must be application/json"));
        }
        parse_object_off_thread(bytes).await.map(OptionalJsonObject)
    }
}

/// [`parse_object`], a large body on Tokio's blocking threads.
async fn parse_object_off_thread(bytes: bytes::Bytes) -> Result<Map<String, Value>, ApiError> {
    off_thread_if_large(bytes, parse_object).await.unwrap_or_else(|| Err(ApiError::internal()))
}

/// `read` of `bytes`: here when they are small, else ([`LARGE_INPUT`] or more) on a blocking
/// thread (`None`: it panicked).
async fn off_thread_if_large<T: Send + 'static>(
    bytes: bytes::Bytes,
    read: impl FnOnce(&[u8]) -> T + Send + 'static,
) -> Option<T> {
    if bytes.len() < LARGE_INPUT {
        return Some(read(&bytes));
    }
    tokio::task::spawn_blocking(move || read(&bytes)).await.ok()
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiError::field("body", "must be a JSON object")),
        Err(e) => Err(ApiError::field("body", format!("malformed JSON: {e}"))),
    }
}

/// A resource's id from the path. One that is not text once decoded (`%ff`) names nothing:
/// `404`, as any id that does not exist.
#[derive(Debug)]
pub(crate) struct Id(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(Id(id)),
            Err(_) => Err(ApiError::new(Code::NotFound, "no such resource")),
        }
    }
}

/// The API's rules for query strings ([`crate::web::Query`]): every parameter must be one
/// the handler knows, and list endpoints take `limit` and `cursor`.
pub(crate) trait QueryRules {
    /// Fails with 422 naming each parameter not in `known`.
    fn only(&self, known: &[&str]) -> Result<(), ApiError>;

    /// `limit` (1..=100, default 50) and `cursor` for list endpoints, with the cursor
    /// checked by `cursor_ok` (an id of the listed kind).
    fn page(&self, cursor_ok: impl Fn(&str) -> bool) -> Result<Page, ApiError>;
}

impl QueryRules for Query {
    fn only(&self, known: &[&str]) -> Result<(), ApiError> {
        let unknown: Vec<FieldError> =
            self.unknown(known).into_iter().map(|k| FieldError::new(k, "unknown query parameter")).collect();
        if unknown.is_empty() { Ok(()) } else { Err(ApiError::validation(unknown)) }
    }

    fn page(&self, cursor_ok: impl Fn(&str) -> bool) -> Result<Page, ApiError> {
        let mut errors = Vec::new();
        let limit = match self.get("limit") {
            None => 50,
            Some(text) => match text.parse::<usize>() {
                Ok(n) if (1..=100).contains(&n) => n,
                _ => {
                    errors.push(FieldError::new("limit", "must be a whole number from 1 to 100"));
                    50
                }
            },
        };
        let cursor = match self.get("cursor") {
            None | Some("") => None,
            Some(c) if cursor_ok(c) => Some(c.to_owned()),
            Some(_) => {
                errors.push(FieldError::new("cursor", "is not a cursor returned by this list"));
                None
            }
        };
        if errors.is_empty() { Ok(Page { limit, cursor }) } else { Err(ApiError::validation(errors)) }
    }
}

/// A page request.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub limit: usize,
    pub cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use crate::offload::LARGE_INPUT;

    #[tokio::test]
    async fn a_large_body_is_parsed_off_the_thread_that_answers_requests() {
        let here = std::thread::current().id();
        let on = |size: usize| super::off_thread_if_large(vec![b' '; size].into(), |_| std::thread::current().id());
        assert_eq!(on(LARGE_INPUT - 1).await, Some(here), "a small body is parsed where it is asked");
        assert_ne!(on(LARGE_INPUT).await, Some(here), "a large one elsewhere");
        let big = format!(r#"{{"filter": "true", "event": {{"title": "{}"}}}}"#, "a".repeat(LARGE_INPUT));
        let parsed = super::parse_object_off_thread(big.into()).await.expect("an object");
        assert_eq!(parsed["event"]["title"].as_str().map(str::len), Some(LARGE_INPUT));
    }
}
