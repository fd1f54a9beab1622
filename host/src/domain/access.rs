//! Who may come in, below HTTP: API clients get access tokens for their secret (OAuth 2.0
//! client credentials) and revoke them; a bearer token resolves to its owner, and a client
//! spends its request budget; people sign in to the settings pages (every attempt for an
//! email counted as it starts, password checks a bounded number at once) and get a session.
//! The surfaces keep the protocols (form encodings, cookies, CSRF); this keeps the rules.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::passwords::Verifier;
use crate::auth::{passwords, secrets};
use crate::config::Config;
use crate::metrics::Metrics;
use crate::shared::Tokens;
use crate::store::StoreError;
use crate::store::queue::rate::Rates;
use crate::store::tenants::clients::{Client, Clients, TokenOwner};
use crate::store::tenants::portal_sessions::PortalSessions;
use crate::store::tenants::users::Users;
pub(crate) use crate::store::tenants::users::{MAX_EMAIL_BYTES, Session};

/// How long a settings session lasts.
pub(crate) const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);
/// Failed sign-ins for one email before it must wait [`FAILURE_WINDOW`].
const MAX_FAILURES: u64 = 5;
/// How long failed sign-ins are counted, and how long a throttled email waits.
pub(crate) const FAILURE_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Why a client was not given (or could not revoke) a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// Unknown client, wrong secret, or a revoked client.
    #[error("client authentication failed")]
    InvalidClient,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An access token just issued.
#[derive(Debug)]
pub(crate) struct Issued {
    pub token: String,
    pub ttl: Duration,
}

/// Why a sign-in did not open a session.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SignInError {
    #[error("email addresses are at most {MAX_EMAIL_BYTES} bytes")]
    EmailTooLong,
    /// Too many failed attempts for this email: wait for the window.
    #[error("too many failed sign-ins for this email")]
    Throttled,
    /// Too many password checks at once.
    #[error("too many sign-ins at once")]
    Busy,
    #[error("email or password is incorrect")]
    Wrong,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A session just opened: its token (the cookie's value).
#[derive(Debug)]
pub(crate) struct SignedIn {
    pub token: String,
}

/// Access, for the surfaces: tokens, callers, sign-in sessions.
#[derive(Debug, Clone)]
pub(crate) struct Access {
    parts: AccessParts,
}

/// What access is made of (the wiring hands each part over).
#[derive(Debug, Clone)]
pub(crate) struct AccessParts {
    pub clients: Clients,
    pub users: Users,
    pub portal_sessions: PortalSessions,
    /// Each client's API request budget.
    pub rates: Rates,
    pub tokens: Arc<Tokens>,
    pub passwords: Arc<Verifier>,
    pub metrics: Arc<Metrics>,
    pub config: Arc<Config>,
}

impl Access {
    pub(crate) fn new(parts: AccessParts) -> Access {
        Access { parts }
    }
}

impl Access {
    /// The caller a token's owner is, with what its plan allows.
    pub(crate) fn caller(&self, owner: TokenOwner) -> crate::auth::Caller {
        crate::auth::Caller::new(owner, &self.parts.config.plans)
    }

    /// A new access token for the client whose secret this is.
    pub(crate) async fn issue_token(&self, client_id: &str, secret: &str) -> Result<Issued, TokenError> {
        let client = self.client(client_id, secret).await?;
        let token = crate::auth::access_token(&client.client_id);
        let ttl = self.parts.config.token_ttl;
        if !self.parts.clients.store_token(&client.client_id, &secrets::hash(&token), ttl).await? {
            return Err(TokenError::InvalidClient);
        }
        self.parts.metrics.tokens_issued.inc();
        Ok(Issued { token, ttl })
    }

    /// Revokes one of the client's own tokens (RFC 7009 §2.1: another's is ignored).
    pub(crate) async fn revoke_token(&self, client_id: &str, secret: &str, token: &str) -> Result<(), TokenError> {
        let client = self.client(client_id, secret).await?;
        if crate::auth::token_client(token) == Some(client.client_id.as_str()) {
            self.parts.clients.revoke_token(&client.client_id, &secrets::hash(token)).await?;
        }
        Ok(())
    }

    /// Verifies a client's secret. Unknown clients cost the same hash comparison.
    async fn client(&self, id: &str, secret: &str) -> Result<Client, TokenError> {
        let found = if crate::ids::is_valid(crate::ids::Kind::Client, id) {
            self.parts.clients.client_with_secret(id).await?
        } else {
            None
        };
        let (client, hash) = match found {
            Some(pair) => pair,
            None => {
                let _ = secrets::verify(secret, &secrets::hash("no such client"));
                return Err(TokenError::InvalidClient);
            }
        };
        if !secrets::verify(secret, &hash) || client.revoked {
            return Err(TokenError::InvalidClient);
        }
        Ok(client)
    }

    /// The owner of a live bearer token (`None`: malformed, unknown, expired or revoked).
    /// Concurrent lookups share a round trip.
    pub(crate) async fn token_owner(&self, token: &str) -> Result<Option<TokenOwner>, StoreError> {
        match crate::auth::token_client(token) {
            Some(client) => self.parts.tokens.owner(client, &secrets::hash(token)).await,
            None => Ok(None),
        }
    }

    /// [`Access::token_owner`], or for a publish (`kept`) as kept, with the organisation's
    /// version it was read at (`crate::shared::Tokens::owner_kept`).
    pub(crate) async fn token_owner_for(
        &self,
        token: &str,
        kept: bool,
    ) -> Result<Option<(TokenOwner, Option<u64>)>, StoreError> {
        if !kept {
            return Ok(self.token_owner(token).await?.map(|owner| (owner, None)));
        }
        let Some(client) = crate::auth::token_client(token) else { return Ok(None) };
        Ok(self.parts.tokens.owner_kept(client, &secrets::hash(token)).await?.map(|(owner, v)| (owner, Some(v))))
    }

    /// Takes one request from the client's budget when `WEIR_API_RATE_LIMIT` is set: how
    /// long until one would be allowed, when it is spent.
    pub(crate) async fn take_request(&self, client_id: &str) -> Result<Option<Duration>, StoreError> {
        match self.parts.config.api_rate_limit {
            Some(limit) => self.parts.rates.take_request(client_id, limit).await,
            None => Ok(None),
        }
    }

    /// Signs a person in: a new session, or why not. Every attempt for an email is counted
    /// as it starts, so parallel guesses cannot pass the check together.
    pub(crate) async fn sign_in(&self, email: &str, password: String) -> Result<SignedIn, SignInError> {
        let users = &self.parts.users;
        if email.len() > MAX_EMAIL_BYTES {
            // Refused before anything is stored or looked up.
            return Err(SignInError::EmailTooLong);
        }
        if users.login_attempt(email, FAILURE_WINDOW).await? > MAX_FAILURES {
            return Err(SignInError::Throttled);
        }
        let found = users.user_by_email(email).await?;
        let hash = found.as_ref().map(|(_, h)| h.clone()).unwrap_or_else(|| passwords::decoy().to_owned());
        let Some(ok) = self.parts.passwords.verify(password, hash).await else {
            let _ = users.login_not_attempted(email).await;
            return Err(SignInError::Busy);
        };
        let user = match (ok, found) {
            (true, Some((user, _))) => user,
            _ => return Err(SignInError::Wrong),
        };
        let _ = users.login_succeeded(email).await;
        let token = secrets::generate("wss_");
        let session = Session {
            user_id: user.id,
            org_id: user.org_id,
            email: user.email,
            admin: user.admin,
            csrf: secrets::generate(""),
            portal: None,
        };
        users.create_session(&secrets::hash(&token), &session, SESSION_TTL).await?;
        Ok(SignedIn { token })
    }

    /// The session a cookie's token opens (`None`: signed out or expired).
    pub(crate) async fn session(&self, token: &str) -> Result<Option<Session>, StoreError> {
        self.parts.users.session(&secrets::hash(token)).await
    }

    /// The portal session a cookie's token opens (`None`: ended, idle too long, or not a
    /// portal session's token); each use pushes its idle expiry on.
    pub(crate) async fn portal_session(&self, token: &str) -> Result<Option<Session>, StoreError> {
        if !token.starts_with("wps_") || token.len() > 100 {
            return Ok(None);
        }
        self.parts.portal_sessions.portal_session(&secrets::hash(token), crate::domain::portal::IDLE).await
    }

    /// Ends a session.
    pub(crate) async fn sign_out(&self, token: &str) {
        let _ = self.parts.users.delete_session(&secrets::hash(token)).await;
    }

    /// Whether cookies must be `Secure` (the listener speaks TLS, or links go out as
    /// `https`).
    pub(crate) fn secure_cookies(&self) -> bool {
        self.parts.config.tls.is_some() || self.parts.config.public_url().starts_with("https://")
    }
}
