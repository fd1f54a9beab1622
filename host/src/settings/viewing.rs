//! Who is looking: each page request's cookies are looked up once, here — a portal session
//! first (its partitioned cookie is only sent where a link opened it), else a person's — and
//! what was found travels with the request to its handler (`session::Signed`). A portal
//! session's pages answer with its link's `frame-ancestors`; a `view` session changes nothing
//! (`403` for anything but a read, whatever the handler); a portal session's changes are
//! logged with the link's id.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use super::cookies::{PORTAL_COOKIE, SESSION_COOKIE, cookie};
use super::framing::frame_for;
use super::html::plain;
use crate::domain::access::{Access, Session};

/// What a request's cookies open.
#[derive(Debug, Clone)]
pub(super) enum Looked {
    Session(Box<Session>),
    /// No cookie, or a person's session that ended.
    Nobody,
    /// A portal session that ended (idle, or ended by the operator).
    PortalEnded,
    /// The store cannot say.
    Down,
}

/// The middleware of every page.
pub(super) async fn layer(State(access): State<Arc<Access>>, mut request: Request, next: Next) -> Response {
    let looked = look(&access, request.headers()).await;
    request.extensions_mut().insert(looked.clone());
    let Looked::Session(session) = looked else { return next.run(request).await };
    let Some(portal) = &session.portal else { return next.run(request).await };
    let (method, path) = (request.method().clone(), request.uri().path().to_owned());
    let reading = method == Method::GET || method == Method::HEAD;
    let response = if !reading && !session.admin {
        plain(StatusCode::FORBIDDEN, "This view shows webhooks; it cannot change them.")
    } else {
        next.run(request).await
    };
    if !reading {
        tracing::info!(portal_link = %portal.link_id, org_id = %session.org_id, %method, path, status = response.status().as_u16(), "portal action");
    }
    frame_for(response, portal)
}

async fn look(access: &Access, headers: &HeaderMap) -> Looked {
    if let Some(token) = cookie(headers, PORTAL_COOKIE) {
        return match access.portal_session(&token).await {
            Ok(Some(session)) => Looked::Session(Box::new(session)),
            Ok(None) => Looked::PortalEnded,
            Err(error) => {
                tracing::warn!(%error, "cannot read a portal session");
                Looked::Down
            }
        };
    }
    let Some(token) = cookie(headers, SESSION_COOKIE) else { return Looked::Nobody };
    match access.session(&token).await {
        Ok(Some(session)) => Looked::Session(Box::new(session)),
        Ok(None) => Looked::Nobody,
        Err(error) => {
            tracing::warn!(%error, "cannot read a session");
            Looked::Down
        }
    }
}
