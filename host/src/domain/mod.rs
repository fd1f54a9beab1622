//! What Weir does, below the HTTP layer: publishing events ([`events`]), changing webhooks
//! ([`webhooks`]), retrying deliveries ([`deliveries`]). The API (`crate::api`), the settings
//! pages (`crate::settings`) and the export builder call these and only translate their
//! typed errors; none of them builds a key or a store call of its own for these.
//!
//! The surfaces reach the domain through its doors ([`handles::Handles`]): one handle per part —
//! [`webhooks::Webhooks`], [`exports::Exports`], … — each holding only the parts of the
//! process it uses, privately, so a handler's signature says what it may touch.

pub(crate) mod access;
pub(crate) mod deliveries;
mod delivery_view;
pub(crate) mod egress;
pub(crate) mod event_log;
pub(crate) mod events;
pub(crate) mod exports;
pub(crate) mod fields;
pub(crate) mod filtering;
pub(crate) mod handles;
pub(crate) mod moved;
pub(crate) mod notices;
pub(crate) mod operations;
pub(crate) mod plugins;
pub(crate) mod portal;
pub(crate) mod portal_look;
pub(crate) mod quota;
pub(crate) mod replay;
pub(crate) mod rules;
pub(crate) mod sources;
pub(crate) mod usage;
pub(crate) mod views;
pub(crate) mod webhooks;

use serde::Serialize;

pub(crate) use crate::store::StoreError;

/// One invalid request field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub(crate) struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), message: message.into() }
    }
}

/// A request that is not valid: every field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid(pub Vec<FieldError>);

impl Invalid {
    pub(crate) fn field(field: &str, message: impl Into<String>) -> Invalid {
        Invalid(vec![FieldError::new(field, message)])
    }

    /// The same errors, their fields named inside `parent` (`event.action`).
    pub(crate) fn within(self, parent: &str) -> Invalid {
        Invalid(self.0.into_iter().map(|e| FieldError::new(format!("{parent}.{}", e.field), e.message)).collect())
    }
}
