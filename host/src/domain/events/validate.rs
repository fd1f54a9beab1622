//! Checking an event as a publisher sent it (contract §2): every field, every problem
//! reported at once.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use super::event::{Event, OPERATIONAL_CREATOR};
use crate::catalog;
use crate::domain::{FieldError, Invalid, rules};
use crate::ids::{self, Kind};
use crate::offload::{LARGE_INPUT, Offload};

/// How far in the future an event's `created_at` may be (clock skew, not time travel).
const MAX_FUTURE_MS: u64 = 24 * 3600 * 1000;

/// Whether a publisher's creator id would read as Weir's own: `weir` in any case, with
/// spaces around it or characters that show nothing (zero-width spaces and joiners, soft
/// hyphens, direction marks) anywhere in it.
pub(super) fn is_reserved_creator(id: &str) -> bool {
    let shown: String = id.chars().filter(|c| !c.is_whitespace() && !is_invisible(*c)).collect();
    shown.eq_ignore_ascii_case(OPERATIONAL_CREATOR)
}

/// A character that shows nothing: Unicode's format characters most texts carry.
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E007F}')
}

fn text(raw: &RawValue) -> Option<String> {
    serde_json::from_str::<String>(raw.get()).ok()
}

/// [`read`] of a publish request's body: a large one ([`LARGE_INPUT`]) on `offload`'s
/// threads, in the organisation's slot.
pub(super) async fn read_on<'b>(
    offload: &Offload,
    org_id: &str,
    bytes: &'b bytes::Bytes,
) -> Result<Event<'b>, Invalid> {
    if bytes.len() < LARGE_INPUT {
        return read(bytes);
    }
    let bytes = bytes.clone();
    let read = offload.run(org_id, move || read(&bytes).map(Event::into_owned)).await;
    read.unwrap_or_else(|| Err(Invalid::field("body", "could not be read")))
}

/// Reads an event as a publisher sent it: a JSON object, checked by [`validate`].
fn read(bytes: &[u8]) -> Result<Event<'_>, Invalid> {
    let fields: BTreeMap<String, &RawValue> =
        serde_json::from_slice(bytes).map_err(|e| Invalid::field("body", format!("must be a JSON object: {e}")))?;
    validate(fields)
}

/// Checks every field of an event (contract §2). All problems are reported at once.
pub(crate) fn validate(mut fields: BTreeMap<String, &RawValue>) -> Result<Event<'_>, Invalid> {
    let mut errors: Vec<FieldError> = Vec::new();
    let fresh_id = !fields.contains_key("id");
    let id = id_of(fields.remove("id"), &mut errors);
    let action = action_of(fields.remove("action"), &mut errors);
    let created_at = created_at_of(fields.remove("created_at"), &mut errors);
    let (creator_id, creator_name) = match fields.remove("creator") {
        None => {
            errors.push(FieldError::new("creator", "is required"));
            None
        }
        Some(raw) => object_fields(raw, "creator", &["id", "name"], &[], &mut errors),
    }
    .map_or((String::new(), String::new()), |(m, _)| (m[0].clone(), m[1].clone()));
    if is_reserved_creator(&creator_id) {
        errors.push(FieldError::new("creator.id", "must not be `weir`: Weir's own events carry that creator"));
    }
    let (subject_type, subject_id, deleted) = subject_of(fields.remove("subject"), &mut errors);
    let (snapshot_key, snapshot) = match snapshot_of(fields, (&subject_type, &action), &mut errors) {
        Some(snapshot) if errors.is_empty() => snapshot,
        _ => return Err(Invalid(errors)),
    };
    Ok(Event {
        id,
        fresh_id,
        action,
        created_at,
        creator_id,
        creator_name,
        subject_type,
        subject_id,
        deleted,
        snapshot_key,
        snapshot: std::borrow::Cow::Borrowed(snapshot),
        trace: None,
        test: false,
        source: None,
    })
}

/// The event's id: the publisher's (checked), or a new one.
fn id_of(raw: Option<&RawValue>, errors: &mut Vec<FieldError>) -> String {
    let Some(raw) = raw else { return ids::new(Kind::Event) };
    match text(raw) {
        Some(id) if id.starts_with(ids::OPERATIONAL_EVENT_PREFIX) => {
            errors.push(FieldError::new(
                "id",
                "must not start with `evt_weir_`: those ids are Weir's own (operational events)",
            ));
            String::new()
        }
        Some(id) if ids::is_test_event_id(&id) => {
            errors.push(FieldError::new("id", "must not start with `evt_test_`: those ids are test events'"));
            String::new()
        }
        Some(id) if ids::is_event_id(&id) => id,
        _ => {
            errors.push(FieldError::new(
                "id",
                "must be a string `evt_` followed by up to 100 letters, digits, `_` or `-`",
            ));
            String::new()
        }
    }
}

/// The event's action: one of the catalogue's that publishers may send.
fn action_of(raw: Option<&RawValue>, errors: &mut Vec<FieldError>) -> String {
    let why = match raw.map(text) {
        None => "is required",
        Some(Some(a)) if catalog::is_operational(&a) => "is an operational event: only Weir emits it",
        Some(Some(a)) if catalog::is_known(&a) => return a,
        Some(Some(_)) => "is not an event in the catalogue (GET /api/v2/webhooks/events)",
        Some(None) => "must be a string",
    };
    errors.push(FieldError::new("action", why));
    String::new()
}

/// When the event happened: the publisher's time (at most a day ahead), or now.
fn created_at_of(raw: Option<&RawValue>, errors: &mut Vec<FieldError>) -> String {
    let Some(raw) = raw else { return crate::time::now_rfc3339() };
    match text(raw).as_deref().and_then(crate::time::parse_rfc3339) {
        // A far-future time would make this event the newest snapshot of its record for ever.
        Some(ms) if ms > crate::time::now_millis() + MAX_FUTURE_MS => {
            errors.push(FieldError::new("created_at", "must not be more than a day in the future"));
            String::new()
        }
        Some(ms) => crate::time::format_millis(ms),
        None => {
            errors.push(FieldError::new(
                "created_at",
                "must be an RFC 3339 UTC timestamp such as 2026-11-22T11:00:38.123Z",
            ));
            String::new()
        }
    }
}

/// What the event is about: its type, its id, and whether the record was deleted.
fn subject_of(raw: Option<&RawValue>, errors: &mut Vec<FieldError>) -> (String, String, bool) {
    let Some(raw) = raw else {
        errors.push(FieldError::new("subject", "is required"));
        return (String::new(), String::new(), false);
    };
    let Some((m, optional)) = object_fields(raw, "subject", &["type", "id"], &["deleted"], errors) else {
        return (String::new(), String::new(), false);
    };
    let deleted = match optional.get("deleted").map(|raw| raw.get()) {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            errors.push(FieldError::new("subject.deleted", "must be true or false"));
            false
        }
    };
    (m[0].clone(), m[1].clone(), deleted)
}

/// The one snapshot the fields left hold: its key and its JSON, checked against the
/// subject's type and the action. With several, the one matching the subject is kept and
/// the others are reported.
fn snapshot_of<'a>(
    fields: BTreeMap<String, &'a RawValue>,
    (subject_type, action): (&str, &str),
    errors: &mut Vec<FieldError>,
) -> Option<(&'static str, &'a RawValue)> {
    let mut candidates: Vec<(&'static str, &RawValue)> = Vec::new();
    for (name, raw) in fields {
        match catalog::SNAPSHOT_KEYS.iter().find(|k| **k == name) {
            Some(key) => candidates.push((key, raw)),
            None => errors.push(FieldError::new(name, "unknown field")),
        }
    }
    let expected = catalog::snapshot_key_of_type(subject_type);
    let chosen = candidates.iter().position(|(k, _)| Some(*k) == expected).unwrap_or(0);
    for (i, (key, _)) in candidates.iter().enumerate() {
        if i != chosen {
            errors.push(FieldError::new(*key, "an event carries exactly one snapshot"));
        }
    }
    let Some(&(snapshot_key, snapshot)) = candidates.get(chosen) else {
        if errors.is_empty() {
            errors.push(FieldError::new(
                "snapshot",
                "one snapshot key (named after the subject, e.g. work_order) is required",
            ));
        }
        return None;
    };
    if !snapshot.get().trim_start().starts_with('{') {
        errors.push(FieldError::new(snapshot_key, "must be an object"));
    } else if let Err(why) = rules::readable_json(snapshot.get(), rules::MAX_SNAPSHOT_DEPTH) {
        errors.push(FieldError::new(snapshot_key, why));
    } else if !subject_type.is_empty() && expected != Some(snapshot_key) {
        let wanted = catalog::subject_type(snapshot_key);
        let why = format!("does not match the subject type `{subject_type}` (expected `{wanted}`)");
        errors.push(FieldError::new(snapshot_key, why));
    } else if !action.is_empty()
        && let Some(wanted) = catalog::snapshot_key_for(action)
        && wanted != snapshot_key
    {
        errors.push(FieldError::new(snapshot_key, format!("`{action}` carries a `{wanted}` snapshot")));
    }
    Some((snapshot_key, snapshot))
}

/// Reads an object with required string fields `required` (each an id or short text:
/// [`rules::short_text`]) and optional fields `optional` (checked by the caller, given
/// back as raw JSON); other fields are refused. Returns the required values in order, and
/// the optional ones present. Each error names the field at fault and what is wrong.
fn object_fields<'a>(
    raw: &'a RawValue,
    name: &str,
    required: &[&str],
    optional: &[&str],
    errors: &mut Vec<FieldError>,
) -> Option<(Vec<String>, BTreeMap<String, &'a RawValue>)> {
    if !raw.get().trim_start().starts_with('{') {
        errors.push(FieldError::new(name, "must be an object"));
        return None;
    }
    let mut map: BTreeMap<String, &RawValue> = match serde_json::from_str(raw.get()) {
        Ok(map) => map,
        Err(_) => {
            let why = rules::readable_json(raw.get(), 1).err().unwrap_or_else(|| "must be an object".into());
            errors.push(FieldError::new(name, why));
            return None;
        }
    };
    let mut values = Vec::new();
    let before = errors.len();
    for field in required {
        let at = format!("{name}.{field}");
        let Some(value) = map.remove(*field) else {
            errors.push(FieldError::new(at, "is required"));
            continue;
        };
        match serde_json::from_str::<String>(value.get()) {
            Ok(text) => match rules::short_text(&text) {
                Ok(()) => values.push(text),
                Err(why) => errors.push(FieldError::new(at, why)),
            },
            Err(_) if value.get().starts_with('"') => {
                let why = rules::readable_json(value.get(), 0).err().unwrap_or_else(|| "must be a string".into());
                errors.push(FieldError::new(at, why));
            }
            Err(_) => errors.push(FieldError::new(at, "must be a string")),
        }
    }
    let mut present = BTreeMap::new();
    for (key, value) in map {
        if optional.contains(&key.as_str()) {
            present.insert(key, value);
        } else {
            errors.push(FieldError::new(format!("{name}.{key}"), "unknown field"));
        }
    }
    (errors.len() == before).then_some((values, present))
}
