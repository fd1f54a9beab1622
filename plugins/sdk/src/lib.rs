//! The Weir plugin SDK: everything a plugin needs besides its own logic.
//!
//! - The bindings of the `weir:plugin/filter` world (`wit/`: a link to the repository's
//!   `wit/`, packaged with the crate): implement [`Guest`] and call [`export!`](crate::export)
//!   with your type.
//! - `#![no_std]` plumbing, so plugins import nothing but `weir:plugin/host`: a bump
//!   allocator (each call runs in a fresh instance, so nothing needs freeing), a panic
//!   handler, and the memory routines the compiler expects.
//! - [`log`] helpers.
//!
//! ```ignore
//! #![no_std]
//! use weir_plugin_sdk::{Guest, Event, Verdict, export, deliver_unchanged};
//! struct Pass;
//! impl Guest for Pass {
//!     fn handle(_event: &Event, _config: alloc::string::String) -> Verdict { deliver_unchanged() }
//! }
//! export!(Pass);
//! ```

#![no_std]

extern crate alloc;

#[doc(hidden)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "wit",
        world: "filter",
        pub_export_macro: true,
        default_bindings_module: "weir_plugin_sdk::bindings",
    });
}

pub use bindings::Guest;
pub use bindings::export;
pub use bindings::weir::plugin::host::log as host_log;
pub use bindings::weir::plugin::types::{Delivery, Event, Header, Level, Verdict};
#[doc(hidden)]
pub use bindings::*;

mod runtime;

use alloc::string::String;
use alloc::vec::Vec;

/// Deliver the current body, with no extra headers.
pub fn deliver_unchanged() -> Verdict {
    Verdict::Deliver(Delivery { body: None, headers: Vec::new() })
}

/// Deliver a new body.
pub fn deliver_body(body: String) -> Verdict {
    Verdict::Deliver(Delivery { body: Some(body), headers: Vec::new() })
}

/// Logs at `info`.
pub fn info(message: &str) {
    host_log(Level::Info, message);
}

/// Logs at `warn`.
pub fn warn(message: &str) {
    host_log(Level::Warn, message);
}

/// Logs at `error`.
pub fn error(message: &str) {
    host_log(Level::Error, message);
}
