//! Redis that is up but cannot serve yet — loading its data set after a restart, or busy
//! running a long script: the API answers `503 unavailable` with `Retry-After` (never
//! `500`), and workers keep the outcome they could not record until Redis takes it,
//! instead of dropping it and sending the delivery again later.

use std::time::Duration;

use weir::store::tenants::orgs::Plan;

use crate::support::eventually;
use crate::support::receiver::{Receiver, Reply};
use crate::support::redis::RedisServer;
use crate::support::weir::{WeirBuilder, work_order_event};

#[tokio::test]
async fn requests_while_redis_loads_its_data_get_503_not_500() {
    let mut redis = RedisServer::start_persistent();
    let weir = WeirBuilder::new(&redis.url()).start().await;
    let t = weir.tenant(Plan::pro()).await;
    t.admin.create_webhook("http://127.0.0.1:9/", &["form_completed"]).await;
    fill(&redis);
    redis.restart_loading_slowly(60);
    let mut saw_loading = false;
    let answered = eventually("the API answers again once Redis has loaded", Duration::from_secs(40), async || {
        let resp = t.admin.get("/api/v2/webhooks").await;
        assert_ne!(resp.status, 500, "{}", resp.text());
        if resp.status == 503 {
            assert_eq!(resp.error_code(), "unavailable");
            assert!(resp.header("retry-after").is_some());
            saw_loading = true;
        }
        (resp.status == 200).then(|| resp.json())
    })
    .await;
    assert!(saw_loading, "requests were made while Redis was loading");
    assert_eq!(answered["data"].as_array().unwrap().len(), 1, "nothing was lost");
}

/// Enough keys that loading them slowly takes seconds, written into the AOF's base file.
fn fill(redis: &RedisServer) {
    let mut conn = redis.conn();
    let _: () = redis::cmd("EVAL")
        .arg("for i = 1, 100000 do redis.call('SET', 'filler:' .. i, 'x') end")
        .arg(0)
        .query(&mut conn)
        .unwrap();
    let _: () = redis::cmd("BGREWRITEAOF").query(&mut conn).unwrap();
    for _ in 0..200 {
        let info: String = redis::cmd("INFO").arg("persistence").query(&mut conn).unwrap();
        if info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0") {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn weir_serve_started_while_redis_loads_its_data_waits_and_then_serves() {
    let mut redis = RedisServer::start_persistent();
    fill(&redis);
    redis.restart_loading_slowly(60);
    let log = std::env::temp_dir().join(format!("weir-loading-{}.log", std::process::id()));
    let serve = WeirBuilder::new(&redis.url()).spawn_logging_to(&log);
    // Before, it refused to start: "cannot reach Redis … LOADING".
    serve.wait_ready().await;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(text.contains("Redis is loading its data set"), "it waited for the load: {text}");
    assert_eq!(serve.http().get("/readyz").send().await.status, 200);
    let _ = std::fs::remove_file(log);
}

#[tokio::test]
async fn an_outcome_redis_cannot_take_yet_is_recorded_later_not_sent_again() {
    let redis = RedisServer::start();
    let weir = WeirBuilder::new(&redis.url())
        .env("WEIR_TAKEOVER_AFTER", "2s")
        .env("WEIR_DELIVERY_TIMEOUT", "2s")
        .start()
        .await;
    let t = weir.tenant(Plan::pro()).await;
    let receiver = Receiver::replying(Reply::Delay(Duration::from_millis(1500), 200)).await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    receiver.wait_for(1, Duration::from_secs(10)).await;

    // While the receiver takes its time, Redis gets busy with a 4-second script: the
    // outcome arrives when every command is answered `BUSY`.
    let mut conn = redis.conn();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("busy-reply-threshold").arg(100).query(&mut conn).unwrap();
    // (On a blocking thread: this test's runtime also runs Weir and the receiver.)
    let busy = tokio::task::spawn_blocking(move || {
        let script = "local t0 = tonumber(redis.call('TIME')[1]) \
                      while tonumber(redis.call('TIME')[1]) < t0 + 4 do end return 1";
        let _: i64 = redis::cmd("EVAL").arg(script).arg(0).query(&mut conn).unwrap();
    });
    tokio::time::sleep(Duration::from_millis(600)).await;
    let resp = t.admin.get("/api/v2/webhooks").await;
    assert_eq!(resp.status, 503, "busy Redis: {}", resp.text());
    assert!(resp.header("retry-after").is_some());
    busy.await.unwrap();

    let d = &t.admin.settled(hook["id"].as_str().unwrap(), 1).await[0];
    assert_eq!(d["status"], "succeeded", "{d}");
    // Past the takeover time and the attempt's lease: nobody sends it again.
    tokio::time::sleep(Duration::from_secs(15)).await;
    let got = receiver.received();
    let seen: Vec<(String, String, Duration)> = got
        .iter()
        .map(|r| (r.header("x-webhook-delivery"), r.header("x-webhook-attempt"), r.at.duration_since(got[0].at)))
        .collect();
    assert_eq!(receiver.count(), 1, "the delivery was sent once: {seen:?} {d}");
}

#[tokio::test]
async fn a_transaction_redis_refuses_for_want_of_memory_is_not_ready_not_a_fault() {
    // Redis refuses a transaction's command as it queues it (out of memory, or a key mid-
    // reshard: `ASK`) and then the transaction (`EXECABORT`): the cause inside decides.
    let redis = RedisServer::start();
    let mut conn = redis.conn();
    let _: () = redis::cmd("SET").arg("filler").arg("x".repeat(4096)).query(&mut conn).unwrap();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(1).query(&mut conn).unwrap();
    let refused = redis::pipe().atomic().set("k", "v").ignore().query::<()>(&mut conn).unwrap_err();
    assert_eq!(refused.code(), Some("EXECABORT"), "{refused:?}");
    assert!(weir::store::not_ready(&refused), "{refused:?}");
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory").arg(0).query(&mut conn).unwrap();
    let wrong = redis::pipe().atomic().cmd("SET").arg("k").ignore().query::<()>(&mut conn).unwrap_err();
    assert!(!weir::store::not_ready(&wrong), "a malformed command is not Redis being busy: {wrong:?}");
}
