//! The plugin call cost: `report-export-filter` on a ~1 KB `report_export_completed`
//! envelope, each call in a fresh instance (as in production), timed one by one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use weir::plugins::{EventMeta, Runtime, Verdict};

use crate::load::percentile;

/// p50 and p99 of one call, over `calls` calls after a warm-up.
pub fn call_cost(calls: usize) -> (Duration, Duration, u64) {
    let config = weir::config::Config::load_with(None, |_| None).expect("default config");
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
        let report = runtime.call_blocking(&sha256, None, meta.clone(), envelope.clone(), config);
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
