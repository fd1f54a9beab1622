//! Webhooks' filters at work (contract §8): which subscribed webhooks an event goes to
//! (publishing, replays), and trying a filter on an event before saving it.

use serde_json::Value;

use std::sync::Arc;

use super::Invalid;
use super::fields::Fields;
use super::moved::Moved;
use crate::filters::{Envelope, Evaluator, Filter, Selection};
use crate::metrics::Metrics;
use crate::store::StoreError;
use crate::store::tenants::webhooks::Subscriber;

/// Filters at work: the evaluator, and where their results are counted (`None`: not
/// counted, as in `weir admin`).
#[derive(Debug, Clone)]
pub(crate) struct Filtering {
    filters: Arc<Evaluator>,
    metrics: Option<Arc<Metrics>>,
}

impl Filtering {
    pub(crate) fn new(filters: Arc<Evaluator>, metrics: Option<Arc<Metrics>>) -> Filtering {
        Filtering { filters, metrics }
    }

    /// Keeps the webhooks whose filter selects the event (those without a filter stay): an
    /// event a filter does not select gets no delivery to that webhook, as an unsubscribed
    /// action would. The filters are evaluated together (`filters::Evaluator`: off the
    /// request threads unless all are cheap), the envelope's values made once for all.
    pub(crate) async fn keep_selected(&self, org_id: &str, envelope: &str, webhooks: &mut Vec<Subscriber>) {
        let filtered: Vec<usize> = (0..webhooks.len()).filter(|&i| webhooks[i].filter.is_some()).collect();
        if filtered.is_empty() {
            return;
        }
        let filters = filtered
            .iter()
            .map(|&i| webhooks[i].filter.as_deref().and_then(|s| self.filters.compiled(s).ok()))
            .collect();
        let verdicts = self.filters.select(org_id, envelope, filters).await;
        let mut dropped = vec![false; webhooks.len()];
        for (&i, verdict) in filtered.iter().zip(&verdicts) {
            dropped[i] = !self.counted(&webhooks[i].webhook, verdict);
        }
        let mut at = 0;
        webhooks.retain(|_| {
            at += 1;
            !dropped[at - 1]
        });
    }

    /// Which of `envelopes` a replay sends `webhook`, its filter being `filter` (`None`: one
    /// that no longer compiles, which selects nothing).
    pub(crate) async fn replayed(
        &self,
        (org_id, webhook): (&str, &str),
        filter: Option<Arc<Filter>>,
        envelopes: Vec<String>,
    ) -> Vec<bool> {
        let verdicts = self.filters.select_each(org_id, filter, envelopes).await;
        verdicts.iter().map(|v| self.counted(webhook, v)).collect()
    }

    /// Whether `verdict` selects, counted in `/metrics` (by a serving process).
    fn counted(&self, webhook: &str, verdict: &Selection) -> bool {
        if let Selection::Error(why) = verdict {
            tracing::debug!(webhook_id = webhook, error = %why, "a filter could not be evaluated; the event is not selected");
        }
        if let Some(metrics) = &self.metrics {
            metrics.filter_event(webhook, result_of(verdict));
        }
        *verdict == Selection::Selected
    }

    /// `{"filter", "event"}` or `{"filter", "event_id"}`: what `filter` makes of the event
    /// (one by id read through `moved`).
    pub(crate) async fn test(
        &self,
        moved: &Moved,
        org_id: &str,
        body: serde_json::Map<String, Value>,
    ) -> Result<FilterTest, TestError> {
        test(&self.filters, moved, org_id, body).await
    }
}

fn result_of(verdict: &Selection) -> &'static str {
    match verdict {
        Selection::Selected => "selected",
        Selection::NotSelected => "not_selected",
        Selection::Error(_) => "error",
    }
}

/// What trying a filter gave.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct FilterTest {
    /// Whether the event would be delivered.
    #[serde(rename = "match")]
    pub matched: bool,
    /// Why the evaluation failed (the event is then not delivered); `null` when it did not.
    pub error: Option<String>,
}

/// Why a filter could not be tried.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TestError {
    #[error("the request is not valid")]
    Invalid(Invalid),
    #[error("no event {0} of the organisation")]
    UnknownEvent(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

async fn test(
    evaluator: &Evaluator,
    moved: &Moved,
    org_id: &str,
    body: serde_json::Map<String, Value>,
) -> Result<FilterTest, TestError> {
    let mut fields = Fields::new(body);
    let source = fields.required_string("filter");
    let event = fields.value("event");
    let event_id = fields.string("event_id");
    let filter = source.and_then(|s| match Filter::compile(&s) {
        Ok(filter) => Some(filter),
        Err(e) => {
            fields.error("filter", e.to_string());
            None
        }
    });
    match (&event, &event_id) {
        (Some(Value::Object(_)), None) | (None, Some(_)) => {}
        (Some(_), None) => fields.error("event", "must be an event's envelope (a JSON object)"),
        (Some(_), Some(_)) => fields.error("event_id", "give either event or event_id, not both"),
        (None, None) => fields.error("event", "give the event's envelope, or event_id"),
    }
    fields.finish().map_err(TestError::Invalid)?;
    let (Some(filter), envelope) = (filter, event) else {
        return Err(TestError::Invalid(Invalid::field("filter", "is not valid")));
    };
    let verdict = match (envelope, event_id) {
        (Some(envelope), _) => evaluator.try_on(org_id, filter, move || Envelope::of(envelope)).await,
        (None, Some(id)) => {
            let reads = moved.reads();
            let Some((_, stored)) = reads.event(org_id, &id).await? else { return Err(TestError::UnknownEvent(id)) };
            evaluator.try_on(org_id, filter, move || Envelope::parse(&stored.envelope)).await
        }
        (None, None) => Selection::Error("no event".to_owned()),
    };
    Ok(tried(verdict))
}

/// What a filter's verdict on an event tells who tried it.
pub(crate) fn tried(verdict: Selection) -> FilterTest {
    match verdict {
        Selection::Selected => FilterTest { matched: true, error: None },
        Selection::NotSelected => FilterTest { matched: false, error: None },
        Selection::Error(why) => FilterTest { matched: false, error: Some(why) },
    }
}
