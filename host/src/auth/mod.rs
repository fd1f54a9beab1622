//! Authentication and authorisation: who is calling, and what they may do.
//!
//! API clients get opaque bearer tokens from the token endpoint (`crate::api::oauth`).
//! A request's token resolves to a [`Caller`]: the client, its organisation and plan.
//! The checks run in the contract's order: a valid token (401), then the plan includes
//! API integrations (402), then the role (403); only then does a handler look anything up.

pub mod passwords;
pub mod secrets;

use std::sync::Arc;

use crate::plans::{Plans, Rules};
use crate::store::tenants::clients::TokenOwner;
use crate::store::tenants::orgs::Plan;

/// Prefix of client secrets.
pub const CLIENT_SECRET_PREFIX: &str = "wcs_";
/// Prefix of access tokens.
pub const ACCESS_TOKEN_PREFIX: &str = "wat_";

/// A new access token of a client: `wat_<client id>.<256 random bits>`. The token names
/// its client (not a secret), so the store finds both in one place.
pub fn access_token(client_id: &str) -> String {
    secrets::generate(&format!("{ACCESS_TOKEN_PREFIX}{client_id}."))
}

/// The client an access token names, if it has the shape of one.
pub fn token_client(token: &str) -> Option<&str> {
    let (client, secret) = token.strip_prefix(ACCESS_TOKEN_PREFIX)?.split_once('.')?;
    (crate::ids::is_valid(crate::ids::Kind::Client, client) && !secret.is_empty()).then_some(client)
}

/// A request's live bearer token and its owner, found before its body was read
/// (`crate::api::intake`); the handler's extractor uses it instead of a second lookup.
#[derive(Debug, Clone)]
pub struct Authenticated {
    pub token_hash: String,
    pub owner: TokenOwner,
    /// The organisation's version the owner was kept at, when it came from the kept
    /// tokens (publishing only).
    pub version: Option<u64>,
}

/// A publisher's token as it was kept (`crate::shared::Tokens`): its client, its hash and
/// the organisation's version it was read at (`store::versions`), which its publish is
/// held to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenProof {
    pub client_id: String,
    pub token_hash: String,
    pub version: u64,
}

/// The authenticated client behind a request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub client_id: String,
    pub client_name: String,
    pub org_id: String,
    pub admin: bool,
    pub publisher: bool,
    pub plan: Plan,
    /// What the plan allows.
    pub rules: Arc<Rules>,
    /// Its token as kept, when it was (publishing only).
    pub token: Option<TokenProof>,
}

impl Caller {
    /// The caller behind a token, with its plan's rules.
    pub fn new(owner: TokenOwner, plans: &Plans) -> Caller {
        Caller {
            rules: plans.rules(owner.plan.as_str()).clone(),
            client_id: owner.client.client_id,
            client_name: owner.client.name,
            org_id: owner.client.org_id,
            admin: owner.client.admin,
            publisher: owner.client.publisher,
            plan: owner.plan,
            token: None,
        }
    }
}

/// What a route requires of its caller, beyond a valid token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// Webhook management: the plan includes API integrations (402) and an admin (403).
    AdminWithApiPlan,
    /// Publishing events: the `publisher` role (403); no plan or admin check.
    Publisher,
    /// Any client of the organisation.
    AnyClient,
}

/// A requirement the caller does not meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    #[error("the organisation's plan does not include API integrations")]
    PlanRequired,
    #[error("this operation requires an organisation admin")]
    NotAdmin,
    #[error("this operation requires the publisher role")]
    NotPublisher,
}

impl Caller {
    /// Checks `requirement`, plan before role (contract §2).
    pub fn check(&self, requirement: Requirement) -> Result<(), Denied> {
        match requirement {
            Requirement::AdminWithApiPlan => {
                if !self.rules.api_integrations {
                    return Err(Denied::PlanRequired);
                }
                if !self.admin {
                    return Err(Denied::NotAdmin);
                }
                Ok(())
            }
            Requirement::Publisher if !self.publisher => Err(Denied::NotPublisher),
            Requirement::Publisher | Requirement::AnyClient => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_client() {
        let client = crate::ids::new(crate::ids::Kind::Client);
        let token = access_token(&client);
        assert!(token.starts_with("wat_cli_"));
        assert_eq!(token_client(&token), Some(client.as_str()));
        assert_eq!(token_client("wat_nope.x"), None);
        assert_eq!(token_client(&format!("wat_{client}.")), None);
        assert_eq!(token_client("Bearer"), None);
    }

    fn caller(plan: Plan, admin: bool, publisher: bool) -> Caller {
        let api = plan == Plan::pro();
        let rules = Arc::new(Rules { name: plan.as_str().into(), api_integrations: api, limits: Default::default() });
        Caller {
            client_id: "cli_x".into(),
            client_name: "x".into(),
            org_id: "org_x".into(),
            admin,
            publisher,
            plan,
            rules,
            token: None,
        }
    }

    #[test]
    fn plan_is_checked_before_role() {
        assert_eq!(caller(Plan::free(), false, false).check(Requirement::AdminWithApiPlan), Err(Denied::PlanRequired));
        assert_eq!(caller(Plan::pro(), false, true).check(Requirement::AdminWithApiPlan), Err(Denied::NotAdmin));
        assert_eq!(caller(Plan::pro(), true, false).check(Requirement::AdminWithApiPlan), Ok(()));
    }

    #[test]
    fn publishing_needs_only_the_role() {
        assert_eq!(caller(Plan::free(), false, true).check(Requirement::Publisher), Ok(()));
        assert_eq!(caller(Plan::pro(), true, false).check(Requirement::Publisher), Err(Denied::NotPublisher));
        assert_eq!(caller(Plan::free(), false, false).check(Requirement::AnyClient), Ok(()));
    }
}
