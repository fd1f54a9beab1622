//! Who the data belongs to and what they set up: organisations, API clients and tokens,
//! people and sessions, portal links and their sessions, webhooks and their plugins.

pub mod clients;
pub mod orgs;
pub mod plan_change;
pub mod plugins;
pub mod portal;
pub mod portal_sessions;
pub mod source_requests;
pub mod sources;
pub mod subscribers;
pub mod users;
pub(crate) mod webhook_record;
pub mod webhooks;
