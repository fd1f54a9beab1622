//! Keeping up with each webhook's endpoint (`lanes` holds this process's view): what each
//! attempt says of it, slow attempts giving their worker back, and each change of state —
//! probing, healthy again, paused — kept in the webhook for every process, counted, and
//! acted on: deliveries waiting in a lane that turned probing or paused go back to the
//! queue, holding no worker.

use std::sync::Arc;

use super::super::Engine;
use super::super::claiming::lanes::Signal;
use crate::store::queue::endpoint::EndpointChange;

impl Engine {
    /// An attempt of `delivery` to `webhook` has had no answer for `lanes::SLOW_AFTER`.
    pub(in crate::delivery) fn became_slow(&self, webhook: &str, delivery: &str) {
        let mut held = self.held();
        let Some(entry) = held.get_mut(delivery).filter(|h| !h.slow) else { return };
        entry.slow = true;
        drop(held);
        self.lanes.became_slow(webhook);
        self.permits.add_permits(1);
        self.freed.notify_waiters();
    }

    /// What an attempt's end says of `webhook`'s endpoint; a change of state is kept in the
    /// webhook (in the background: the attempt's outcome does not wait for it).
    pub(in crate::delivery) fn endpoint_signal(self: &Arc<Self>, org_id: &str, webhook: &str, signal: Signal) {
        let Some(change) = self.lanes.signal(webhook, signal) else { return };
        let (kind, due_ms) = match &change {
            EndpointChange::Healthy { .. } => ("healthy", None),
            EndpointChange::Probing { at_ms, reason } => {
                tracing::warn!(webhook_id = %webhook, org_id, %reason, "endpoint probed one attempt at a time until one succeeds");
                ("probing", Some(*at_ms))
            }
            EndpointChange::Paused { until_ms, reason, .. } => {
                let until = crate::time::format_millis(*until_ms);
                tracing::info!(webhook_id = %webhook, org_id, %reason, %until, "endpoint asked for a pause");
                ("paused", Some(*until_ms))
            }
        };
        self.metrics.endpoint_changed(kind);
        let (engine, org_id, webhook) = (self.clone(), org_id.to_owned(), webhook.to_owned());
        tokio::spawn(async move {
            if let Some(due_ms) = due_ms {
                let waiting = engine.lanes.take_waiting_of(&webhook);
                if !waiting.is_empty() {
                    let items = waiting.into_iter().map(|w| (webhook.clone(), w)).collect();
                    engine.give_back(items, due_ms).await;
                }
            }
            if let Err(e) = engine.store.set_endpoint_state(&org_id, &webhook, &change).await {
                tracing::warn!(error = %e, webhook_id = %webhook, "cannot keep the endpoint's state in its webhook");
            }
        });
    }
}
