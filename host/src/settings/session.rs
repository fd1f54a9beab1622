//! Signing in and out, sessions and CSRF.
//!
//! - A session is a random token in the cookie `weir_session` (`HttpOnly`, `SameSite=Strict`,
//!   `Secure` under TLS, path `/settings`); Redis keeps its hash, with a 12-hour expiry.
//! - Every form carries `_csrf`: the session's token (or, on the sign-in form, the value of a
//!   short-lived `weir_login` cookie); a POST without the right one is refused with 403.
//! - Every sign-in attempt for an email is counted as it starts (atomically, so parallel
//!   guesses are counted too); after 5 without a success, further attempts are refused for
//!   15 minutes (429). Password checks run a bounded number at once (503 beyond).
//! - Email addresses over 254 bytes are refused before anything is stored.

use std::sync::Arc;

use std::time::Duration;

use axum::extract::{FromRef, FromRequest, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::cookies::{SESSION_COOKIE, cookie};
use super::html::{self, esc, plain, store_down};
use super::viewing::Looked;
use crate::auth::secrets;
use crate::domain::access::{Access, FAILURE_WINDOW, SESSION_TTL, Session, SignInError};
use crate::web::BodyError;

const LOGIN_COOKIE: &str = "weir_login";

/// A form body, parameters in order (checkboxes repeat).
#[derive(Debug, Default)]
pub(super) struct Form(pub(super) Vec<(String, String)>);

impl Form {
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub(super) fn all(&self, name: &str) -> Vec<&str> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }

    /// Reads an `application/x-www-form-urlencoded` body (at most 1 MiB). Text that is not
    /// UTF-8 is refused (the API refuses it too), never stored with replacement characters.
    pub(super) async fn read(request: Request) -> Result<Form, Response> {
        let bytes = crate::web::read_body(request.into_body(), 1024 * 1024).await.map_err(|e| match e {
            BodyError::TooLarge { .. } => plain(StatusCode::PAYLOAD_TOO_LARGE, "The form is too large."),
            BodyError::Stalled => {
                let mut page = plain(StatusCode::REQUEST_TIMEOUT, "The form stopped arriving.");
                page.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
                page
            }
            BodyError::Unreadable => plain(StatusCode::BAD_REQUEST, "The form could not be read."),
        })?;
        crate::web::parse_form(&bytes).map(Form).map_err(|name| {
            let message = format!("The form's {name} is not UTF-8 text.");
            plain(StatusCode::UNPROCESSABLE_ENTITY, &message)
        })
    }
}

/// A resource's id from a settings path. One that is not text once decoded (`%ff`) names
/// nothing: the 404 page.
#[derive(Debug)]
pub(super) struct Id(pub(super) String);

impl<S: Send + Sync> FromRequestParts<S> for Id {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(Id(id)),
            Err(_) => Err(plain(StatusCode::NOT_FOUND, "Not found.")),
        }
    }
}

fn set_cookie(access: &Access, name: &str, value: &str, max_age: Duration) -> HeaderValue {
    let secure = if access.secure_cookies() { "; Secure" } else { "" };
    let text =
        format!("{name}={value}; Path=/settings; HttpOnly; SameSite=Strict; Max-Age={}{secure}", max_age.as_secs());
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A signed-in person; pages that need one redirect to the sign-in page otherwise.
#[derive(Debug, Clone)]
pub(super) struct Signed(pub(super) Session);

impl<S> FromRequestParts<S> for Signed
where
    Arc<Access>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let looked = match parts.extensions.get::<Looked>() {
            Some(looked) => looked.clone(),
            // (Every page goes through `viewing`; this is for a route outside it.)
            None => match cookie(&parts.headers, SESSION_COOKIE) {
                None => Looked::Nobody,
                Some(token) => match Arc::<Access>::from_ref(state).session(&token).await {
                    Ok(Some(session)) => Looked::Session(Box::new(session)),
                    Ok(None) => Looked::Nobody,
                    Err(_) => Looked::Down,
                },
            },
        };
        match looked {
            Looked::Session(session) => Ok(Signed(*session)),
            // In a frame, a sign-in page could not be shown (nor be of use to a customer): a
            // portal page whose cookie did not come (the browser blocks it) says so.
            Looked::Nobody if in_frame(parts) => Err(super::framing::framed_anywhere(super::layout::link_page(
                StatusCode::UNAUTHORIZED,
                "Not signed in",
                None,
                "<h1>Webhooks could not open here</h1><p>Open Webhooks again from the product you came from. If this page comes back, the browser did not keep this page's cookie: allow cookies for this site in its settings, or open the page in a tab of its own.</p>",
            ))),
            Looked::Nobody => Err(html::see_other("/settings/login")),
            Looked::PortalEnded => Err(super::framing::framed_anywhere(super::layout::link_page(
                StatusCode::UNAUTHORIZED,
                "Session ended",
                None,
                "<h1>This session has ended</h1><p>Open Webhooks again from the product you came from.</p>",
            ))),
            Looked::Down => Err(store_down()),
        }
    }
}

/// Whether a request is for a frame's page (`Sec-Fetch-Dest: iframe`, as browsers send it).
fn in_frame(parts: &Parts) -> bool {
    parts.headers.get("sec-fetch-dest").is_some_and(|d| d.as_bytes() == b"iframe")
}

impl Signed {
    pub(super) fn viewer(&self) -> html::Viewer<'_> {
        html::Viewer { email: &self.0.email, admin: self.0.admin, csrf: &self.0.csrf, portal: self.0.portal.as_ref() }
    }

    /// The refusal of a change without this session's CSRF token, or by someone who may
    /// only look; `None` when the change may go ahead.
    pub(super) fn refusal(&self, form: &Form) -> Option<Response> {
        let given = form.get("_csrf").unwrap_or("");
        if !secrets::equal(given.as_bytes(), self.0.csrf.as_bytes()) {
            return Some(plain(
                StatusCode::FORBIDDEN,
                "This form has expired or did not come from Weir. Reload the page and try again.",
            ));
        }
        if !self.0.admin {
            return Some(plain(StatusCode::FORBIDDEN, "Only organisation admins can change webhooks."));
        }
        None
    }
}

/// A change request: a signed-in admin's form carrying the session's CSRF token. Every
/// settings handler that changes something takes this, so none can skip the checks.
#[derive(Debug)]
pub(super) struct Change(pub(super) Signed, pub(super) Form);

impl<S> FromRequest<S> for Change
where
    Arc<Access>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request(request: Request, state: &S) -> Result<Self, Response> {
        let (mut parts, body) = request.into_parts();
        let signed = Signed::from_request_parts(&mut parts, state).await?;
        let form = Form::read(Request::from_parts(parts, body)).await?;
        match signed.refusal(&form) {
            Some(refused) => Err(refused),
            None => Ok(Change(signed, form)),
        }
    }
}

fn login_page(access: &Access, status: StatusCode, message: Option<&str>, email: &str) -> Response {
    let token = secrets::generate("");
    let body = format!(
        r#"<h1>Sign in</h1>
{message}
<form method="post" action="/settings/login">
<input type="hidden" name="_csrf" value="{token}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="{email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>"#,
        message = message.map(|m| html::notice("error", m)).unwrap_or_default(),
        email = esc(email),
    );
    let mut response = html::page(status, "Sign in", None, &body);
    response
        .headers_mut()
        .append(header::SET_COOKIE, set_cookie(access, LOGIN_COOKIE, &token, Duration::from_secs(3600)));
    response
}

/// `GET /settings/login`
pub(super) async fn login_form(State(access): State<Arc<Access>>) -> Response {
    login_page(&access, StatusCode::OK, None, "")
}

/// `POST /settings/login`
pub(super) async fn login(State(access): State<Arc<Access>>, request: Request) -> Response {
    let expected = cookie(request.headers(), LOGIN_COOKIE).unwrap_or_default();
    let form = match Form::read(request).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let given = form.get("_csrf").unwrap_or("");
    if expected.is_empty() || !secrets::equal(given.as_bytes(), expected.as_bytes()) {
        return login_page(&access, StatusCode::FORBIDDEN, Some("The sign-in form expired. Please try again."), "");
    }
    let email = form.get("email").unwrap_or("").trim().to_ascii_lowercase();
    let password = form.get("password").unwrap_or("").to_owned();
    let signed_in = match access.sign_in(&email, password).await {
        Ok(signed_in) => signed_in,
        Err(e) => return refused_sign_in(&access, &email, &e),
    };
    let mut response = html::see_other("/settings/webhooks");
    let cookies = response.headers_mut();
    cookies.append(header::SET_COOKIE, set_cookie(&access, SESSION_COOKIE, &signed_in.token, SESSION_TTL));
    cookies.append(header::SET_COOKIE, set_cookie(&access, LOGIN_COOKIE, "", Duration::ZERO));
    response
}

/// The sign-in page again, saying why.
fn refused_sign_in(access: &Access, email: &str, why: &SignInError) -> Response {
    match why {
        SignInError::EmailTooLong => {
            login_page(access, StatusCode::BAD_REQUEST, Some(&format!("{}.", capitalised(&why.to_string()))), "")
        }
        SignInError::Throttled => {
            let message = "Too many failed sign-ins for this email. Try again in 15 minutes.";
            let mut page = login_page(access, StatusCode::TOO_MANY_REQUESTS, Some(message), email);
            // The window's length: the attempts counted in it expire by then at the latest.
            page.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(FAILURE_WINDOW.as_secs()));
            page
        }
        SignInError::Busy => {
            let message = "Too many sign-ins at once; please try again in a moment.";
            let mut busy = login_page(access, StatusCode::SERVICE_UNAVAILABLE, Some(message), email);
            busy.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            busy
        }
        SignInError::Wrong => {
            login_page(access, StatusCode::UNAUTHORIZED, Some("Email or password is incorrect."), email)
        }
        SignInError::Store(_) => store_down(),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// `POST /settings/logout`
pub(super) async fn logout(State(access): State<Arc<Access>>, signed: Signed, request: Request) -> Response {
    if signed.0.portal.is_some() {
        return plain(StatusCode::FORBIDDEN, "This session ends when the product you came from closes it.");
    }
    let token = cookie(request.headers(), SESSION_COOKIE).unwrap_or_default();
    let form = match Form::read(request).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    if !secrets::equal(form.get("_csrf").unwrap_or("").as_bytes(), signed.0.csrf.as_bytes()) {
        return plain(
            StatusCode::FORBIDDEN,
            "This form has expired or did not come from Weir. Reload the page and try again.",
        );
    }
    access.sign_out(&token).await;
    let mut response = html::see_other("/settings/login");
    response.headers_mut().append(header::SET_COOKIE, set_cookie(&access, SESSION_COOKIE, "", Duration::ZERO));
    response
}
