//! One webhook's lane: its attempts in flight and deliveries waiting here, and what this
//! process knows of its endpoint (window, health, slow attempts, pause, rate).

use std::collections::VecDeque;
use std::time::Instant;

use crate::store::Partition;
use crate::store::queue::claim::Member;

/// A claimed delivery waiting in its lane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Waiting {
    pub(crate) partition: Partition,
    pub(crate) member: Member,
}

/// What a lane knows of its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::delivery) enum Health {
    /// No attempt has ended here yet.
    New,
    Healthy,
    Probing,
}

#[derive(Debug)]
pub(in crate::delivery) struct Lane {
    pub(in crate::delivery) in_flight: usize,
    pub(in crate::delivery) waiting: VecDeque<Waiting>,
    /// Slots promised to claims still in progress.
    pub(in crate::delivery) reserved: usize,
    /// Partitions whose claims last named this webhook as having work.
    pub(in crate::delivery) hinted: Vec<Partition>,
    /// Attempts in flight allowed while healthy.
    pub(in crate::delivery) window: usize,
    pub(in crate::delivery) health: Health,
    /// Attempts started while the lane was suspect, in flight and not slow yet; and
    /// deliveries reserved while it was.
    pub(in crate::delivery) unproven: usize,
    pub(in crate::delivery) reserved_unproven: usize,
    /// Attempts in flight past `SLOW_AFTER`.
    pub(in crate::delivery) slow: usize,
    /// The end of a pause the endpoint asked for (ms).
    pub(in crate::delivery) paused_until: Option<u64>,
    /// The webhook's `rate_limit`, and when its budget has room again.
    pub(in crate::delivery) rate_limit: Option<u32>,
    pub(in crate::delivery) not_before: Option<Instant>,
    /// The time (ms) of the endpoint state last taken from or written to the webhook.
    pub(in crate::delivery) shared_since_ms: u64,
    pub(in crate::delivery) used: Instant,
}

impl Lane {
    pub(in crate::delivery) fn new() -> Lane {
        Lane {
            in_flight: 0,
            waiting: VecDeque::new(),
            reserved: 0,
            hinted: Vec::new(),
            window: 1,
            health: Health::New,
            slow: 0,
            unproven: 0,
            reserved_unproven: 0,
            paused_until: None,
            rate_limit: None,
            not_before: None,
            shared_since_ms: 0,
            used: Instant::now(),
        }
    }

    pub(in crate::delivery) fn busy(&self) -> bool {
        self.in_flight > 0 || !self.waiting.is_empty() || self.reserved > 0 || !self.hinted.is_empty()
    }

    /// The end of the pause under way (ms).
    pub(in crate::delivery) fn paused(&mut self) -> Option<u64> {
        match self.paused_until {
            Some(until) if until > crate::time::now_millis() => Some(until),
            Some(_) => {
                self.paused_until = None;
                None
            }
            None => None,
        }
    }

    /// Whether its attempts may be slow: they count against the slow share.
    pub(in crate::delivery) fn suspect(&self) -> bool {
        self.health == Health::Probing || self.slow > 0
    }

    /// Attempts in flight allowed now.
    pub(in crate::delivery) fn limit(&self) -> usize {
        match self.health {
            Health::Healthy => self.window,
            Health::New | Health::Probing => 1,
        }
    }

    /// Deliveries it may hold claimed: its limit, plus as many waiting when healthy.
    pub(in crate::delivery) fn holding(&self) -> usize {
        match (self.health, self.slow) {
            (Health::Healthy, 0) => 2 * self.window,
            _ => self.limit(),
        }
    }
}
