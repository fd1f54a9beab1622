//! Intake: what happens to a request before it may take one of the process's slots
//! ([`super::MAX_CONCURRENT_REQUESTS`]). A request body is read ahead here
//! ([`crate::web::prefetch`]: at a minimum rate, within its route's size), so a client that
//! sends its body slowly holds its connection and nothing else — never a slot another
//! client needs.
//!
//! Bodies being read ahead are counted per sender: an API request's by its client, once its
//! bearer token is known to be live (checked first, so a request with a bad token is
//! answered `401` without its body being read; the owner found is handed to the handler,
//! which does not look it up again); any other's — the token endpoint, the settings pages —
//! by the address it came from. A sender with [`MAX_READING_PER_SENDER`] bodies (or
//! [`MAX_UPLOADS_PER_SENDER`] plugin uploads) being read is answered `429` at once.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Body as _;

use super::error::{ApiError, Code};
use super::extract::{MAX_JSON_BODY, bearer_token};
use crate::auth::{Authenticated, secrets};
use crate::domain::access::Access;
use crate::web::{Peer, prefetch};

/// Most request bodies one sender may have being read ahead at once.
pub(crate) const MAX_READING_PER_SENDER: usize = 64;
/// Most plugin uploads (up to 32 MiB each) one sender may have being read at once.
pub(crate) const MAX_UPLOADS_PER_SENDER: usize = 2;
/// The token endpoint's largest body (its handler refuses more).
const MAX_TOKEN_BODY: usize = 16 * 1024;
/// A settings form's largest body.
const MAX_FORM_BODY: usize = 1024 * 1024;

/// Who is sending a body.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Sender {
    Client(String),
    Address(IpAddr),
}

/// Bodies being read ahead, per sender.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    counts: Mutex<HashMap<Sender, (usize, usize)>>,
}

/// One body being read: counted until dropped.
struct Counted<'a> {
    reading: &'a Reading,
    sender: Sender,
    upload: bool,
}

impl Reading {
    fn begin(&self, sender: Sender, upload: bool) -> Option<Counted<'_>> {
        let mut counts = self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let (all, uploads) = counts.entry(sender.clone()).or_default();
        if *all >= MAX_READING_PER_SENDER || (upload && *uploads >= MAX_UPLOADS_PER_SENDER) {
            return None;
        }
        *all += 1;
        *uploads += usize::from(upload);
        Some(Counted { reading: self, sender, upload })
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        let mut counts = self.reading.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((all, uploads)) = counts.get_mut(&self.sender) {
            *all -= 1;
            *uploads -= usize::from(self.upload);
            if *all == 0 {
                counts.remove(&self.sender);
            }
        }
    }
}

/// The most of a body the route reads, and whether it is a plugin upload.
fn allowance(method: &Method, path: &str) -> (usize, bool) {
    if method == Method::POST && path == "/api/v2/plugins" {
        (super::plugins::MAX_PLUGIN_BYTES, true)
    } else if path.starts_with("/oauth/") {
        (MAX_TOKEN_BODY, false)
    } else if path.starts_with("/settings/") {
        (MAX_FORM_BODY, false)
    } else {
        (MAX_JSON_BODY, false)
    }
}

/// What the intake keeps: the door to tokens, and the bodies being read.
#[derive(Debug)]
pub(crate) struct Intake {
    access: Access,
    reading: Reading,
}

impl Intake {
    pub(crate) fn new(access: Access) -> Arc<Intake> {
        Arc::new(Intake { access, reading: Reading::default() })
    }
}

/// The middleware (outside the slots): reads the body ahead, counted per sender.
pub(crate) async fn intake(State(intake): State<Arc<Intake>>, request: Request, next: Next) -> Response {
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let sender = if parts.uri.path().starts_with("/api/") {
        let Some(token) = bearer_token(&parts).map(str::to_owned) else {
            // Refused by the handler's extractor before it reads anything.
            return next.run(Request::from_parts(parts, body)).await;
        };
        match intake.access.token_owner(&token).await {
            Ok(Some(owner)) => {
                let client = owner.client.client_id.clone();
                parts.extensions.insert(Authenticated { token_hash: secrets::hash(&token), owner });
                Sender::Client(client)
            }
            // A bad token, or the store is down: the handler answers (401, 503) unread.
            Ok(None) | Err(_) => return next.run(Request::from_parts(parts, body)).await,
        }
    } else {
        match parts.extensions.get::<Peer>() {
            Some(Peer(addr)) => Sender::Address(addr.ip()),
            None => Sender::Address(IpAddr::from([0, 0, 0, 0])),
        }
    };
    let (limit, upload) = allowance(&parts.method, parts.uri.path());
    let body = {
        let Some(_counted) = intake.reading.begin(sender, upload) else {
            let mut refused = ApiError {
                retry_after: Some(1),
                ..ApiError::new(
                    Code::RateLimited,
                    "too many request bodies of yours are arriving at once; retry shortly",
                )
            }
            .into_response();
            refused.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
            return refused;
        };
        prefetch(body, limit).await
    };
    next.run(Request::from_parts(parts, body)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_reads_a_bounded_number_of_bodies_at_once() {
        let reading = Reading::default();
        let a = || Sender::Client("cli_a".into());
        let held: Vec<_> = (0..MAX_READING_PER_SENDER).map(|_| reading.begin(a(), false).unwrap()).collect();
        assert!(reading.begin(a(), false).is_none(), "one more is refused");
        assert!(reading.begin(Sender::Client("cli_b".into()), false).is_some(), "another sender is not");
        drop(held);
        let uploads: Vec<_> = (0..MAX_UPLOADS_PER_SENDER).map(|_| reading.begin(a(), true).unwrap()).collect();
        assert!(reading.begin(a(), true).is_none(), "uploads have a smaller share");
        assert!(reading.begin(a(), false).is_some());
        drop(uploads);
        assert!(reading.counts.lock().unwrap().is_empty(), "nothing is left counted");
    }
}
