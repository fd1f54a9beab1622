//! People who sign in to Settings > Webhooks, their sessions, and the sign-in throttle.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:user:{id}` | hash | `id`, `org_id`, `email`, `admin`, `password_hash` (Argon2id PHC), `created_at` |
//! | `P:user-email:{email}` | string | the user id of a (lower-cased) email: emails are unique |
//! | `P:session:{sha256}` | hash, TTL | a signed-in session: `user_id`, `org_id`, `email`, `admin`, `csrf` |
//! | `P:login-fail:{email}` | counter, TTL | sign-in attempts for an email in the current window (cleared by a success) |

use std::collections::HashMap;
use std::time::Duration;

use redis::AsyncCommands;
use serde::Serialize;

use super::{Result, Store, flag, flag_str};
use crate::ids::{self, Kind};

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
}

impl Store {
    /// Creates a user; `None` when the email is taken.
    pub async fn create_user(
        &self,
        org_id: &str,
        email: &str,
        admin: bool,
        password_hash: &str,
    ) -> Result<Option<User>> {
        let id = ids::new(Kind::User);
        let email = email.to_ascii_lowercase();
        let claimed: Option<String> = redis::cmd("SET")
            .arg(self.key(&["user-email", &email]))
            .arg(&id)
            .arg("NX")
            .query_async(&mut self.conn())
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
        let _: () = self.conn().hset_multiple(self.key(&["user", &id]), &fields).await?;
        Ok(Some(User { id, email, org_id: org_id.to_owned(), admin }))
    }

    /// The user with this email and their password hash.
    pub async fn user_by_email(&self, email: &str) -> Result<Option<(User, String)>> {
        let id: Option<String> = self.conn().get(self.key(&["user-email", &email.to_ascii_lowercase()])).await?;
        let Some(id) = id else { return Ok(None) };
        let f: HashMap<String, String> = self.conn().hgetall(self.key(&["user", &id])).await?;
        if f.is_empty() {
            return Ok(None);
        }
        let text = |n: &str| f.get(n).cloned().unwrap_or_default();
        let user = User { id: text("id"), email: text("email"), org_id: text("org_id"), admin: flag(f.get("admin")) };
        Ok(Some((user, text("password_hash"))))
    }

    /// Stores a session under the hash of its token.
    pub async fn create_session(&self, token_hash: &str, session: &Session, ttl: Duration) -> Result<()> {
        let key = self.key(&["session", token_hash]);
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
            .query_async::<()>(&mut self.conn())
            .await?;
        Ok(())
    }

    pub async fn session(&self, token_hash: &str) -> Result<Option<Session>> {
        let f: HashMap<String, String> = self.conn().hgetall(self.key(&["session", token_hash])).await?;
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
        }))
    }

    pub async fn delete_session(&self, token_hash: &str) -> Result<()> {
        let _: i64 = self.conn().del(self.key(&["session", token_hash])).await?;
        Ok(())
    }

    /// Counts a sign-in attempt for `email` as it starts, in one atomic step, and returns
    /// its number in the current window (which starts with the first attempt). Parallel
    /// attempts each get their own number, so checking it bounds them all.
    pub async fn login_attempt(&self, email: &str, window: Duration) -> Result<u64> {
        let key = self.key(&["login-fail", &email.to_ascii_lowercase()]);
        let (n, _): (u64, i64) = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .cmd("EXPIRE")
            .arg(&key)
            .arg(window.as_secs())
            .arg("NX")
            .query_async(&mut self.conn())
            .await?;
        Ok(n)
    }

    /// Takes back an attempt that was not checked (the server was too busy to).
    pub async fn login_not_attempted(&self, email: &str) -> Result<()> {
        let _: i64 = self.conn().decr(self.key(&["login-fail", &email.to_ascii_lowercase()]), 1).await?;
        Ok(())
    }

    /// Clears the attempts of an email after a successful sign-in.
    pub async fn login_succeeded(&self, email: &str) -> Result<()> {
        let _: i64 = self.conn().del(self.key(&["login-fail", &email.to_ascii_lowercase()])).await?;
        Ok(())
    }
}
