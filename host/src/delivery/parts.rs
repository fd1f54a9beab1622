//! What the engine is made of: the settings it follows and the parts of the process it
//! uses (`crate::service` hands them over; the engine holds nothing else).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, EgressProxy};
use crate::domain::deliveries::Deliveries;
use crate::domain::notices::Notices;
use crate::domain::webhooks::Webhooks;
use crate::metrics::Metrics;
use crate::netguard::UrlRule;
use crate::plugins::Runtime;
use crate::shared::{Arrivals, PluginHashes, SecretKeys};
use crate::store::Store;
use crate::store::queue::streak::StreakRules;
use crate::telemetry::Telemetry;

/// The settings the delivery workers follow (of the process's `Config`).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Deliveries attempted at once (`WEIR_WORKER_CONCURRENCY`).
    pub workers: usize,
    /// Attempts in flight to one webhook at most (`WEIR_MAX_IN_FLIGHT_PER_WEBHOOK`).
    pub per_webhook: usize,
    /// One attempt's time (`WEIR_DELIVERY_TIMEOUT`).
    pub timeout: Duration,
    /// A claimed delivery's lease (`WEIR_TAKEOVER_AFTER`).
    pub takeover_after: Duration,
    /// How long finished deliveries are kept: each organisation's plan's retention, within
    /// `WEIR_DELIVERY_RETENTION`.
    pub plans: std::sync::Arc<crate::plans::Plans>,
    /// The waits before each retry (`WEIR_RETRY_SCHEDULE`).
    pub retry_schedule: Vec<Duration>,
    /// When a failure streak switches a webhook off.
    pub streak: StreakRules,
    /// More roots to trust (`WEIR_EXTRA_CA`).
    pub extra_ca: Option<PathBuf>,
    /// The proxy attempts go through (`WEIR_EGRESS_PROXY`).
    pub egress_proxy: Option<EgressProxy>,
}

impl Settings {
    pub(crate) fn of(config: &Config) -> Settings {
        Settings {
            workers: config.worker_concurrency,
            per_webhook: config.max_in_flight_per_webhook,
            timeout: config.delivery_timeout,
            takeover_after: config.takeover_after,
            plans: config.plans.clone(),
            retry_schedule: config.retry_schedule.clone(),
            streak: StreakRules { failures: config.deactivate_after_failures, span: config.deactivate_after },
            extra_ca: config.extra_ca.clone(),
            egress_proxy: config.egress_proxy.clone(),
        }
    }
}

/// The parts of the process the engine uses.
#[derive(Debug)]
pub(crate) struct EngineParts {
    pub settings: Settings,
    /// The process's store (the engine opens a connection of its own from it).
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub telemetry: Arc<Telemetry>,
    /// Plugins run on attempts, by their code's hash.
    pub plugins: Arc<Runtime>,
    pub plugin_hashes: Arc<PluginHashes>,
    /// Work this process queued (the claimers look at once).
    pub arrivals: Arc<Arrivals>,
    /// Where attempts may connect.
    pub url_rule: UrlRule,
    /// Unseals webhooks' client certificates.
    pub secret_keys: Arc<SecretKeys>,
    /// A webhook the workers switch off ends its deliveries.
    pub webhooks: Webhooks,
    /// A failed delivery is read to report it.
    pub deliveries: Deliveries,
    /// ... and reported (`webhook_delivery_failed`).
    pub notices: Notices,
}
