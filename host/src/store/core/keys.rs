//! The key layout: the one place that names Redis keys. Every other module (and every Lua
//! script, which gets all its keys through `KEYS`) asks [`Keys`] for them.
//!
//! Keys are grouped by hash tag (`{…}`) so that everything one script or transaction
//! touches lives in one Redis Cluster slot. Three kinds of group:
//! - **an organisation** (`{org_…}`): its settings, webhooks and their subscription index,
//!   plugins, users. Organisations spread over the slots by their ids.
//! - **a partition** (`{p<i>.<n>}`, `P` partitions, fixed when the data set is created):
//!   events, snapshots, delivery records, delivery indexes and the delivery queues. An event
//!   goes to the partition of its subject (`org`, type, id), so one organisation's traffic is
//!   spread over all partitions, and the partitions' tags are chosen so that their slots are
//!   evenly spaced over the slot space (and so over the masters).
//! - **one thing** looked up by its own id (an API client and its tokens, a session, a
//!   sign-in counter); report exports, which are rare, share one group.
//!
//! `P` below is the key prefix (`WEIR_REDIS_PREFIX`), `{o}` an organisation's tag, `{q}`
//! a partition's tag.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:meta` | hash | `layout` (version of this table), `partitions` |
//! | `P:orgs` | zset (lex) | ids of all organisations |
//! | `P:{o}:org` | hash | an organisation: `id`, `name`, `plan`, `created_at` |
//! | `P:{o}:version` | counter | raised by every change a publish's cache depends on: its webhooks' subscriptions and filters, its plan, its clients and tokens revoked (`store::versions`) |
//! | `P:{o}:clients`, `P:{o}:users` | zset (lex) | its API clients' and users' ids |
//! | `P:{o}:webhooks` | zset (lex) | its webhooks' ids |
//! | `P:{o}:deleted-webhooks` | zset | webhooks it deleted within the delivery retention, by when (ms): their deliveries are still listed by their id |
//! | `P:{o}:wh:{wh}` | hash | a webhook (`store::tenants::webhooks`), with its failure streak |
//! | `P:{o}:subs:{action}` | set | active webhooks subscribed to an action (publish reads only these) |
//! | `P:{o}:filters` | hash | webhook id → its CEL filter, for the active webhooks that have one (publish reads it beside the set) |
//! | `P:{o}:plugins` | zset (lex) | its plugins' ids |
//! | `P:{o}:plugin-versions` | hash | the last version number given to each plugin name |
//! | `P:{o}:plg:{id}` | hash | a plugin (`shared` = 1: its code is the organisation's `code:{sha256}`) |
//! | `P:{o}:code:{sha256}` | string | plugin code, stored once per organisation and hash |
//! | `P:{o}:code-refs` | hash | hash → plugins using that code; `bytes`: the code stored in all |
//! | `P:{o}:plg:{id}:wasm` | string | the code of a plugin stored before code was shared |
//! | `P:{o}:user:{id}` | hash | a person who signs in to the settings pages |
//! | `P:{cli}:client` | hash | an API client; `secret_hash` is SHA-256 of the secret |
//! | `P:{cli}:tokens` | zset | hashes of the client's live tokens, by expiry (ms) |
//! | `P:{cli}:token:{sha256}` | string, TTL | a live access token of the client |
//! | `P:{cli}:rate` | string, TTL | the client's API request budget (`store::queue::rate`) |
//! | `P:{o}:events-of-day:{day}` | counter, TTL | the organisation's events of a UTC day, for its plan's `events_per_day` (`store::events::daily`) |
//! | `P:{o}:notice-rate` | string, TTL | the organisation's budget of `webhook_delivery_failed` notices (`store::queue::rate`) |
//! | `P:{wh}:limiter` | string, TTL | a webhook's delivery rate budget, for its `rate_limit` (`store::queue::rate`) |
//! | `P:user-email:{email}` | string | `org_id user_id` of a (lower-cased) email |
//! | `P:session:{sha256}` | hash, TTL | a signed-in session |
//! | `P:login:{email}` | counter, TTL | sign-in attempts for an email in the current window |
//! | `P:portal-link:{sha256}` | hash, TTL | a portal link: its organisation, grant, expiry, whether used |
//! | `P:portal-session:{sha256}` | hash, TTL (idle) | a portal session |
//! | `P:portal-sessions:{org}` | set, TTL (idle) | the hashes of an organisation's portal sessions |
//! | `P:portal-exchanges:{address}` | counter, TTL | portal links exchanged from one address this minute |
//! | `P:{o}:portal-links` | zset, TTL | the organisation's unused portal links (`client token-hash`), by expiry (ms): at most 100 (`store::core::room`) |
//! | `P:{o}:portal-generation` | counter | raised by every end of the organisation's portal sessions: a link or session of an older generation opens nothing |
//! | `P:{o}:test-events`, `P:{o}:test-events:{wh}` | zset, TTL | test events sent in the last minute by the organisation / to a webhook, by when each leaves the window (ms) (`store::core::room`) |
//! | `P:{exports}:x:{rex}`, `P:{exports}:file:{rex}` | hash, string; TTL | a report export and its built file (exports are rare: they share one slot) |
//! | `P:{exports}:jobs` | zset | exports to build, by due time or end of lease (ms) |
//! | `P:secret:export-links` | string | the key that signs export download links |
//! | `P:{q}:e:{ev}` | string, TTL | an event (`{ev}`: [`event_name`], 22 characters for the organisation and event id): when it was accepted, its `created_at` and the compressed envelope (`store::events::publish`); also its id's idempotency record. No TTL while it is the newest snapshot of its record |
//! | `P:{q}:snap:{org}` | hash | `Type:id` → `ms evt` (`msd evt`: a deletion, with history): the newest event about each record (report exports; `store::events::exports::Pointer`); with history, a pointer moves to PostgreSQL with its event |
//! | `P:{q}:published:{day}` | hash, TTL | organisation → its publishers' events of the UTC day in this partition (usage of a plan without a daily limit: `store::events::daily`) |
//! | `P:{q}:versions` | hash | organisation → its version as this partition last heard it: `publish.lua` refuses a publish made from a cache older than that (`store::versions`) |
//! | `P:{q}:release` | list | events no longer the newest of their record, to be given back their TTL |
//! | `P:{q}:standby-for` | hash | with `WEIR_REDIS_WAIT_REPLICAS`: partition number → until when (ms) events of that partition published here, as its standby, may still be here (`store::events::standby`) |
//! | `P:{q}:d:{dlv}` | hash | a delivery (`store::queue::deliveries`; `{dlv}` its id without `dlv_`); no TTL: removed with its day (`store::queue::trim`) |
//! | `P:{q}:od:{org}:{day}`, `P:{q}:wd:{wh}:{day}` | list | deliveries of an organisation / a webhook made here on a day (UTC, days since the epoch), in the order they were made: their ids without `dlv_` ([`index_entry`]) |
//! | `P:{q}:wc:{org}:{wh}:{day}` | hash, TTL | a webhook's deliveries that an attempt ended here on a day: `<hour>s` succeeded, `<hour>f` failed (`store::queue::tally`); kept two days |
//! | `P:{q}:el:{org}:{hour}` | list, TTL | the event log: events of an organisation accepted here in an hour (hours since the epoch), in the order they were accepted, 22 bytes each (`store::events::log`); expires `WEIR_EVENT_RETENTION` after its hour; with history, its first entries move to PostgreSQL as the day indexes' do |
//! | `P:{replays}:jobs` | zset | replays to run, by due time or end of lease (ms) (replays are rare: they share one slot) |
//! | `P:{history}:jobs` | zset | with history in PostgreSQL: partitions whose ended work is moved, by when next due or the end of a mover's lease (ms) |
//! | `P:{replays}:r:{wh}` | hash, TTL once done | the latest replay of a webhook and how far it got (`store::events::replay`) |
//! | `P:{q}:ended` | zset | with history in PostgreSQL: deliveries ended here, by when (ms), until they move (`store::queue::ended`) |
//! | `P:{q}:accepted` | zset | with history in PostgreSQL: event keys accepted here, by when (ms), until they move (`store::events::accepted`) |
//! | `P:{q}:lb` | hash | with history in PostgreSQL: day index (`od`, `wd`) or event log hour (`el`) key → how many of its first entries moved to PostgreSQL (`store::queue::index`); dropped when its day is trimmed |
//! | `P:{q}:lm` | zset | with history in PostgreSQL: day indexes and event log hours whose first entries are to move, by when their first entry here was made (ms) |
//! | `P:{q}:swept` | string | with history in PostgreSQL: `1` once the snapshot pointers a release before 2026-11-28 left here (pointing at events already moved) have been swept to PostgreSQL (`history::sweep`) |
//! | `P:{q}:trimmed` | hash | organisation → the last day whose deliveries were removed here |
//! | `P:{q}:ready` | zset | webhooks with queued deliveries here, by when the next one is due (ms) |
//! | `P:{q}:wn:{wh}` | list | a webhook's new deliveries here, not yet claimed (`dlv org evt`), oldest first |
//! | `P:{q}:w:{wh}` | zset | a webhook's other queued deliveries here (`dlv org evt`): waiting for a retry (by its time) or being attempted (by the end of the lease) |
//! | `P:{q}:oh:{wh}` | hash | an ordered webhook's heads here (`lua/order.lua`): `s` + subject (`Type:id`) → the delivery of that subject that is queued, being attempted or waiting for its retry; `#` the last hold's number |
//! | `P:{q}:oq:{wh}` | zset (lex) | an ordered webhook's deliveries held here behind their subject's head: `subject NUL number NUL member`, the number (12 digits) in acceptance order |
//!
//! Names a key holds per delivery are kept short (each is paid once per delivery for the
//! retention period): the event's is a digest, the delivery's drops its id's prefix.
//!
//! Delivery ids carry their partition (`crate::ids::derived_tagged`: derived from the
//! organisation, event and webhook and the time the event was accepted), so a delivery is found
//! from its id alone.

mod names;
mod partitioned;

use crate::ids;

pub use self::names::{
    HOUR_MS, day_of, delivery_of_entry, event_digest, event_name, hour_of, index_entry, name_of_digest,
};

/// Version of this layout, kept in `P:meta` so an incompatible data set is refused.
pub const LAYOUT: &str = "3";

/// Most partitions a data set can have (delivery ids carry the partition in 10 bits).
pub const MAX_PARTITIONS: u16 = 1024;

/// Number of slots in Redis Cluster.
const SLOTS: u32 = 16384;

/// One partition of the event and delivery data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Partition(pub u16);

/// The names of every key of one installation (prefix and partition count).
#[derive(Debug, Clone)]
pub struct Keys {
    prefix: String,
    /// The hash tag of each partition, `{…}` included.
    tags: Vec<String>,
}

/// `heads` then each of `parts` after a `:`, in one allocation of the right size (keys are
/// built for every command; `format!` and pushes grew each one several times).
fn joined(heads: &[&str], parts: &[&str]) -> String {
    let len = heads.iter().map(|h| h.len()).sum::<usize>() + parts.iter().map(|p| p.len() + 1).sum::<usize>();
    let mut key = String::with_capacity(len);
    for head in heads {
        key.push_str(head);
    }
    for part in parts {
        key.push(':');
        key.push_str(part);
    }
    key
}

/// The Redis Cluster slot of a key (CRC16 of its hash tag, or of the whole key).
pub fn slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = bytes.iter().position(|b| *b == b'{').and_then(|open| {
        let rest = &bytes[open + 1..];
        rest.iter().position(|b| *b == b'}').filter(|close| *close > 0).map(|close| &rest[..close])
    });
    (crc16::State::<crc16::XMODEM>::calculate(tagged.unwrap_or(bytes)) as u32 % SLOTS) as u16
}

impl Keys {
    /// The layout for `prefix` with `partitions` partitions (1 to [`MAX_PARTITIONS`]).
    pub fn new(prefix: &str, partitions: u16) -> Keys {
        let n = partitions.clamp(1, MAX_PARTITIONS);
        let tags = (0..n).map(|i| partition_tag(i, n)).collect();
        Keys { prefix: prefix.to_owned(), tags }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// How many partitions there are.
    pub fn partition_count(&self) -> u16 {
        self.tags.len() as u16
    }

    pub fn partitions(&self) -> impl Iterator<Item = Partition> + use<> {
        (0..self.partition_count()).map(Partition)
    }

    /// The partition of the events (and so the deliveries) about one record.
    pub fn partition_of_subject(&self, org: &str, subject_type: &str, subject_id: &str) -> Partition {
        let digest = ids::digest(&[org, subject_type, subject_id]);
        Partition((u16::from_be_bytes([digest[0], digest[1]])) % self.partition_count())
    }

    /// The partition a delivery id names, if the id is one of this data set's.
    pub fn partition_of_delivery(&self, delivery: &str) -> Option<Partition> {
        let p = ids::tag_of(ids::Kind::Delivery, delivery)?;
        (p < self.partition_count()).then_some(Partition(p))
    }

    fn k(&self, parts: &[&str]) -> String {
        joined(&[&self.prefix], parts)
    }

    fn tagged(&self, tag: &str, parts: &[&str]) -> String {
        joined(&[&self.prefix, ":{", tag, "}"], parts)
    }

    fn part(&self, p: Partition, parts: &[&str]) -> String {
        joined(&[&self.prefix, ":", &self.tags[usize::from(p.0) % self.tags.len()]], parts)
    }

    // --- the data set --------------------------------------------------------------------

    pub fn meta(&self) -> String {
        self.k(&["meta"])
    }

    pub fn orgs(&self) -> String {
        self.k(&["orgs"])
    }

    // --- an organisation -----------------------------------------------------------------

    pub fn org(&self, org: &str) -> String {
        self.tagged(org, &["org"])
    }

    /// The organisation's version: raised by every change a cached publish depends on
    /// (`store::versions`).
    pub fn org_version(&self, org: &str) -> String {
        self.tagged(org, &["version"])
    }

    /// The organisation's events of a UTC day (`store::events::daily`).
    pub fn events_of_day(&self, org: &str, day: u32) -> String {
        self.tagged(org, &["events-of-day", &day.to_string()])
    }

    pub fn org_clients(&self, org: &str) -> String {
        self.tagged(org, &["clients"])
    }

    pub fn org_users(&self, org: &str) -> String {
        self.tagged(org, &["users"])
    }

    pub fn webhooks(&self, org: &str) -> String {
        self.tagged(org, &["webhooks"])
    }

    pub fn deleted_webhooks(&self, org: &str) -> String {
        self.tagged(org, &["deleted-webhooks"])
    }

    pub fn webhook(&self, org: &str, webhook: &str) -> String {
        self.tagged(org, &["wh", webhook])
    }

    pub fn subscribers(&self, org: &str, action: &str) -> String {
        self.tagged(org, &["subs", action])
    }

    pub fn filters(&self, org: &str) -> String {
        self.tagged(org, &["filters"])
    }

    pub fn plugins(&self, org: &str) -> String {
        self.tagged(org, &["plugins"])
    }

    pub fn plugin_versions(&self, org: &str) -> String {
        self.tagged(org, &["plugin-versions"])
    }

    pub fn plugin(&self, org: &str, plugin: &str) -> String {
        self.tagged(org, &["plg", plugin])
    }

    pub fn plugin_wasm(&self, org: &str, plugin: &str) -> String {
        self.tagged(org, &["plg", plugin, "wasm"])
    }

    pub fn plugin_code(&self, org: &str, sha256: &str) -> String {
        self.tagged(org, &["code", sha256])
    }

    pub fn plugin_code_refs(&self, org: &str) -> String {
        self.tagged(org, &["code-refs"])
    }

    pub fn user(&self, org: &str, user: &str) -> String {
        self.tagged(org, &["user", user])
    }

    // --- one thing -----------------------------------------------------------------------

    pub fn client(&self, client: &str) -> String {
        self.tagged(client, &["client"])
    }

    pub fn client_tokens(&self, client: &str) -> String {
        self.tagged(client, &["tokens"])
    }

    pub fn token(&self, client: &str, token_hash: &str) -> String {
        self.tagged(client, &["token", token_hash])
    }

    pub fn rate(&self, client: &str) -> String {
        self.tagged(client, &["rate"])
    }

    pub fn notice_rate(&self, org: &str) -> String {
        self.tagged(org, &["notice-rate"])
    }

    pub fn webhook_limiter(&self, webhook: &str) -> String {
        self.tagged(webhook, &["limiter"])
    }

    pub fn user_email(&self, email: &str) -> String {
        self.k(&["user-email", email])
    }

    pub fn session(&self, token_hash: &str) -> String {
        self.k(&["session", token_hash])
    }

    pub fn login_attempts(&self, email: &str) -> String {
        self.k(&["login", email])
    }

    pub fn portal_link(&self, token_hash: &str) -> String {
        self.k(&["portal-link", token_hash])
    }

    pub fn portal_session(&self, token_hash: &str) -> String {
        self.k(&["portal-session", token_hash])
    }

    pub fn portal_sessions(&self, org: &str) -> String {
        self.k(&["portal-sessions", org])
    }

    pub fn portal_exchanges(&self, address: &str) -> String {
        self.k(&["portal-exchanges", address])
    }

    pub fn portal_links(&self, org: &str) -> String {
        self.tagged(org, &["portal-links"])
    }

    pub fn portal_generation(&self, org: &str) -> String {
        self.tagged(org, &["portal-generation"])
    }

    pub fn test_events(&self, org: &str) -> String {
        self.tagged(org, &["test-events"])
    }

    pub fn test_events_of(&self, org: &str, webhook: &str) -> String {
        self.tagged(org, &["test-events", webhook])
    }

    pub fn export(&self, export: &str) -> String {
        self.tagged("exports", &["x", export])
    }

    pub fn export_file(&self, export: &str) -> String {
        self.tagged("exports", &["file", export])
    }

    pub fn export_jobs(&self) -> String {
        self.tagged("exports", &["jobs"])
    }

    pub fn replay_jobs(&self) -> String {
        self.tagged("replays", &["jobs"])
    }

    pub fn history_jobs(&self) -> String {
        self.tagged("history", &["jobs"])
    }

    pub fn replay(&self, webhook: &str) -> String {
        self.tagged("replays", &["r", webhook])
    }

    pub fn export_link_secret(&self) -> String {
        self.k(&["secret", "export-links"])
    }
}

/// A hash tag for partition `i` of `n` whose slot lies in the `i`th of `n` equal slices of
/// the slot space: masters own contiguous slot ranges, so partitions spread evenly over them.
fn partition_tag(i: u16, n: u16) -> String {
    let (lo, hi) = (u32::from(i) * SLOTS / u32::from(n), (u32::from(i) + 1) * SLOTS / u32::from(n));
    for salt in 0u32.. {
        let tag = format!("p{i}.{salt}");
        let slot = u32::from(crc16::State::<crc16::XMODEM>::calculate(tag.as_bytes())) % SLOTS;
        if (lo..hi).contains(&slot) {
            return format!("{{{tag}}}");
        }
    }
    unreachable!("some salt lands in every slice of the slot space")
}

#[cfg(test)]
mod tests;
