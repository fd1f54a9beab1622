//! The history handle of one process: its settings, its schema's name, its pool, and
//! whether PostgreSQL answered last; every statement runs through [`History::timed`].

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::error::HistoryError;
use super::pool::Pool;
use super::schema;
use crate::config::HistorySettings as Settings;

/// A question for `super::known`: an event's digest, and where its answer goes.
pub(super) type KnownAsk = ([u8; 16], oneshot::Sender<Result<bool, HistoryError>>);

/// How long one statement may take.
const STATEMENT: Duration = Duration::from_secs(10);
/// While PostgreSQL is down, how often a caller that would wait for it asks anyway.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// History in PostgreSQL, for one process.
pub(crate) struct History {
    settings: Settings,
    pub(super) schema: String,
    pool: Pool,
    migrated: AtomicBool,
    /// Day partitions this process made (or found made).
    pub(super) days_made: Mutex<BTreeSet<u32>>,
    /// The retention classes deliveries may be in (`super::classes`; 0 always): those of
    /// the plans, and those found in PostgreSQL.
    pub(super) classes: Mutex<BTreeSet<u32>>,
    /// Whether the last statement reached PostgreSQL.
    up: AtomicBool,
    /// When a caller last asked while it was down (ms since the epoch): see [`History::may_probe`].
    probed_ms: AtomicU64,
    /// Questions about republished event ids, answered in batches by a task that starts
    /// with the first (`super::known`).
    pub(super) known: OnceLock<mpsc::UnboundedSender<KnownAsk>>,
    /// This handle, for the task answering them.
    pub(super) me: Weak<History>,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").field("at", &self.settings.describe()).field("schema", &self.schema).finish()
    }
}

impl History {
    /// History for the installation of key prefix `prefix` (nothing is connected yet).
    pub(crate) fn new(settings: Settings, prefix: &str, tls: Option<rustls::ClientConfig>) -> Arc<History> {
        Arc::new_cyclic(|me| History {
            schema: schema::schema_name(prefix),
            pool: Pool::new(settings.clone(), tls),
            settings,
            migrated: AtomicBool::new(false),
            days_made: Mutex::new(BTreeSet::new()),
            classes: Mutex::new(BTreeSet::from([0])),
            up: AtomicBool::new(true),
            probed_ms: AtomicU64::new(0),
            known: OnceLock::new(),
            me: me.clone(),
        })
    }

    /// History as configured (`None` without `WEIR_HISTORY_URL`), for the installation of
    /// key prefix `prefix`; nothing is connected yet.
    pub(crate) fn configured(
        config: &crate::config::Config,
        prefix: &str,
    ) -> Result<Option<Arc<History>>, crate::tls::TlsError> {
        let Some(settings) = &config.history else { return Ok(None) };
        let mut tls = crate::tls::client_config(config.extra_ca.as_deref())?;
        tls.alpn_protocols.clear();
        let history = History::new(settings.clone(), prefix, Some(tls));
        let ceiling = config.delivery_retention;
        let classes = config.plans.delivery_retentions().into_iter().map(|r| super::classes::class_of(r, ceiling));
        history.classes.lock().unwrap_or_else(|e| e.into_inner()).extend(classes);
        Ok(Some(history))
    }

    /// How long ended work stays in Redis first.
    pub(crate) fn hot(&self) -> Duration {
        self.settings.hot
    }

    /// Whether PostgreSQL answered the last statement.
    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// Whether a caller that would wait for PostgreSQL while it is down may ask now: one
    /// in [`PROBE_EVERY`], so the others answer at once and one notices it is back.
    pub(crate) fn may_probe(&self) -> bool {
        let now = crate::time::now_millis();
        let last = self.probed_ms.load(Ordering::Relaxed);
        now.saturating_sub(last) >= PROBE_EVERY.as_millis() as u64
            && self.probed_ms.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
    }

    /// Notes that a question went unanswered for `waited` (as a statement past its deadline).
    pub(crate) fn note_unanswered(&self, waited: Duration) {
        self.note::<()>(&Err(HistoryError::Unavailable(format!("no answer within {}s", waited.as_secs()))));
    }

    /// Creates and migrates Weir's tables unless this process did already.
    pub(crate) async fn migrate(&self) -> Result<(), HistoryError> {
        if self.migrated.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut client = self.connect().await?;
        self.timed(schema::migrate(&mut client, &self.schema)).await?;
        // The classes deliveries were written in, whatever the plans are now.
        let stored = self.timed(schema::days(&client, &self.schema, "deliveries")).await?;
        self.classes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(stored.into_iter().map(|d| super::classes::split(d).0));
        self.migrated.store(true, Ordering::Relaxed);
        tracing::info!(at = %self.settings.describe(), schema = %self.schema, "history in PostgreSQL is ready");
        Ok(())
    }

    /// Drops the days past the retention periods (deliveries by the day they were made,
    /// events by the day they were accepted; a retention class's days past the class's
    /// own, `super::classes`). How many day partitions went.
    pub(crate) async fn drop_old_days(&self, deliveries_from: u32, events_from: u32) -> Result<usize, HistoryError> {
        let mut client = self.connect().await?;
        let today = crate::store::core::keys::day_of(crate::time::now_millis());
        let deliveries = |d: u32| d < deliveries_from || super::classes::expired(d, today);
        let d = self.timed(schema::drop_days(&mut client, &self.schema, "deliveries", deliveries)).await?;
        let events = |d: u32| d < events_from || super::classes::expired(d, today);
        let e = self.timed(schema::drop_days(&mut client, &self.schema, "events", events)).await?;
        let i = self.timed(schema::drop_days(&mut client, &self.schema, "indexes", |d| d < deliveries_from)).await?;
        let s = self.timed(schema::drop_days(&mut client, &self.schema, "snapshots", |d| d < events_from)).await?;
        if d > 0 {
            self.days_made.lock().unwrap_or_else(|e| e.into_inner()).retain(|day| !deliveries(*day));
        }
        Ok(d + e + i + s)
    }

    /// The retention classes deliveries may be in, in order.
    pub(super) fn classes(&self) -> Vec<u32> {
        self.classes.lock().unwrap_or_else(|e| e.into_inner()).iter().copied().collect()
    }

    /// A pooled connection (noting whether PostgreSQL could be reached).
    pub(super) async fn client(&self) -> Result<Arc<tokio_postgres::Client>, HistoryError> {
        let result = self.pool.client().await;
        self.note(&result);
        result
    }

    /// A connection of its own (migrations and partition changes hold locks on it).
    pub(super) async fn connect(&self) -> Result<tokio_postgres::Client, HistoryError> {
        let result = self.pool.connect().await;
        self.note(&result);
        result
    }

    /// Runs a statement with [`STATEMENT`] as its deadline, noting whether PostgreSQL
    /// answered.
    pub(super) async fn timed<T, E: Into<HistoryError>>(
        &self,
        statement: impl Future<Output = Result<T, E>>,
    ) -> Result<T, HistoryError> {
        let result = match tokio::time::timeout(STATEMENT, statement).await {
            Ok(result) => result.map_err(Into::into),
            Err(_) => Err(HistoryError::Unavailable(format!("no answer within {}s", STATEMENT.as_secs()))),
        };
        self.note(&result);
        result
    }

    /// Notes whether PostgreSQL could be reached; says so in the log when that changes.
    fn note<T>(&self, result: &Result<T, HistoryError>) {
        let was_up = self.up.swap(!matches!(result, Err(HistoryError::Unavailable(_))), Ordering::Relaxed);
        match (result, was_up) {
            (Err(HistoryError::Unavailable(why)), true) => {
                tracing::warn!(at = %self.settings.describe(), %why, "history in PostgreSQL cannot be reached; ended work waits in Redis");
            }
            (Ok(_), false) => {
                tracing::info!(at = %self.settings.describe(), "history in PostgreSQL is reachable again")
            }
            _ => {}
        }
    }
}
