//! One delivery's attempt: loaded (in batches per partition, counting the attempt), its
//! body prepared (`prepare`: plugins), signed, sent to its destination, and what follows
//! decided by the retry policy (`retry`) — a [`Worked`] the engine hands to the recorder.

mod prepare;
mod request;
pub(in crate::delivery) mod retry;
mod standing;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;

use self::prepare::{Prepared, Preparer};
use self::request::{Attempt, Request, Traced, describe, next_in_words, signal_of};
use self::standing::{InFlight, Standing};
use super::claiming::claimed::Claimed;
use super::claiming::lanes::{SLOW_AFTER, Signal};
use crate::destinations::http::Presented;
use crate::destinations::kind::Sealed;
use crate::destinations::message::{Message, SendError};
use crate::destinations::send::{Destination, Destinations, Sent};
use crate::domain::egress;
use crate::metrics::Metrics;
use crate::plugins::Runtime;
use crate::shared::PluginHashes;
use crate::store::core::batch::Batcher;
use crate::store::queue::claim::Member;
use crate::store::queue::row::RowChanges;
use crate::store::queue::targets::Targets;
use crate::store::queue::targets::WebhookTarget;
use crate::store::queue::work::{Loaded, Outcome, Report};
use crate::store::tenants::plugins::PluginRecords;
use crate::store::{Keys, Partition, StoreError};
use crate::telemetry::{Answer, AttemptSpan, PluginCall, Telemetry};

/// Most loads sent to Redis in one script call.
const BATCH: usize = 64;

/// A claimed delivery to load: its webhook and queue member.
#[derive(Debug, Clone)]
pub(in crate::delivery) struct Claim {
    pub webhook: String,
    pub member: Member,
}

/// What an attempt needs: the delivery as loaded, and its webhook (`None` if it is gone;
/// shared by the deliveries of one load to it).
#[derive(Debug)]
pub(in crate::delivery) struct Work {
    pub loaded: Loaded,
    pub webhook: Option<Arc<WebhookTarget>>,
}

/// What an attempt leaves to record. (Returned once per attempt and matched at once: the
/// report is not boxed, to spare an allocation per delivery.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub(in crate::delivery) enum Worked {
    /// Its outcome; whether the webhook had a failure streak (a success must end it); what
    /// the answer said of the endpoint.
    Record { report: Report, failing: bool, signal: Option<Signal> },
    /// What an earlier attempt stored cannot be read: the delivery is dead-lettered.
    DeadLetter(String),
    /// Nothing now (the store could not be read): the lease brings it back.
    Nothing,
}

impl Worked {
    fn record(report: Report) -> Worked {
        Worked::Record { report, failing: false, signal: None }
    }
}

/// A report with no request made.
pub(in crate::delivery) fn unsent(webhook: &str, member: &Member, outcome: Outcome, attempt: u32) -> Report {
    Report {
        webhook: webhook.to_owned(),
        member: member.clone(),
        outcome,
        attempt,
        attempt_json: None,
        signature: None,
        changes: RowChanges::default(),
        not_the_endpoint: false,
        ordered: false,
    }
}

/// The attempting part of the engine: loads, plugins, signing, sending, judging.
#[derive(Debug)]
pub(in crate::delivery) struct Attempter {
    loaders: Vec<Batcher<Claim, Result<Option<Work>, StoreError>>>,
    preparer: Preparer,
    destinations: Destinations,
    telemetry: Arc<Telemetry>,
    metrics: Arc<Metrics>,
    /// The waits before each retry (`WEIR_RETRY_SCHEDULE`).
    retry_schedule: Vec<Duration>,
}

/// What an attempt loads from, over the engine's own connection: the claimed rows, their
/// webhooks' targets, and the plugins' code.
#[derive(Debug, Clone)]
pub(in crate::delivery) struct AttempterDoors {
    pub keys: Keys,
    pub rows: crate::store::queue::work::Work,
    pub targets: Targets,
    pub plugins: PluginRecords,
}

/// What an [`Attempter`] is made of.
#[derive(Debug)]
pub(in crate::delivery) struct AttempterParts {
    pub doors: AttempterDoors,
    pub destinations: Destinations,
    pub plugins: Arc<Runtime>,
    pub plugin_hashes: Arc<PluginHashes>,
    pub telemetry: Arc<Telemetry>,
    pub metrics: Arc<Metrics>,
    pub retry_schedule: Vec<Duration>,
}

impl Attempter {
    pub(in crate::delivery) fn new(parts: AttempterParts) -> Attempter {
        let AttempterParts { doors, destinations, plugins, plugin_hashes, telemetry, metrics, retry_schedule } = parts;
        let loaders =
            Batcher::per_partition(doors.keys.partitions(), doors.clone(), BATCH, |doors, p, claims| async move {
                load(&doors, p, claims).await
            });
        Attempter {
            loaders,
            preparer: Preparer { records: doors.plugins, plugins, plugin_hashes },
            destinations,
            telemetry,
            metrics,
            retry_schedule,
        }
    }

    /// Loads a claimed delivery (in its partition's batch): `None` when its row is gone.
    pub(in crate::delivery) async fn load(&self, p: Partition, claim: Claim) -> Result<Option<Work>, StoreError> {
        match self.loaders.get(usize::from(p.0)) {
            Some(loader) => loader.call(claim).await.and_then(|r| r),
            None => Ok(None),
        }
    }

    /// The attempt of the delivery `claimed` holds: what to record (see [`Worked`]); if it
    /// has no answer for [`SLOW_AFTER`], its hold is marked slow. A panic inside it (a bug in Weir or a library it calls,
    /// not the destination's answer) is a failed attempt recorded as an internal error,
    /// retried on the schedule.
    pub(in crate::delivery) async fn work(&self, claimed: &Claimed, work: Work) -> Worked {
        let (webhook_id, member) = (claimed.webhook(), claimed.member());
        let standing = Standing::of(&work.loaded);
        let on_slow = || claimed.became_slow();
        let mut attempt = std::pin::pin!(self.attempt(webhook_id, member, work, on_slow));
        match crate::panics::caught(attempt.as_mut()).await {
            Ok(worked) => worked,
            Err(panic) => {
                let this = Attempt { webhook_id, member, number: standing.number };
                Worked::record(self.internal_error(&this, standing, &panic))
            }
        }
    }

    /// [`Attempter::work`], its panics not caught.
    async fn attempt(&self, webhook_id: &str, member: &Member, work: Work, on_slow: impl FnOnce()) -> Worked {
        let Work { mut loaded, webhook } = work;
        let attempt_no = loaded.attempt.max(1);
        let this = Attempt { webhook_id, member, number: attempt_no };
        let ending = |outcome| {
            Worked::record(Report { ordered: loaded.ordered, ..unsent(webhook_id, member, outcome, attempt_no) })
        };
        if loaded.status.is_some() {
            // Already final (ended with its webhook, or recorded by an earlier lease holder).
            return ending(Outcome::Failed);
        }
        let Some(webhook) = webhook else {
            return ending(Outcome::Cancelled);
        };
        if !webhook.active {
            return ending(Outcome::Failed);
        }
        let started = SystemTime::now();
        let event = loaded.event.take();
        let prepared = self.preparer.prepare(member, &mut loaded, event.as_deref(), &webhook).await;
        let (body, extra_headers, changes, calls) = match prepared {
            Prepared::Send { body, extra_headers, changes, calls } => (body, extra_headers, changes, calls),
            Prepared::Filtered { changes, calls } => {
                let trace = Traced::of(member, event.as_deref(), &self.telemetry);
                let to = webhook.url.as_str();
                self.traced(&this, &trace, (to, None), (started, Answer::NotSent), &calls);
                let report = Report {
                    changes,
                    ordered: loaded.ordered,
                    ..unsent(webhook_id, member, Outcome::Filtered, attempt_no)
                };
                return Worked::record(report);
            }
            Prepared::EventMissing => {
                tracing::warn!(delivery_id = %member.delivery, org_id = %member.org, "event envelope expired before delivery");
                return Worked::record(unsent(webhook_id, member, Outcome::Failed, attempt_no));
            }
            Prepared::Corrupt(reason) => return Worked::DeadLetter(reason),
            Prepared::StoreDown => return Worked::Nothing,
        };
        let trace = Traced::of(member, event.as_deref(), &self.telemetry);
        let request = Request::signed(&this, event.as_deref(), trace, &webhook, (&body, &extra_headers));
        let context = egress::key_context(&member.org, webhook_id);
        let credentials_context = crate::destinations::credentials_context(&member.org, webhook_id);
        let destination = destination_of(&webhook, &context, &credentials_context);
        let in_flight = InFlight::of(&self.metrics);
        let message = Message { headers: &request.headers, body: Bytes::from(body) };
        let sent = self.destinations.send(&destination, message, SLOW_AFTER, on_slow).await;
        drop(in_flight);
        let answer = match &sent.result {
            Ok(answer) => Answer::Status(answer.status()),
            Err(e) => Answer::Unanswered(sent.class(), e.to_string()),
        };
        let to = (destination.address(), destination.messaging());
        self.traced(&this, &request.trace, to, (started, answer), &calls);
        let (report, signal) = self.judge(&this, &loaded, &request, &sent, changes);
        Worked::Record { report, failing: webhook.failing, signal }
    }

    /// What an attempt's answer means: the endpoint's signal to its lane, the outcome by the
    /// retry policy, and the report to record.
    fn judge(
        &self,
        this: &Attempt<'_>,
        loaded: &Loaded,
        request: &Request,
        sent: &Sent,
        mut changes: RowChanges,
    ) -> (Report, Option<Signal>) {
        let Attempt { webhook_id, member, number: attempt_no } = *this;
        let created_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, &member.delivery).unwrap_or(request.at_ms);
        let (result, attempt, cause) = describe(sent, created_ms, request.at_ms);
        self.metrics.attempt(sent.kind, sent.class(), sent.duration.as_secs_f64());
        let schedule = &self.retry_schedule;
        let standing = Standing::of(loaded);
        let signal = signal_of(sent, &result, cause.as_deref(), standing.place(), schedule);
        let outcome = standing.outcome(&result, schedule);
        changes.kept_due_ends = loaded.kept_due.is_some();
        if !request.webhook_header_names.is_empty() {
            // Their names only: the values are the webhook's secrets (contract §8).
            let names: Vec<(&str, &str)> =
                request.webhook_header_names.iter().map(|name| (name.as_str(), "")).collect();
            changes.webhook_headers = Some(serde_json::to_string(&names).unwrap_or_default());
        }
        if let Some(cause) = &cause {
            tracing::warn!(
                delivery_id = %member.delivery,
                webhook_id,
                org_id = %member.org,
                attempt = attempt_no,
                trace_id = %request.trace.context.trace_id_hex(),
                %cause,
                next = %next_in_words(&outcome),
                "delivery attempt failed: {cause}"
            );
        }
        let report = Report {
            webhook: webhook_id.to_owned(),
            member: member.clone(),
            outcome,
            attempt: attempt_no,
            attempt_json: Some(attempt),
            signature: Some(request.signature.clone()),
            changes,
            not_the_endpoint: matches!(sent.result, Err(SendError::Proxy(_))),
            ordered: loaded.ordered,
        };
        (report, signal)
    }

    /// The report of an attempt that panicked: a failed attempt, its error an internal one
    /// (the panic itself is logged here, once, and counted), retried on the schedule; it
    /// says nothing of the endpoint (no signal, no failure streak).
    fn internal_error(&self, this: &Attempt<'_>, standing: Standing, panic: &crate::panics::Panicked) -> Report {
        let Attempt { webhook_id, member, number } = *this;
        let now = crate::time::now_millis();
        let outcome = standing.outcome(&retry::AttemptResult::NoResponse, &self.retry_schedule);
        self.metrics.internal_errors.inc();
        tracing::error!(
            delivery_id = %member.delivery,
            webhook_id,
            org_id = %member.org,
            attempt = number,
            %panic,
            next = %next_in_words(&outcome),
            "delivery attempt failed inside Weir (an internal error)"
        );
        let created_ms = crate::ids::millis_of(crate::ids::Kind::Delivery, &member.delivery).unwrap_or(now);
        let error = "internal error: the attempt failed inside Weir, not at the destination (it is retried)";
        let attempt = crate::store::queue::attempts::attempt_json(created_ms, now, None, 0, Some(error), None);
        let changes = RowChanges { kept_due_ends: standing.kept_due.is_some(), ..RowChanges::default() };
        Report {
            outcome,
            attempt_json: Some(attempt),
            changes,
            not_the_endpoint: true,
            ordered: standing.ordered,
            ..unsent(webhook_id, member, Outcome::Failed, number)
        }
    }

    /// Records the attempt's span (and its plugin calls') when traces are exported.
    fn traced(
        &self,
        this: &Attempt<'_>,
        trace: &Traced,
        (url, messaging): (&str, Option<(&'static str, &str)>),
        (start, answer): (SystemTime, Answer),
        plugins: &[PluginCall],
    ) {
        if !self.telemetry.enabled() {
            return;
        }
        let Attempt { webhook_id, member, number: attempt } = *this;
        self.telemetry.attempt(AttemptSpan {
            trace: &trace.context,
            from_publisher: trace.from_publisher,
            event_id: &member.event,
            delivery_id: &member.delivery,
            webhook_id,
            org_id: &member.org,
            attempt,
            url,
            messaging,
            start,
            end: SystemTime::now(),
            answer,
            plugins,
        });
    }
}

/// Where a webhook's attempt goes (`context`: what its client certificate's key is bound
/// to; `credentials_context`: what its destination's credentials are).
fn destination_of<'a>(webhook: &'a WebhookTarget, context: &'a str, credentials_context: &'a str) -> Destination<'a> {
    let Some(target) = &webhook.destination else {
        let presented = webhook.client_certificate.as_ref().map(|certificate| Presented { certificate, context });
        return Destination::Http { url: &webhook.url, presented };
    };
    match serde_json::from_str::<crate::destinations::Spec>(&target.spec) {
        Ok(spec) => {
            let sealed = target
                .sealed_credentials
                .as_deref()
                .map(|credentials| Sealed { credentials, context: credentials_context });
            Destination::Other { spec, sealed }
        }
        Err(e) => Destination::Unreadable { address: &webhook.url, why: e.to_string() },
    }
}

/// Loads a batch of claimed deliveries of one partition and their webhooks.
async fn load(
    doors: &AttempterDoors,
    p: Partition,
    claims: Vec<Claim>,
) -> Result<Vec<Result<Option<Work>, StoreError>>, StoreError> {
    let members: Vec<&Member> = claims.iter().map(|c| &c.member).collect();
    let mut webhooks: Vec<(&str, &str)> = claims.iter().map(|c| (c.member.org.as_str(), c.webhook.as_str())).collect();
    webhooks.sort_unstable();
    webhooks.dedup();
    // Sent together: on one Redis they share a round trip.
    let (loaded, targets) = tokio::try_join!(doors.rows.load(p, &members), doors.targets.webhook_targets(&webhooks))?;
    let targets: Vec<Option<Arc<WebhookTarget>>> = targets.into_iter().map(|t| t.map(Arc::new)).collect();
    Ok(loaded
        .into_iter()
        .zip(&claims)
        .map(|(loaded, claim)| {
            loaded.map(|loaded| {
                loaded.map(|loaded| {
                    let wanted = (claim.member.org.as_str(), claim.webhook.as_str());
                    let webhook = webhooks.binary_search(&wanted).ok().and_then(|i| targets.get(i).cloned().flatten());
                    Work { loaded, webhook }
                })
            })
        })
        .collect())
}
