//! Intake: what happens to a request before it may take one of the process's slots
//! ([`super::MAX_CONCURRENT_REQUESTS`]).
//!
//! - An API request's bearer token is looked up here (the owner found is handed to the
//!   handler, which does not look it up again; a publish's comes from the kept tokens,
//!   which its script proves current: `crate::shared::Tokens`), and its organisation takes one of its
//!   [`MAX_REQUESTS_PER_ORG`] shares of the requests in progress, held to the answer: past
//!   it the request is answered `429` at once, so no tenant holds every slot. A request
//!   with a bad token goes on to be answered `401` by its handler, unread.
//! - Of those, an organisation's reads (`GET`) run [`MAX_READS_RUNNING_PER_ORG`] at a time;
//!   the rest wait their turn, holding their share (at most [`READ_TURN_WAIT`], then `429`).
//!   A burst of one organisation's listings then stands a few requests deep between another
//!   organisation's request and the thread that answers both, not hundreds.
//! - A request body is read ahead here ([`crate::web::prefetch`]: at a minimum rate, within
//!   its route's size), so a client that sends its body slowly holds its connection and
//!   nothing else — never a slot another client needs. Bodies being read ahead are counted
//!   per sender: an API request's by its client; any other's — the token endpoint, the
//!   settings pages — by the client's address (`crate::forwarded`: behind a trusted proxy,
//!   the address it forwarded for). A sender with [`MAX_READING_PER_SENDER`] bodies (or
//!   [`MAX_UPLOADS_PER_SENDER`] plugin uploads) being read is answered `429` at once.

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Body as _;

use super::error::{ApiError, Code};
use super::extract::{MAX_JSON_BODY, bearer_token};
use crate::auth::{Authenticated, secrets};
use crate::domain::access::Access;
use crate::forwarded::ClientAddr;
use crate::slots::{Shares, Slots};
use crate::web::prefetch;

/// Most requests of one organisation in progress in one process at once (a quarter of the
/// process's slots, `api::MAX_CONCURRENT_REQUESTS`).
pub(crate) const MAX_REQUESTS_PER_ORG: usize = 256;
/// Most reads of one organisation running at once in one process (the others wait).
pub(crate) const MAX_READS_RUNNING_PER_ORG: usize = 8;
/// Longest a read waits for its turn.
const READ_TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Most request bodies one sender may have being read ahead at once.
pub(crate) const MAX_READING_PER_SENDER: usize = 64;
/// Most plugin uploads (up to 32 MiB each) one sender may have being read at once.
pub(crate) const MAX_UPLOADS_PER_SENDER: usize = 2;
/// Most refused bodies read and dropped at once, so that their senders read the `429`
/// rather than a broken pipe (past it, the connection is closed with the body unread).
const MAX_DRAINING: usize = 16;
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

/// The most of a body the route reads, and whether it is a plugin upload.
fn allowance(method: &Method, path: &str) -> (usize, bool) {
    if method == Method::POST && path == "/api/v2/plugins" {
        (super::plugins::MAX_PLUGIN_BYTES, true)
    } else if path.starts_with("/oauth/") {
        (MAX_TOKEN_BODY, false)
    } else if path.starts_with("/settings/") || path.starts_with("/portal") {
        (MAX_FORM_BODY, false)
    } else {
        (MAX_JSON_BODY, false)
    }
}

/// What the intake keeps: the door to tokens, the organisations' requests in progress, and
/// the bodies being read.
#[derive(Debug)]
pub(crate) struct Intake {
    access: Arc<Access>,
    in_progress: Shares<String>,
    read_turns: ReadTurns,
    reading: Shares<Sender>,
    uploads: Shares<Sender>,
    draining: Shares<()>,
}

/// Organisations' reads taking turns ([`MAX_READS_RUNNING_PER_ORG`] at once each).
#[derive(Debug)]
struct ReadTurns(Slots);

impl ReadTurns {
    /// A turn of `org`'s, once it is its turn; `None` after [`READ_TURN_WAIT`].
    async fn take(&self, org: &str) -> Option<crate::slots::Slot> {
        tokio::time::timeout(READ_TURN_WAIT, self.0.acquire(org)).await.ok().flatten()
    }
}

impl Intake {
    pub(crate) fn new(access: Arc<Access>) -> Arc<Intake> {
        Arc::new(Intake {
            access,
            in_progress: Shares::default(),
            // As many in all as the process has slots (`api::MAX_CONCURRENT_REQUESTS`).
            read_turns: ReadTurns(Slots::new(4 * MAX_REQUESTS_PER_ORG, MAX_READS_RUNNING_PER_ORG)),
            reading: Shares::default(),
            uploads: Shares::default(),
            draining: Shares::default(),
        })
    }
}

impl Intake {
    /// `429` with `Retry-After`, once the request's body (up to `limit` bytes) is read and
    /// dropped when few others are (else the connection closes with it unread).
    async fn refuse(&self, body: axum::body::Body, limit: usize, message: &str) -> Response {
        let mut refused =
            ApiError { retry_after: Some(1), ..ApiError::new(Code::RateLimited, message) }.into_response();
        let drained = match self.draining.take((), MAX_DRAINING) {
            Some(_draining) if !body.is_end_stream() => crate::web::discard(body, limit).await,
            Some(_) => true,
            None => false,
        };
        if !drained {
            refused.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
        }
        refused
    }
}

/// The middleware (outside the slots): the organisation's share, then the body read ahead,
/// counted per sender.
pub(crate) async fn intake(State(intake): State<Arc<Intake>>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let mut client = None;
    // A publish uses the kept tokens (its script proves them current); the rest look up.
    let publish = parts.method == Method::POST && parts.uri.path() == "/api/v2/events";
    if parts.uri.path().starts_with("/api/")
        && let Some(token) = bearer_token(&parts).map(str::to_owned)
        && let Ok(Some((owner, version))) = intake.access.token_owner_for(&token, publish).await
    {
        client = Some((owner.client.client_id.clone(), owner.client.org_id.clone()));
        parts.extensions.insert(Authenticated { token_hash: secrets::hash(&token), owner, version });
    }
    // A bad token, or the store down: the handler answers (401, 503) unread.
    let (limit, upload) = allowance(&parts.method, parts.uri.path());
    let _share = match &client {
        Some((_, org)) => match intake.in_progress.take(org.clone(), MAX_REQUESTS_PER_ORG) {
            Some(share) => Some(share),
            None => {
                let why = "too many requests of this organisation are in progress; retry shortly";
                return intake.refuse(body, limit, why).await;
            }
        },
        None => None,
    };
    let _turn = match &client {
        Some((_, org)) if parts.method == Method::GET => match intake.read_turns.take(org).await {
            Some(turn) => Some(turn),
            None => {
                let why = "too many reads of this organisation are waiting; retry shortly";
                return intake.refuse(body, limit, why).await;
            }
        },
        _ => None,
    };
    if body.is_end_stream() || (parts.uri.path().starts_with("/api/") && client.is_none()) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let sender = match client {
        Some((client, _)) => Sender::Client(client),
        None => Sender::Address(parts.extensions.get::<ClientAddr>().map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0)),
    };
    let body = {
        let reading = intake.reading.take(sender.clone(), MAX_READING_PER_SENDER);
        let uploading = if upload { intake.uploads.take(sender, MAX_UPLOADS_PER_SENDER).map(Some) } else { Some(None) };
        let (Some(_reading), Some(_uploading)) = (reading, uploading) else {
            let why = "too many request bodies of yours are arriving at once; retry shortly";
            return intake.refuse(body, limit, why).await;
        };
        prefetch(body, limit).await
    };
    next.run(Request::from_parts(parts, body)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    const _: () = assert!(MAX_UPLOADS_PER_SENDER < MAX_READING_PER_SENDER);

    #[test]
    fn each_route_reads_at_most_its_allowance() {
        assert_eq!(allowance(&Method::POST, "/api/v2/plugins"), (super::super::plugins::MAX_PLUGIN_BYTES, true));
        assert_eq!(allowance(&Method::POST, "/oauth/token"), (MAX_TOKEN_BODY, false));
    }

    #[tokio::test(start_paused = true)]
    async fn an_organisations_reads_take_turns_and_another_organisations_read_goes_ahead() {
        let turns = ReadTurns(Slots::new(1024, MAX_READS_RUNNING_PER_ORG));
        let mut held = Vec::new();
        for _ in 0..MAX_READS_RUNNING_PER_ORG {
            held.push(turns.take("org_busy").await.expect("a turn"));
        }
        let quiet = tokio::time::timeout(std::time::Duration::from_millis(1), turns.take("org_quiet")).await;
        assert!(matches!(quiet, Ok(Some(_))), "another organisation's read goes at once");
        let started = tokio::time::Instant::now();
        let next = tokio::spawn(async move {
            let turn = turns.take("org_busy").await;
            (turn, turns)
        });
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert!(!next.is_finished(), "the busy organisation's next read waits its turn");
        drop(held.pop());
        let (got, turns) = next.await.unwrap();
        assert!(got.is_some(), "and takes the turn given back");
        assert!(started.elapsed() < READ_TURN_WAIT);
        // One that waits too long is refused.
        let refused = turns.take("org_busy").await;
        assert!(refused.is_none(), "no turn within {READ_TURN_WAIT:?}");
    }
}
