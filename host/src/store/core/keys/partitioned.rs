//! The keys of a partition (`P:{q}:…`, the table in `super`): an event, its deliveries,
//! their day indexes, the event log, the queues and what the workers share about them.

use super::{Keys, Partition, event_name, index_entry};

impl Keys {
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
