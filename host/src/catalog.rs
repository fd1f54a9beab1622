//! The event catalogue (contract §3): subscribable actions grouped by category, and the
//! snapshot keys and subject types they go with.
//!
//! Action names are `<snapshot key>_<verb>`; the subject type is the snapshot key in
//! PascalCase. `note_created` and the `document_*` actions are about another record (the
//! one the note or document is on), so their subject may be of any snapshot type.

use serde::Serialize;

/// A category of the catalogue.
#[derive(Debug, Serialize)]
pub(crate) struct Category {
    pub key: &'static str,
    pub name: &'static str,
    pub events: &'static [&'static str],
}

/// The whole catalogue, in the contract's order.
pub(crate) const CATEGORIES: &[Category] = &[
    Category {
        key: "work_orders",
        name: "Work orders",
        events: &[
            "work_order_created",
            "work_order_updated",
            "work_order_status_changed",
            "work_order_assigned",
            "work_order_completed",
            "work_order_deleted",
        ],
    },
    Category {
        key: "work_order_tasks",
        name: "Work order tasks",
        events: &[
            "work_order_task_created",
            "work_order_task_updated",
            "work_order_task_completed",
            "work_order_task_deleted",
        ],
    },
    Category {
        key: "work_order_templates",
        name: "Work order templates",
        events: &["work_order_template_created", "work_order_template_updated", "work_order_template_deleted"],
    },
    Category {
        key: "reports",
        name: "Reports",
        events: &["form_created", "form_updated", "form_completed", "form_deleted"],
    },
    Category {
        key: "defects",
        name: "Defects",
        events: &["defect_created", "defect_updated", "defect_resolved", "defect_deleted"],
    },
    Category {
        key: "reviews",
        name: "Reviews",
        events: &["form_review_requested", "form_review_approved", "form_review_rejected"],
    },
    Category { key: "assets", name: "Assets", events: &["asset_created", "asset_updated", "asset_deleted"] },
    Category {
        key: "locations",
        name: "Locations",
        events: &["location_created", "location_updated", "location_deleted"],
    },
    Category {
        key: "companies",
        name: "Companies",
        events: &["company_created", "company_updated", "company_deleted"],
    },
    Category { key: "tools", name: "Tools", events: &["tool_created", "tool_updated", "tool_deleted"] },
    Category {
        key: "actions",
        name: "Actions",
        events: &["action_item_created", "action_item_updated", "action_item_completed", "action_item_deleted"],
    },
    Category { key: "notes", name: "Notes", events: &["note_created"] },
    Category { key: "documents", name: "Documents", events: &["document_uploaded", "document_deleted"] },
    Category {
        key: "work_instructions",
        name: "Work instructions",
        events: &[
            "work_instruction_created",
            "work_instruction_updated",
            "work_instruction_published",
            "work_instruction_deleted",
        ],
    },
    Category { key: "exports", name: "Exports", events: &["report_export_completed"] },
    Category {
        key: "webhooks",
        name: "Webhooks",
        events: &["webhook_deactivated", "webhook_reactivated", "webhook_delivery_failed"],
    },
];

/// Operational events Weir emits beyond the contract's catalogue (round 5's usage warning):
/// subscribable by name like any action, shown on the settings pages, but not listed by
/// `GET /api/v2/webhooks/events`, which shows the contract's catalogue exactly.
pub(crate) const EXTENSIONS: Category = Category { key: "usage", name: "Usage", events: &["usage_limit_approaching"] };

/// The category of operational events: Weir emits them itself (contract §7); publishers
/// cannot.
pub(crate) const OPERATIONAL: &str = "webhooks";

/// The snapshot keys of operational events (never a publisher's record).
pub(crate) const OPERATIONAL_SNAPSHOT_KEYS: &[&str] = &["webhook", "webhook_delivery", "usage"];

/// The snapshot keys allowed in an envelope (service document §2).
pub(crate) const SNAPSHOT_KEYS: &[&str] = &[
    "work_order",
    "work_order_task",
    "work_order_template",
    "form",
    "report_export",
    "defect",
    "asset",
    "location",
    "company",
    "tool",
    "action_item",
    "work_instruction",
];

/// Every action of the catalogue, in the contract's order, then the [`EXTENSIONS`].
pub(crate) fn actions() -> impl Iterator<Item = &'static str> {
    CATEGORIES.iter().chain([&EXTENSIONS]).flat_map(|c| c.events.iter().copied())
}

/// Whether `action` is one Weir emits itself (its category is [`OPERATIONAL`], or it is an
/// extension).
pub(crate) fn is_operational(action: &str) -> bool {
    CATEGORIES.iter().any(|c| c.key == OPERATIONAL && c.events.contains(&action)) || EXTENSIONS.events.contains(&action)
}

/// The name the event log keeps every source's event under (their actions are the
/// providers', not the catalogue's): `GET /api/v2/events?action=source_event` lists them.
pub(crate) const SOURCE_EVENTS: &str = "source_event";

/// The catalogue's name of `action`, if it is one.
pub(crate) fn named(action: &str) -> Option<&'static str> {
    actions().find(|a| *a == action)
}

/// Whether `action` is in the catalogue (or an extension).
pub(crate) fn is_known(action: &str) -> bool {
    actions().any(|a| a == action)
}

/// The snapshot key an action's subject must have, or `None` when the subject may be any
/// record (notes and documents are about the record they are attached to).
pub(crate) fn snapshot_key_for(action: &str) -> Option<&'static str> {
    if action == "note_created" || action.starts_with("document_") {
        return None;
    }
    // The longest snapshot key that prefixes the action: `work_order_task_created` belongs
    // to `work_order_task`, not `work_order`; `form_review_approved` to `form`.
    SNAPSHOT_KEYS
        .iter()
        .chain(OPERATIONAL_SNAPSHOT_KEYS)
        .filter(|key| action.strip_prefix(**key).is_some_and(|rest| rest.starts_with('_')))
        .max_by_key(|key| key.len())
        .copied()
}

/// `work_order_task` → `WorkOrderTask`.
pub(crate) fn subject_type(snapshot_key: &str) -> String {
    snapshot_key
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// `WorkOrderTask` → `work_order_task`, when it is an allowed snapshot key.
pub(crate) fn snapshot_key_of_type(type_name: &str) -> Option<&'static str> {
    SNAPSHOT_KEYS.iter().find(|key| subject_type(key) == type_name).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_has_the_documented_names() {
        for name in ["work_order_created", "form_completed", "report_export_completed"] {
            assert!(is_known(name), "{name}");
        }
        assert!(!is_known("work_order_exploded"));
        let all: Vec<&str> = CATEGORIES.iter().flat_map(|c| c.events.iter().copied()).collect();
        let unique: std::collections::HashSet<&str> = all.iter().copied().collect();
        assert_eq!(all.len(), unique.len(), "no action is listed twice");
        assert_eq!(CATEGORIES.len(), 16);
        for name in all {
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
        }
    }

    #[test]
    fn every_action_maps_to_an_allowed_snapshot_key() {
        for category in CATEGORIES {
            for action in category.events {
                match snapshot_key_for(action) {
                    Some(key) if is_operational(action) => {
                        assert!(OPERATIONAL_SNAPSHOT_KEYS.contains(&key), "{action}")
                    }
                    Some(key) => assert!(SNAPSHOT_KEYS.contains(&key), "{action}"),
                    None => assert!(*action == "note_created" || action.starts_with("document_"), "{action}"),
                }
            }
        }
        assert_eq!(snapshot_key_for("work_order_task_created"), Some("work_order_task"));
        assert_eq!(snapshot_key_for("work_order_created"), Some("work_order"));
        assert_eq!(snapshot_key_for("form_review_approved"), Some("form"));
        assert_eq!(snapshot_key_for("report_export_completed"), Some("report_export"));
        assert_eq!(snapshot_key_for("action_item_completed"), Some("action_item"));
        assert_eq!(snapshot_key_for("webhook_delivery_failed"), Some("webhook_delivery"));
        assert_eq!(snapshot_key_for("webhook_deactivated"), Some("webhook"));
        assert!(is_operational("webhook_reactivated") && !is_operational("work_order_created"));
        assert_eq!(snapshot_key_of_type("Webhook"), None, "publishers never send a webhook's snapshot");
    }

    #[test]
    fn subject_types_are_pascal_case() {
        assert_eq!(subject_type("work_order"), "WorkOrder");
        assert_eq!(subject_type("form"), "Form");
        assert_eq!(snapshot_key_of_type("WorkOrderTask"), Some("work_order_task"));
        assert_eq!(snapshot_key_of_type("Unknown"), None);
    }
}
