//! The plugin call cost: `report-export-filter` on a ~1 KB `report_export_completed`
//! envelope, each call in a fresh instance (as in production), timed one by one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use weir::plugins::{EventMeta, Runtime, Verdict};

use crate::load::percentile;

/// p50 and p99 of one call, over `calls` calls after a warm-up.
pub fn call_cost(calls: usize) -> (Duration, Duration, u64) {
    let config = weir::config::load_with(None, |_| None).expect("default config");
    let dir = std::env::temp_dir().join(format!("weir-bench-plugins-{}", std::process::id()));
    let runtime = Runtime::new(config.plugin_limits(), dir.clone()).expect("runtime");
    let exe = std::env::current_exe().expect("exe");
    let wasm_path =
        exe.parent().and_then(|d| d.parent()).expect("target").join("wasm32-wasip2/release/report_export_filter.wasm");
    let wasm = std::fs::read(&wasm_path).expect("report_export_filter.wasm (scripts/build-plugins.sh)");
    let sha256 = runtime.validate_blocking(&wasm).expect("valid plugin");
    let envelope: Arc<str> = Arc::from(crate::load::export_envelope("rex_1", "frm_1", "cli_bench").as_str());
    let meta = Arc::new(EventMeta::from_envelope(&envelope).expect("meta"));
    let config = r#"{"exportable_types":["Form"],"exportable_ids":["frm_1"],"creator_ids":["cli_bench"]}"#;
    let mut fuel = 0;
    let mut times = Vec::with_capacity(calls);
    for i in 0..calls + 200 {
        let started = Instant::now();
        let report = weir::plugins::call_blocking(&runtime, &sha256, None, meta.clone(), envelope.clone(), config);
        let took = started.elapsed();
        assert!(matches!(report.result, Ok(Verdict::Deliver { .. })), "{:?}", report.result);
        fuel = report.fuel_used;
        if i >= 200 {
            times.push(took);
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    (percentile(&mut times.clone(), 50.0), percentile(&mut times, 99.0), fuel)
}

/// Plugin calls of one organisation while another saturates its own plugins: p50 of
/// `calls` calls of `report-export-filter` by org B with nothing else running, then while
/// org A keeps 64 calls of a plugin that spins until its time limit (50 ms) in flight.
/// With the per-organisation share, B's p50 should stay close to idle.
pub async fn fairness(calls: usize) -> (Duration, Duration) {
    let exe = std::env::current_exe().expect("exe");
    let wasm_dir = exe.parent().and_then(|d| d.parent()).expect("target").join("wasm32-wasip2/release");
    let hostile = std::fs::read(wasm_dir.join("hostile.wasm")).expect("hostile.wasm (scripts/build-plugins.sh)");
    fairness_beside(calls, &hostile, r#"{"mode": "forever"}"#).await
}

/// [`fairness`] with another spinner: the JavaScript or Python hostile plugin
/// (`plugins/dist/hostile-js.wasm`, `-py.wasm`), looping until its fuel runs out.
pub async fn fairness_beside_interpreter(calls: usize, file: &str) -> (Duration, Duration) {
    let exe = std::env::current_exe().expect("exe");
    let root = exe.parent().and_then(|d| d.parent()).and_then(|d| d.parent()).expect("repository");
    let hostile = std::fs::read(root.join("plugins/dist").join(file)).expect("plugins/dist (scripts/build-plugins.sh)");
    fairness_beside(calls, &hostile, r#"{"mode": "loop"}"#).await
}

async fn fairness_beside(calls: usize, hostile: &[u8], hostile_config: &'static str) -> (Duration, Duration) {
    // The shipped defaults, unless WEIR_PLUGIN_* variables ask for others.
    // (Read without refusing the bench's own WEIR_BENCH_* variables.)
    let config = weir::config::load_with(None, |k| std::env::var(k).ok()).expect("configuration");
    let dir = std::env::temp_dir().join(format!("weir-bench-fairness-{}", std::process::id()));
    let runtime = Arc::new(Runtime::new(config.plugin_limits(), dir.clone()).expect("runtime"));
    let exe = std::env::current_exe().expect("exe");
    let wasm_dir = exe.parent().and_then(|d| d.parent()).expect("target").join("wasm32-wasip2/release");
    let filter = std::fs::read(wasm_dir.join("report_export_filter.wasm")).expect("report_export_filter.wasm");
    let filter_sha = runtime.validate_blocking(&filter).expect("valid plugin");
    let hostile_sha = runtime.validate_blocking(hostile).expect("valid plugin");
    let envelope: Arc<str> = Arc::from(crate::load::export_envelope("rex_1", "frm_1", "cli_bench").as_str());
    let meta = Arc::new(EventMeta::from_envelope(&envelope).expect("meta"));
    let filter_config = r#"{"exportable_types":["Form"],"exportable_ids":["frm_1"],"creator_ids":["cli_bench"]}"#;

    let b_calls = |n: usize| {
        let (runtime, sha, meta, envelope) = (runtime.clone(), filter_sha.clone(), meta.clone(), envelope.clone());
        async move {
            let mut times = Vec::with_capacity(n);
            for _ in 0..n {
                let started = Instant::now();
                let report = weir::plugins::call(
                    &runtime,
                    "org_b",
                    weir::plugins::Code { sha256: sha.clone(), wasm: None },
                    meta.clone(),
                    envelope.clone(),
                    filter_config.into(),
                )
                .await;
                assert!(matches!(report.result, Ok(Verdict::Deliver { .. })), "{:?}", report.result);
                times.push(started.elapsed());
            }
            percentile(&mut times, 50.0)
        }
    };
    b_calls(100).await;
    let idle = b_calls(calls).await;

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..64)
        .map(|_| {
            let (runtime, sha, meta, envelope, stop) =
                (runtime.clone(), hostile_sha.clone(), meta.clone(), envelope.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let config = hostile_config.to_owned();
                    weir::plugins::call(
                        &runtime,
                        "org_a",
                        weir::plugins::Code { sha256: sha.clone(), wasm: None },
                        meta.clone(),
                        envelope.clone(),
                        config,
                    )
                    .await;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let busy = b_calls(calls).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for hog in hogs {
        let _ = hog.await;
    }
    let _ = std::fs::remove_dir_all(dir);
    (idle, busy)
}

/// One language's `report-export-filter`: compile time, then p50 and p99 of a call in a
/// fresh instance (and p50 of its instantiation alone), fuel per call, and the linear memory
/// an instance ends with.
pub struct LanguageCost {
    pub language: &'static str,
    pub size_kib: usize,
    pub compile: Duration,
    pub p50: Duration,
    pub p99: Duration,
    pub instantiation_p50: Duration,
    pub fuel: u64,
    /// The call's linear memory at its largest (bytes).
    pub memory: usize,
}

/// The same filter built from Rust, JavaScript and Python, on the same event and config.
/// Limits: the shipped defaults, unless `WEIR_PLUGIN_*` variables ask for others.
pub fn language_costs(calls: usize) -> Vec<Result<LanguageCost, String>> {
    let config = weir::config::load_with(None, |k| std::env::var(k).ok()).expect("configuration");
    let exe = std::env::current_exe().expect("exe");
    let target = exe.parent().and_then(|d| d.parent()).expect("target");
    let root = target.parent().expect("repository");
    let builds = [
        ("Rust", target.join("wasm32-wasip2/release/report_export_filter.wasm")),
        ("JavaScript", root.join("plugins/dist/report-export-filter-js.wasm")),
        ("Python", root.join("plugins/dist/report-export-filter-py.wasm")),
    ];
    let envelope: Arc<str> = Arc::from(crate::load::export_envelope("rex_1", "frm_1", "cli_bench").as_str());
    let meta = Arc::new(EventMeta::from_envelope(&envelope).expect("meta"));
    let filter = r#"{"exportable_types":["Form"],"exportable_ids":["frm_1"],"creator_ids":["cli_bench"]}"#;
    builds
        .into_iter()
        .map(|(language, path)| {
            let wasm = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let dir = std::env::temp_dir().join(format!("weir-bench-lang-{}-{language}", std::process::id()));
            let runtime = Runtime::new(config.plugin_limits(), dir.clone()).map_err(|e| e.to_string())?;
            let started = Instant::now();
            let sha256 = runtime.validate_blocking(&wasm).map_err(|e| format!("{language}: {e}"))?;
            let compile = started.elapsed();
            let mut times = Vec::with_capacity(calls);
            let mut instantiations = Vec::with_capacity(calls);
            let (mut fuel, mut memory) = (0, 0);
            for i in 0..calls + 20 {
                let started = Instant::now();
                let report =
                    weir::plugins::call_blocking(&runtime, &sha256, None, meta.clone(), envelope.clone(), filter);
                let took = started.elapsed();
                match &report.result {
                    Ok(Verdict::Deliver { .. }) => {}
                    other => return Err(format!("{language}: {other:?}")),
                }
                fuel = report.fuel_used;
                memory = memory.max(report.memory_peak);
                if i >= 20 {
                    times.push(took);
                    instantiations.push(report.instantiation);
                }
            }
            let _ = std::fs::remove_dir_all(dir);
            Ok(LanguageCost {
                memory,
                language,
                size_kib: wasm.len() / 1024,
                compile,
                p50: percentile(&mut times.clone(), 50.0),
                p99: percentile(&mut times, 99.0),
                instantiation_p50: percentile(&mut instantiations, 50.0),
                fuel,
            })
        })
        .collect()
}

/// Prints [`language_costs`] as the guide's table.
pub fn print_costs(costs: &[Result<LanguageCost, String>]) {
    println!();
    println!(
        "| report-export-filter in | component size | compile (once per process and hash) | call p50 | call p99 | of which instantiation, p50 | fuel per call | linear memory per call, at most |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for cost in costs {
        match cost {
            Ok(c) => println!(
                "| {} | {} KiB | {:.0} ms | {:.1} µs | {:.1} µs | {:.1} µs | {} | {:.1} MiB |",
                c.language,
                c.size_kib,
                c.compile.as_secs_f64() * 1000.0,
                c.p50.as_secs_f64() * 1e6,
                c.p99.as_secs_f64() * 1e6,
                c.instantiation_p50.as_secs_f64() * 1e6,
                c.fuel,
                c.memory as f64 / 1048576.0
            ),
            Err(e) => println!("| failed: {e} | | | | | | |"),
        }
    }
}
