//! Plugins in JavaScript and Python (contract §5, §7 "Plugins in other languages"): the
//! JavaScript and Python builds of `report-export-filter` (`plugins/dist/`, built by
//! `scripts/build-plugins.sh`) agree with the Rust one on hundreds of generated events and
//! configs, edge cases included; and a JavaScript or Python plugin that throws, loops or
//! hoards memory ends with the same plugin errors as a Rust one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Value, json};
use weir::plugins::{EventMeta, PluginError, Runtime, Verdict};

/// The repository's root (the test binary is in target/<profile>/deps).
fn root() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(4).unwrap().to_owned()
}

fn dist(name: &str) -> Vec<u8> {
    let path = root().join("plugins/dist").join(name);
    std::fs::read(&path).unwrap_or_else(|_| panic!("{} is missing: run scripts/build-plugins.sh", path.display()))
}

/// A data directory kept in target/ for these tests: its `plugin-cache` holds the compiled
/// interpreters, so later runs (and the API test's Weir) do not compile them again.
fn data_dir() -> PathBuf {
    root().join("target/plugin-test-data")
}

/// The plugin runtime with the shipped limits and that cache, one for every test here — but
/// the tests' wall-clock deadline instead of 50 ms (`support::plugins::PLUGIN_TIMEOUT`): in a
/// debug build on a busy machine a Python call can take tens of milliseconds, and these tests
/// are about verdicts and errors (the fuel budget still stops a loop deterministically;
/// `plugin_sandbox` tests the deadline).
fn runtime() -> &'static Runtime {
    static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
        Runtime::new(crate::support::plugins::plugin_limits(), data_dir().join("plugin-cache")).unwrap()
    });
    &RUNTIME
}

/// A build checked and compiled into the cache; its hash. An interpreter takes tens of
/// seconds of both cores to compile in a debug build: each file is compiled once per run,
/// one at a time, so these tests do not starve each other (or anything else) of CPU.
fn compiled(language: &str, wasm: &[u8]) -> String {
    static DONE: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
    let key = weir::plugins::sha256_hex(wasm);
    let mut done = DONE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(sha) = done.get(&key) {
        return sha.clone();
    }
    let sha = runtime().validate_blocking(wasm).unwrap_or_else(|e| panic!("{language}: {e}"));
    done.insert(key, sha.clone());
    sha
}

/// A small deterministic generator (the cases are the same on every run).
struct Seq(u64);

impl Seq {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        &items[((self.0 >> 33) as usize) % items.len()]
    }
}

fn envelope(seq: &mut Seq, i: usize) -> String {
    let creator = seq.pick(&["cli_a", "cli_b", "usr_é", ""]);
    if *seq.pick(&[true, true, true, false]) {
        let kind = seq.pick(&[json!("Form"), json!("Asset"), json!("WorkOrder"), json!(7), Value::Null]).clone();
        let id = seq.pick(&[json!("frm_1"), json!("frm_2"), json!(""), json!("frm_ü"), json!(12)]).clone();
        let exportable = match seq.pick(&[0, 1, 2, 3, 4]) {
            0 => Value::Null,
            1 => json!({"id": id}),
            2 => json!({"type": kind}),
            _ => json!({"type": kind, "id": id}),
        };
        json!({"id": format!("evt_{i}"), "action": "report_export_completed", "created_at": "2026-11-25T10:00:00.000Z",
               "organisation": {"id": "org_1"}, "creator": {"id": creator, "name": "C"},
               "subject": {"type": "ReportExport", "id": format!("rex_{i}")},
               "report_export": {"id": format!("rex_{i}"), "status": "completed", "exportable": exportable}})
        .to_string()
    } else {
        json!({"id": format!("evt_{i}"), "action": "work_order_created", "created_at": "2026-11-25T10:00:00.000Z",
               "organisation": {"id": "org_1"}, "creator": {"id": creator, "name": "C"},
               "subject": {"type": "WorkOrder", "id": format!("wo_{i}")}, "work_order": {"id": format!("wo_{i}")}})
        .to_string()
    }
}

fn config(seq: &mut Seq) -> String {
    let list = |seq: &mut Seq, values: &[&str]| -> Option<Value> {
        match seq.pick(&[0, 1, 2, 3]) {
            0 => None,
            1 => Some(json!([])),
            2 => Some(json!([seq.pick(values)])),
            _ => Some(json!(values)),
        }
    };
    match seq.pick(&[0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6]) {
        1 => r#"{"colour": []}"#.into(),
        2 => r#"{"exportable_types": [1]}"#.into(),
        3 => r#"{"creator_ids": null}"#.into(),
        4 => "[]".into(),
        5 => "not json".into(),
        6 => r#""Form""#.into(),
        _ => {
            let mut c = serde_json::Map::new();
            for (key, values) in [
                ("exportable_types", &["Form", "Asset", "WorkOrder"][..]),
                ("exportable_ids", &["frm_1", "frm_2", "", "frm_ü"][..]),
                ("creator_ids", &["cli_a", "usr_é", ""][..]),
            ] {
                if let Some(v) = list(seq, values) {
                    c.insert(key.into(), v);
                }
            }
            Value::Object(c).to_string()
        }
    }
}

#[test]
fn the_rust_javascript_and_python_filters_agree_on_hundreds_of_events_and_configs() {
    let runtime = runtime();
    let builds: Vec<(&str, String)> = [
        ("Rust", crate::support::plugins::plugin_wasm("report_export_filter")),
        ("JavaScript", dist("report-export-filter-js.wasm")),
        ("Python", dist("report-export-filter-py.wasm")),
    ]
    .into_iter()
    .map(|(language, wasm)| (language, compiled(language, &wasm)))
    .collect();
    let mut seq = Seq(29);
    let (mut delivered, mut dropped, mut invalid) = (0, 0, 0);
    for i in 0..300 {
        let body = envelope(&mut seq, i);
        let config = config(&mut seq);
        let meta = Arc::new(EventMeta::from_envelope(&body).unwrap());
        let body: Arc<str> = Arc::from(body.as_str());
        let verdicts: Vec<(&str, Verdict)> = builds
            .iter()
            .map(|(language, sha)| {
                let report = weir::plugins::call_blocking(runtime, sha, None, meta.clone(), body.clone(), &config);
                let verdict = report.result.unwrap_or_else(|e| panic!("{language}, case {i} ({config}): {e}"));
                (*language, verdict)
            })
            .collect();
        let (_, rust) = &verdicts[0];
        for (language, verdict) in &verdicts[1..] {
            match (rust, verdict) {
                // The reason for a config that cannot be read is each language's own parser's.
                (Verdict::Drop(a), Verdict::Drop(b)) if a.starts_with("invalid config") => {
                    assert!(b.starts_with("invalid config"), "{language}, case {i} ({config}): {b}");
                }
                _ => assert_eq!(rust, verdict, "{language}, case {i}: {body} with {config}"),
            }
        }
        match rust {
            Verdict::Deliver { .. } => delivered += 1,
            Verdict::Drop(why) if why.starts_with("invalid config") => invalid += 1,
            Verdict::Drop(_) => dropped += 1,
        }
    }
    // The cases cover every outcome.
    assert!(delivered > 50 && dropped > 50 && invalid > 20, "{delivered} {dropped} {invalid}");
}

#[test]
fn javascript_and_python_plugins_that_throw_loop_or_hoard_memory_end_with_plugin_errors() {
    let runtime = runtime();
    let (meta, body) = crate::support::plugins::plugin_input();
    for (language, file, raise) in [("JavaScript", "hostile-js.wasm", "throw"), ("Python", "hostile-py.wasm", "raise")]
    {
        let sha = compiled(language, &dist(file));
        let call = |mode: &str| {
            weir::plugins::call_blocking(
                runtime,
                &sha,
                None,
                meta.clone(),
                body.clone(),
                &json!({"mode": mode}).to_string(),
            )
        };
        let fine = call("none");
        assert!(matches!(fine.result, Ok(Verdict::Deliver { .. })), "{language}: {:?}", fine.result);
        // Its memory is counted: an interpreter's heap, under the cap.
        assert!((4 << 20..=64 << 20).contains(&fine.memory_peak), "{language}: {}", fine.memory_peak);
        // Its instantiation is timed, as part of the call.
        assert!(!fine.instantiation.is_zero() && fine.instantiation < fine.duration, "{language}: {fine:?}");
        let thrown = call(raise);
        let error = thrown.result.expect_err("an exception is a plugin error");
        // The language's own message and the line it came from, as the SDK logged them.
        let PluginError::Panicked(text) = &error else { panic!("{language}: {error:?}") };
        assert!(text.contains("refusing work_order_created on purpose"), "{language}: {text}");
        assert!(text.contains("hostile.js:") || text.contains("app.py:"), "{language}: {text}");
        let looped = call("loop").result.expect_err("a loop is stopped");
        assert!(matches!(looped, PluginError::OutOfFuel(_) | PluginError::Timeout(_)), "{language}: {looped:?}");
        let hoarded = call("bomb").result.expect_err("a memory bomb is stopped");
        // (SpiderMonkey zero-fills a new buffer itself, which spends the fuel first.)
        assert!(matches!(hoarded, PluginError::Memory(_) | PluginError::OutOfFuel(_)), "{language}: {hoarded:?}");
        eprintln!("{language}: throw → {error}; loop → {looped}; bomb → {hoarded}; logs {:?}", thrown.logs);
        // Still usable afterwards: every call is a fresh instance.
        assert!(matches!(call("none").result, Ok(Verdict::Deliver { .. })));
        // A new body given as an object (a dict) is sent as its JSON, not `[object Object]`.
        let Ok(Verdict::Deliver { body: Some(body), headers }) = call("object").result else {
            panic!("{language}: an object body delivers")
        };
        let by = if language == "JavaScript" { "javascript" } else { "python" };
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&body).ok(),
            Some(json!({"reshaped": "work_order_created", "by": by})),
            "{language}: {body}"
        );
        assert_eq!(headers, [("x-shape".to_owned(), "object".to_owned())], "{language}");
    }
}

#[tokio::test]
async fn javascript_and_python_plugins_upload_dry_run_and_filter_deliveries_through_the_api() {
    use crate::support::receiver::Receiver;
    use crate::support::weir::{WeirBuilder, export_event};
    use std::time::Duration;
    use weir::store::tenants::orgs::Plan;

    // Compiled first, into the cache this Weir reads (an upload compiles what is not cached,
    // which takes long in a debug build).
    for file in ["report-export-filter-js.wasm", "report-export-filter-py.wasm"] {
        compiled(file, &dist(file));
    }
    let weir = WeirBuilder::shared().env("WEIR_DATA_DIR", &data_dir().display().to_string()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let config = json!({"exportable_types": ["Form"], "exportable_ids": ["frm_1"], "creator_ids": ["cli_a"]});
    let mut plugins = Vec::new();
    for (name, file) in [("filter-js", "report-export-filter-js.wasm"), ("filter-py", "report-export-filter-py.wasm")] {
        let uploaded = t.admin.upload_plugin(name, dist(file)).await;
        let id = uploaded["id"].as_str().unwrap().to_owned();
        let passed = t.admin.test_plugin(&id, &export_event("rex_1", ("Form", "frm_1"), "cli_a"), config.clone()).await;
        assert_eq!(passed["outcome"], "deliver", "{name}: {passed}");
        let dropped =
            t.admin.test_plugin(&id, &export_event("rex_2", ("Form", "frm_2"), "cli_a"), config.clone()).await;
        assert_eq!(dropped["outcome"], "drop", "{name}: {dropped}");
        assert_eq!(dropped["reason"], "export of Form frm_2 by cli_a is not in the filter");
        plugins.push(json!({"plugin_id": id, "config": config}));
    }
    // Both attached to one webhook, in a chain: only the matching export is delivered.
    let hook = t.admin.create_webhook_with(&receiver.url, &["report_export_completed"], json!(plugins)).await;
    t.publisher.publish(&export_event("rex_3", ("Form", "frm_2"), "cli_a")).await;
    t.publisher.publish(&export_event("rex_4", ("Form", "frm_1"), "cli_a")).await;
    let got = receiver.wait_for(1, Duration::from_secs(60)).await;
    assert_eq!(got[0].json()["subject"]["id"], "rex_4");
    let settled = t.admin.settled(hook["id"].as_str().unwrap(), 2).await;
    let mut statuses: Vec<&str> = settled.iter().map(|d| d["status"].as_str().unwrap()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, ["filtered", "succeeded"]);
    weir.stop().await;
}

#[tokio::test]
async fn a_tenants_looping_javascript_and_python_plugins_do_not_stop_another_tenants_deliveries() {
    use crate::support::plugins::plugin_wasm;
    use crate::support::receiver::Receiver;
    use crate::support::weir::{WeirBuilder, work_order_event};
    use std::time::{Duration, Instant};
    use weir::store::tenants::orgs::Plan;

    for file in ["hostile-js.wasm", "hostile-py.wasm"] {
        compiled(file, &dist(file));
    }
    let weir = WeirBuilder::shared().env("WEIR_DATA_DIR", &data_dir().display().to_string()).start().await;
    let hostile = weir.tenant(Plan::pro()).await;
    let mut hooks = Vec::new();
    for (name, file) in [("loop-js", "hostile-js.wasm"), ("loop-py", "hostile-py.wasm")] {
        let plugin = hostile.admin.upload_plugin(name, dist(file)).await;
        let attached = json!([{"plugin_id": plugin["id"], "config": {"mode": "loop"}}]);
        let hook =
            hostile.admin.create_webhook_with("http://127.0.0.1:9/never", &["work_order_created"], attached).await;
        hooks.push(hook["id"].as_str().unwrap().to_owned());
    }
    let other = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let filter = other.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    other.admin.create_webhook_with(&receiver.url, &["work_order_created"], json!([{"plugin_id": filter["id"]}])).await;
    // The hostile tenant's interpreters spin to their budget on every delivery...
    for i in 0..12 {
        hostile.publisher.publish(&work_order_event(&format!("bad_{i}"))).await;
    }
    // ...while the other tenant's deliveries go through.
    let started = Instant::now();
    for i in 0..5 {
        other.publisher.publish(&work_order_event(&format!("good_{i}"))).await;
    }
    receiver.wait_for(5, Duration::from_secs(30)).await;
    eprintln!("the other tenant's 5 deliveries took {:?} beside 24 looping interpreter calls", started.elapsed());
    for hook in &hooks {
        let settled = hostile.admin.settled(hook, 12).await;
        assert!(
            settled.iter().all(|d| d["status"] == "filtered"
                && d["plugins"][0]["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("CPU budget") || e.contains("time limit"))),
            "{settled:?}"
        );
    }
    weir.stop().await;
}
