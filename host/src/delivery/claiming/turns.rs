//! What a partition's claim loop carries from one claim to the next, what a turn of it does
//! next, and the numbers it goes by.

use std::time::{Duration, Instant};

use crate::store::Partition;

/// Most deliveries one claim takes.
pub(super) const CLAIM_MAX: usize = 256;
/// Webhooks a claim reply names to ask for next.
pub(super) const HINTS: usize = 32;
/// While every webhook known to have work in the partition is parked, how often a claim
/// still looks for other webhooks' work: from the first to the last, doubling while it finds
/// none. (Parked lanes are looked at again when they have room, or their wait ends.)
pub(super) const LOOK_AROUND: Duration = Duration::from_millis(10);
pub(super) const LOOK_AROUND_MAX: Duration = Duration::from_millis(200);
/// Poll interval of an idle partition: from the first to the last, doubling.
pub(super) const IDLE_MIN: Duration = Duration::from_millis(2);
pub(super) const IDLE_MAX: Duration = Duration::from_millis(200);
/// When a claim takes a delivery this process still holds (its attempt is still being
/// recorded), how soon the delivery is due again.
pub(super) const HELD_AGAIN: Duration = Duration::from_millis(500);

/// What one partition's claim loop carries from one claim to the next.
pub(super) struct LoopState {
    pub(super) p: Partition,
    /// Webhooks the last claim's reply named (they have work here).
    pub(super) hints: Vec<String>,
    /// Webhooks with work here whose lanes have no room: left out of the hints by name.
    pub(super) parked: Vec<String>,
    /// How long to sleep when nothing was claimed.
    pub(super) idle: Duration,
    /// When a claim last looked for other webhooks' work while all known were parked, and
    /// how long until it looks again.
    pub(super) last_look: Instant,
    pub(super) look: Duration,
}

/// What one turn of the loop does next.
pub(super) enum Turn {
    /// Claim again at once.
    Again,
    /// Nothing to claim: sleep (until the time, new work, room or the stop).
    Idle(Duration),
}
