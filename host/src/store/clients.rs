//! API clients (OAuth 2.0 client credentials) and the access tokens issued to them.
//!
//! Secrets and tokens are never stored: a client keeps `secret_hash` (SHA-256 of its
//! secret), and a token lives under the key `P:token:{sha256 of the token}`. Both are
//! 256-bit random values, so a fast hash is enough; a slow password hash would only cost
//! time on every request. Hashing and comparison live in `crate::auth::secrets`.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Duration;

use redis::AsyncCommands;
use serde::Serialize;

use super::orgs::Plan;
use super::{Result, Store, StoreError, flag, flag_str};
use crate::ids::{self, Kind};

/// An API client as stored (without its secret hash).
#[derive(Debug, Clone, Serialize)]
pub struct Client {
    pub client_id: String,
    pub org_id: String,
    pub name: String,
    pub admin: bool,
    pub publisher: bool,
    #[serde(skip)]
    pub revoked: bool,
}

/// What a valid access token stands for: its client and the client's organisation plan.
#[derive(Debug, Clone)]
pub struct TokenOwner {
    pub client: Client,
    pub plan: Plan,
}

/// Looks up a token's client and the organisation's plan in one round trip.
static LOOKUP_TOKEN_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(LOOKUP_TOKEN));
const LOOKUP_TOKEN: &str = r"
local cid = redis.call('GET', KEYS[1])
if not cid then return false end
local c = redis.call('HMGET', ARGV[1] .. ':client:' .. cid, 'org_id', 'name', 'admin', 'publisher', 'revoked')
if not c[1] then return false end
local plan = redis.call('HGET', ARGV[1] .. ':org:' .. c[1], 'plan')
if not plan then return false end
return {cid, c[1], c[2], c[3], c[4], c[5], plan}
";

/// Stores a token and remembers it on its client, dropping the client's expired tokens.
static ISSUE_TOKEN_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(ISSUE_TOKEN));
const ISSUE_TOKEN: &str = r"
if redis.call('HGET', KEYS[2], 'revoked') ~= '0' then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
";

/// Marks a client revoked and deletes its live tokens.
static REVOKE_CLIENT_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(REVOKE_CLIENT));
const REVOKE_CLIENT: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'revoked', '1')
local hashes = redis.call('ZRANGE', KEYS[2], 0, -1)
for _, h in ipairs(hashes) do redis.call('DEL', ARGV[1] .. ':token:' .. h) end
redis.call('DEL', KEYS[2])
return 1
";

/// Deletes one token if it belongs to the given client.
static REVOKE_TOKEN_SCRIPT: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(REVOKE_TOKEN));
const REVOKE_TOKEN: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
return 0
";

impl Store {
    /// Stores a new client with the hash of its secret. The organisation must exist.
    pub async fn create_client(
        &self,
        org_id: &str,
        name: &str,
        admin: bool,
        publisher: bool,
        secret_hash: &str,
    ) -> Result<Client> {
        let client_id = ids::new(Kind::Client);
        let now = crate::time::now_rfc3339();
        let key = self.key(&["client", &client_id]);
        let fields = [
            ("client_id", client_id.as_str()),
            ("org_id", org_id),
            ("name", name),
            ("admin", flag_str(admin)),
            ("publisher", flag_str(publisher)),
            ("revoked", "0"),
            ("secret_hash", secret_hash),
            ("created_at", &now),
        ];
        let _: () = self.conn().hset_multiple(&key, &fields).await?;
        Ok(Client { client_id, org_id: org_id.to_owned(), name: name.to_owned(), admin, publisher, revoked: false })
    }

    /// The client and its secret hash, or `None` when unknown.
    pub async fn client_with_secret(&self, client_id: &str) -> Result<Option<(Client, String)>> {
        let key = self.key(&["client", client_id]);
        let fields: HashMap<String, String> = self.conn().hgetall(&key).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let hash = fields
            .get("secret_hash")
            .cloned()
            .ok_or_else(|| StoreError::Corrupt { key, reason: "no secret hash".into() })?;
        let client = Client {
            client_id: client_id.to_owned(),
            org_id: fields.get("org_id").cloned().unwrap_or_default(),
            name: fields.get("name").cloned().unwrap_or_default(),
            admin: flag(fields.get("admin")),
            publisher: flag(fields.get("publisher")),
            revoked: flag(fields.get("revoked")),
        };
        Ok(Some((client, hash)))
    }

    /// Stores a token (by its hash) for `ttl`. `false` when the client was revoked meanwhile.
    pub async fn store_token(&self, client_id: &str, token_hash: &str, ttl: Duration) -> Result<bool> {
        let now = crate::time::now_millis();
        let ttl_ms = ttl.as_millis() as u64;
        let stored: i64 = ISSUE_TOKEN_SCRIPT
            .key(self.key(&["token", token_hash]))
            .key(self.key(&["client", client_id]))
            .key(self.key(&["client", client_id, "tokens"]))
            .arg(client_id)
            .arg(ttl_ms)
            .arg(now)
            .arg(now + ttl_ms)
            .arg(token_hash)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(stored == 1)
    }

    /// The owner of a live token, or `None` for an unknown, expired or revoked one.
    pub async fn lookup_token(&self, token_hash: &str) -> Result<Option<TokenOwner>> {
        let row: Option<Vec<String>> = LOOKUP_TOKEN_SCRIPT
            .key(self.key(&["token", token_hash]))
            .arg(&self.prefix)
            .invoke_async(&mut self.conn())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let [client_id, org_id, name, admin, publisher, revoked, plan] = <[String; 7]>::try_from(row)
            .map_err(|_| StoreError::Corrupt { key: "token lookup".into(), reason: "short row".into() })?;
        if revoked != "0" {
            return Ok(None);
        }
        let plan = Plan::parse(&plan)
            .ok_or_else(|| StoreError::Corrupt { key: format!("org {org_id}"), reason: "bad plan".into() })?;
        let client =
            Client { client_id, org_id, name, admin: admin == "1", publisher: publisher == "1", revoked: false };
        Ok(Some(TokenOwner { client, plan }))
    }

    /// Revokes one token of `client_id` (RFC 7009). Unknown tokens are not an error.
    pub async fn revoke_token(&self, client_id: &str, token_hash: &str) -> Result<()> {
        let _: i64 = REVOKE_TOKEN_SCRIPT
            .key(self.key(&["token", token_hash]))
            .key(self.key(&["client", client_id, "tokens"]))
            .arg(client_id)
            .arg(token_hash)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(())
    }

    /// Revokes a client and every live token it holds. `false` when the client is unknown.
    pub async fn revoke_client(&self, client_id: &str) -> Result<bool> {
        let done: i64 = REVOKE_CLIENT_SCRIPT
            .key(self.key(&["client", client_id]))
            .key(self.key(&["client", client_id, "tokens"]))
            .arg(&self.prefix)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(done == 1)
    }
}
