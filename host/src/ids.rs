//! Identifiers: opaque, prefixed and time-sortable (contract §2).
//!
//! An id is a prefix such as `wh_` followed by 26 Crockford base32 characters: 10 for the
//! creation time in milliseconds and 16 for 80 random bits. Ids of one kind therefore sort
//! by creation time as plain strings, which the stores use for newest-first pagination
//! (`ZREVRANGEBYLEX`) and for expiring index entries by age.

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
        }
    }
}

/// A new identifier of `kind`, created now.
pub fn new(kind: Kind) -> String {
    let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    let random: u128 = rand::random();
    encode(kind, millis, random)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn ids_are_distinct() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new(Kind::Delivery)).collect();
        assert_eq!(ids.len(), 1000);
    }
}
