//! Every Lua script of the store. Each file in `lua/` opens with its contract (`KEYS`,
//! `ARGV`, reply); the typed wrapper that builds its keys and reads its reply lives beside
//! what it changes. [`Lua::call`] refuses a call whose keys do not share one hash
//! slot — on one Redis as on a cluster, so a layout mistake fails every test, not only the
//! cluster's.

use std::sync::LazyLock;

use redis::{Cmd, ErrorKind, FromRedisValue, Script, ServerErrorKind, ToRedisArgs};

use crate::store::core::conn::Conn;
use crate::store::core::keys::slot;
use crate::store::error::Result;
use crate::store::error::StoreError;

/// A script: its name (for errors), its source and its SHA-1.
pub(crate) struct Lua {
    name: &'static str,
    source: &'static str,
    hash: String,
}

impl Lua {
    fn new(name: &'static str, source: &'static str) -> Lua {
        Lua { name, source, hash: Script::new(source).get_hash().to_owned() }
    }
}

macro_rules! lua {
    ($static:ident, $file:literal) => {
        pub(crate) static $static: LazyLock<Lua> =
            LazyLock::new(|| Lua::new($file, include_str!(concat!("../lua/", $file))));
    };
    ($static:ident, [$($lib:literal),+], $file:literal) => {
        pub(crate) static $static: LazyLock<Lua> = LazyLock::new(|| {
            Lua::new($file, concat!($(include_str!(concat!("../lua/", $lib)), "\n",)+ include_str!(concat!("../lua/", $file))))
        });
    };
}

lua!(PUBLISH, ["batches.lua", "order.lua", "snapshots.lua"], "publish.lua");
lua!(CLAIM, ["lease.lua"], "claim.lua");
lua!(CLAIM_JOBS, ["lease.lua"], "claim_jobs.lua");
lua!(LOAD, "load.lua");
lua!(PUT_BACK, "put_back.lua");
lua!(RECORD, ["batches.lua", "order.lua"], "record.lua");
lua!(RENEW, "renew.lua");
lua!(RETRY, ["order.lua"], "retry.lua");
lua!(END_PENDING, "end_pending.lua");
lua!(DRAIN_NEW, "drain_new.lua");
lua!(DEAD_LETTER, ["order.lua"], "dead_letter.lua");
lua!(RELEASE, "release.lua");
lua!(SNAPSHOT_FORGET, ["snapshots.lua"], "snapshot_forget.lua");
lua!(SNAPSHOT_MOVED, "snapshot_moved.lua");
lua!(WEBHOOK_SAVE, ["subscriptions.lua"], "webhook_save.lua");
lua!(WEBHOOK_OFF, "webhook_off.lua");
lua!(STREAK, "streak.lua");
lua!(ROTATE_SECRET, "rotate_secret.lua");
lua!(PLUGIN_CREATE, "plugin_create.lua");
lua!(PLUGIN_DELETE, "plugin_delete.lua");
lua!(SET_IF_EXISTS, "set_if_exists.lua");
lua!(PORTAL_TAKE, "portal_take.lua");
lua!(ROOM, "room.lua");
lua!(ISSUE_TOKEN, "issue_token.lua");
lua!(REVOKE_CLIENT, "revoke_client.lua");
lua!(REVOKE_TOKEN, "revoke_token.lua");
lua!(EXPORT_CREATE, "export_create.lua");
lua!(RATE, "rate.lua");
lua!(LIMIT, "limit.lua");
lua!(DAILY, "daily.lua");
lua!(VERSION_RAISE, "version_raise.lua");
lua!(TRIM, "trim.lua");
lua!(REPLAY, ["batches.lua", "order.lua"], "replay.lua");
lua!(REPLAY_JOB, "replay_job.lua");
lua!(HISTORY_FORGET, "history_forget.lua");
lua!(HISTORY_FORGET_EVENTS, "history_forget_events.lua");
lua!(RESTORE_ROW, "restore_row.lua");
lua!(INDEX_READ, "index_read.lua");
lua!(INDEX_FORGET, "index_forget.lua");
lua!(SOURCE_CREATE, "source_create.lua");
lua!(SOURCE_DELETE, "source_delete.lua");

impl Lua {
    /// A call of this script, to which keys and arguments are added.
    pub(crate) fn call(&self) -> Call<'_> {
        Call { lua: self, keys: Vec::new(), args: Vec::new(), slot: None, cross_slot: None }
    }
}

/// One call of a script being built.
pub(crate) struct Call<'a> {
    lua: &'a Lua,
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
    slot: Option<u16>,
    cross_slot: Option<String>,
}

impl Call<'_> {
    /// Declares a key; every key of a call must share the first one's slot.
    pub(crate) fn key(&mut self, key: &str) -> &mut Self {
        let s = slot(key);
        match self.slot {
            None => self.slot = Some(s),
            Some(first) if first != s && self.cross_slot.is_none() => self.cross_slot = Some(key.to_owned()),
            Some(_) => {}
        }
        self.keys.push(key.as_bytes().to_vec());
        self
    }

    /// Declares several keys, in order.
    pub(crate) fn keys<K: AsRef<str>>(&mut self, keys: impl IntoIterator<Item = K>) -> &mut Self {
        for key in keys {
            self.key(key.as_ref());
        }
        self
    }

    pub(crate) fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        arg.write_redis_args(&mut self.args);
        self
    }

    /// Runs the script by its SHA-1; a node that lacks it (a restarted Redis, a promoted
    /// replica, a master that slots are being moved to) is sent the source instead, with
    /// `EVAL`, which goes where the keys are (redirects included) and leaves the script
    /// cached there. (Loading it with `SCRIPT LOAD` would not do on a cluster mid-reshard:
    /// that goes to the masters the client knows, which may not include the new one.)
    pub(crate) async fn run<T: FromRedisValue>(&self, conn: &mut Conn) -> Result<T> {
        if let Some(key) = &self.cross_slot {
            return Err(StoreError::CrossSlot { script: self.lua.name, key: key.clone() });
        }
        match self.command("EVALSHA", &self.lua.hash).query_async(conn).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                Ok(self.command("EVAL", self.lua.source).query_async(conn).await?)
            }
            reply => Ok(reply?),
        }
    }

    fn command(&self, verb: &str, script: &str) -> Cmd {
        let mut cmd = redis::cmd(verb);
        cmd.arg(script).arg(self.keys.len()).arg(&*self.keys).arg(&*self.args);
        cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_mixing_slots_is_refused_before_it_is_sent() {
        let mut call = SET_IF_EXISTS.call();
        call.key("weir:{org_1}:org").key("weir:{org_1}:webhooks");
        assert!(call.cross_slot.is_none());
        call.key("weir:{org_2}:org");
        assert_eq!(call.cross_slot.as_deref(), Some("weir:{org_2}:org"));
    }
}
