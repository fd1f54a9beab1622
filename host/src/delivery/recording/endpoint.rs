//! Keeping up with each webhook's endpoint (`lanes` holds this process's view): what each
//! attempt says of it, and each change of state —
//! probing, healthy again, paused — kept in the webhook for every process, counted, and
//! acted on: deliveries waiting in a lane that turned probing or paused go back to the
//! queue, holding no worker.

use std::sync::Arc;

use super::super::claiming::Claimer;
use super::super::claiming::lanes::Signal;
use crate::store::queue::endpoint::EndpointChange;

/// What an attempt's end says of `webhook`'s endpoint; a change of state is kept in the
/// webhook (in the background: the attempt's outcome does not wait for it).
pub(super) fn signal(claimer: &Arc<Claimer>, org_id: &str, webhook: &str, signal: Signal) {
    let Some(change) = claimer.lanes.signal(webhook, signal) else { return };
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
    claimer.metrics.endpoint_changed(kind);
    let (claimer, org_id, webhook) = (claimer.clone(), org_id.to_owned(), webhook.to_owned());
    tokio::spawn(async move {
        if let Some(due_ms) = due_ms {
            let waiting = claimer.lanes.take_waiting_of(&webhook);
            if !waiting.is_empty() {
                let items = waiting.into_iter().map(|w| (webhook.clone(), w)).collect();
                claimer.give_back(items, due_ms).await;
            }
        }
        if let Err(e) = claimer.store.endpoints().set_endpoint_state(&org_id, &webhook, &change).await {
            tracing::warn!(error = %e, webhook_id = %webhook, "cannot keep the endpoint's state in its webhook");
        }
    });
}
