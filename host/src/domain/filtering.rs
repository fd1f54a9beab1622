//! Webhooks' filters at work (contract §8): which subscribed webhooks an event goes to
//! (publishing, replays), and trying a filter on an event before saving it.

use serde_json::Value;

use super::Invalid;
use super::fields::Fields;
use crate::app::App;
use crate::filters::{Envelope, Filter, Verdict};
use crate::store::StoreError;
use crate::store::tenants::webhooks::Subscriber;

/// Keeps the webhooks whose filter selects the event (those without a filter stay): an
/// event a filter does not select gets no delivery to that webhook, as an unsubscribed
/// action would. The envelope's values are made once, for every filter.
pub(crate) fn keep_selected(app: &App, envelope: &str, webhooks: &mut Vec<Subscriber>) {
    if webhooks.iter().all(|w| w.filter.is_none()) {
        return;
    }
    let values = Envelope::parse(envelope);
    webhooks.retain(|w| match &w.filter {
        None => true,
        Some(source) => selects(app, &w.webhook, source, &values),
    });
}

/// Whether `webhook`'s filter `source` selects the event (counted in `/metrics`).
pub(crate) fn selects(app: &App, webhook: &str, source: &str, values: &Result<Envelope, String>) -> bool {
    let verdict = match (app.filters.get(source), values) {
        (Ok(filter), Ok(values)) => filter.evaluate(values),
        (Err(e), _) => Verdict::Error(e.to_string()),
        (_, Err(e)) => Verdict::Error(e.clone()),
    };
    if let Verdict::Error(why) = &verdict {
        tracing::debug!(webhook_id = webhook, error = %why, "a filter could not be evaluated; the event is not selected");
    }
    app.metrics.filter_event(webhook, result_of(&verdict));
    verdict == Verdict::Selected
}

/// Whether a replay sends `webhook` an event, its filter being `filter` (`None`: one that no
/// longer compiles, which selects nothing); counted in `/metrics` when replayed by a
/// process that serves (`weir admin` replays are not).
pub(crate) fn replayed(app: Option<&App>, webhook: &str, filter: Option<&Filter>, envelope: &str) -> bool {
    let verdict = match (filter, Envelope::parse(envelope)) {
        (Some(filter), Ok(values)) => filter.evaluate(&values),
        (None, _) => Verdict::Error("the filter does not compile".to_owned()),
        (_, Err(e)) => Verdict::Error(e),
    };
    if let Some(app) = app {
        app.metrics.filter_event(webhook, result_of(&verdict));
    }
    verdict == Verdict::Selected
}

fn result_of(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Selected => "selected",
        Verdict::NotSelected => "not_selected",
        Verdict::Error(_) => "error",
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

/// `{"filter", "event"}` or `{"filter", "event_id"}`: what `filter` makes of the event.
pub(crate) async fn test(
    app: &App,
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
    let values = match (envelope, event_id) {
        (Some(envelope), _) => Envelope::of(envelope),
        (None, Some(id)) => {
            let reads = super::moved::Reads::of(app);
            let Some((_, stored)) = reads.event(org_id, &id).await? else { return Err(TestError::UnknownEvent(id)) };
            Envelope::parse(&stored.envelope)
        }
        (None, None) => Err("no event".to_owned()),
    };
    Ok(try_on(&filter, values))
}

/// What `filter` makes of an event's envelope (or of why it has none).
pub(crate) fn try_on(filter: &Filter, values: Result<Envelope, String>) -> FilterTest {
    let verdict = match values {
        Ok(values) => filter.evaluate(&values),
        Err(e) => Verdict::Error(e),
    };
    match verdict {
        Verdict::Selected => FilterTest { matched: true, error: None },
        Verdict::NotSelected => FilterTest { matched: false, error: None },
        Verdict::Error(why) => FilterTest { matched: false, error: Some(why) },
    }
}
