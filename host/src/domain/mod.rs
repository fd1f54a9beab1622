//! What Weir does, below the HTTP layer: publishing events ([`events`]), changing webhooks
//! ([`webhooks`]), retrying deliveries ([`deliveries`]). The API (`crate::api`), the settings
//! pages (`crate::settings`) and the export builder call these and only translate their
//! typed errors; none of them builds a key or a store call of its own for these.
//!
//! The surfaces reach the domain through its doors ([`handles::Handles`]): one handle per part —
//! [`webhooks::Webhooks`], [`exports::Exports`], … — each holding the process's state
//! privately, so a handler's signature says what it may touch.

/// Declares a handle: what a surface is given to reach one part of the domain, with the
/// process's state held privately.
macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name {
            app: std::sync::Arc<crate::app::App>,
        }

        impl $name {
            pub fn new(app: std::sync::Arc<crate::app::App>) -> $name {
                $name { app }
            }
        }
    };
}
pub(crate) use handle;

pub mod access;
pub mod deliveries;
pub mod egress;
pub mod event_log;
pub mod events;
pub mod exports;
pub mod fields;
pub mod handles;
pub mod notices;
pub mod operations;
pub mod plugins;
pub mod replay;
pub mod rules;
pub mod views;
pub mod webhooks;

use serde::Serialize;

pub use crate::store::StoreError;

/// One invalid request field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError { field: field.into(), message: message.into() }
    }
}

/// A request that is not valid: every field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub Vec<FieldError>);

impl Invalid {
    pub fn field(field: &str, message: impl Into<String>) -> Invalid {
        Invalid(vec![FieldError::new(field, message)])
    }

    /// The same errors, their fields named inside `parent` (`event.action`).
    pub fn within(self, parent: &str) -> Invalid {
        Invalid(self.0.into_iter().map(|e| FieldError::new(format!("{parent}.{}", e.field), e.message)).collect())
    }
}
