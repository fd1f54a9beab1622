//! People who sign in to Settings > Webhooks, their sessions, and the sign-in throttle
//! (keys: `store::core::keys`). A user is a hash `id`, `org_id`, `email`, `admin`,
//! `password_hash` (Argon2id PHC), `created_at` in its organisation's group; emails are
//! unique, claimed first under `P:user-email:{email}` (`org_id user_id`). A session is a hash
//! `user_id`, `org_id`, `email`, `admin`, `csrf` under the hash of its token.

use std::collections::HashMap;
use std::time::Duration;

use redis::AsyncCommands;
use serde::Serialize;

use crate::ids::{self, Kind};
use crate::store::core::base::Base;
use crate::store::core::reply::flag;
use crate::store::core::reply::flag_str;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Users {
    base: Base,
}

impl Users {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Users {
        Users { base: base.clone() }
    }
}

/// Longest email address accepted (RFC 5321's path limit), in bytes.
pub const MAX_EMAIL_BYTES: usize = 254;

/// A person of an organisation.
#[derive(Debug, Clone, Serialize)]
pub struct User {
    pub id: String,
    pub email: String,
    pub org_id: String,
    pub admin: bool,
}

/// A signed-in session.
#[derive(Debug, Clone)]
pub struct Session {
    pub user_id: String,
    pub org_id: String,
    pub email: String,
    pub admin: bool,
    /// The token every form of this session must carry.
    pub csrf: String,
    /// Opened by a portal link (no person: `user_id` and `email` are empty).
    pub portal: Option<Portal>,
}

impl Users {
    /// Creates a user; `None` when the email is taken. The email is claimed first (its own
    /// slot), then the user is written in its organisation's group.
    pub async fn create_user(
        &self,
        org_id: &str,
        email: &str,
        admin: bool,
        password_hash: &str,
    ) -> Result<Option<User>> {
        let id = ids::new(Kind::User);
        let email = email.to_ascii_lowercase();
        let claim = self.base.keys().user_email(&email);
        let claimed: Option<String> = redis::cmd("SET")
            .arg(&claim)
            .arg(format!("{org_id} {id}"))
            .arg("NX")
            .query_async(&mut self.base.conn())
            .await?;
        if claimed.is_none() {
            return Ok(None);
        }
        let now = crate::time::now_rfc3339();
        let fields = [
            ("id", id.as_str()),
            ("org_id", org_id),
            ("email", &email),
            ("admin", flag_str(admin)),
            ("password_hash", password_hash),
            ("created_at", &now),
        ];
        let key = self.base.keys().user(org_id, &id);
        let written: Result<()> = async {
            let _: () = self.base.conn().hset_multiple(&key, &fields).await?;
            let _: () = self.base.conn().zadd(self.base.keys().org_users(org_id), &id, 0).await?;
            Ok(())
        }
        .await;
        if let Err(e) = written {
            // Give the email back rather than leave it claimed by nobody.
            let _: std::result::Result<i64, _> = self.base.conn().del(&claim).await;
            return Err(e);
        }
        self.base.acknowledged(&key).await?;
        Ok(Some(User { id, email, org_id: org_id.to_owned(), admin }))
    }

    /// The user with this email and their password hash.
    pub async fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>> {
        let claim: Option<String> =
            self.base.conn().get(self.base.keys().user_email(&email.to_ascii_lowercase())).await?;
        let Some((org_id, id)) = claim.as_deref().and_then(|c| c.split_once(' ')) else { return Ok(None) };
        let f: HashMap<String, String> = self.base.conn().hgetall(self.base.keys().user(org_id, id)).await?;
        if f.is_empty() {
            return Ok(None);
        }
        let text = |n: &str| f.get(n).cloned().unwrap_or_default();
        let user = User { id: text("id"), email: text("email"), org_id: text("org_id"), admin: flag(f.get("admin")) };
        Ok(Some((user, text("password_hash"))))
    }

    /// The organisation's users (never a password hash).
    pub async fn list_users(&self, org_id: &str) -> Result<Vec<User>> {
        let ids: Vec<String> = self.base.conn().zrange(self.base.keys().org_users(org_id), 0, -1).await?;
        let mut users = Vec::with_capacity(ids.len());
        for id in ids {
            let f: HashMap<String, String> = self.base.conn().hgetall(self.base.keys().user(org_id, &id)).await?;
            if !f.is_empty() {
                let text = |n: &str| f.get(n).cloned().unwrap_or_default();
                users.push(User {
                    id: text("id"),
                    email: text("email"),
                    org_id: text("org_id"),
                    admin: flag(f.get("admin")),
                });
            }
        }
        Ok(users)
    }

    /// Stores a session under the hash of its token.
    pub async fn create_session(&self, token_hash: &str, session: &Session, ttl: Duration) -> Result<()> {
        let key = self.base.keys().session(token_hash);
        redis::pipe()
            .atomic()
            .hset_multiple(
                &key,
                &[
                    ("user_id", session.user_id.as_str()),
                    ("org_id", &session.org_id),
                    ("email", &session.email),
                    ("admin", flag_str(session.admin)),
                    ("csrf", &session.csrf),
                ],
            )
            .ignore()
            .pexpire(&key, ttl.as_millis() as i64)
            .ignore()
            .query_async::<()>(&mut self.base.conn())
            .await?;
        Ok(())
    }

    pub async fn session(&self, token_hash: &str) -> Result<Option<Session>> {
        let f: HashMap<String, String> = self.base.conn().hgetall(self.base.keys().session(token_hash)).await?;
        if f.is_empty() {
            return Ok(None);
        }
        let text = |n: &str| f.get(n).cloned().unwrap_or_default();
        Ok(Some(Session {
            user_id: text("user_id"),
            org_id: text("org_id"),
            email: text("email"),
            admin: flag(f.get("admin")),
            csrf: text("csrf"),
            portal: None,
        }))
    }

    pub async fn delete_session(&self, token_hash: &str) -> Result<()> {
        let _: i64 = self.base.conn().del(self.base.keys().session(token_hash)).await?;
        Ok(())
    }

    /// Counts a sign-in attempt for `email` as it starts, in one atomic step, and returns
    /// its number in the current window (which starts with the first attempt). Parallel
    /// attempts each get their own number, so checking it bounds them all.
    pub async fn login_attempt(&self, email: &str, window: Duration) -> Result<u64> {
        let key = self.base.keys().login_attempts(&email.to_ascii_lowercase());
        let (n, _): (u64, i64) = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .cmd("EXPIRE")
            .arg(&key)
            .arg(window.as_secs())
            .arg("NX")
            .query_async(&mut self.base.conn())
            .await?;
        Ok(n)
    }

    /// Takes back an attempt that was not checked (the server was too busy to).
    pub async fn login_not_attempted(&self, email: &str) -> Result<()> {
        let _: i64 = self.base.conn().decr(self.base.keys().login_attempts(&email.to_ascii_lowercase()), 1).await?;
        Ok(())
    }

    /// Clears the attempts of an email after a successful sign-in.
    pub async fn login_succeeded(&self, email: &str) -> Result<()> {
        let _: i64 = self.base.conn().del(self.base.keys().login_attempts(&email.to_ascii_lowercase())).await?;
        Ok(())
    }
}

/// What a portal session may do and where it may be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Portal {
    /// The link that opened it (portal actions are logged with it).
    pub link_id: String,
    /// The origins that may frame its pages (`frame-ancestors`); none: no framing.
    pub frame_ancestors: Vec<String>,
    /// `#RRGGBB`, when the operator chose one.
    pub accent: Option<String>,
    /// The operator's name, logo and pages around it.
    pub look: PortalLook,
}

/// What a portal session shows of the operator that framed it (each an `https` URL, or
/// `http` on loopback, when set).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortalLook {
    /// Shown instead of Weir's name.
    pub brand_name: Option<String>,
    /// The operator's logo, beside its name.
    pub logo_url: Option<String>,
    /// A "back" link to the operator's product.
    pub return_url: Option<String>,
    /// Where a link that has expired or was used sends its frame, for a new one.
    pub refresh_url: Option<String>,
    /// `light` or `dark`; none: as the browser (and the framing page) prefers.
    pub theme: Option<String>,
}
