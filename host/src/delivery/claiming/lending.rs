//! What the claimer lends with each hold it hands out ([`Lender`]): the hold gives its lane
//! slot and permit back through it, and asks the lanes what they know of its webhook.

use tokio::sync::Notify;

use super::Claimer;
use super::claimed::{Later, Lender};
use super::lanes::{Signal, Waiting};
use crate::store::queue::endpoint::{EndpointChange, EndpointFields};

impl Lender for Claimer {
    /// Frees the lane slot of `delivery`'s ended attempt: the next waiting deliveries of
    /// the webhook start at once, and the partitions with more for it are asked for a
    /// refill — every partition when the attempt was slow (its end makes room in the slow
    /// share for probing webhooks anywhere).
    fn release_lane(&self, webhook: &str, delivery: &str) {
        let was_slow = self.holds.was_slow(delivery);
        let freed = self.lanes.release(webhook, was_slow);
        for next in freed.next {
            self.begin(webhook.to_owned(), next);
        }
        let rooms: Vec<&Notify> = if was_slow {
            self.room.iter().collect()
        } else {
            freed.refill.iter().filter_map(|p| self.room.get(usize::from(p.0))).collect()
        };
        for room in rooms {
            room.notify_one();
        }
    }

    fn done(&self, delivery: &str) {
        self.holds.done(delivery);
    }

    fn paused_until(&self, webhook: &str) -> Option<u64> {
        self.lanes.paused_until(webhook)
    }

    fn learned(&self, webhook: &str, rate_limit: Option<u32>, endpoint: &EndpointFields) {
        self.lanes.learned(webhook, rate_limit, endpoint);
    }

    /// An attempt of `delivery` to `webhook` has had no answer for `lanes::SLOW_AFTER`: its
    /// permit goes back, and it counts against the slow share.
    fn became_slow(&self, webhook: &str, delivery: &str) {
        if self.holds.became_slow(delivery) {
            self.lanes.became_slow(webhook);
        }
    }

    fn endpoint_signal(&self, webhook: &str, signal: Signal) -> Option<EndpointChange> {
        let change = self.lanes.signal(webhook, signal)?;
        let due_ms = match &change {
            EndpointChange::Healthy { .. } => None,
            EndpointChange::Probing { at_ms, .. } => Some(*at_ms),
            EndpointChange::Paused { until_ms, .. } => Some(*until_ms),
        };
        if let (Some(due_ms), Some(me)) = (due_ms, self.me.upgrade()) {
            let waiting = self.lanes.take_waiting_of(webhook);
            if !waiting.is_empty() {
                let items = waiting.into_iter().map(|w| (webhook.to_owned(), w)).collect();
                tokio::spawn(async move { me.give_back(items, due_ms).await });
            }
        }
        Some(change)
    }

    fn give_back<'a>(&'a self, webhook: &'a str, waiting: Waiting, until_ms: u64) -> Later<'a> {
        Box::pin(Claimer::give_back(self, vec![(webhook.to_owned(), waiting)], until_ms))
    }

    fn put_back<'a>(&'a self, webhook: &'a str, waiting: &'a Waiting, until_ms: u64) -> Later<'a> {
        Box::pin(async move {
            let work = &self.doors.work;
            if let Err(e) = work.put_back(waiting.partition, webhook, &waiting.member, until_ms).await {
                let delivery = &waiting.member.delivery;
                tracing::warn!(error = %e, delivery_id = %delivery, "cannot put a paused webhook's delivery back; its lease will run out");
            }
        })
    }
}
