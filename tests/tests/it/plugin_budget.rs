//! Plugin uploads on a budget (contract §8 "Hardening"): code stored once per organisation
//! and hash, each plan's plugins and bytes, refusals before anything is compiled, and
//! nothing left behind by an upload that is not stored.

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::plugins::plugin_wasm;
use crate::support::weir::{WeirBuilder, raw_conn, raw_keys};

/// `wasm` with a custom section of `padding` bytes appended: the same plugin, other bytes.
pub(crate) fn padded(wasm: &[u8], tag: &str, padding: usize) -> Vec<u8> {
    let mut payload = Vec::new();
    leb128(&mut payload, tag.len() as u64);
    payload.extend_from_slice(tag.as_bytes());
    payload.resize(payload.len() + padding, b'.');
    let mut out = wasm.to_vec();
    out.push(0);
    leb128(&mut out, payload.len() as u64);
    out.extend_from_slice(&payload);
    out
}

fn leb128(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines().find(|l| l.starts_with(name)).and_then(|l| l.rsplit(' ').next()).and_then(|v| v.parse().ok()).unwrap()
}

#[tokio::test]
async fn identical_uploads_store_their_code_once_and_the_last_delete_frees_it() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let wasm = plugin_wasm("redact");
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(t.admin.upload_plugin(&format!("copy-{i}"), wasm.clone()).await["id"].as_str().unwrap().to_owned());
    }
    let builder = weir.builder.clone();
    let prefix = builder.prefix();
    let code = || raw_keys(&builder, &format!("{prefix}*:code:*"));
    assert_eq!(code().len(), 1, "one copy of the bytes for five plugins");
    let refs = raw_keys(&builder, &format!("{prefix}*:code-refs")).remove(0);
    let mut conn = raw_conn(&builder);
    let bytes = |conn: &mut Box<dyn redis::ConnectionLike>| -> u64 {
        redis::cmd("HGET").arg(&refs).arg("bytes").query::<Option<u64>>(&mut **conn).unwrap().unwrap_or(0)
    };
    assert_eq!(bytes(&mut conn), wasm.len() as u64);
    for id in &ids[..4] {
        t.admin.delete(&format!("/api/v2/plugins/{id}")).await.expect(204);
    }
    assert_eq!(code().len(), 1, "still used by the fifth");
    // The one left still runs in a process that never compiled it: its code is read from
    // the shared copy.
    weir.stop().await;
    let fresh = crate::support::temp_dir("fresh-cache").display().to_string();
    let weir = builder.clone().env("WEIR_DATA_DIR", &fresh).start().await;
    let admin = weir.client(&t.org_id, true, false).await;
    let event = crate::support::weir::work_order_event("wo_1");
    let dry = admin.test_plugin(&ids[4], &event, json!({"pointers": ["/work_order"]})).await;
    assert_eq!(dry["outcome"], "deliver", "{dry}");
    admin.delete(&format!("/api/v2/plugins/{}", ids[4])).await.expect(204);
    assert!(code().is_empty(), "the last delete frees the code");
    assert_eq!(bytes(&mut conn), 0);
    weir.stop().await;
}

#[tokio::test]
async fn an_organisation_stores_at_most_its_plans_bytes_of_code() {
    let weir = WeirBuilder::shared().start().await;
    let t = weir.tenant(Plan::pro()).await;
    let quota = weir.builder.config().plans.rules("pro").limits.plugin_bytes.expect("pro has a code budget") as usize;
    let wasm = plugin_wasm("redact");
    // Distinct uploads of 30 MiB each, up to the quota.
    let size = 30 << 20;
    let fit = quota / (size + wasm.len() + 16);
    let mut ids = Vec::new();
    for i in 0..fit {
        let upload = padded(&wasm, &format!("pad-{i}"), size);
        ids.push(t.admin.upload_plugin(&format!("big-{i}"), upload).await["id"].as_str().unwrap().to_owned());
    }
    let over = t
        .admin
        .http
        .post("/api/v2/plugins?name=one-too-many")
        .bearer(&t.admin.token)
        .raw("application/wasm", padded(&wasm, "pad-over", size))
        .send()
        .await
        .expect(403);
    assert_eq!(over.error_code(), "quota_exceeded");
    assert_eq!(over.error_fields(), vec!["plugin_bytes".to_owned()]);
    assert!(
        over.text().contains("bytes of code (delete versions it no longer uses), the most its plan (pro) allows"),
        "{}",
        over.text()
    );
    // Bytes it stores already cost nothing more.
    let again = padded(&wasm, "pad-0", size);
    ids.push(t.admin.upload_plugin("big-0-again", again).await["id"].as_str().unwrap().to_owned());
    // Another organisation has its own quota.
    let other = weir.tenant(Plan::pro()).await;
    other.admin.upload_plugin("theirs", padded(&wasm, "pad-over", size)).await;
    for id in ids {
        t.admin.delete(&format!("/api/v2/plugins/{id}")).await.expect(204);
    }
    weir.stop().await;
}

#[tokio::test]
async fn a_refused_upload_compiles_nothing_and_leaves_nothing_behind() {
    let data = crate::support::temp_dir("budget-data");
    let weir = WeirBuilder::shared().env("WEIR_DATA_DIR", &data.display().to_string()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    for (wasm, needle) in [
        (plugin_wasm("wrong_world"), "weir:plugin/filter"),
        (padded(&plugin_wasm("wrong_world"), "big", 20 << 20), "weir:plugin/filter"),
    ] {
        let started = std::time::Instant::now();
        let resp = t
            .admin
            .http
            .post("/api/v2/plugins?name=nope")
            .bearer(&t.admin.token)
            .raw("application/wasm", wasm)
            .send()
            .await
            .expect(422);
        assert!(resp.text().contains(needle), "{}", resp.text());
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "refused in {:?}", started.elapsed());
    }
    let text = weir.http().get("/metrics").send().await.text();
    assert_eq!(metric(&text, "weir_plugin_compilations_total "), 0.0, "nothing was compiled");
    let cached: Vec<_> = std::fs::read_dir(data.join("plugin-cache")).unwrap().collect();
    assert!(cached.is_empty(), "{cached:?}");
    assert!(raw_keys(&weir.builder, &format!("{}*:code:*", weir.builder.prefix())).is_empty());
    weir.stop().await;
}
