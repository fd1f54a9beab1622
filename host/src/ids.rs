//! Identifiers: opaque, prefixed and time-sortable (contract §2).
//!
//! An id is a prefix such as `wh_` followed by 26 Crockford base32 characters: 10 for the
//! creation time in milliseconds and 16 for 80 random bits. Ids of one kind therefore sort
//! by creation time as plain strings, which the stores use for newest-first pagination
//! (`ZREVRANGEBYLEX`) and for expiring index entries by age.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The kinds of identifier Weir hands out, with their prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Org,
    Client,
    Webhook,
    Event,
    Delivery,
    Plugin,
    ReportExport,
    User,
    PortalLink,
    Source,
    SourceRequest,
}

impl Kind {
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Org => "org_",
            Kind::Client => "cli_",
            Kind::Webhook => "wh_",
            Kind::Event => "evt_",
            Kind::Delivery => "dlv_",
            Kind::Plugin => "plg_",
            Kind::ReportExport => "rex_",
            Kind::User => "usr_",
            Kind::PortalLink => "ptl_",
            Kind::Source => "src_",
            Kind::SourceRequest => "req_",
        }
    }
}

/// The last time and random part handed out: ids made in the same millisecond by this
/// process increment the random part, so they still sort in creation order.
static LAST: Mutex<(u64, u128)> = Mutex::new((0, 0));

/// A new identifier of `kind`, created now.
pub fn new(kind: Kind) -> String {
    let (millis, random) = next(1);
    encode(kind, millis, random)
}

/// A new identifier of `kind` that carries a 10-bit `tag` (the first two characters of its
/// random part), read back with [`tag_of`]: delivery ids carry their partition.
pub fn new_tagged(kind: Kind, tag: u16) -> String {
    let (millis, random) = next(1);
    encode(kind, millis, tagged(random, tag))
}

/// A random part whose top 10 bits are `tag`.
fn tagged(random: u128, tag: u16) -> u128 {
    (random & ((1 << 70) - 1)) | (u128::from(tag & 0x3ff) << 70)
}

/// An identifier of `kind` made at `millis`, carrying `tag` like [`new_tagged`], whose
/// random part is derived from `seed` (SHA-256): the same seed and time give the same id.
/// A delivery's id is derived from its organisation, event and webhook, so the deliveries
/// of an event are found from the event alone.
pub fn derived_tagged(kind: Kind, millis: u64, tag: u16, seed: &[&str]) -> String {
    encode(kind, millis, tagged(u128::from_be_bytes(digest_128(seed)), tag))
}

/// SHA-256 of `parts`, each followed by a NUL byte (so `["ab", "c"]` and `["a", "bc"]`
/// differ): the one way Weir derives names and places from ids.
pub fn digest(parts: &[&str]) -> [u8; 32] {
    use sha2::Digest;
    let mut hash = sha2::Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.finalize().into()
}

/// The first 128 bits of [`digest`] of `parts`.
pub fn digest_128(parts: &[&str]) -> [u8; 16] {
    let digest = digest(parts);
    let mut out = [0; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// The tag of an identifier made by [`new_tagged`].
pub fn tag_of(kind: Kind, id: &str) -> Option<u16> {
    if !is_valid(kind, id) {
        return None;
    }
    let digits = &id.as_bytes()[kind.prefix().len() + 10..kind.prefix().len() + 12];
    Some(decode_base32(digits)? as u16)
}

/// When an identifier was made (milliseconds since the epoch).
pub fn millis_of(kind: Kind, id: &str) -> Option<u64> {
    if !is_valid(kind, id) {
        return None;
    }
    decode_base32(&id.as_bytes()[kind.prefix().len()..kind.prefix().len() + 10]).map(|v| v as u64)
}

fn decode_base32(digits: &[u8]) -> Option<u128> {
    digits.iter().try_fold(0u128, |acc, d| {
        let value = ALPHABET.iter().position(|a| a == d)?;
        Some((acc << 5) | value as u128)
    })
}

fn next(step: u128) -> (u64, u128) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    // A fresh random part leaves room to count up within the millisecond.
    let (millis, random) = if now > last.0 {
        (now, rand::random::<u128>() & ((1 << 79) - 1))
    } else {
        (last.0, (last.1 | (step - 1)) + 1 + (step - 1))
    };
    *last = (millis, random | (step - 1));
    (millis, random)
}

/// Encodes an identifier from its parts (exposed for tests and for time cut-offs).
pub fn encode(kind: Kind, millis: u64, random: u128) -> String {
    let mut out = String::with_capacity(kind.prefix().len() + 26);
    out.push_str(kind.prefix());
    push_base32(&mut out, u128::from(millis) & ((1 << 48) - 1), 10);
    push_base32(&mut out, random & ((1 << 80) - 1), 16);
    out
}

/// The smallest identifier of `kind` created at `millis`: every id created at or after that
/// instant sorts at or above it.
pub fn lower_bound(kind: Kind, millis: u64) -> String {
    encode(kind, millis, 0)
}

fn push_base32(out: &mut String, value: u128, digits: u32) {
    for i in (0..digits).rev() {
        let index = (value >> (5 * i)) & 31;
        out.push(ALPHABET[index as usize] as char);
    }
}

/// Whether `id` looks like an identifier of `kind` (right prefix, 26 base32 characters).
/// Used to answer malformed path ids with 404 without touching the store.
pub fn is_valid(kind: Kind, id: &str) -> bool {
    match id.strip_prefix(kind.prefix()) {
        Some(rest) => rest.len() == 26 && rest.bytes().all(|b| ALPHABET.contains(&b)),
        None => false,
    }
}

/// Longest client-chosen event id, after `evt_`.
pub const MAX_EVENT_ID: usize = 100;

/// The prefix of operational events' ids (`domain::notices`): Weir's alone.
pub const OPERATIONAL_EVENT_PREFIX: &str = "evt_weir_";

/// The prefix of test events' ids (contract §9, §10): a namespace of their own, which no
/// publisher may choose, so a test event is never found as an event, nor is a real event
/// ever a duplicate of one.
pub const TEST_EVENT_PREFIX: &str = "evt_test_";

/// A new test event's id: [`TEST_EVENT_PREFIX`] and the 26 characters of a new event id.
pub fn new_test_event() -> String {
    let id = new(Kind::Event);
    format!("{TEST_EVENT_PREFIX}{}", &id[Kind::Event.prefix().len()..])
}

/// Whether `id` is a test event's.
pub fn is_test_event_id(id: &str) -> bool {
    id.starts_with(TEST_EVENT_PREFIX)
}

/// Whether `id` is an event id: Weir's own, or one a publisher chose (`evt_` and up to
/// 100 letters, digits, `_` or `-`).
pub fn is_event_id(id: &str) -> bool {
    id.strip_prefix(Kind::Event.prefix()).is_some_and(|rest| {
        !rest.is_empty()
            && rest.len() <= MAX_EVENT_ID
            && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_event_ids_are_event_ids_of_their_own_namespace() {
        let id = new_test_event();
        assert!(is_event_id(&id) && is_test_event_id(&id), "{id}");
        assert_eq!(id.len(), TEST_EVENT_PREFIX.len() + 26);
        assert!(!is_test_event_id(&new(Kind::Event)));
    }

    #[test]
    fn ids_have_prefix_and_length() {
        let id = new(Kind::Webhook);
        assert!(id.starts_with("wh_"));
        assert_eq!(id.len(), 3 + 26);
        assert!(is_valid(Kind::Webhook, &id));
        assert!(!is_valid(Kind::Delivery, &id));
        assert!(!is_valid(Kind::Webhook, "wh_short"));
        assert!(!is_valid(Kind::Webhook, &id.replace('0', "u").to_lowercase()));
    }

    #[test]
    fn ids_sort_by_time() {
        let a = encode(Kind::Event, 1_000, u128::MAX);
        let b = encode(Kind::Event, 1_001, 0);
        assert!(a < b);
        assert!(lower_bound(Kind::Event, 1_001) <= b);
        assert!(lower_bound(Kind::Event, 1_002) > b);
    }

    #[test]
    fn ids_made_in_a_row_sort_in_creation_order() {
        let ids: Vec<String> = (0..2000).map(|_| new(Kind::Webhook)).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn tagged_ids_carry_their_tag_and_time() {
        for tag in [0, 1, 15, 511, 1023] {
            let before = std::time::SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
            let id = new_tagged(Kind::Delivery, tag);
            assert!(is_valid(Kind::Delivery, &id), "{id}");
            assert_eq!(tag_of(Kind::Delivery, &id), Some(tag));
            let at = millis_of(Kind::Delivery, &id).unwrap();
            assert!(at >= before && at < before + 1000, "{at} {before}");
        }
        assert_eq!(tag_of(Kind::Delivery, "dlv_short"), None);
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_tagged(Kind::Delivery, 7)).collect();
        assert_eq!(ids.len(), 1000);
    }

    #[test]
    fn derived_ids_are_stable_tagged_and_distinct() {
        let a = derived_tagged(Kind::Delivery, 1_700_000_000_000, 9, &["org_1", "evt_1", "wh_1"]);
        assert_eq!(a, derived_tagged(Kind::Delivery, 1_700_000_000_000, 9, &["org_1", "evt_1", "wh_1"]));
        assert!(is_valid(Kind::Delivery, &a));
        assert_eq!(tag_of(Kind::Delivery, &a), Some(9));
        assert_eq!(millis_of(Kind::Delivery, &a), Some(1_700_000_000_000));
        assert_ne!(a, derived_tagged(Kind::Delivery, 1_700_000_000_000, 9, &["org_1", "evt_1", "wh_2"]));
        // Parts are separated: moving a character between them changes the id.
        assert_ne!(a, derived_tagged(Kind::Delivery, 1_700_000_000_000, 9, &["org_1e", "vt_1", "wh_1"]));
    }

    #[test]
    fn ids_are_distinct() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new(Kind::Delivery)).collect();
        assert_eq!(ids.len(), 1000);
    }
}
