//! The loops of an [`Engine`]: fetching work, taking over a dead worker's work, keeping
//! held work alive, moving due retries, and sweeping (unparking, trimming indexes).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::Engine;
use super::attempt::Handled;
use super::lanes::{Admit, Freed};
use crate::queue::Entry;

/// How often held entries are refreshed and idle ones looked for.
const HOUSEKEEPING: Duration = Duration::from_secs(5);
/// How long one blocking read waits for new work.
const BLOCK: Duration = Duration::from_secs(1);
/// Most entries read at once.
const BATCH: usize = 256;

impl Engine {
    fn held(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.held_set.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) async fn run(self: Arc<Self>, stopped: watch::Receiver<bool>) {
        if let Err(e) = self.queue.ensure_group().await {
            tracing::warn!(error = %e, "cannot create the consumer group yet; will retry");
        }
        let fetch = tokio::spawn(self.clone().fetch_loop(stopped.clone()));
        let housekeeping = tokio::spawn(self.clone().housekeeping_loop(stopped.clone()));
        let scheduler = tokio::spawn(self.clone().scheduler_loop(stopped.clone()));
        let janitor = tokio::spawn(self.clone().janitor_loop(stopped.clone()));
        let mut stopped = stopped;
        while !*stopped.borrow() {
            if stopped.changed().await.is_err() {
                break;
            }
        }
        let _ = fetch.await;
        // Waiting work goes back to the stream for other processes to take at once.
        let waiting = self.lanes.take_waiting();
        if !waiting.is_empty()
            && let Err(e) = self.queue.requeue(&waiting).await
        {
            tracing::warn!(error = %e, "cannot hand back waiting deliveries; they will be taken over");
        }
        // Attempts in flight finish (each is bounded by the delivery timeout).
        let total = self.app.config.worker_concurrency as u32;
        let grace = self.app.config.delivery_timeout + Duration::from_secs(10);
        let _ = tokio::time::timeout(grace, self.permits.acquire_many(total)).await;
        let _ = housekeeping.await;
        let _ = scheduler.await;
        let _ = janitor.await;
    }

    /// Reads new entries while there is room for more attempts.
    async fn fetch_loop(self: Arc<Self>, stopped: watch::Receiver<bool>) {
        let mut conn = None;
        while !*stopped.borrow() {
            if self.permits.available_permits() == 0 {
                // Back-pressure: wait for an attempt to end before reading more.
                if let Ok(permit) = self.permits.acquire().await {
                    drop(permit);
                }
                continue;
            }
            let c = match &mut conn {
                Some(c) => c,
                None => match self.queue.store().dedicated(BLOCK + Duration::from_secs(5)).await {
                    Ok(c) => conn.insert(c),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot connect the fetcher; retrying");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                },
            };
            let count = self.permits.available_permits().clamp(1, BATCH);
            match self.queue.fetch(c, &self.consumer, count, BLOCK).await {
                Ok(entries) => {
                    for entry in entries {
                        self.dispatch(entry);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the ready stream; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// Routes an entry through its webhook's lane.
    fn dispatch(self: &Arc<Self>, entry: Entry) {
        if !self.held().insert(entry.id.clone()) {
            return;
        }
        match self.lanes.admit(&entry) {
            Admit::Start => self.spawn_attempt(entry),
            Admit::Wait => {}
            Admit::Park => {
                let engine = self.clone();
                tokio::spawn(async move {
                    if let Err(e) = engine.queue.park(&entry).await {
                        tracing::warn!(error = %e, "cannot park a delivery; it will be taken over");
                    }
                    engine.held().remove(&entry.id);
                });
            }
        }
    }

    fn spawn_attempt(self: &Arc<Self>, entry: Entry) {
        let engine = self.clone();
        tokio::spawn(async move {
            let permit = engine.permits.clone().acquire_owned().await;
            let handled = engine.handle(&entry).await;
            drop(permit);
            if handled != Handled::Done {
                tracing::debug!(delivery = %entry.delivery, ?handled, "left for a later attempt");
            }
            engine.held().remove(&entry.id);
            engine.released(&entry.webhook);
        });
    }

    /// A slot of `webhook` freed: start its next waiting entry, or bring parked ones back.
    fn released(self: &Arc<Self>, webhook: &str) {
        match self.lanes.release(webhook) {
            Freed::Start(next) => self.spawn_attempt(next),
            Freed::Unpark(count) => {
                let engine = self.clone();
                let webhook = webhook.to_owned();
                tokio::spawn(async move {
                    match engine.queue.unpark(&webhook, count).await {
                        Ok(moved) if moved < count => engine.lanes.drained(&webhook),
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "cannot unpark deliveries; the sweep will"),
                    }
                });
            }
            Freed::Nothing => {}
        }
    }

    /// Keeps held entries fresh and takes over entries a dead worker left idle.
    async fn housekeeping_loop(self: Arc<Self>, mut stopped: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(HOUSEKEEPING);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopped.changed() => {}
            }
            let held: Vec<String> = self.held().iter().cloned().collect();
            if !held.is_empty()
                && let Err(e) = self.queue.heartbeat(&self.consumer, &held).await
            {
                tracing::warn!(error = %e, "cannot refresh held deliveries");
            }
            if *stopped.borrow() {
                // Keep refreshing until in-flight work is done, then stop.
                if self.held().is_empty() || self.permits.available_permits() == self.app.config.worker_concurrency {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            match self.queue.reclaim(&self.consumer, self.app.config.takeover_after, 200).await {
                Ok(entries) => {
                    if !entries.is_empty() {
                        tracing::info!(count = entries.len(), "took over deliveries left by a stopped worker");
                    }
                    for entry in entries {
                        self.dispatch(entry);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "cannot look for abandoned deliveries"),
            }
        }
    }

    /// Moves due retries to the ready stream, sleeping until the next one is due.
    async fn scheduler_loop(self: Arc<Self>, mut stopped: watch::Receiver<bool>) {
        use std::sync::atomic::Ordering;
        while !*stopped.borrow() {
            let now = crate::time::now_millis();
            let wait_ms = match self.queue.move_due(now, 500).await {
                Ok((500, _)) => continue,
                Ok((_, next)) => next.map_or(1000, |due| due.saturating_sub(now)).clamp(5, 1000),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot move due retries");
                    1000
                }
            };
            self.next_wake_ms.store(now + wait_ms, Ordering::Relaxed);
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(wait_ms)) => {}
                _ = self.scheduler_wake.notified() => {}
                _ = stopped.changed() => {}
            }
        }
    }

    /// Brings back parked deliveries of webhooks with room, and trims old index entries.
    async fn janitor_loop(self: Arc<Self>, mut stopped: watch::Receiver<bool>) {
        let mut tick = tokio::time::interval(Duration::from_secs(2));
        let mut rounds: u64 = 0;
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stopped.changed() => return,
            }
            if let Err(e) = self.queue.trim().await {
                tracing::warn!(error = %e, "cannot trim the ready stream");
            }
            if let Ok(webhooks) = self.queue.parked_webhooks().await {
                for webhook in webhooks {
                    let free = self.lanes.free(&webhook);
                    if free == 0 {
                        continue;
                    }
                    match self.queue.unpark(&webhook, free).await {
                        // More remain: keep unparking as these attempts end.
                        Ok(moved) if moved == free => self.lanes.adopt_parked(&webhook),
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "cannot unpark deliveries"),
                    }
                }
            }
            if rounds.is_multiple_of(30) {
                let cutoff =
                    crate::time::now_millis().saturating_sub(self.app.config.delivery_retention.as_millis() as u64);
                if let Err(e) = self.app.store.trim_delivery_indexes(cutoff).await {
                    tracing::warn!(error = %e, "cannot trim delivery indexes");
                }
                if let Err(e) = self.queue.forget_idle_consumers(Duration::from_secs(3600)).await {
                    tracing::warn!(error = %e, "cannot forget idle consumers");
                }
            }
            rounds += 1;
        }
    }
}
