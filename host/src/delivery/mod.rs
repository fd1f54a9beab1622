//! Delivery: the workers that take deliveries off the queue and send them.
//!
//! - `sign`: the HMAC signature and the request headers of contract §4.
//! - `send`: the HTTP(S) client; connects only to addresses the URL rule vetted.
//! - `retry`: the policy (success, 410, schedule with jitter, `Retry-After`).
//! - `attempt`: one delivery's work, from loading it to recording the outcome.
//! - `lanes`: per-webhook in-flight caps, so one slow endpoint cannot hold every worker.
//! - `worker`: the loops of an [`Engine`]: fetch, take over, heartbeat, schedule, sweep.
//!
//! Every `weir serve` process runs one engine; they share the work through the queue with
//! no leader (see `crate::queue`).

mod attempt;
mod lanes;
pub mod retry;
pub mod send;
pub mod sign;
mod worker;

use std::sync::Arc;

use tokio::sync::{Notify, Semaphore, watch};

use crate::App;
use crate::queue::batch::Batcher;
use crate::queue::{Loaded, Queue, RecordRules, Recorded, Recording};
use crate::store::StoreError;
use lanes::Lanes;
use send::Sender;

/// Most loads or records sent to Redis in one script call.
const BATCH: usize = 64;

/// The delivery workers of one process.
#[derive(Debug)]
pub struct Engine {
    app: Arc<App>,
    queue: Queue,
    /// Loads and records go to Redis in batches (group commit).
    loader: Batcher<String, Result<Loaded, StoreError>>,
    recorder: Batcher<Recording, Result<Recorded, StoreError>>,
    sender: Sender,
    /// This process's consumer name in the stream's group.
    consumer: String,
    lanes: Lanes,
    /// One permit per attempt in flight.
    permits: Arc<Semaphore>,
    /// Wakes the scheduler when this process schedules a retry sooner than it would look.
    scheduler_wake: Notify,
    next_wake_ms: std::sync::atomic::AtomicU64,
    /// Stream entries this process holds (waiting or in flight), kept fresh by heartbeats.
    held_set: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// A running engine; [`EngineHandle::stop`] finishes in-flight attempts and returns.
#[derive(Debug)]
pub struct EngineHandle {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

/// The engine could not start.
#[derive(Debug, thiserror::Error)]
#[error("cannot start delivery workers: {0}")]
pub struct EngineError(String);

impl Engine {
    /// Starts the workers of this process.
    pub fn start(app: Arc<App>) -> Result<EngineHandle, EngineError> {
        let config = &app.config;
        let tls = send::tls_config(config.extra_ca.as_deref()).map_err(EngineError)?;
        let sender = Sender::new(app.url_rule.clone(), tls, config.delivery_timeout);
        let consumer = format!(
            "{}-{}-{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "weir".into()),
            std::process::id(),
            &crate::ids::new(crate::ids::Kind::Event)[4..12]
        );
        let queue = Queue::new(app.store.clone());
        let loader = {
            let queue = queue.clone();
            let lease = config.delivery_timeout + std::time::Duration::from_secs(10);
            Batcher::spawn(BATCH, move |deliveries: Vec<String>| {
                let queue = queue.clone();
                async move {
                    let now = crate::time::now_millis();
                    queue.load_many(&deliveries, now, now + lease.as_millis() as u64).await
                }
            })
        };
        let recorder = {
            let queue = queue.clone();
            let rules = record_rules(config);
            Batcher::spawn(BATCH, move |outcomes: Vec<Recording>| {
                let queue = queue.clone();
                async move { queue.record_many(&outcomes, &rules).await }
            })
        };
        let engine = Arc::new(Engine {
            queue,
            loader,
            recorder,
            sender,
            consumer,
            lanes: Lanes::new(config.max_in_flight_per_webhook),
            permits: Arc::new(Semaphore::new(config.worker_concurrency)),
            scheduler_wake: Notify::new(),
            next_wake_ms: std::sync::atomic::AtomicU64::new(u64::MAX),
            held_set: std::sync::Mutex::new(std::collections::HashSet::new()),
            app,
        });
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(engine.run(stopped));
        Ok(EngineHandle { stop, task })
    }

    /// Tells the scheduler a retry is due at `due_ms`, if that is sooner than it will look.
    fn retry_scheduled(&self, due_ms: u64) {
        use std::sync::atomic::Ordering;
        if due_ms < self.next_wake_ms.load(Ordering::Relaxed) {
            self.scheduler_wake.notify_one();
        }
    }
}

/// The rules outcomes are recorded by.
fn record_rules(c: &crate::config::Config) -> RecordRules {
    RecordRules {
        retention: c.delivery_retention,
        deactivate_after_failures: c.deactivate_after_failures,
        deactivate_after: c.deactivate_after,
    }
}

impl EngineHandle {
    /// Stops fetching, gives waiting work back to the queue, and waits for attempts in
    /// flight to finish (they are bounded by the delivery timeout).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
