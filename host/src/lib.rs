//! Weir: a webhook subscription and delivery service with sandboxed tenant plugins.
//!
//! # Layout
//! The modules stand on floors; each imports only from floors below it
//! (`docs/architecture.md` draws them, and `tests/tests/it/floors.rs` holds the code to them). Public
//! are only what the binary, the tests and the bench use; the rest is the crate's own.
//!
//! - [`cli`]: `weir serve` and the operator commands `weir admin …`.
//! - `service`: the whole service on a bound listener: wires the surfaces, the domain's
//!   handles and the workers, and stops them with one shutdown.
//! - `api`, `settings`: the HTTP surfaces (the API; Settings > Webhooks). They translate
//!   requests and answers and reach the rest only through the domain's handles.
//! - `exports`: the report export builders and renderer; `delivery`: the workers (claiming,
//!   one attempt, recording); `server`: the listener (TLS, HTTP/1.1 and HTTP/2, graceful
//!   shutdown).
//! - `domain`: what Weir does below HTTP, behind one handle per part (webhooks, deliveries,
//!   events, replays, plugins, exports, access, operations), and the views the surfaces show.
//! - `shared`: the small parts one process shares between handles and workers (token
//!   lookups, work-arrived signals, plugin hashes, keys, gauges); `service` makes each part
//!   once and hands each handle and worker only the parts it uses.
//! - `history`: history in PostgreSQL (the only module that speaks PostgreSQL);
//!   `destinations`: where deliveries go — each kind of destination one module with its
//!   field table, and one registry line; the HTTP transport; one timeout for every kind.
//! - `vault`: secrets at rest (client certificate keys); `jobs`: the one shutdown every
//!   worker watches and the one runner of lease-queue jobs.
//! - [`config`]: the one typed configuration, from defaults, a file and `WEIR_*`
//!   variables; `metrics`: the Prometheus metrics; [`auth`]: callers, roles, plans, secret
//!   hashing and constant-time comparison.
//! - [`plugins`]: tenant WebAssembly plugins (the only module that knows wasmtime).
//! - [`store`]: every durable record, in Redis (one Redis or a cluster): the key layout,
//!   the Lua scripts, the delivery queue; also the managed `redis-server`.
//! - `certs`: client certificates (parsed, key matched, the view reads show); [`filters`]:
//!   webhooks' CEL filters (the only module that knows CEL), checked and bounded.
//! - The ground floor, which imports nothing of Weir: [`sign`] (the delivery signatures and
//!   headers), `web` (HTTP helpers both surfaces share), `tls` (PEM files and rustls
//!   configurations), [`ids`], [`time`], `catalog` (the subscribable events), `netguard`
//!   (the webhook URL rule, public suffixes), `trace` (W3C trace context), `kinds` (the
//!   field tables kinds are read, drawn and documented from), `panics` (panics caught
//!   where a tenant's work runs) and `meters` (the counters, gauges and histograms of the
//!   metrics, read as Prometheus text and as typed series).

mod api;
pub mod auth;
mod catalog;
mod certs;
pub mod cli;
pub mod config;
mod delivery;
mod destinations;
mod domain;
mod exports;
pub mod filters;
mod forwarded;
mod history;
pub mod ids;
mod jobs;
mod kinds;
mod meters;
mod metrics;
mod netguard;
mod offload;
mod panics;
pub mod plans;
pub mod plugins;
mod recent;
mod server;
mod service;
mod settings;
mod shared;
pub mod sign;
mod slots;
mod sources;
pub mod store;
mod telemetry;
pub mod time;
mod tls;
mod trace;
mod vault;
mod web;

pub use service::{StartError, install_crypto_provider, run};
