//! `redact`: removes parts of the body before it is sent.
//!
//! Config: `{"pointers": ["/creator/name", "/report_export/download_url"]}` — RFC 6901
//! JSON pointers into the body. Each value found is removed (an object member is deleted,
//! an array element is taken out); pointers that match nothing are ignored.

#![no_std]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::Value;
use weir_plugin_sdk::{Event, Guest, Verdict, deliver_body, export, info};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    pointers: Vec<String>,
}

/// Unescapes one reference token (`~1` is `/`, `~0` is `~`).
fn token(raw: &str) -> String {
    raw.replace("~1", "/").replace("~0", "~")
}

/// Removes the value at `pointer`; whether something was removed.
fn remove(root: &mut Value, pointer: &str) -> bool {
    let Some(rest) = pointer.strip_prefix('/') else { return false };
    let mut parts: Vec<String> = rest.split('/').map(token).collect();
    let Some(last) = parts.pop() else { return false };
    let mut node = root;
    for part in &parts {
        node = match node {
            Value::Object(map) => match map.get_mut(part.as_str()) {
                Some(next) => next,
                None => return false,
            },
            Value::Array(items) => match part.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    match node {
        Value::Object(map) => map.remove(last.as_str()).is_some(),
        Value::Array(items) => match last.parse::<usize>() {
            Ok(i) if i < items.len() => {
                items.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

struct Redact;

impl Guest for Redact {
    fn handle(event: &Event, config: String) -> Verdict {
        let config: Config = match serde_json::from_str(&config) {
            Ok(c) => c,
            Err(e) => return Verdict::Drop(format!("invalid config: {e}")),
        };
        let mut body: Value = match serde_json::from_str(&event.body()) {
            Ok(v) => v,
            Err(e) => return Verdict::Drop(format!("body is not JSON: {e}")),
        };
        let removed = config.pointers.iter().filter(|p| remove(&mut body, p)).count();
        info(&format!("removed {removed} of {} pointers", config.pointers.len()));
        deliver_body(serde_json::to_string(&body).unwrap_or_default())
    }
}

export!(Redact);
