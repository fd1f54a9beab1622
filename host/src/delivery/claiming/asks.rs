//! What a claim asks for: the webhooks whose lanes have room — the healthy first, a few
//! unproven ones — cut to what their rate budgets grant (every process shares them,
//! `store::queue::rate`), and the budget a claim did not use given back.

use std::collections::HashMap;
use std::time::Duration;

use super::lanes::{Lanes, Room, Waiting};
use crate::store::queue::rate::Rates;

/// Most parked webhooks a claim leaves out of its hints by name.
const PARKED_MAX: usize = 512;
/// Most webhooks whose endpoints have not proven themselves (new, probing, slow) one claim
/// asks for, besides the healthy ones (which always come first): a crowd of them cannot
/// make one claim, and the loads behind it, long.
const UNPROVEN_ASKS: usize = 32;
/// How long a webhook's claims wait when its rate budget was read without an answer.
const RATE_RETRY: Duration = Duration::from_millis(100);

/// A webhook a claim asks for: what its lane reserved, and what the claim may take.
pub(super) struct Asked {
    pub webhook: String,
    pub reserved: usize,
    pub limit: usize,
    /// Taken from the webhook's rate budget (all of `limit`).
    pub rate_limit: Option<u32>,
    pub proven: bool,
}

/// The webhooks to ask for — the hints and the parked, each within its lane's room; the
/// healthy first, and at most [`UNPROVEN_ASKS`] others — parking those without room.
pub(super) fn asks(lanes: &Lanes, hints: &[String], parked: &mut Vec<String>) -> Vec<Asked> {
    let mut asked = Vec::new();
    let mut unproven = 0;
    let mut still_parked = Vec::new();
    for webhook in hints.iter().chain(parked.iter().filter(|w| !hints.contains(w))) {
        match lanes.reserve(webhook) {
            Room { room: 0, .. } => still_parked.push(webhook.clone()),
            Room { room, proven: false, .. } if unproven == UNPROVEN_ASKS => {
                lanes.claimed(webhook, room, Vec::new());
                still_parked.push(webhook.clone());
            }
            Room { room, rate_limit, proven } => {
                unproven += usize::from(!proven);
                asked.push(Asked { webhook: webhook.clone(), reserved: room, limit: room, rate_limit, proven })
            }
        }
    }
    // The healthy first: when the claim's budget runs short, they are served.
    asked.sort_by_key(|a| !a.proven);
    *parked = still_parked;
    parked.truncate(PARKED_MAX);
    asked
}

/// Takes the deliveries of rate-limited webhooks from their budgets (every process
/// shares them, `store::queue::rate`): each such ask is cut to what its budget grants, and one
/// granted nothing is parked until its budget has room.
pub(super) async fn take_from_budgets(
    (rates, lanes): (&Rates, &Lanes),
    asked: Vec<Asked>,
    parked: &mut Vec<String>,
) -> Vec<Asked> {
    let takes = asked.iter().map(|a| async move {
        match a.rate_limit {
            None => None,
            Some(rate) => Some(rates.take_deliveries(&a.webhook, rate, a.limit).await),
        }
    });
    let grants = futures_util::future::join_all(takes).await;
    let mut out = Vec::with_capacity(asked.len());
    for (mut a, grant) in asked.into_iter().zip(grants) {
        match grant {
            None => out.push(a),
            Some(Ok(grant)) if grant.granted > 0 => {
                a.limit = grant.granted;
                if let Some(wait) = grant.wait {
                    // The budget is spent: the next claim of it waits for a batch.
                    lanes.limited(&a.webhook, wait);
                }
                out.push(a);
            }
            Some(result) => {
                let wait = match result {
                    Ok(grant) => grant.wait.unwrap_or(RATE_RETRY),
                    Err(e) => {
                        tracing::warn!(error = %e, webhook_id = %a.webhook, "cannot read a webhook's rate budget");
                        RATE_RETRY
                    }
                };
                lanes.claimed(&a.webhook, a.reserved, Vec::new());
                lanes.limited(&a.webhook, wait);
                parked.push(a.webhook);
            }
        }
    }
    out
}

/// Gives back to their budgets the deliveries rate-limited asks were granted but did
/// not claim (their queues had fewer due).
pub(super) fn give_back_budgets(rates: &Rates, asked: &[Asked], claimed: &HashMap<String, Vec<Waiting>>) {
    for a in asked {
        let Some(rate) = a.rate_limit else { continue };
        let unused = a.limit.saturating_sub(claimed.get(&a.webhook).map_or(0, Vec::len));
        if unused == 0 {
            continue;
        }
        let (rates, webhook) = (rates.clone(), a.webhook.clone());
        tokio::spawn(async move {
            if let Err(e) = rates.give_back_deliveries(&webhook, rate, unused).await {
                tracing::debug!(error = %e, webhook_id = %webhook, "cannot give back a webhook's unused rate budget");
            }
        });
    }
}
