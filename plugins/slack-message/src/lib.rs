//! `slack-message`: turns the event into a Slack incoming-webhook message.
//!
//! Config:
//! ```json
//! {"template": "Export {/report_export/id} is ready: {/report_export/download_url}",
//!  "username": "Weir", "icon_emoji": ":bell:", "channel": "#ops"}
//! ```
//! `{pointer}` placeholders are RFC 6901 JSON pointers into the body: a string value is
//! inserted as it is, any other value as JSON, a missing one as an empty string. `{{` and
//! `}}` stand for literal braces. The body sent is `{"text": …}` plus `username`,
//! `icon_emoji` and `channel` when configured.

#![no_std]

extern crate alloc;

use alloc::format;
use alloc::string::{String, ToString};

use serde::Deserialize;
use serde_json::{Map, Value};
use weir_plugin_sdk::{Event, Guest, Verdict, deliver_body, export};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    template: String,
    username: Option<String>,
    icon_emoji: Option<String>,
    channel: Option<String>,
}

/// Fills `{pointer}` placeholders from the event.
fn render(template: &str, event: &Event) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('}') {
            return Err("unmatched `}` in template".to_string());
        }
        let Some(end) = tail.find('}') else { return Err("unclosed `{` in template".to_string()) };
        let pointer = &tail[1..end];
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!("placeholder `{{{pointer}}}` must be a JSON pointer such as /creator/name"));
        }
        match event.get_string(pointer) {
            Some(text) => out.push_str(&text),
            None => out.push_str(&event.get(pointer).unwrap_or_default()),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

struct SlackMessage;

impl Guest for SlackMessage {
    fn handle(event: &Event, config: String) -> Verdict {
        let config: Config = match serde_json::from_str(&config) {
            Ok(c) => c,
            Err(e) => return Verdict::Drop(format!("invalid config: {e}")),
        };
        let text = match render(&config.template, event) {
            Ok(t) => t,
            Err(e) => return Verdict::Drop(format!("invalid config: {e}")),
        };
        let mut message = Map::new();
        message.insert("text".into(), Value::String(text));
        for (key, value) in
            [("username", config.username), ("icon_emoji", config.icon_emoji), ("channel", config.channel)]
        {
            if let Some(v) = value {
                message.insert(key.into(), Value::String(v));
            }
        }
        deliver_body(Value::Object(message).to_string())
    }
}

export!(SlackMessage);
