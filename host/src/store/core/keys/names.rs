//! The names a key holds per event and per delivery, and the time slices keys are kept by:
//! each paid once per delivery for the retention, so kept short.

use crate::ids;

/// The day (UTC, days since the epoch) of a time in ms: delivery indexes are kept by day.
pub fn day_of(ms: u64) -> u32 {
    (ms / 86_400_000) as u32
}

/// The hour (since the epoch) of a time in ms: the event log is kept by the hour.
pub fn hour_of(ms: u64) -> u32 {
    (ms / HOUR_MS) as u32
}

/// An hour in ms.
pub const HOUR_MS: u64 = 3_600_000;

/// The digest that names an event: the first 128 bits of SHA-256 of its organisation and
/// id. Event ids are chosen by publishers, so the organisation is part of it.
pub fn event_digest(org: &str, event: &str) -> [u8; 16] {
    ids::digest_128(&[org, event])
}

/// The name of an event in its key: its [`event_digest`], base64url (22 characters, where
/// the two ids take about 60).
pub fn event_name(org: &str, event: &str) -> String {
    name_of_digest(&event_digest(org, event))
}

/// The name of an event in its key, from its digest.
pub fn name_of_digest(digest: &[u8; 16]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
}

/// A delivery as its day's indexes hold it: its id without `dlv_`.
pub fn index_entry(delivery: &str) -> &str {
    delivery.strip_prefix(ids::Kind::Delivery.prefix()).unwrap_or(delivery)
}

/// The delivery id of an index entry ([`index_entry`]).
pub fn delivery_of_entry(entry: &str) -> String {
    format!("{}{entry}", ids::Kind::Delivery.prefix())
}
