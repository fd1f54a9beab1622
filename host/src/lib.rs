//! Weir: a webhook subscription and delivery service with sandboxed tenant plugins.
//!
//! # Layout
//! The modules stand on floors; each imports only from floors below it (the README's
//! "Architecture" draws them, and `tests/tests/it/floors.rs` holds the code to them).
//!
//! - [`cli`]: `weir serve` and the operator commands `weir admin …`.
//! - [`service`]: the whole service on a bound listener: wires the surfaces and the workers.
//! - [`api`]: the HTTP API (token endpoint, `/api/v2`, operations endpoints).
//! - [`settings`]: Settings > Webhooks, the server-rendered pages for organisation users.
//! - [`exports`]: report exports: rendering, signed download links, the builders.
//! - [`delivery`]: the workers: claim, prepare, sign, send, retry, per-webhook fairness.
//! - [`server`]: the listener (TLS, HTTP/1.1 and HTTP/2, graceful shutdown).
//! - [`domain`]: what Weir does below HTTP: publishing, webhook changes, deliveries.
//! - [`app`]: the state one process shares between its requests and its workers.
//! - [`config`]: the one typed configuration, from defaults, a file and `WEIR_*` variables.
//! - [`metrics`]: the Prometheus metrics.
//! - [`auth`]: callers, roles and plans; secret hashing and constant-time comparison.
//! - [`plugins`]: tenant WebAssembly plugins (the only module that knows wasmtime).
//! - [`store`]: every durable record, in Redis (one Redis or a cluster): the key layout,
//!   the Lua scripts, the delivery queue; also the managed `redis-server`.
//! - The ground floor, which imports nothing of Weir: [`sign`] (the delivery signatures and
//!   headers), [`web`] (HTTP helpers both surfaces share), [`tls`] (PEM files and rustls
//!   configurations), [`ids`], [`time`], [`catalog`] (the subscribable events) and
//!   [`netguard`] (the webhook URL rule).

mod api;
mod app;
pub mod auth;
mod catalog;
mod certs;
pub mod cli;
pub mod config;
mod delivery;
mod domain;
mod exports;
pub mod ids;
mod jobs;
mod metrics;
mod netguard;
pub mod plugins;
mod server;
mod service;
mod settings;
pub mod sign;
pub mod store;
pub mod time;
mod tls;
mod trace;
mod vault;
mod web;

pub use service::{StartError, install_crypto_provider, run};
