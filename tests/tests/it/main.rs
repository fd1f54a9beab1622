//! Weir's integration tests: real `redis-server`, real HTTP over loopback, real Weir.

#![allow(clippy::unwrap_used, clippy::type_complexity, unreachable_pub, missing_debug_implementations)]

mod support;

mod cli;
mod cluster;
mod cluster_slots;
mod collector_faults;
mod delivery;
mod delivery_faults;
mod egress;
mod errors;
mod events_api;
mod example_receiver;
mod exports;
mod filters;
mod floors;
mod forwarded;
mod hardening;
mod hardening_compile;
mod hardening_load;
mod history;
mod history_failures;
mod history_faults;
mod inputs;
mod isolation;
mod listener;
mod managed_redis;
mod noisy_tenants;
mod notices;
mod oauth;
mod observability;
mod openapi;
mod ordering;
mod plugin_authoring;
mod plugin_budget;
mod plugin_delivery;
mod plugin_languages;
mod plugin_sandbox;
mod plugins;
mod portal;
mod redis_not_ready;
mod replay;
mod resilience;
mod retries;
mod settings;
mod settings_health;
mod settings_sessions;
mod signatures;
mod small_leaks;
mod telemetry;
mod test_events;
mod tour;
mod url_rule;
mod webhooks_api;
