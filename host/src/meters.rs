//! The meters Weir's metrics are made of — counters, gauges, histograms, and families of
//! them by label — and a registry that reads them two ways: as the Prometheus text format
//! `/metrics` serves ([`Registry::render`]), and as typed samples ([`Registry::read`]) that
//! the OpenTelemetry exporter sends as OTLP without parsing text (`crate::telemetry`). One
//! registry, so the two never disagree. Cloning a meter shares it.
//!
//! Ground floor: imports nothing of Weir.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// A count that only goes up.
#[derive(Debug, Clone, Default)]
pub(crate) struct Counter(Arc<AtomicU64>);

impl Counter {
    pub(crate) fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn inc_by(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A value that goes up and down.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gauge(Arc<AtomicI64>);

impl Gauge {
    pub(crate) fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn dec(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn set(&self, v: i64) {
        self.0.store(v, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Observations counted into buckets by their upper bounds, with their sum.
#[derive(Debug, Clone)]
pub(crate) struct Histogram(Arc<HistogramState>);

#[derive(Debug)]
struct HistogramState {
    bounds: Vec<f64>,
    /// One per bound, and one past the last (`+Inf`).
    buckets: Vec<AtomicU64>,
    /// The sum of every observation.
    sum: Mutex<f64>,
}

impl Histogram {
    /// Buckets from `start`, each `factor` times the last, `count` of them.
    pub(crate) fn exponential(start: f64, factor: f64, count: u16) -> Histogram {
        let bounds: Vec<f64> = (0..i32::from(count)).map(|i| start * factor.powi(i)).collect();
        let buckets = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram(Arc::new(HistogramState { bounds, buckets, sum: Mutex::new(0.0) }))
    }

    pub(crate) fn observe(&self, v: f64) {
        let state = &self.0;
        let i = state.bounds.iter().position(|b| v <= *b).unwrap_or(state.bounds.len());
        if let Some(bucket) = state.buckets.get(i) {
            bucket.fetch_add(1, Ordering::Relaxed);
        }
        *state.sum.lock().unwrap_or_else(|e| e.into_inner()) += v;
    }

    /// Its samples now: the bounds, each bucket's own count (not cumulative; the last is
    /// `+Inf`'s), the count and the sum.
    pub(crate) fn snapshot(&self) -> HistogramSample {
        let state = &self.0;
        let counts: Vec<u64> = state.buckets.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        HistogramSample {
            bounds: state.bounds.clone(),
            count: counts.iter().sum(),
            counts,
            sum: *state.sum.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// A histogram as read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HistogramSample {
    pub bounds: Vec<f64>,
    pub counts: Vec<u64>,
    pub count: u64,
    pub sum: f64,
}

/// A family's labels: names and values, in order.
pub(crate) type Labels = Vec<(&'static str, String)>;

/// Meters of one kind by their labels, each made on first use.
#[derive(Debug)]
pub(crate) struct Family<M> {
    meters: Arc<RwLock<BTreeMap<Labels, M>>>,
    make: fn() -> M,
}

impl<M> Clone for Family<M> {
    fn clone(&self) -> Self {
        Family { meters: self.meters.clone(), make: self.make }
    }
}

impl<M: Default + Clone> Default for Family<M> {
    fn default() -> Self {
        Family::new(M::default)
    }
}

impl<M: Clone> Family<M> {
    /// A family whose meters `make` makes.
    pub(crate) fn new(make: fn() -> M) -> Family<M> {
        Family { meters: Arc::default(), make }
    }

    /// The meter of `labels`, made now if there is none.
    pub(crate) fn get_or_create(&self, labels: &[(&'static str, &str)]) -> M {
        let key: Labels = labels.iter().map(|(n, v)| (*n, (*v).to_owned())).collect();
        if let Some(meter) = self.meters.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return meter.clone();
        }
        let mut meters = self.meters.write().unwrap_or_else(|e| e.into_inner());
        meters.entry(key).or_insert_with(self.make).clone()
    }

    pub(crate) fn remove(&self, labels: &[(&'static str, &str)]) {
        let key: Labels = labels.iter().map(|(n, v)| (*n, (*v).to_owned())).collect();
        self.meters.write().unwrap_or_else(|e| e.into_inner()).remove(&key);
    }

    pub(crate) fn clear(&self) {
        self.meters.write().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn each(&self) -> Vec<(Labels, M)> {
        self.meters.read().unwrap_or_else(|e| e.into_inner()).iter().map(|(l, m)| (l.clone(), m.clone())).collect()
    }
}

/// A registered series: what it is and where its values are.
#[derive(Debug, Clone)]
pub(crate) enum Meter {
    Counter(Counter),
    Gauge(Gauge),
    Counters(Family<Counter>),
    Histograms(Family<Histogram>),
}

impl From<Counter> for Meter {
    fn from(c: Counter) -> Meter {
        Meter::Counter(c)
    }
}

impl From<Gauge> for Meter {
    fn from(g: Gauge) -> Meter {
        Meter::Gauge(g)
    }
}

impl From<Family<Counter>> for Meter {
    fn from(f: Family<Counter>) -> Meter {
        Meter::Counters(f)
    }
}

impl From<Family<Histogram>> for Meter {
    fn from(f: Family<Histogram>) -> Meter {
        Meter::Histograms(f)
    }
}

/// Values of one series, as read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Values {
    Counter(Vec<(Labels, u64)>),
    Gauge(Vec<(Labels, i64)>),
    Histogram(Vec<(Labels, HistogramSample)>),
}

impl Values {
    fn is_empty(&self) -> bool {
        match self {
            Values::Counter(v) => v.is_empty(),
            Values::Gauge(v) => v.is_empty(),
            Values::Histogram(v) => v.is_empty(),
        }
    }
}

/// One series as read: its full name (`weir_attempts`, without `_total`), help and values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    pub name: String,
    pub help: &'static str,
    pub values: Values,
}

/// The series of one process, by name.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    prefix: &'static str,
    series: Vec<(String, &'static str, Meter)>,
}

impl Registry {
    /// An empty registry whose names start with `prefix` and `_`.
    pub(crate) fn with_prefix(prefix: &'static str) -> Registry {
        Registry { prefix, series: Vec::new() }
    }

    /// Adds a series (`name` without the prefix, nor `_total` for a counter).
    pub(crate) fn register(&mut self, name: &str, help: &'static str, meter: impl Into<Meter>) {
        self.series.push((format!("{}_{name}", self.prefix), help, meter.into()));
    }

    /// Every series's values now, in the order registered (a family with no meter yet has
    /// no values: it is left out, as it has nothing to say).
    pub(crate) fn read(&self) -> Vec<Series> {
        self.series
            .iter()
            .map(|(name, help, meter)| {
                let values = match meter {
                    Meter::Counter(c) => Values::Counter(vec![(Vec::new(), c.get())]),
                    Meter::Gauge(g) => Values::Gauge(vec![(Vec::new(), g.get())]),
                    Meter::Counters(f) => Values::Counter(f.each().into_iter().map(|(l, c)| (l, c.get())).collect()),
                    Meter::Histograms(f) => {
                        Values::Histogram(f.each().into_iter().map(|(l, h)| (l, h.snapshot())).collect())
                    }
                };
                Series { name: name.clone(), help, values }
            })
            .filter(|series| !series.values.is_empty())
            .collect()
    }

    /// The Prometheus text format 0.0.4: `# HELP` and `# TYPE` of each series, then its
    /// samples (a counter's named `…_total`, a histogram's buckets cumulative up to `+Inf`,
    /// then its `_sum` and `_count`).
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        for series in self.read() {
            let (name, kind) = match &series.values {
                Values::Counter(_) => (format!("{}_total", series.name), "counter"),
                Values::Gauge(_) => (series.name.clone(), "gauge"),
                Values::Histogram(_) => (series.name.clone(), "histogram"),
            };
            let _ = writeln!(out, "# HELP {name} {}.", series.help.trim_end_matches('.'));
            let _ = writeln!(out, "# TYPE {name} {kind}");
            match &series.values {
                Values::Counter(samples) => samples.iter().for_each(|(l, v)| sample(&mut out, &name, l, None, v)),
                Values::Gauge(samples) => samples.iter().for_each(|(l, v)| sample(&mut out, &name, l, None, v)),
                Values::Histogram(samples) => {
                    for (labels, h) in samples {
                        let mut cumulative = 0;
                        for (i, count) in h.counts.iter().enumerate() {
                            cumulative += count;
                            let le = h.bounds.get(i).map_or_else(|| "+Inf".to_owned(), |b| float(*b));
                            sample(&mut out, &format!("{name}_bucket"), labels, Some(&le), &cumulative);
                        }
                        sample(&mut out, &format!("{name}_sum"), labels, None, &float(h.sum));
                        sample(&mut out, &format!("{name}_count"), labels, None, &h.count);
                    }
                }
            }
        }
        out
    }
}

/// One sample line: `name{labels,le="…"} value`.
fn sample(out: &mut String, name: &str, labels: &Labels, le: Option<&str>, value: &dyn std::fmt::Display) {
    let mut pairs: Vec<String> = labels.iter().map(|(n, v)| format!("{n}=\"{}\"", escape(v))).collect();
    if let Some(le) = le {
        pairs.push(format!("le=\"{le}\""));
    }
    let _ = match pairs.is_empty() {
        true => writeln!(out, "{name} {value}"),
        false => writeln!(out, "{name}{{{}}} {value}", pairs.join(",")),
    };
}

/// A float as the text format writes it (`1.0`, `0.001`).
fn float(v: f64) -> String {
    let text = v.to_string();
    if text.contains(['.', 'e', 'i', 'N']) { text } else { format!("{text}.0") }
}

/// A label value with `\`, `"` and new lines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_reads_as_text_and_as_samples_alike() {
        let mut registry = Registry::with_prefix("weir");
        let tokens = Counter::default();
        let ready = Gauge::default();
        let attempts: Family<Counter> = Family::default();
        let seconds: Family<Histogram> = Family::new(|| Histogram::exponential(0.001, 2.0, 3));
        registry.register("tokens_issued", "Tokens issued", Meter::Counter(tokens.clone()));
        registry.register("queue_ready", "Due deliveries", Meter::Gauge(ready.clone()));
        registry.register("attempts", "Attempts", Meter::Counters(attempts.clone()));
        registry.register("attempt_seconds", "Time", Meter::Histograms(seconds.clone()));
        tokens.inc();
        ready.set(-2);
        attempts.get_or_create(&[("class", "5xx"), ("destination", "http")]).inc_by(3);
        let h = seconds.get_or_create(&[("result", "failure")]);
        h.observe(0.0015);
        h.observe(5.0);
        let text = registry.render();
        assert!(text.contains("# HELP weir_tokens_issued_total Tokens issued.\n# TYPE weir_tokens_issued_total counter\nweir_tokens_issued_total 1\n"), "{text}");
        assert!(text.contains("# TYPE weir_queue_ready gauge\nweir_queue_ready -2\n"), "{text}");
        assert!(text.contains("weir_attempts_total{class=\"5xx\",destination=\"http\"} 3\n"), "{text}");
        assert!(text.contains("weir_attempt_seconds_bucket{result=\"failure\",le=\"0.001\"} 0\n"), "{text}");
        assert!(text.contains("weir_attempt_seconds_bucket{result=\"failure\",le=\"0.002\"} 1\n"), "{text}");
        assert!(text.contains("weir_attempt_seconds_bucket{result=\"failure\",le=\"+Inf\"} 2\n"), "{text}");
        assert!(text.contains("weir_attempt_seconds_sum{result=\"failure\"} 5.0015\n"), "{text}");
        assert!(text.contains("weir_attempt_seconds_count{result=\"failure\"} 2\n"), "{text}");
        let series = registry.read();
        assert_eq!(
            series[2].values,
            Values::Counter(vec![(vec![("class", "5xx".into()), ("destination", "http".into())], 3)])
        );
        let Values::Histogram(h) = &series[3].values else { panic!("a histogram") };
        assert_eq!((h[0].1.counts.clone(), h[0].1.count), (vec![0, 1, 0, 1], 2));
    }

    #[test]
    fn a_family_forgets_what_is_removed_and_escapes_its_values() {
        let family: Family<Counter> = Family::default();
        family.get_or_create(&[("webhook_id", "wh\"1")]).inc();
        let mut registry = Registry::with_prefix("weir");
        registry.register("filter_events", "Filtered", Meter::Counters(family.clone()));
        assert!(registry.render().contains("weir_filter_events_total{webhook_id=\"wh\\\"1\"} 1"));
        family.remove(&[("webhook_id", "wh\"1")]);
        assert!(!registry.render().contains("filter_events"), "an empty family says nothing");
    }
}
