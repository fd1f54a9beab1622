//! A publisher's event, counted among its organisation's events of the UTC day (contract §9
//! "Plans"). Its place is taken while its subscribers are looked up — the two travel to
//! Redis together, so counting adds no round trip a publish waits for — and only a publish
//! that got its place is stored: one refused stores nothing. A place a publish did not use
//! (a duplicate id, a write Redis refused) is given back. Test events, replays and
//! operational events are not counted: they do not come this way.

use serde_json::json;

use super::event::Event;
use super::operational::Operational;
use super::publishing::{Publishing, To};
use crate::domain::quota::QuotaExceeded;
use crate::plans::{Quota, Rules};
use crate::shared::TokenProof;
use crate::store::StoreError;
use crate::store::events::daily::{Take, Taken};
use crate::store::events::publish::Published;

/// Why a publisher's event was not published.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PublishError {
    /// The organisation's events of the day are used up.
    #[error(transparent)]
    Quota(QuotaExceeded),
    /// The publisher's token was revoked (or its client) while it was kept.
    #[error("the access token is no longer valid")]
    Unauthorized,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether a day's count went from below 80% of `limit` to at least 80% with `taken` more.
fn passed_80_percent(used_after: u64, taken: u64, limit: u64) -> bool {
    let before = used_after.saturating_sub(taken);
    limit > 0 && before * 5 < limit * 4 && used_after * 5 >= limit * 4
}

/// Who publishes: under which plan's rules, and what it was kept with, if it was (its
/// publish is then held to that version).
#[derive(Debug, Clone, Copy)]
pub(crate) struct By<'a> {
    pub rules: &'a Rules,
    pub kept: Kept<'a>,
}

/// What a publisher was kept with by this process (`store::versions`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kept<'a> {
    /// Read for this publish.
    Not,
    /// A publisher's token: looked up again when what it was kept with changed.
    Token(&'a TokenProof),
    /// A source, and its organisation's plan, read at this version: when they changed, the
    /// publish answers [`Published::Stale`] and the caller reads them again.
    Source { version: u64 },
}

impl Kept<'_> {
    fn version(self) -> Option<u64> {
        match self {
            Kept::Not => None,
            Kept::Token(token) => Some(token.version),
            Kept::Source { version } => Some(version),
        }
    }
}

/// Publishes a publisher's event within its plan's events of the day.
/// `token`: the publisher's, when it was kept (its publish is held to its version).
/// When a change made what was kept stale, the token is looked up again — revoked, or
/// its client: refused; else published again under the plan it has now.
pub(crate) async fn publish_counted(
    publishing: &Publishing,
    org_id: &str,
    by: By<'_>,
    event: &Event<'_>,
) -> Result<Published, PublishError> {
    let first = publish_counted_once(publishing, org_id, by, event, false).await;
    // Stale, or refused under the plan its kept token names: is that token (and plan)
    // still what it was?
    let Kept::Token(token) = by.kept else { return first };
    let stale = match &first {
        Ok(Published::Stale) => true,
        Err(PublishError::Quota(_)) => false,
        _ => return first,
    };
    let owner = publishing.tokens.owner_now(token).await?;
    let Some(owner) = owner.filter(|o| o.client.publisher) else { return Err(PublishError::Unauthorized) };
    if !stale && owner.plan.as_str() == by.rules.name.as_str() {
        return first;
    }
    // Kept with what it was: kept no longer.
    publishing.tokens.forget(token);
    let rules = publishing.plans.rules(owner.plan.as_str()).clone();
    // What was kept is behind a change: the subscribers are read anew too.
    match publish_counted_once(publishing, org_id, By { rules: &rules, kept: Kept::Not }, event, true).await? {
        Published::Stale => Err(PublishError::Unauthorized),
        published => Ok(published),
    }
}

/// [`publish_counted`] once, with the subscribers as kept or (`fresh`) read
/// now: [`Published::Stale`] when what `token` was kept with changed since.
async fn publish_counted_once(
    publishing: &Publishing,
    org_id: &str,
    by: By<'_>,
    event: &Event<'_>,
    fresh: bool,
) -> Result<Published, PublishError> {
    let By { rules, kept } = by;
    let to = To { except: None, kept_at: kept.version(), retention: publishing.retention(&rules.name), counted: true };
    // Publishes what `prepare` found (`None`: a duplicate), counted.
    let publish = async |prepared: Option<_>| match prepared {
        None => Ok(Published::Duplicate),
        Some(prepared) => {
            publishing.publish_prepared(org_id, event, prepared, to).await.map(|(published, _)| published)
        }
    };
    let Some(limit) = rules.limits.events_per_day else {
        // No limit to hold it to: the publish itself counts it.
        return Ok(publish(publishing.prepare(org_id, event, None, fresh).await?).await?);
    };
    let take = Take::now(org_id, limit, 1);
    let (taken, prepared) =
        tokio::join!(publishing.publisher.take_daily(take.clone()), publishing.prepare(org_id, event, None, fresh));
    let used = match taken? {
        Taken::Yes { used } => used,
        Taken::No { .. } => {
            publishing.metrics.quota_refused(&rules.name, Quota::EventsPerDay);
            return Err(PublishError::Quota(QuotaExceeded::events_of_the_day(rules, limit, crate::time::now_millis())));
        }
    };
    let outcome = match prepared {
        Ok(prepared) => publish(prepared).await,
        Err(e) => Err(e),
    };
    let unused = match &outcome {
        Ok(published) => matches!(published, Published::Duplicate | Published::Stale | Published::Seen),
        // Written, only not yet on its replicas: it counts.
        Err(e) => !matches!(e, StoreError::NotReplicated { .. }),
    };
    if unused {
        if let Err(e) = publishing.counts.give_back_daily(&take).await {
            tracing::warn!(error = %e, org_id, "cannot give back a place among the day's events; the day counts one too many");
        }
    } else if passed_80_percent(used, take.events, limit) {
        let day = crate::time::format_day(crate::time::now_millis());
        let snapshot = json!({"plan": rules.name, "day": day, "events": {"used": used, "limit": limit}});
        // Once a day: the day makes the occasion.
        let about = Operational {
            action: "usage_limit_approaching",
            subject: ("Organisation", org_id),
            snapshot,
            occasion: &day,
        };
        publishing.publish_operational(org_id, about, None).await;
    }
    Ok(outcome?)
}

#[cfg(test)]
mod tests {
    use super::passed_80_percent;

    #[test]
    fn the_warning_comes_once_as_the_count_passes_80_percent() {
        let crossings: Vec<u64> = (1..=10).filter(|used| passed_80_percent(*used, 1, 10)).collect();
        assert_eq!(crossings, vec![8]);
        assert!(!passed_80_percent(5, 1, 0), "a limit of 0 refuses everything: nothing to warn of");
    }
}
