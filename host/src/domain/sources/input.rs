//! A source's fields as a request gives them, each checked by its rule: the kind, its
//! secret (where the kind takes it from), the settings object of a generic kind (read from
//! its field table, `crate::sources::KINDS`), the duplicate window.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::domain::fields::Fields;
use crate::kinds::Read;
use crate::sources::{Algorithm, Encoding, KINDS, Scheme, SecretFrom, SourceKind, kind};

/// Longest secret accepted (a provider's, a password, a key).
const MAX_SECRET: usize = 4096;
/// The duplicate window's bounds and default (contract §10).
pub(super) const MIN_WINDOW: Duration = Duration::from_secs(1);
pub(super) const MAX_WINDOW: Duration = Duration::from_secs(7 * 86_400);
pub(super) const DEFAULT_WINDOW: Duration = Duration::from_secs(86_400);

/// `type`: one of the kinds.
pub(super) fn kind_of(fields: &mut Fields) -> Option<&'static SourceKind> {
    let name = fields.required_string("type")?;
    let found = kind(&name);
    if found.is_none() {
        let names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
        fields.error("type", format!("must be one of {}", names.join(", ")));
    }
    found
}

/// `dedup_window`: a duration from 1 s to 7 days.
pub(super) fn window(fields: &mut Fields) -> Option<Duration> {
    let text = fields.string("dedup_window")?;
    match crate::config::duration::parse_span(&text) {
        Ok(d) if (MIN_WINDOW..=MAX_WINDOW).contains(&d) => Some(d),
        _ => {
            fields.error("dedup_window", "must be a duration from 1s to 7d, such as \"24h\"");
            None
        }
    }
}

/// A secret as given in `field` (`secret`), checked for `kind`.
pub(super) fn secret(fields: &mut Fields, kind: &SourceKind, required: bool) -> Option<String> {
    let given = if required { fields.required_string("secret") } else { fields.string("secret") }?;
    if given.is_empty() || given.len() > MAX_SECRET {
        fields.error("secret", format!("must be 1 to {MAX_SECRET} bytes"));
        return None;
    }
    if let Some(why) = kind.provider.secret_problem(&given) {
        fields.error("secret", why);
        return None;
    }
    Some(given)
}

/// What a kind's settings make: how its secret is used, and the secret when the settings hold it.
#[derive(Debug, Default)]
pub(super) struct Settings {
    pub scheme: Scheme,
    pub secret: Option<String>,
}

/// The kind's settings object (named as the kind: `hmac`, `basic`, `api_key`) and, where the
/// kind takes its secret from the request's `secret`, that secret. `None`: something was
/// refused (the field named in `fields`).
pub(super) fn settings(fields: &mut Fields, kind: &'static SourceKind, creating: bool) -> Option<Settings> {
    let takes_object = !kind.table.fields.is_empty();
    let object = if takes_object { fields.object(kind.name, creating) } else { None };
    // Read on even when refused, so the secret is judged (or taken) as well.
    let mut settings = match (&object, takes_object) {
        (Some(object), true) => read_object(fields, kind, object).unwrap_or_default(),
        _ => Settings::default(),
    };
    match kind.secret {
        SecretFrom::Secret => settings.secret = secret(fields, kind, creating),
        SecretFrom::Setting(_) | SecretFrom::Nothing => {
            if fields.value("secret").is_some() {
                let why = match kind.secret {
                    SecretFrom::Setting(field) => format!("is not taken by {}: give {}.{field}", kind.name, kind.name),
                    _ => format!("is not taken by {}", kind.name),
                };
                fields.error("secret", why);
            }
        }
    }
    (!fields.has_errors()).then_some(settings)
}

/// A settings object read against its kind's table.
fn read_object(fields: &mut Fields, kind: &'static SourceKind, object: &Map<String, Value>) -> Option<Settings> {
    let read = match Read::of(&kind.table, kind.table.label, kind.name, object) {
        Ok(read) => read,
        Err(refusal) => {
            fields.error(refusal.field, refusal.why);
            return None;
        }
    };
    let text = |name: &str| read.text(name).unwrap_or_default().to_owned();
    let scheme = match kind.name {
        "hmac" => {
            let algorithm = match read.text("algorithm").unwrap_or("sha256") {
                "sha1" => Algorithm::Sha1,
                "sha256" => Algorithm::Sha256,
                "sha512" => Algorithm::Sha512,
                _ => return refuse(fields, "hmac.algorithm", "must be sha256, sha1 or sha512"),
            };
            let encoding = match read.text("encoding").unwrap_or("hex") {
                "hex" => Encoding::Hex,
                "base64" => Encoding::Base64,
                _ => return refuse(fields, "hmac.encoding", "must be hex or base64"),
            };
            let header = text("header").to_ascii_lowercase();
            if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return refuse(fields, "hmac.header", "is not a header name");
            }
            Scheme::Hmac { header, algorithm, encoding, prefix: text("prefix") }
        }
        "basic" => Scheme::Basic { username: text("username") },
        "api_key" => {
            let header = text("header").to_ascii_lowercase();
            if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return refuse(fields, "api_key.header", "is not a header name");
            }
            Scheme::ApiKey { header }
        }
        _ => Scheme::Provider,
    };
    let secret = match kind.secret {
        SecretFrom::Setting(field) => read.text(field).map(str::to_owned),
        _ => None,
    };
    Some(Settings { scheme, secret })
}

fn refuse(fields: &mut Fields, field: &str, why: &str) -> Option<Settings> {
    fields.error(field, why);
    None
}
