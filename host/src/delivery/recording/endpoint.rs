//! Keeping up with each webhook's endpoint (the lanes hold this process's view; an attempt's
//! hold tells them what the attempt said): each change of state — probing, healthy again,
//! paused — is logged, counted and kept in the webhook for every process.

use super::super::claiming::claimed::Claimed;
use crate::metrics::Metrics;
use crate::store::queue::endpoint::{EndpointChange, EndpointStates};

/// Keeps a change of `claimed`'s webhook's endpoint in the webhook (in the background: the
/// attempt's outcome does not wait for it).
pub(super) fn keep(states: &EndpointStates, metrics: &Metrics, claimed: &Claimed, change: EndpointChange) {
    let (org_id, webhook) = (&claimed.member().org, claimed.webhook());
    let kind = match &change {
        EndpointChange::Healthy { .. } => "healthy",
        EndpointChange::Probing { reason, .. } => {
            tracing::warn!(webhook_id = %webhook, %org_id, %reason, "endpoint probed one attempt at a time until one succeeds");
            "probing"
        }
        EndpointChange::Paused { until_ms, reason, .. } => {
            let until = crate::time::format_millis(*until_ms);
            tracing::info!(webhook_id = %webhook, %org_id, %reason, %until, "endpoint asked for a pause");
            "paused"
        }
    };
    metrics.endpoint_changed(kind);
    let (states, org_id, webhook) = (states.clone(), org_id.clone(), webhook.to_owned());
    tokio::spawn(async move {
        if let Err(e) = states.set_endpoint_state(&org_id, &webhook, &change).await {
            tracing::warn!(error = %e, webhook_id = %webhook, "cannot keep the endpoint's state in its webhook");
        }
    });
}
