//! The process's parts, each made once, and who gets which: `App` is the only place that
//! knows them all. Every handle, job and worker is made here of the parts it uses and holds
//! nothing else (`floors.rs` fails on `App` named outside `service/`).

use std::sync::Arc;
use std::time::Duration;

use crate::auth::passwords::Verifier;
use crate::config::Config;
use crate::delivery;
use crate::domain::access::AccessParts;
use crate::domain::events::{EventsParts, Publishing, PublishingParts};
use crate::domain::filtering::Filtering;
use crate::domain::handles::Handles;
use crate::domain::moved::Moved;
use crate::domain::notices::Notices;
use crate::domain::plugins::PluginParts;
use crate::domain::replay::Replayer;
use crate::domain::sources::SourceParts;
use crate::domain::webhooks::WebhookParts;
use crate::domain::{access, deliveries, events, exports, operations, plugins, portal, replay, sources, webhooks};
use crate::filters::Evaluator;
use crate::history::History;
use crate::metrics::Metrics;
use crate::netguard::UrlRule;
use crate::offload::Offload;
use crate::plugins::Runtime;
use crate::shared::{Arrivals, Gauges, LinkKey, PluginHashes, SecretKeys, Tokens};
use crate::store::Store;
use crate::store::events::publisher::Publisher;
use crate::telemetry::Telemetry;

/// The process's parts (each made once).
#[derive(Debug)]
pub(crate) struct App {
    pub config: Arc<Config>,
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub telemetry: Arc<Telemetry>,
    pub publishing: Publishing,
    /// Operational events (and Weir's own, as a completed export's) go out here.
    pub notices: Notices,
    pub filtering: Filtering,
    pub moved: Moved,
    pub replayer: Replayer,
    pub tokens: Arc<Tokens>,
    pub passwords: Arc<Verifier>,
    pub url_rule: UrlRule,
    pub plugins: Arc<Runtime>,
    pub plugin_hashes: Arc<PluginHashes>,
    pub secret_keys: Arc<SecretKeys>,
    pub link_key: Arc<LinkKey>,
    pub gauges: Arc<Gauges>,
    pub arrivals: Arc<Arrivals>,
    /// Where large events are read and compressed.
    pub offload: Arc<Offload>,
    /// History in PostgreSQL, when configured (`WEIR_HISTORY_URL`).
    pub history: Option<Arc<History>>,
}

impl App {
    /// Makes each part once (inside a Tokio runtime: the batches start here).
    pub(crate) fn new(config: Config, store: Store, plugins: Arc<Runtime>, history: Option<Arc<History>>) -> App {
        let config = Arc::new(config);
        let retentions = (config.delivery_retention, config.event_retention);
        let metrics = Arc::new(Metrics::new(&plugins.counters));
        let telemetry = Arc::new(match crate::tls::client_config(config.extra_ca.as_deref()) {
            Ok(tls) => Telemetry::start(&config.otel, &tls, metrics.otel.clone()),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the roots to trust; no traces are exported");
                Telemetry::default()
            }
        });
        let moved = super::doors::moved(&store, history.as_ref(), retentions);
        let offload = Arc::new(Offload::new());
        let filtering = Filtering::new(Arc::new(Evaluator::on(offload.clone())), Some(metrics.clone()));
        let arrivals = Arc::new(Arrivals::new(store.keys()));
        let tokens = Arc::new(Tokens::start(store.clients(), store.versions()));
        let publishing = Publishing::new(PublishingParts {
            orgs: store.orgs(),
            standbys: store.standbys(),
            counts: store.daily_counts(),
            keys: store.keys().clone(),
            publisher: Arc::new(Publisher::start(&store)),
            filtering: filtering.clone(),
            metrics: metrics.clone(),
            moved: moved.clone(),
            arrivals: arrivals.clone(),
            delivery_retention: retentions.0,
            plans: config.plans.clone(),
            tokens: tokens.clone(),
            offload: offload.clone(),
        });
        let notices = Notices::new(&publishing, store.rates(), &metrics);
        let replayer =
            Replayer::new(super::doors::replays(&store), (&moved, &filtering), Some(&arrivals), &config.plans);
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        App {
            tokens,
            passwords: Arc::new(Verifier::new(cores)),
            url_rule: UrlRule::new(config.allow_private_targets.clone()),
            plugin_hashes: Arc::new(PluginHashes::new(store.plugins())),
            secret_keys: Arc::new(SecretKeys::new(config.secret_key.clone(), config.data_dir.clone())),
            link_key: Arc::new(LinkKey::new(store.exports())),
            gauges: Arc::new(Gauges::new(store.claims(), &metrics, history.as_ref())),
            config,
            store,
            metrics,
            telemetry,
            publishing,
            notices,
            filtering,
            moved,
            replayer,
            plugins,
            arrivals,
            offload,
            history,
        }
    }

    /// The webhooks' door (also the workers': they stop webhooks).
    pub(crate) fn webhooks(&self) -> webhooks::Webhooks {
        let store = &self.store;
        webhooks::Webhooks::new(WebhookParts {
            records: store.webhooks(),
            sources: store.sources(),
            orgs: store.orgs(),
            plans: &self.config.plans,
            requeue: store.requeue(),
            trim: store.trim(),
            streaks: store.streaks(),
            metrics: &self.metrics,
            url_rule: &self.url_rule,
            plugin_hashes: &self.plugin_hashes,
            secret_keys: &self.secret_keys,
            notices: &self.notices,
            delivery_retention: self.retentions().0,
        })
    }

    /// The deliveries' door (also the workers': they read a failed delivery to report it).
    pub(crate) fn deliveries(&self) -> deliveries::Deliveries {
        deliveries::Deliveries::new(
            super::doors::deliveries(&self.store),
            &self.moved,
            (&self.telemetry, &self.arrivals),
            self.config.delivery_retention,
        )
    }

    fn retentions(&self) -> (Duration, Duration) {
        (self.config.delivery_retention, self.config.event_retention)
    }

    /// The domain's doors, for the surfaces.
    pub(crate) fn handles(&self) -> Handles {
        let (delivery_retention, _) = self.retentions();
        let store = &self.store;
        Handles {
            access: Arc::new(access::Access::new(AccessParts {
                clients: store.clients(),
                users: store.users(),
                portal_sessions: store.portal_sessions(),
                rates: store.rates(),
                tokens: self.tokens.clone(),
                passwords: self.passwords.clone(),
                metrics: self.metrics.clone(),
                config: self.config.clone(),
            })),
            webhooks: Arc::new(self.webhooks()),
            deliveries: Arc::new(self.deliveries()),
            events: Arc::new(events::Events::new(self.events_parts())),
            replays: Arc::new(replay::Replays::new(&self.replayer, &self.telemetry)),
            plugins: Arc::new(plugins::Plugins::new(PluginParts {
                records: store.plugins(),
                events: store.event_writes(),
                keys: store.keys(),
                runtime: &self.plugins,
                plugin_hashes: &self.plugin_hashes,
                moved: &self.moved,
                metrics: &self.metrics,
            })),
            exports: Arc::new(exports::Exports::new(store.exports(), &self.moved, &self.link_key, delivery_retention)),
            operations: Arc::new(operations::Operations::new(store.health(), &self.gauges)),
            portal: Arc::new(portal::PortalLinks::new(
                store.portal_links(),
                store.portal_sessions(),
                self.config.public_url(),
            )),
            usage: Arc::new(super::doors::usage(store, &self.config.plans)),
            sources: Arc::new(self.sources()),
        }
    }

    /// The sources' door (and their ingest).
    fn sources(&self) -> sources::Sources {
        sources::Sources::new(SourceParts {
            records: self.store.sources(),
            requests: self.store.source_requests(),
            versions: self.store.versions(),
            secret_keys: self.secret_keys.clone(),
            public_url: self.config.public_url(),
            publishing: self.publishing.clone(),
            orgs: self.store.orgs(),
            plans: self.config.plans.clone(),
            metrics: self.metrics.clone(),
            telemetry: self.telemetry.clone(),
        })
    }

    /// What the events' door is made of.
    fn events_parts(&self) -> EventsParts {
        EventsParts {
            publishing: self.publishing.clone(),
            moved: self.moved.clone(),
            filtering: self.filtering.clone(),
            telemetry: self.telemetry.clone(),
            orgs: self.store.orgs(),
            plans: self.config.plans.clone(),
            webhooks: self.store.webhooks(),
            log: self.store.event_log(),
            test_budget: self.store.test_event_budget(),
            keys: self.store.keys().clone(),
            offload: self.offload.clone(),
        }
    }

    /// What the delivery workers use of the process's self.
    pub(crate) fn engine(&self) -> delivery::EngineParts {
        delivery::EngineParts {
            settings: delivery::Settings::of(&self.config),
            store: self.store.clone(),
            metrics: self.metrics.clone(),
            telemetry: self.telemetry.clone(),
            plugins: self.plugins.clone(),
            plugin_hashes: self.plugin_hashes.clone(),
            arrivals: self.arrivals.clone(),
            url_rule: self.url_rule.clone(),
            secret_keys: self.secret_keys.clone(),
            webhooks: self.webhooks(),
            deliveries: self.deliveries(),
            notices: self.notices.clone(),
        }
    }
}
