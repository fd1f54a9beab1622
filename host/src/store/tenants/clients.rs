//! API clients (OAuth 2.0 client credentials) and the access tokens issued to them.
//!
//! Secrets and tokens are never stored: a client keeps `secret_hash` (SHA-256 of its
//! secret), and a token lives under `P:{cli}:token:{sha256 of the token}`. Both are 256-bit
//! random values, so a fast hash is enough; a slow password hash would only cost time on
//! every request. Hashing and comparison live in `crate::auth::secrets`.
//!
//! A token names its client (`crate::auth::access_token`), so the token and the client
//! share a slot and one round trip authenticates a request. For the same reason each
//! client carries a copy of its organisation's plan, kept by `plan_change::PlanChanges::set_org_plan`.

use std::collections::HashMap;
use std::time::Duration;

use redis::AsyncCommands;
use serde::Serialize;

use crate::ids::{self, Kind};
use crate::store::core::base::Base;
use crate::store::core::reply::flag;
use crate::store::core::reply::flag_str;
use crate::store::core::scripts::{ISSUE_TOKEN, REVOKE_CLIENT, REVOKE_TOKEN};
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::tenants::orgs::Orgs;
use crate::store::tenants::orgs::Plan;
use crate::store::tenants::portal_sessions::PortalSessions;
use crate::store::versions::Versions;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Clients {
    base: Base,
}

impl Clients {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Clients {
        Clients { base: base.clone() }
    }
}

/// An API client as stored (without its secret hash), as `weir admin client list` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Client {
    pub client_id: String,
    pub org_id: String,
    pub name: String,
    pub admin: bool,
    pub publisher: bool,
    pub revoked: bool,
}

/// The client a live token belongs to, and its organisation's plan.
#[derive(Debug, Clone)]
pub struct TokenOwner {
    pub client: Client,
    pub plan: Plan,
    /// How long the token has left (`None`: no expiry).
    pub expires_in: Option<std::time::Duration>,
}

/// A token to look up: the client it names and its hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TokenQuery {
    pub client_id: String,
    pub token_hash: String,
}

/// The fields of a client a token lookup reads (not its secret's hash).
const OWNER_FIELDS: &[&str] = &["org_id", "name", "admin", "publisher", "revoked", "plan"];

fn client_from(client_id: &str, f: &HashMap<String, String>) -> Client {
    let text = |name: &str| f.get(name).cloned().unwrap_or_default();
    Client {
        client_id: client_id.to_owned(),
        org_id: text("org_id"),
        name: text("name"),
        admin: flag(f.get("admin")),
        publisher: flag(f.get("publisher")),
        revoked: flag(f.get("revoked")),
    }
}

impl Clients {
    /// Creates a client of an organisation (which must exist: its plan is copied).
    pub async fn create_client(
        &self,
        org_id: &str,
        name: &str,
        admin: bool,
        publisher: bool,
        secret_hash: &str,
    ) -> Result<Client> {
        let plan = Orgs::of(&self.base).org_plan(org_id).await?.ok_or_else(|| StoreError::Corrupt {
            key: self.base.keys().org(org_id),
            reason: "no such organisation".into(),
        })?;
        let client_id = ids::new(Kind::Client);
        let now = crate::time::now_rfc3339();
        let key = self.base.keys().client(&client_id);
        let fields = [
            ("client_id", client_id.as_str()),
            ("org_id", org_id),
            ("name", name),
            ("admin", flag_str(admin)),
            ("publisher", flag_str(publisher)),
            ("revoked", "0"),
            ("plan", plan.as_str()),
            ("secret_hash", secret_hash),
            ("created_at", &now),
        ];
        let _: () = self.base.conn().hset_multiple(&key, &fields).await?;
        let _: () = self.base.conn().zadd(self.base.keys().org_clients(org_id), &client_id, 0).await?;
        self.base.acknowledged(&key).await?;
        Ok(Client { client_id, org_id: org_id.to_owned(), name: name.to_owned(), admin, publisher, revoked: false })
    }

    /// A client and its secret hash (for the token endpoint).
    pub async fn client_with_secret(&self, client_id: &str) -> Result<Option<(Client, String)>> {
        let key = self.base.keys().client(client_id);
        let fields: HashMap<String, String> = self.base.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let hash = fields
            .get("secret_hash")
            .cloned()
            .ok_or_else(|| StoreError::Corrupt { key, reason: "no secret hash".into() })?;
        Ok(Some((client_from(client_id, &fields), hash)))
    }

    /// The organisation's clients (never a secret).
    pub async fn list_clients(&self, org_id: &str) -> Result<Vec<Client>> {
        let ids: Vec<String> = self.base.conn().zrange(self.base.keys().org_clients(org_id), 0, -1).await?;
        let mut clients = Vec::with_capacity(ids.len());
        for id in ids {
            let fields: HashMap<String, String> = self.base.conn().hgetall(self.base.keys().client(&id)).await?;
            if !fields.is_empty() {
                clients.push(client_from(&id, &fields));
            }
        }
        Ok(clients)
    }

    /// Stores a token of a client that is not revoked; `false` if it is.
    pub async fn store_token(&self, client_id: &str, token_hash: &str, ttl: Duration) -> Result<bool> {
        let now = crate::time::now_millis();
        let ttl_ms = ttl.as_millis() as u64;
        let token_key = self.base.keys().token(client_id, token_hash);
        let stored: i64 = ISSUE_TOKEN
            .call()
            .key(&self.base.keys().client(client_id))
            .key(&self.base.keys().client_tokens(client_id))
            .key(&token_key)
            .arg(ttl_ms)
            .arg(now)
            .arg(now + ttl_ms)
            .arg(token_hash)
            .run(&mut self.base.conn())
            .await?;
        let stored = crate::store::core::reply::done("issue_token.lua", stored)?;
        if stored {
            self.base.acknowledged(&token_key).await?;
        }
        Ok(stored)
    }

    /// Looks up many tokens in one go (group commit of concurrent requests): one answer
    /// per query, in order.
    pub async fn lookup_tokens(&self, queries: &[TokenQuery]) -> Result<Vec<Result<Option<TokenOwner>>>> {
        let pipes: Vec<redis::Pipeline> = queries
            .iter()
            .map(|q| {
                let mut pipe = redis::pipe();
                pipe.pttl(self.base.keys().token(&q.client_id, &q.token_hash))
                    .cmd("HMGET")
                    .arg(self.base.keys().client(&q.client_id))
                    .arg(OWNER_FIELDS);
                pipe
            })
            .collect();
        let replies = self.base.conn().query_each(&pipes).await?;
        Ok(queries.iter().zip(replies).map(|(q, reply)| self.token_owner(&q.client_id, reply?)).collect())
    }

    fn token_owner(&self, client_id: &str, reply: Vec<redis::Value>) -> Result<Option<TokenOwner>> {
        let (ttl_ms, values): (i64, Vec<Option<String>>) = redis::from_redis_value(redis::Value::Array(reply))
            .map_err(|e| StoreError::Corrupt { key: self.base.keys().client(client_id), reason: e.to_string() })?;
        let fields: HashMap<String, String> =
            OWNER_FIELDS.iter().zip(values).filter_map(|(name, v)| Some(((*name).to_owned(), v?))).collect();
        // PTTL: -2 when there is no such token, -1 when it does not expire.
        if ttl_ms == -2 || !fields.contains_key("org_id") {
            return Ok(None);
        }
        let client = client_from(client_id, &fields);
        if client.revoked {
            return Ok(None);
        }
        let plan = fields.get("plan").and_then(|p| Plan::parse(p)).ok_or_else(|| StoreError::Corrupt {
            key: self.base.keys().client(client_id),
            reason: "bad plan".into(),
        })?;
        let expires_in = u64::try_from(ttl_ms).ok().map(std::time::Duration::from_millis);
        Ok(Some(TokenOwner { client, plan, expires_in }))
    }

    pub async fn revoke_token(&self, client_id: &str, token_hash: &str) -> Result<()> {
        let org: Option<String> = self.base.conn().hget(self.base.keys().client(client_id), "org_id").await?;
        let _: i64 = REVOKE_TOKEN
            .call()
            .key(&self.base.keys().token(client_id, token_hash))
            .key(&self.base.keys().client_tokens(client_id))
            .arg(token_hash)
            .run(&mut self.base.conn())
            .await?;
        if let Some(org) = org {
            Versions::of(&self.base).raise(&org).await?;
        }
        Ok(())
    }

    /// Revokes a client; `false` if there is no such client. Its tokens stop working at
    /// once (lookups read `revoked`), and are then deleted; so do the portal sessions its
    /// links opened (their lookups read `revoked` too), and its unused links are voided.
    pub async fn revoke_client(&self, client_id: &str) -> Result<bool> {
        let key = self.base.keys().client(client_id);
        let hashes: Option<Vec<String>> = REVOKE_CLIENT
            .call()
            .key(&key)
            .key(&self.base.keys().client_tokens(client_id))
            .run(&mut self.base.conn())
            .await?;
        let Some(hashes) = hashes else { return Ok(false) };
        self.base.acknowledged(&key).await?;
        let org: Option<String> = self.base.conn().hget(&key, "org_id").await?;
        if let Some(org) = org {
            Versions::of(&self.base).raise(&org).await?;
            let ended = PortalSessions::of(&self.base).end_portal_access_of_client(&org, client_id).await?;
            tracing::info!(client_id, org_id = %org, portal_sessions_ended = ended, "client revoked");
        }
        if !hashes.is_empty() {
            let tokens: Vec<String> = hashes.iter().map(|h| self.base.keys().token(client_id, h)).collect();
            let _: i64 = self.base.conn().del(tokens).await?;
        }
        Ok(true)
    }

    /// Copies a new plan onto every client of the organisation.
    pub(in crate::store) async fn copy_plan_to_clients(&self, org_id: &str, plan: Plan) -> Result<()> {
        let ids: Vec<String> = self.base.conn().zrange(self.base.keys().org_clients(org_id), 0, -1).await?;
        for id in ids {
            let key = self.base.keys().client(&id);
            let _: i64 = crate::store::core::scripts::SET_IF_EXISTS
                .call()
                .key(&key)
                .arg("plan")
                .arg(plan.as_str())
                .run(&mut self.base.conn())
                .await?;
            self.base.acknowledged(&key).await?;
        }
        Ok(())
    }
}
