//! A delivery's row: a hash in its partition (`P:{q}:d:{dlv}`, `store::core::keys`) with
//! one-letter fields — one row per delivery, kept for `WEIR_DELIVERY_RETENTION`, so every
//! byte of a name is paid once per delivery. Rust code names the fields through [`field`];
//! each Lua script's header says which it reads and writes.
//!
//! | field | holds | written by |
//! |---|---|---|
//! | `o`, `w`, `e`, `a` | organisation, webhook, event id, action | publish |
//! | `n` | attempts started (counted when each starts) | claim |
//! | `s` | status once final (absent while pending) | record, retry, webhook off |
//! | `x` | attempts, a JSON array of `[at, status_code, duration_ms, error, response_body]`, `at` in ms after the delivery was made (its id's time) | record |
//! | `l` | number of the latest recorded attempt; `g` its signatures (`crate::sign::Signatures`: the MACs, raw bytes) | record |
//! | `q` | when the next attempt is due (ms) while a retry waits | record, retry |
//! | `k` | the last place in the retry schedule allowed (set by a manual retry) | retry |
//! | `v` | manual extra attempts made while a retry waited (they take no place in the schedule) | retry |
//! | `m` | the time the waiting retry was due, kept by such an extra attempt until it is recorded | retry, record |
//! | `b`, `h`, `p` | once plugins ran: the rendered body (absent: the envelope), extra headers, plugin outcomes | record |
//! | `c` | the names of the webhook's own `headers` the latest attempt sent (JSON pairs whose values are empty: a value is a secret; absent when none) | record |
//! | `z` | the event's subject (`Type:id`), when the webhook kept each subject's order as it was made (`lua/order.lua`): while it has nothing else, such a row is read by its length and its `z` alone (`lua/load.lua`, `lua/record.lua`) | publish, replay |
//! | `r` | why it was dead-lettered | dead letter |
//! | `u` | last change without an attempt (ms); else the latest attempt's end is | record, retry |
//!
//! `created_at` is the time in the delivery's id; the request's other headers follow from
//! the row and the event, so they are not stored.
//!
//! A **plain** row holds exactly `o w e a n`: publish writes four fields, the first load
//! adds `n`, and every other writer adds at least one field of its own and removes none of
//! these. So a row of [`PLAIN_ROW_FIELDS`] fields is pending and was never recorded, and
//! `load.lua` and `record.lua` tell it by its length (`HLEN`) without reading it (most rows
//! are plain when first attempted). A writer that breaks this rule must change it.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::store::events::stored::StoredEvent;
use crate::store::queue::status::Status;

/// What an attempt changes of its delivery's row beside its outcome (`record.lua` writes
/// it with the attempt): what its plugins made, and what the attempt sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowChanges {
    /// The plugins' runs (JSON), once plugins ran (`[]` when none is attached).
    pub plugins: Option<String>,
    /// The headers the plugins added (JSON pairs), when they added some.
    pub headers: Option<String>,
    /// The body the plugins rendered, when they changed it.
    pub body: Option<String>,
    /// The names of the webhook's own headers the attempt sent (JSON pairs with empty
    /// values: the values are secrets).
    pub webhook_headers: Option<String>,
    /// The waiting retry's kept time ends with this attempt.
    pub kept_due_ends: bool,
}

impl RowChanges {
    /// The fields to set, as `record.lua` takes them (an empty value removes its field).
    pub(crate) fn fields(&self) -> Vec<(&'static str, &str)> {
        let mut fields = Vec::new();
        let named = [
            (field::PLUGINS, &self.plugins),
            (field::HEADERS, &self.headers),
            (field::BODY, &self.body),
            (field::WEBHOOK_HEADERS, &self.webhook_headers),
        ];
        for (name, value) in named {
            if let Some(value) = value {
                fields.push((name, value.as_str()));
            }
        }
        if self.kept_due_ends {
            fields.push((field::KEPT_DUE, ""));
        }
        fields
    }
}

/// The names of a delivery row's fields (see the table above).
pub mod field {
    pub const ORG: &str = "o";
    pub const WEBHOOK: &str = "w";
    pub const EVENT: &str = "e";
    pub const ACTION: &str = "a";
    pub const STARTED: &str = "n";
    pub const STATUS: &str = "s";
    pub const ATTEMPTS: &str = "x";
    pub const LATEST: &str = "l";
    pub const SIGNATURES: &str = "g";
    pub const DUE: &str = "q";
    pub const LAST_PLACE: &str = "k";
    pub const EXTRA: &str = "v";
    pub const KEPT_DUE: &str = "m";
    pub const BODY: &str = "b";
    pub const HEADERS: &str = "h";
    pub const WEBHOOK_HEADERS: &str = "c";
    pub const SUBJECT: &str = "z";
    pub const PLUGINS: &str = "p";
    pub const DEAD_LETTER: &str = "r";
    pub const UPDATED: &str = "u";
}

/// How many fields a plain row (see above) has: `o w e a` and `n`.
pub const PLAIN_ROW_FIELDS: usize = 5;

/// A delivery row read whole (`HGETALL`), its fields decoded by name, with its event (for
/// the body and the timestamp header) when it was still stored.
#[derive(Debug, Clone, Default)]
pub struct DeliveryRow {
    pub id: String,
    pub org_id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub action: String,
    /// `None` when the stored status cannot be read (a damaged row).
    pub status: Option<Status>,
    /// Why it was dead-lettered.
    pub dead_letter: Option<String>,
    /// When the next attempt is due (ms), while a retry waits.
    pub due_ms: Option<u64>,
    /// The attempts as stored (`store::queue::attempts`); an unreadable list reads as none.
    pub attempts: Vec<Value>,
    /// The number of the latest recorded attempt (0: none).
    pub latest: usize,
    /// The latest attempt's signatures, raw (`crate::sign::Signatures::decode`).
    pub signatures: Option<Vec<u8>>,
    /// Once plugins ran: the rendered body, their extra headers (JSON pairs) and their
    /// outcomes (JSON), as stored.
    pub body: Option<String>,
    pub headers: Option<String>,
    pub plugins: Option<String>,
    /// The names of the webhook's own headers the latest attempt sent (JSON pairs, each
    /// value empty: the values are secrets; rows from before that rule may hold them).
    pub webhook_headers: Option<String>,
    /// Last change without an attempt (ms).
    pub updated_ms: Option<u64>,
    /// The event, while it is kept.
    pub event: Option<Arc<StoredEvent>>,
}

impl DeliveryRow {
    /// Decodes a row read with `HGETALL` (`key` names it in logs); `None` when it is empty
    /// (expired, or never was).
    pub(crate) fn decode(key: &str, id: &str, raw: HashMap<String, Vec<u8>>) -> Option<DeliveryRow> {
        if raw.is_empty() {
            return None;
        }
        let mut row = DeliveryRow { id: id.to_owned(), ..DeliveryRow::default() };
        let mut status = None;
        for (name, value) in raw {
            if name == field::SIGNATURES {
                row.signatures = Some(value);
                continue;
            }
            let text = String::from_utf8_lossy(&value).into_owned();
            let nonempty = || Some(text.clone()).filter(|t| !t.is_empty());
            match name.as_str() {
                field::ORG => row.org_id = text,
                field::WEBHOOK => row.webhook_id = text,
                field::EVENT => row.event_id = text,
                field::ACTION => row.action = text,
                field::STATUS => status = Some(text),
                field::DEAD_LETTER => row.dead_letter = nonempty(),
                field::DUE => row.due_ms = text.parse().ok(),
                field::LATEST => row.latest = text.parse().unwrap_or(0),
                field::BODY => row.body = nonempty(),
                field::HEADERS => row.headers = nonempty(),
                field::PLUGINS => row.plugins = nonempty(),
                field::WEBHOOK_HEADERS => row.webhook_headers = nonempty(),
                field::UPDATED => row.updated_ms = text.parse().ok(),
                field::ATTEMPTS if !text.is_empty() => {
                    row.attempts = serde_json::from_str(&text).unwrap_or_else(|e| {
                        tracing::warn!(%key, error = %e, "a delivery row has attempts that are not JSON");
                        Vec::new()
                    });
                }
                _ => {}
            }
        }
        row.status = Status::stored(status.as_deref());
        Some(row)
    }
}
