//! Finished spans on their way to the collector: a bounded queue the request and delivery
//! paths hand spans to without waiting (full: the span is dropped and counted), and one
//! task that sends them in batches — at most `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` spans, at the
//! latest `OTEL_BSP_SCHEDULE_DELAY` after the first, each export bounded by
//! `OTEL_BSP_EXPORT_TIMEOUT`. A collector that is slow, hangs or refuses costs spans (a
//! failed batch is dropped and counted), never a publish or a delivery.
//!
//! (The SDK's own batch processor runs on a thread of its own with a blocking executor and
//! does not say how many spans it dropped; this one runs on Weir's runtime and counts them.)

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::meters::Counter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use tokio::sync::{Notify, mpsc};

use super::settings::Batch;

/// How long a stopping process gives its last spans to go out.
const STOP_WITHIN: Duration = Duration::from_secs(5);
/// How often a failing export is logged at most.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// Spans exported, and dropped (queue full, or their export failed).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counts {
    pub(crate) exported: Counter,
    pub(crate) dropped: Counter,
}

#[derive(Debug)]
pub(super) struct Queue {
    spans: mpsc::Sender<SpanData>,
    counts: Counts,
    stopping: Arc<(AtomicBool, Notify)>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Queue {
    /// Starts the sending task (inside a Tokio runtime).
    pub(super) fn start(exporter: opentelemetry_otlp::SpanExporter, batch: Batch, counts: Counts) -> Queue {
        let (spans, waiting) = mpsc::channel(batch.queue);
        let stopping = Arc::new((AtomicBool::new(false), Notify::new()));
        let task = tokio::spawn(send(exporter, waiting, batch, counts.clone(), stopping.clone()));
        Queue { spans, counts, stopping, task: std::sync::Mutex::new(Some(task)) }
    }

    /// Hands a finished span over; never waits.
    pub(super) fn push(&self, span: SpanData) {
        if self.spans.try_send(span).is_err() {
            self.counts.dropped.inc();
        }
    }

    /// Sends what waits and stops, within [`STOP_WITHIN`] (what is left then is dropped).
    pub(super) async fn stop(&self) {
        self.stopping.0.store(true, Ordering::Release);
        self.stopping.1.notify_one();
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut task) = task
            && tokio::time::timeout(STOP_WITHIN, &mut task).await.is_err()
        {
            task.abort();
        }
    }
}

async fn send(
    exporter: opentelemetry_otlp::SpanExporter,
    mut waiting: mpsc::Receiver<SpanData>,
    batch: Batch,
    counts: Counts,
    stopping: Arc<(AtomicBool, Notify)>,
) {
    let mut last_log: Option<Instant> = None;
    loop {
        let stop = stopping.0.load(Ordering::Acquire);
        let first = if stop {
            match waiting.try_recv() {
                Ok(span) => span,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                span = waiting.recv() => match span { Some(span) => span, None => break },
                () = stopping.1.notified() => continue,
            }
        };
        let mut spans = vec![first];
        let until = tokio::time::Instant::now() + batch.delay;
        while spans.len() < batch.batch {
            if stopping.0.load(Ordering::Acquire) {
                match waiting.try_recv() {
                    Ok(span) => spans.push(span),
                    Err(_) => break,
                }
                continue;
            }
            tokio::select! {
                span = waiting.recv() => match span { Some(span) => spans.push(span), None => break },
                () = tokio::time::sleep_until(until) => break,
                () = stopping.1.notified() => {}
            }
        }
        let n = spans.len() as u64;
        let failure = match tokio::time::timeout(batch.timeout, exporter.export(spans)).await {
            Ok(Ok(())) => {
                counts.exported.inc_by(n);
                None
            }
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some(format!("no answer within {:?}", batch.timeout)),
        };
        if let Some(why) = failure {
            counts.dropped.inc_by(n);
            if last_log.is_none_or(|at| at.elapsed() >= LOG_EVERY) {
                last_log = Some(Instant::now());
                tracing::warn!(error = %why, spans = n, "cannot export spans to the OpenTelemetry collector; they are dropped (weir_otel_spans_dropped_total)");
            }
        }
    }
}
