//! What a kind of destination is: the [`Kind`] trait each kind's module implements, and what
//! every kind shares — its credentials, where its host is, what it is handed to send.

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::message::{Answer, KeySource, Message, SendError};
pub(crate) use super::message::{Credentials, Sealed};
use crate::kinds::{Read, Refusal, Table};
use crate::netguard::UrlRule;

/// A kind of destination: its fields, how an object of it is read, where it connects, and
/// how a message is sent there. One module implements it; one line of the registry
/// (`registry.rs`) makes it a kind the API, the forms, the document and the workers know.
pub(crate) trait Kind: 'static {
    /// What the API takes and shows of it, without its secrets (stored as JSON, beside
    /// `type`).
    type Spec: Serialize + DeserializeOwned + Clone + std::fmt::Debug + PartialEq + Eq + Send + Sync;
    /// What sends it in one process (its connections and pools), shared by every attempt.
    type Sender: Send + Sync;

    /// Its fields.
    const TABLE: Table;
    /// `messaging.system` on an attempt's span (OpenTelemetry's name for the system).
    const SYSTEM: &'static str;

    /// The destination an object read against [`Kind::TABLE`] names: its spec, its
    /// credentials apart; or the field at fault.
    fn parse(read: &Read<'_>) -> Result<Parsed<Self::Spec>, Refusal>;
    /// Its address as the webhook's `url` shows it (no credentials).
    fn address(spec: &Self::Spec) -> &str;
    /// Where it is sent inside the system (`messaging.destination.name`).
    fn target(spec: &Self::Spec) -> &str;
    /// The host it connects to, checked by the public-address rule when saved.
    fn host(spec: &Self::Spec) -> Host;
    /// Every host it names (a cluster's servers), each checked when saved.
    fn hosts(spec: &Self::Spec) -> Vec<Host> {
        vec![Self::host(spec)]
    }
    /// Its sender, made once per process.
    fn sender(parts: &SenderParts) -> Self::Sender;
    /// Sends `message` to `to`; the caller bounds it in time.
    fn send<'a>(
        sender: &'a Self::Sender,
        to: To<'a, Self::Spec>,
        message: Message<'a>,
    ) -> impl Future<Output = Result<Answer, SendError>> + Send + 'a;
}

/// A destination as read: its spec and its credentials (if any), sealed before they are
/// stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed<S> {
    pub spec: S,
    pub credentials: Option<Credentials>,
}

/// A destination's host: its name, its port, and the field that names it (a refusal of the
/// address rule names that field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Host {
    pub name: String,
    pub port: u16,
    pub field: &'static str,
}

/// What one attempt sends to: the spec, and the credentials sealed for the webhook with
/// what they are bound to.
#[derive(Debug)]
pub(crate) struct To<'a, S> {
    pub spec: &'a S,
    pub sealed: Option<Sealed<'a>>,
}

impl<S> Clone for To<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for To<'_, S> {}

/// What every kind's sender is made of: the public-address rule, the process's secret key
/// (to open credentials), the roots TLS trusts, and the HTTP sender (kinds that speak HTTP).
#[derive(Clone)]
pub(crate) struct SenderParts {
    pub rule: UrlRule,
    pub secret: KeySource,
    pub tls: std::sync::Arc<rustls::ClientConfig>,
    pub http: super::http::Http,
}

impl std::fmt::Debug for SenderParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderParts").finish_non_exhaustive()
    }
}
