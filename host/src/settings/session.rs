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
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::html::{self, esc};
use crate::app::App;
use crate::auth::{passwords, secrets};
use crate::store::users::{MAX_EMAIL_BYTES, Session};
use crate::web::BodyError;

const SESSION_COOKIE: &str = "weir_session";
const LOGIN_COOKIE: &str = "weir_login";
const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
const MAX_FAILURES: u64 = 5;
const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);

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

/// A short page with one message.
pub(super) fn plain(status: StatusCode, message: &str) -> Response {
    html::page(
        status,
        "Weir",
        None,
        &format!("<h1>{}</h1><p><a href=\"/settings/webhooks\">Back to webhooks</a></p>", esc(message)),
    )
}

/// 503 while Redis cannot be reached.
pub(super) fn store_down() -> Response {
    plain(StatusCode::SERVICE_UNAVAILABLE, "Storage is unavailable; try again shortly.")
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

fn set_cookie(app: &App, name: &str, value: &str, max_age: Duration) -> HeaderValue {
    let secure =
        if app.config.tls.is_some() || app.config.public_url().starts_with("https://") { "; Secure" } else { "" };
    let text =
        format!("{name}={value}; Path=/settings; HttpOnly; SameSite=Strict; Max-Age={}{secure}", max_age.as_secs());
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A signed-in person; pages that need one redirect to the sign-in page otherwise.
#[derive(Debug, Clone)]
pub(super) struct Signed(pub(super) Session);

impl<S> FromRequestParts<S> for Signed
where
    Arc<App>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let app = Arc::<App>::from_ref(state);
        let Some(token) = cookie(&parts.headers, SESSION_COOKIE) else {
            return Err(html::see_other("/settings/login"));
        };
        match app.store.session(&secrets::hash(&token)).await {
            Ok(Some(session)) => Ok(Signed(session)),
            Ok(None) => Err(html::see_other("/settings/login")),
            Err(_) => Err(store_down()),
        }
    }
}

impl Signed {
    pub(super) fn viewer(&self) -> html::Viewer<'_> {
        html::Viewer { email: &self.0.email, admin: self.0.admin, csrf: &self.0.csrf }
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
    Arc<App>: FromRef<S>,
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

fn login_page(app: &App, status: StatusCode, message: Option<&str>, email: &str) -> Response {
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
    response.headers_mut().append(header::SET_COOKIE, set_cookie(app, LOGIN_COOKIE, &token, Duration::from_secs(3600)));
    response
}

/// `GET /settings/login`
pub(super) async fn login_form(State(app): State<Arc<App>>) -> Response {
    login_page(&app, StatusCode::OK, None, "")
}

/// `POST /settings/login`
pub(super) async fn login(State(app): State<Arc<App>>, request: Request) -> Response {
    let expected = cookie(request.headers(), LOGIN_COOKIE).unwrap_or_default();
    let form = match Form::read(request).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let given = form.get("_csrf").unwrap_or("");
    if expected.is_empty() || !secrets::equal(given.as_bytes(), expected.as_bytes()) {
        return login_page(&app, StatusCode::FORBIDDEN, Some("The sign-in form expired. Please try again."), "");
    }
    let email = form.get("email").unwrap_or("").trim().to_ascii_lowercase();
    let password = form.get("password").unwrap_or("").to_owned();
    if email.len() > MAX_EMAIL_BYTES {
        // Refused before anything is stored or looked up.
        let message = format!("Email addresses are at most {MAX_EMAIL_BYTES} bytes.");
        return login_page(&app, StatusCode::BAD_REQUEST, Some(&message), "");
    }
    // The attempt is counted as it starts, so parallel guesses cannot pass the check together.
    match app.store.login_attempt(&email, FAILURE_WINDOW).await {
        Ok(n) if n > MAX_FAILURES => {
            let mut page = login_page(
                &app,
                StatusCode::TOO_MANY_REQUESTS,
                Some("Too many failed sign-ins for this email. Try again in 15 minutes."),
                &email,
            );
            // The window's length: the attempts counted in it expire by then at the latest.
            page.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(FAILURE_WINDOW.as_secs()));
            return page;
        }
        Ok(_) => {}
        Err(_) => return store_down(),
    }
    let found = match app.store.user_by_email(&email).await {
        Ok(found) => found,
        Err(_) => return store_down(),
    };
    let hash = found.as_ref().map(|(_, h)| h.clone()).unwrap_or_else(|| passwords::decoy().to_owned());
    let Some(ok) = app.passwords.verify(password, hash).await else {
        let _ = app.store.login_not_attempted(&email).await;
        let mut busy = login_page(
            &app,
            StatusCode::SERVICE_UNAVAILABLE,
            Some("Too many sign-ins at once; please try again in a moment."),
            &email,
        );
        busy.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return busy;
    };
    let user = match (ok, found) {
        (true, Some((user, _))) => user,
        _ => return login_page(&app, StatusCode::UNAUTHORIZED, Some("Email or password is incorrect."), &email),
    };
    let _ = app.store.login_succeeded(&email).await;
    let token = secrets::generate("wss_");
    let session = Session {
        user_id: user.id,
        org_id: user.org_id,
        email: user.email,
        admin: user.admin,
        csrf: secrets::generate(""),
    };
    if app.store.create_session(&secrets::hash(&token), &session, SESSION_TTL).await.is_err() {
        return store_down();
    }
    let mut response = html::see_other("/settings/webhooks");
    response.headers_mut().append(header::SET_COOKIE, set_cookie(&app, SESSION_COOKIE, &token, SESSION_TTL));
    response.headers_mut().append(header::SET_COOKIE, set_cookie(&app, LOGIN_COOKIE, "", Duration::ZERO));
    response
}

/// `POST /settings/logout`
pub(super) async fn logout(State(app): State<Arc<App>>, signed: Signed, request: Request) -> Response {
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
    let _ = app.store.delete_session(&secrets::hash(&token)).await;
    let mut response = html::see_other("/settings/login");
    response.headers_mut().append(header::SET_COOKIE, set_cookie(&app, SESSION_COOKIE, "", Duration::ZERO));
    response
}
