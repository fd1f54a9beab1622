//! Plugin compiles on a budget, under attack (contract §8 "Hardening"): six JavaScript
//! uploads at once from two organisations compile one at a time at the lowest CPU priority
//! (an organisation's second upload is refused at once), while another tenant's requests and
//! deliveries keep their pace. Run after the main test run, beside the other interpreter
//! tests (`scripts/test.sh`): an interpreter's compile takes both cores for seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use weir::store::tenants::orgs::Plan;

use crate::plugin_budget::padded;
use crate::support::receiver::Receiver;
use crate::support::weir::{WeirBuilder, work_order_event};

fn javascript_filter() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/dist/report-export-filter-js.wasm");
    std::fs::read(&path).unwrap_or_else(|_| panic!("{} is missing: run scripts/build-plugins.sh", path.display()))
}

#[tokio::test]
async fn six_javascript_uploads_at_once_keep_another_tenants_requests_under_300_ms_and_deliveries_under_500_ms() {
    let data = crate::support::temp_dir("compile-attack");
    let weir = WeirBuilder::shared().env("WEIR_DATA_DIR", &data.display().to_string()).start().await;
    let victim = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::start().await;
    victim.admin.create_webhook(&receiver.url, &["work_order_created"]).await;

    // The other tenant, throughout: a publish and a read every 100 ms.
    let stop = Arc::new(AtomicBool::new(false));
    let watch = {
        let (stop, publisher, admin) = (stop.clone(), victim.publisher.clone(), victim.admin.clone());
        tokio::spawn(async move {
            let (mut slowest, mut sent) = (Duration::ZERO, std::collections::HashMap::new());
            let deadline = Instant::now() + Duration::from_secs(120);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let subject = format!("wo_{}", sent.len());
                let started = Instant::now();
                publisher.publish(&work_order_event(&subject)).await;
                slowest = slowest.max(started.elapsed());
                sent.insert(subject, started);
                let started = Instant::now();
                admin.get("/api/v2/webhooks").await.expect(200);
                slowest = slowest.max(started.elapsed());
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (slowest, sent)
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;

    let statuses = six_uploads(&weir).await;
    stop.store(true, Ordering::Relaxed);
    let (slowest, sent) = watch.await.unwrap();

    // One compile per organisation, in turn; each organisation's other two refused at once.
    // The second organisation's upload waits for the first compile: stored, or — where this
    // machine compiles an interpreter in more than half the 50 s wait (seen: 25-31 s on a
    // slow day) — refused once its wait is over, with nothing stored.
    let stored = statuses.get(&201).map_or(0, Vec::len);
    let waited_out = statuses.get(&503).cloned().unwrap_or_default();
    assert!(stored >= 1 && stored + waited_out.len() == 2, "{statuses:?}");
    assert!(waited_out.iter().all(|t| *t >= Duration::from_secs(49)), "refused only past its wait: {statuses:?}");
    let refused = statuses.get(&429).cloned().unwrap_or_default();
    assert_eq!(refused.len(), 4, "{statuses:?}");
    assert!(refused.iter().all(|t| *t < Duration::from_secs(2)), "refused at once: {refused:?}");
    // The other tenant kept its pace.
    assert!(slowest < Duration::from_millis(300), "another tenant's slowest request: {slowest:?}");
    let got = receiver.wait_for(sent.len(), Duration::from_secs(10)).await;
    let late = got
        .iter()
        .filter_map(|r| Some(r.at.duration_since(*sent.get(r.json()["subject"]["id"].as_str()?)?)))
        .max()
        .unwrap_or_default();
    assert!(late < Duration::from_millis(500), "another tenant's slowest delivery: {late:?}");
    // A compiled artifact kept for each plugin stored: nothing of the refused ones.
    let cached = std::fs::read_dir(data.join("plugin-cache")).unwrap().count();
    assert_eq!(cached, stored);
    eprintln!(
        "uploads {statuses:?}; other tenant: {} publishes, slowest request {slowest:?}, delivery {late:?}",
        sent.len()
    );
    weir.stop().await;
}

/// Three uploads of a JavaScript plugin from each of two organisations, all at once: how
/// each was answered, and when.
async fn six_uploads(weir: &crate::support::weir::Weir) -> std::collections::BTreeMap<u16, Vec<Duration>> {
    let js = javascript_filter();
    let mut uploads = Vec::new();
    for org in 0..2 {
        let attacker = weir.tenant(Plan::pro()).await;
        for i in 0..3 {
            let (admin, wasm) = (attacker.admin.clone(), padded(&js, &format!("attack-{org}-{i}"), 16));
            uploads.push(tokio::spawn(async move {
                let started = Instant::now();
                let resp = admin
                    .http
                    .post(&format!("/api/v2/plugins?name=js-{i}"))
                    .bearer(&admin.token)
                    .raw("application/wasm", wasm)
                    .send_within(Duration::from_secs(90))
                    .await;
                (resp.status, started.elapsed())
            }));
        }
    }
    let mut statuses = std::collections::BTreeMap::<u16, Vec<Duration>>::new();
    for upload in uploads {
        let (status, took) = upload.await.unwrap();
        statuses.entry(status).or_default().push(took);
    }
    statuses
}
