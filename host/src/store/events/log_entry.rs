//! One entry of the event log (`store::events::log`): 22 bytes per event, in the hour's list
//! of its partition.
//!
//! | bytes | holds |
//! |---|---|
//! | 16 | the event's digest ([`keys::event_digest`]): it names the event's key |
//! | 4 | when it was accepted: ms into its hour, big-endian |
//! | 2 | its action's code ([`action_code`]: the first two bytes of SHA-256 of the name) |
//!
//! Kept apart from the log's reading so that the index machinery that moves the log's
//! lists to history (`store::queue::index`) can tell an entry's time without it.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::catalog;
use crate::store::core::keys::{self, HOUR_MS};

/// Bytes of one log entry.
pub const ENTRY_LEN: usize = 22;

/// The code of an action in the log: stable across versions (it does not depend on the
/// catalogue's order); a unit test checks that no two actions share one.
pub fn action_code(action: &str) -> [u8; 2] {
    let digest = crate::ids::digest(&[action]);
    [digest[0], digest[1]]
}

/// The action of a code, if it is one of the catalogue's.
fn action_of(code: [u8; 2]) -> Option<&'static str> {
    static ACTIONS: LazyLock<HashMap<[u8; 2], &'static str>> =
        LazyLock::new(|| catalog::actions().chain([catalog::SOURCE_EVENTS]).map(|a| (action_code(a), a)).collect());
    ACTIONS.get(&code).copied()
}

/// When the entry `bytes` of the list of `hour` was accepted (ms), whatever its action.
pub fn accepted_ms_of(bytes: &[u8], hour: u32) -> Option<u64> {
    let offset = u32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
    (bytes.len() == ENTRY_LEN && u64::from(offset) < HOUR_MS).then(|| u64::from(hour) * HOUR_MS + u64::from(offset))
}

/// One event in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogEntry {
    /// Names the event's key ([`keys::name_of_digest`]).
    pub digest: [u8; 16],
    /// When it was accepted (ms).
    pub accepted_ms: u64,
    pub action: &'static str,
}

impl LogEntry {
    /// The entry of an event (the action must be the catalogue's, as every published
    /// event's is).
    pub fn of(org: &str, event: &str, accepted_ms: u64, action: &'static str) -> LogEntry {
        LogEntry { digest: keys::event_digest(org, event), accepted_ms, action }
    }

    pub fn encode(&self) -> [u8; ENTRY_LEN] {
        let mut out = [0; ENTRY_LEN];
        out[..16].copy_from_slice(&self.digest);
        out[16..20].copy_from_slice(&((self.accepted_ms % HOUR_MS) as u32).to_be_bytes());
        out[20..].copy_from_slice(&action_code(self.action));
        out
    }

    /// Reads an entry of the list of `hour`; `None` if it is not one.
    pub fn decode(bytes: &[u8], hour: u32) -> Option<LogEntry> {
        let accepted_ms = accepted_ms_of(bytes, hour)?;
        let digest: [u8; 16] = bytes[..16].try_into().ok()?;
        let action = action_of([bytes[20], bytes[21]])?;
        Some(LogEntry { digest, accepted_ms, action })
    }

    /// The hour whose list holds it.
    pub fn hour(&self) -> u32 {
        keys::hour_of(self.accepted_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_and_actions_have_distinct_codes() {
        let codes: std::collections::HashSet<[u8; 2]> = catalog::actions().map(action_code).collect();
        assert_eq!(codes.len(), catalog::actions().count(), "two actions share a code");
        let entry = LogEntry::of("org_1", "evt_1", 1_764_000_000_123, "form_completed");
        let bytes = entry.encode();
        assert_eq!(LogEntry::decode(&bytes, entry.hour()), Some(entry));
        assert_eq!(LogEntry::decode(&bytes[..21], entry.hour()), None, "too short");
        let mut unknown = bytes;
        unknown[20..].copy_from_slice(&[0, 0]);
        if action_of([0, 0]).is_none() {
            assert_eq!(LogEntry::decode(&unknown, entry.hour()), None, "an unknown action");
        }
    }
}
