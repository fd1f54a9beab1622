//! `report-export-filter`: narrows `report_export_completed` to the exports you care about.
//!
//! Config (every list optional; each list given must match, an empty or absent list
//! matches anything):
//! ```json
//! {"exportable_types": ["Form"], "exportable_ids": ["frm_123"], "creator_ids": ["cli_…"]}
//! ```
//! `report_export_completed` events pass only when `report_export.exportable.type`,
//! `report_export.exportable.id` and `creator.id` match; every other action passes
//! through untouched. The event is read through the host (`event.get-string`), so the
//! plugin never parses the body.

#![no_std]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;
use weir_plugin_sdk::{Event, Guest, Verdict, deliver_unchanged, export};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    exportable_types: Vec<String>,
    #[serde(default)]
    exportable_ids: Vec<String>,
    #[serde(default)]
    creator_ids: Vec<String>,
}

/// An empty list matches anything; otherwise the value must be in it.
fn allows(list: &[String], value: Option<&str>) -> bool {
    list.is_empty() || value.is_some_and(|v| list.iter().any(|item| item == v))
}

struct ReportExportFilter;

impl Guest for ReportExportFilter {
    fn handle(event: &Event, config: String) -> Verdict {
        if event.action() != "report_export_completed" {
            return deliver_unchanged();
        }
        // An object only (serde would also take an array, its fields by position).
        let config: Config = match serde_json::from_str::<serde_json::Value>(&config) {
            Ok(value) if value.is_object() => match serde_json::from_value(value) {
                Ok(c) => c,
                Err(e) => return Verdict::Drop(format!("invalid config: {e}")),
            },
            Ok(_) => return Verdict::Drop("invalid config: not an object".into()),
            Err(e) => return Verdict::Drop(format!("invalid config: {e}")),
        };
        let kind = event.get_string("/report_export/exportable/type");
        let id = event.get_string("/report_export/exportable/id");
        let creator = event.creator_id();
        if allows(&config.exportable_types, kind.as_deref())
            && allows(&config.exportable_ids, id.as_deref())
            && allows(&config.creator_ids, Some(creator.as_str()))
        {
            return deliver_unchanged();
        }
        Verdict::Drop(format!(
            "export of {} {} by {} is not in the filter",
            kind.as_deref().unwrap_or("?"),
            id.as_deref().unwrap_or("?"),
            creator
        ))
    }
}

export!(ReportExportFilter);
