//! The plugin sandbox: every limit holds (each tested just within and beyond), nothing is
//! reachable, and a misbehaving plugin stops only itself.

use std::time::Duration;

use serde_json::{Value, json};
use weir::store::tenants::orgs::Plan;

use crate::support::plugins::plugin_wasm;
use crate::support::receiver::Receiver;
use crate::support::weir::{Api, WeirBuilder, work_order_event};

/// Weir with tight limits, a tenant, and the hostile plugin uploaded.
async fn sandbox(builder: WeirBuilder) -> (crate::support::weir::Weir, Api, String) {
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let plugin = t.admin.upload_plugin("hostile", plugin_wasm("hostile")).await;
    let id = plugin["id"].as_str().unwrap().to_owned();
    (weir, t.admin, id)
}

fn tight() -> WeirBuilder {
    WeirBuilder::shared()
        .env("WEIR_PLUGIN_FUEL", "5000000")
        .env("WEIR_PLUGIN_TIMEOUT", "2s")
        .env("WEIR_PLUGIN_MEMORY_MIB", "16")
        .env("WEIR_PLUGIN_MAX_OUTPUT_KIB", "4")
}

async fn run(admin: &Api, plugin: &str, config: Value) -> Value {
    admin.test_plugin(plugin, &work_order_event("wo_1"), config).await
}

fn error_of(report: &Value) -> String {
    assert_eq!(report["outcome"], "error", "{report}");
    report["error"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn the_cpu_budget_holds_just_within_and_just_beyond() {
    let (_weir, admin, plugin) = sandbox(tight()).await;
    // Calibrate: fuel per loop iteration, from a small run.
    let small = run(&admin, &plugin, json!({"mode": "spin", "n": 10000})).await;
    let base = run(&admin, &plugin, json!({"mode": "spin", "n": 0})).await;
    assert_eq!(small["outcome"], "deliver");
    let per_iteration = (small["fuel_used"].as_u64().unwrap() - base["fuel_used"].as_u64().unwrap()) as f64 / 10000.0;
    let budget = 5_000_000.0 - base["fuel_used"].as_u64().unwrap() as f64;
    let within = (budget * 0.95 / per_iteration) as u64;
    let beyond = (budget * 1.05 / per_iteration) as u64;
    let ok = run(&admin, &plugin, json!({"mode": "spin", "n": within})).await;
    assert_eq!(ok["outcome"], "deliver", "{ok}");
    assert!(ok["fuel_used"].as_u64().unwrap() <= 5_000_000);
    let over = run(&admin, &plugin, json!({"mode": "spin", "n": beyond})).await;
    assert!(error_of(&over).contains("exceeded its CPU budget of 5000000 fuel"), "{over}");
    let forever = run(&admin, &plugin, json!({"mode": "forever"})).await;
    assert!(error_of(&forever).contains("CPU budget"));
}

#[tokio::test]
async fn the_wall_clock_deadline_holds_just_within_and_beyond() {
    // A plugin that spends its time in host calls uses little fuel: only the deadline stops it.
    let builder = WeirBuilder::shared().env("WEIR_PLUGIN_FUEL", "10000000000").env("WEIR_PLUGIN_TIMEOUT", "300ms");
    let (_weir, admin, plugin) = sandbox(builder).await;
    let mut event = work_order_event("wo_big");
    event["work_order"]["notes"] = json!("n".repeat(200_000));
    let within = admin.test_plugin(&plugin, &event, json!({"mode": "host_calls", "n": 5})).await;
    assert_eq!(within["outcome"], "deliver", "{within}");
    let beyond = admin.test_plugin(&plugin, &event, json!({"mode": "host_calls", "n": 100000000})).await;
    assert!(error_of(&beyond).contains("exceeded its time limit of 300ms"), "{beyond}");
    let took = beyond["duration_us"].as_u64().unwrap();
    assert!(took < 30_000_000, "stopped at the deadline, not at the end ({took}µs)");
}

#[tokio::test]
async fn the_memory_cap_holds_just_within_and_beyond() {
    // Enough fuel to fill 8 MiB: only memory may run out.
    let (_weir, admin, plugin) = sandbox(tight().env("WEIR_PLUGIN_FUEL", "2000000000")).await;
    let within = run(&admin, &plugin, json!({"mode": "alloc", "n": 8})).await;
    assert_eq!(within["outcome"], "deliver", "{within}");
    assert_eq!(within["logs"][0]["message"], "allocated 8 MiB");
    let beyond = run(&admin, &plugin, json!({"mode": "alloc", "n": 17})).await;
    assert!(error_of(&beyond).contains("memory limit of 16777216 bytes exceeded"), "{beyond}");
}

#[tokio::test]
async fn the_output_cap_and_shape_are_checked() {
    let (_weir, admin, plugin) = sandbox(tight()).await;
    let within = run(&admin, &plugin, json!({"mode": "output", "n": 4000})).await;
    assert_eq!(within["outcome"], "deliver", "{within}");
    assert_eq!(within["body"].as_str().unwrap().len(), 4002);
    let beyond = run(&admin, &plugin, json!({"mode": "output", "n": 4095})).await;
    assert!(error_of(&beyond).contains("returned a body of 4097 bytes; the limit is 4096"), "{beyond}");
    let not_json = run(&admin, &plugin, json!({"mode": "not_json"})).await;
    assert!(error_of(&not_json).contains("not JSON"));
}

#[tokio::test]
async fn traps_panics_and_deep_recursion_are_plugin_errors() {
    let (_weir, admin, plugin) = sandbox(tight()).await;
    let shallow = run(&admin, &plugin, json!({"mode": "recurse", "n": 100})).await;
    assert_eq!(shallow["outcome"], "deliver", "{shallow}");
    let deep = run(&admin, &plugin, json!({"mode": "recurse", "n": 100000000})).await;
    let error = error_of(&deep);
    // The guest's own stack runs out (in its linear memory) before the host's: still a
    // stack overflow to the author, not an out-of-bounds access.
    assert!(error.starts_with("stack overflow"), "{error}");
    let panic = run(&admin, &plugin, json!({"mode": "panic"})).await;
    let error = error_of(&panic);
    assert!(error.starts_with("panicked: boom (at "), "the panic message is the error: {error}");
    assert!(error.contains("src/lib.rs:"), "with its location: {error}");
    let logs = panic["logs"].to_string();
    assert!(logs.contains("boom"), "the panic message is in the log too: {logs}");
}

#[tokio::test]
async fn nothing_outside_the_sandbox_is_reachable() {
    let (_weir, admin, plugin) = sandbox(tight()).await;
    for (mode, needle) in [
        ("file", "plugins cannot use files"),
        ("clock", "plugins cannot use clocks"),
        ("random", "plugins cannot use randomness"),
    ] {
        let report = run(&admin, &plugin, json!({"mode": mode})).await;
        let error = error_of(&report);
        assert!(error.contains(needle), "{mode}: {error}");
    }
    // The environment exists but is empty: nothing of the host's leaks.
    assert!(std::env::var("HOME").is_ok() || std::env::var("PATH").is_ok());
    let env = run(&admin, &plugin, json!({"mode": "env"})).await;
    assert_eq!(env["outcome"], "deliver", "{env}");
    assert_eq!(env["body"], "{\"home\":\"\"}");
}

#[tokio::test]
async fn logs_are_capped() {
    let (_weir, admin, plugin) = sandbox(tight()).await;
    let few = run(&admin, &plugin, json!({"mode": "log", "n": 3})).await;
    assert_eq!(few["logs"].as_array().unwrap().len(), 3);
    let many = run(&admin, &plugin, json!({"mode": "log", "n": 10000})).await;
    let total: usize = many["logs"].as_array().unwrap().iter().map(|l| l["message"].as_str().unwrap().len()).sum();
    assert!(total <= 1024, "{total}");
    assert!(many["logs"].as_array().unwrap().len() > 50);
}

#[tokio::test]
async fn a_hostile_tenant_does_not_stop_other_tenants() {
    let (weir, admin, plugin) = sandbox(tight()).await;
    let hostile_webhook = admin
        .create_webhook_with(
            "http://127.0.0.1:9/never",
            &["work_order_created"],
            json!([{"plugin_id": plugin, "config": {"mode": "forever"}}]),
        )
        .await;
    let other = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    let filter = other.admin.upload_plugin("filter", plugin_wasm("report_export_filter")).await;
    other.admin.create_webhook_with(&receiver.url, &["work_order_created"], json!([{"plugin_id": filter["id"]}])).await;
    // Flood the hostile tenant's webhook and hammer the dry run, then publish for the other.
    let hostile_publisher = weir.client(&hostile_webhook_org(&weir, &admin).await, false, true).await;
    for i in 0..20 {
        hostile_publisher.publish(&work_order_event(&format!("bad_{i}"))).await;
    }
    let dry_runs: Vec<_> = (0..8)
        .map(|_| {
            let (admin, plugin) = (admin.clone(), plugin.clone());
            tokio::spawn(async move { run(&admin, &plugin, json!({"mode": "forever"})).await })
        })
        .collect();
    other.publisher.publish(&work_order_event("good")).await;
    let got = receiver.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got[0].json()["subject"]["id"], "good");
    for run in dry_runs {
        assert!(error_of(&run.await.unwrap()).contains("CPU budget"));
    }
    let hostile = admin.settled(hostile_webhook["id"].as_str().unwrap(), 20).await;
    assert!(
        hostile
            .iter()
            .all(|d| d["status"] == "filtered" && d["plugins"][0]["error"].as_str().unwrap().contains("CPU budget"))
    );
    weir.http().get("/healthz").send().await.expect(200);
}

/// The organisation of an admin client (from its token's view of the API).
async fn hostile_webhook_org(weir: &crate::support::weir::Weir, admin: &Api) -> String {
    let client = weir.store.clients().client_with_secret(&admin.creds.client_id).await.unwrap().unwrap().0;
    client.org_id
}

/// Minor page faults the calling thread has taken (`/proc/thread-self/stat`, field 10).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("/proc/thread-self/stat");
    // Field 2 (the thread's name) is in parentheses and may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')').expect("a name") + 2..];
    rest.split(' ').nth(7).and_then(|f| f.parse().ok()).expect("minflt")
}

/// A plugin instance's memory is reset to its image after every call, however scattered the
/// pages the call wrote (160 separate runs here, as an interpreter's heap gets): the next
/// instance never sees a write of the previous one, and those pages are reset in place and
/// stay mapped instead of being unmapped and faulted back in by the next call
/// (vendor/README.md: wasmtime 48 decommitted all memory past the 32nd run).
#[test]
fn scattered_writes_never_reach_the_next_instance_and_its_pages_stay_resident() {
    use weir::plugins::{Runtime, Verdict};

    let runtime = Runtime::new(crate::support::plugins::plugin_limits(), crate::support::temp_dir("scatter")).unwrap();
    let sha = runtime.validate_blocking(&plugin_wasm("hostile")).unwrap();
    let (meta, body) = crate::support::plugins::plugin_input();
    let call = || match weir::plugins::call_blocking(
        &runtime,
        &sha,
        None,
        meta.clone(),
        body.clone(),
        r#"{"mode":"scatter"}"#,
    )
    .result
    {
        Ok(Verdict::Deliver { body: Some(body), .. }) => body,
        other => panic!("{other:?}"),
    };
    for _ in 0..3 {
        assert_eq!(call(), r#"{"stale":0}"#, "an instance saw an earlier instance's writes");
    }
    let (calls, before) = (10, minor_faults());
    for _ in 0..calls {
        assert_eq!(call(), r#"{"stale":0}"#, "an instance saw an earlier instance's writes");
    }
    let per_call = (minor_faults() - before) / calls;
    eprintln!("{per_call} page faults per call");
    assert!(per_call < 40, "{per_call} page faults per call: the written pages were unmapped, not reset in place");
}
