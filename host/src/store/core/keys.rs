#![doc = include_str!("keys/layout.md")]

mod names;
mod slots;

pub use self::slots::slot;
use self::slots::{joined, partition_tag};
use crate::ids;

pub use self::names::{
    HOUR_MS, day_of, delivery_of_entry, event_digest, event_name, hour_of, index_entry, name_of_digest,
};

/// Version of this layout, kept in `P:meta` so an incompatible data set is refused.
pub const LAYOUT: &str = "3";

/// Most partitions a data set can have (delivery ids carry the partition in 10 bits).
pub const MAX_PARTITIONS: u16 = 1024;

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

    /// An organisation's sources (`store::tenants::sources`), a source, and the index from
    /// an ingest token's hash (its requests and duplicate marks are in the partitions).
    pub fn sources(&self, org: &str) -> String {
        self.tagged(org, &["sources"])
    }

    pub fn source(&self, org: &str, source: &str) -> String {
        self.tagged(org, &["src", source])
    }

    pub fn source_token(&self, token_hash: &str) -> String {
        self.k(&["src-token", token_hash])
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

    // --- a partition's keys (`P:{q}:…`) ------------------------------------------------
    pub fn event(&self, p: Partition, org: &str, event: &str) -> String {
        self.event_named(p, &event_name(org, event))
    }

    /// An event's key from its name ([`event_name`]).
    pub fn event_named(&self, p: Partition, name: &str) -> String {
        self.part(p, &["e", name])
    }

    pub fn event_log(&self, p: Partition, org: &str, hour: u32) -> String {
        self.part(p, &["el", org, &hour.to_string()])
    }

    /// A source's latest requests taken in here, and a request seen here (by its duplicate
    /// id): written by the publish of the event it became (`lua/publish.lua`).
    pub fn source_requests(&self, p: Partition, org: &str, source: &str) -> String {
        self.part(p, &["src-requests", org, source])
    }

    pub fn source_seen(&self, p: Partition, org: &str, source: &str, digest: &str) -> String {
        self.part(p, &["src-seen", org, source, digest])
    }

    pub fn snapshots(&self, p: Partition, org: &str) -> String {
        self.part(p, &["snap", org])
    }

    /// The publishers' events of a UTC day in this partition, per organisation.
    pub fn published_of_day(&self, p: Partition, day: u32) -> String {
        self.part(p, &["published", &day.to_string()])
    }

    /// Each organisation's version as this partition last heard it (`store::versions`).
    pub fn versions(&self, p: Partition) -> String {
        self.part(p, &["versions"])
    }

    pub fn released_events(&self, p: Partition) -> String {
        self.part(p, &["release"])
    }

    pub fn standby_for(&self, p: Partition) -> String {
        self.part(p, &["standby-for"])
    }

    pub fn delivery(&self, p: Partition, delivery: &str) -> String {
        self.part(p, &["d", index_entry(delivery)])
    }

    pub fn org_deliveries(&self, p: Partition, org: &str, day: u32) -> String {
        self.part(p, &["od", org, &day.to_string()])
    }

    pub fn ended(&self, p: Partition) -> String {
        self.part(p, &["ended"])
    }

    pub fn accepted(&self, p: Partition) -> String {
        self.part(p, &["accepted"])
    }

    pub fn webhook_deliveries(&self, p: Partition, webhook: &str, day: u32) -> String {
        self.part(p, &["wd", webhook, &day.to_string()])
    }

    pub fn webhook_counts(&self, p: Partition, org: &str, webhook: &str, day: u32) -> String {
        self.part(p, &["wc", org, webhook, &day.to_string()])
    }

    pub fn index_bases(&self, p: Partition) -> String {
        self.part(p, &["lb"])
    }

    pub fn index_moves(&self, p: Partition) -> String {
        self.part(p, &["lm"])
    }

    /// Set once the partition's pointers left behind by releases before pointers moved
    /// have been swept to history (`history::sweep`).
    pub fn pointers_swept(&self, p: Partition) -> String {
        self.part(p, &["swept"])
    }

    pub fn trimmed(&self, p: Partition) -> String {
        self.part(p, &["trimmed"])
    }

    pub fn ready(&self, p: Partition) -> String {
        self.part(p, &["ready"])
    }

    pub fn webhook_new(&self, p: Partition, webhook: &str) -> String {
        self.part(p, &["wn", webhook])
    }

    pub fn webhook_queue(&self, p: Partition, webhook: &str) -> String {
        self.part(p, &["w", webhook])
    }

    /// An ordered webhook's heads here: which delivery of each subject may go now.
    pub fn order_heads(&self, p: Partition, webhook: &str) -> String {
        self.part(p, &["oh", webhook])
    }

    /// An ordered webhook's deliveries held here behind their subject's head.
    pub fn order_held(&self, p: Partition, webhook: &str) -> String {
        self.part(p, &["oq", webhook])
    }

    /// Both keys of a webhook's order here, as every order-aware script declares them:
    /// [`Keys::order_heads`], then [`Keys::order_held`].
    pub fn order(&self, p: Partition, webhook: &str) -> [String; 2] {
        [self.order_heads(p, webhook), self.order_held(p, webhook)]
    }
}

#[cfg(test)]
mod tests;
