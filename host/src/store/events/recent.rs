//! Events this process published lately, as published. A delivery is usually attempted
//! within milliseconds of its event's publish, often by the same process: its load then
//! takes the event from here instead of reading it from Redis and decompressing it.
//!
//! Safe because a stored event never changes while it exists (a publish of a known id
//! changes nothing). An id could be published again once its event has expired, so an
//! entry serves only deliveries made at its acceptance (their ids carry that time), and
//! only for [`FRESH`]. Bounded in entries and bytes; the oldest go first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::store::events::stored::StoredEvent;

/// Most events kept.
const MAX_ENTRIES: usize = 4096;
/// Most bytes of envelopes kept.
const MAX_BYTES: usize = 8 << 20;
/// How long an entry serves loads.
const FRESH: Duration = Duration::from_secs(60);

/// An organisation and an event id.
type Name = (String, String);

#[derive(Debug, Default)]
pub(crate) struct Recent {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// By organisation, then event id (so a lookup borrows its names).
    entries: HashMap<String, HashMap<String, Entry>>,
    count: usize,
    /// Names in the order they were kept, with the number of their keeping (a name kept
    /// again leaves its earlier place stale).
    order: VecDeque<(Name, u64)>,
    bytes: usize,
    kept: u64,
}

#[derive(Debug)]
struct Entry {
    event: Arc<StoredEvent>,
    at: Instant,
    number: u64,
}

fn size(event: &StoredEvent) -> usize {
    event.envelope.len() + event.created_at.len()
}

impl Inner {
    fn entry(&self, org: &str, event: &str) -> Option<&Entry> {
        self.entries.get(org)?.get(event)
    }

    fn insert(&mut self, (org, event): Name, entry: Entry) {
        self.bytes += size(&entry.event);
        match self.entries.entry(org).or_default().insert(event, entry) {
            Some(old) => self.bytes -= size(&old.event),
            None => self.count += 1,
        }
    }

    fn remove(&mut self, (org, event): &Name) {
        let Some(events) = self.entries.get_mut(org) else { return };
        if let Some(old) = events.remove(event) {
            self.bytes -= size(&old.event);
            self.count -= 1;
        }
        if events.is_empty() {
            self.entries.remove(org);
        }
    }

    fn is_live(&self, (org, event): &Name, number: u64) -> bool {
        self.entry(org, event).is_some_and(|e| e.number == number)
    }
}

impl Recent {
    /// Keeps an event this process has just stored.
    pub(crate) fn keep(&self, org_id: &str, event_id: &str, event: Arc<StoredEvent>) {
        if size(&event) > MAX_BYTES / 16 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.kept += 1;
        let number = inner.kept;
        let name = (org_id.to_owned(), event_id.to_owned());
        inner.insert(name.clone(), Entry { event, at: Instant::now(), number });
        inner.order.push_back((name, number));
        while inner.count > MAX_ENTRIES || inner.bytes > MAX_BYTES {
            let Some((name, number)) = inner.order.pop_front() else { break };
            if inner.is_live(&name, number) {
                inner.remove(&name);
            }
        }
        // Places left stale by names kept again go once they pile up.
        if inner.order.len() > 2 * MAX_ENTRIES {
            let mut order = std::mem::take(&mut inner.order);
            order.retain(|(name, n)| inner.is_live(name, *n));
            inner.order = order;
        }
    }

    /// The event, if kept lately and accepted at `accepted_ms`.
    pub(crate) fn get(&self, org_id: &str, event_id: &str, accepted_ms: u64) -> Option<Arc<StoredEvent>> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let entry = inner.entry(org_id, event_id)?;
        (entry.event.accepted_ms == accepted_ms && entry.at.elapsed() < FRESH).then(|| entry.event.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(accepted_ms: u64, envelope: &str) -> Arc<StoredEvent> {
        Arc::new(StoredEvent {
            created_at: "2026-11-25T10:00:00.000Z".into(),
            envelope: envelope.into(),
            accepted_ms,
            trace: None,
        })
    }

    #[test]
    fn serves_only_the_same_acceptance() {
        let recent = Recent::default();
        recent.keep("org_a", "evt_1", event(5, "{\"a\":1}"));
        assert_eq!(recent.get("org_a", "evt_1", 5).map(|e| e.envelope.clone()).as_deref(), Some("{\"a\":1}"));
        assert!(recent.get("org_a", "evt_1", 6).is_none(), "another acceptance of the id");
        assert!(recent.get("org_b", "evt_1", 5).is_none(), "another organisation's event");
        recent.keep("org_a", "evt_1", event(6, "{\"a\":2}"));
        assert_eq!(recent.get("org_a", "evt_1", 6).map(|e| e.envelope.clone()).as_deref(), Some("{\"a\":2}"));
        assert!(recent.get("org_a", "evt_1", 5).is_none());
    }

    #[test]
    fn stays_within_its_bounds() {
        let recent = Recent::default();
        for i in 0..(MAX_ENTRIES + 100) {
            recent.keep("org_a", &format!("evt_{i}"), event(1, "{}"));
            // Keeping a name again must not let its older place evict the newer entry.
            recent.keep("org_a", "evt_again", event(1, "{}"));
        }
        let inner = recent.inner.lock().unwrap();
        assert!(inner.count <= MAX_ENTRIES);
        assert_eq!(inner.count, inner.entries.values().map(HashMap::len).sum::<usize>());
        assert!(inner.order.len() <= 2 * MAX_ENTRIES, "{} places", inner.order.len());
        drop(inner);
        assert!(recent.get("org_a", "evt_0", 1).is_none(), "the oldest went first");
        assert!(recent.get("org_a", &format!("evt_{}", MAX_ENTRIES + 99), 1).is_some());
        assert!(recent.get("org_a", "evt_again", 1).is_some());

        // One name kept again and again behind a live one: its stale places do not pile up.
        let recent = Recent::default();
        recent.keep("org_a", "evt_first", event(1, "{}"));
        for _ in 0..(3 * MAX_ENTRIES) {
            recent.keep("org_a", "evt_again", event(1, "{}"));
        }
        assert!(recent.inner.lock().unwrap().order.len() <= 2 * MAX_ENTRIES);
        assert!(recent.get("org_a", "evt_first", 1).is_some());

        let big = "x".repeat(MAX_BYTES / 16 - 100);
        for i in 0..40 {
            recent.keep("org_b", &format!("evt_{i}"), event(1, &big));
        }
        assert!(recent.inner.lock().unwrap().bytes <= MAX_BYTES);
        assert!(recent.get("org_b", "evt_39", 1).is_some());
        assert!(recent.get("org_b", "evt_0", 1).is_none());
    }
}
