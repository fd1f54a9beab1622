//! The managed Redis under stress: a Redis that stops answering is waited for, never
//! started a second time beside itself (two servers appending to one AOF corrupt it); an
//! orphan left by a killed `weir serve` is adopted and shut down on exit.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{WeirBuilder, WeirProcess, work_order_event};
use crate::support::{eventually, temp_dir};

/// Pids of the `redis-server` processes serving `dir` (by the socket path in their command line).
fn servers_of(dir: &Path) -> Vec<u32> {
    let needle = dir.join("redis").join("redis.sock").display().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let zombie = std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|s| s.contains(") Z"));
        if cmdline.contains("redis-server") && cmdline.contains(&needle) && !zombie {
            pids.push(pid);
        }
    }
    pids
}

fn signal(pid: u32, signal: &str) {
    assert!(Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status().unwrap().success());
}

/// Makes sure a Redis this test touched is running and then gone when the test ends.
struct Cleanup(Vec<u32>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for pid in &self.0 {
            let _ = Command::new("kill").arg("-CONT").arg(pid.to_string()).status();
            let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
        }
    }
}

fn admin(dir: &Path, args: &[&str]) -> Value {
    let out = crate::support::weir::weir_command()
        .arg("admin")
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("WEIR_DATA_DIR", dir.display().to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `weir serve` on a managed Redis in `dir`, with an organisation, a webhook to `receiver`
/// and a publisher token.
async fn serve_with_tenant(dir: &Path, receiver: &Receiver) -> (WeirBuilder, WeirProcess, String) {
    let (builder, serve, publisher, _admin) = serve_with_tenant_in(dir, receiver, false).await;
    (builder, serve, publisher)
}

/// [`serve_with_tenant`], optionally as a process group leader; also returns an admin token.
async fn serve_with_tenant_in(
    dir: &Path,
    receiver: &Receiver,
    group: bool,
) -> (WeirBuilder, WeirProcess, String, String) {
    let builder = WeirBuilder::shared()
        .without("WEIR_REDIS_URL")
        .without("WEIR_REDIS_PREFIX")
        .env("WEIR_DATA_DIR", &dir.display().to_string());
    let serve = if group { builder.spawn_as_group() } else { builder.spawn() };
    serve.wait_ready().await;
    let org = admin(dir, &["org", "create", "--name", "Paused", "--plan", "pro"]);
    let org_id = org["id"].as_str().unwrap();
    let admin_client = admin(dir, &["client", "create", "--org", org_id, "--name", "a", "--admin"]);
    let publisher = admin(dir, &["client", "create", "--org", org_id, "--name", "p", "--publisher"]);
    let token = |c: &Value| {
        let http = serve.http();
        let (id, secret) =
            (c["client_id"].as_str().unwrap().to_owned(), c["client_secret"].as_str().unwrap().to_owned());
        async move {
            let form = [("grant_type", "client_credentials"), ("client_id", &id), ("client_secret", &secret)];
            http.post("/oauth/token").form(&form).send().await.expect(200).json()["access_token"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let admin_token = token(&admin_client).await;
    let body = serde_json::json!({"url": receiver.url, "subscribed_actions": ["work_order_created"]});
    serve.http().post("/api/v2/webhooks").bearer(&admin_token).json(&body).send().await.expect(201);
    let publisher_token = token(&publisher).await;
    (builder, serve, publisher_token, admin_token)
}

async fn publish(serve: &WeirProcess, token: &str, wo: &str) {
    let http = serve.http();
    eventually("the publish is accepted", Duration::from_secs(30), async || {
        (http.post("/api/v2/events").bearer(token).json(&work_order_event(wo)).send().await.status == 202).then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_paused_managed_redis_is_waited_for_and_never_started_twice() {
    let dir = temp_dir("paused");
    let receiver = Receiver::start().await;
    let (_builder, serve, token) = serve_with_tenant(&dir, &receiver).await;
    publish(&serve, &token, "wo_before").await;
    receiver.wait_for(1, Duration::from_secs(10)).await;
    let pids = servers_of(&dir);
    assert_eq!(pids.len(), 1, "{pids:?}");
    let _cleanup = Cleanup(pids.clone());

    // Paused for longer than the 2 s ping timeout, several supervisor ticks.
    signal(pids[0], "STOP");
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(servers_of(&dir), pids, "no second redis-server beside the paused one");
    signal(pids[0], "CONT");

    publish(&serve, &token, "wo_after").await;
    let got = receiver.wait_for(2, Duration::from_secs(30)).await;
    let subjects: Vec<String> = got.iter().map(|r| r.json()["subject"]["id"].as_str().unwrap().to_owned()).collect();
    assert!(subjects.contains(&"wo_before".to_owned()) && subjects.contains(&"wo_after".to_owned()), "{subjects:?}");
    assert_eq!(servers_of(&dir), pids, "still the one server");
}

#[tokio::test]
async fn an_orphaned_managed_redis_is_adopted_and_shut_down_on_exit() {
    let dir = temp_dir("orphan");
    let receiver = Receiver::start().await;
    let (builder, mut first, token) = serve_with_tenant(&dir, &receiver).await;
    let pids = servers_of(&dir);
    assert_eq!(pids.len(), 1);
    let _cleanup = Cleanup(pids.clone());
    first.signal("KILL");
    assert_eq!(servers_of(&dir), pids, "the server outlives a killed weir serve");

    let mut second = builder.spawn();
    second.wait_ready().await;
    assert_eq!(servers_of(&dir), pids, "adopted, not started again");
    publish(&second, &token, "wo_adopted").await;
    receiver.wait_for(1, Duration::from_secs(10)).await;

    assert!(second.signal("TERM").success());
    eventually("the adopted server shut down with weir serve", Duration::from_secs(15), async || {
        servers_of(&dir).is_empty().then_some(())
    })
    .await;
}

#[tokio::test]
async fn ctrl_c_stops_weir_first_then_its_managed_redis() {
    let dir = temp_dir("ctrlc");
    let receiver = Receiver::replying(Reply::Delay(Duration::from_millis(1500), 200)).await;
    let (builder, serve, token, admin_token) = serve_with_tenant_in(&dir, &receiver, true).await;
    let pids = servers_of(&dir);
    assert_eq!(pids.len(), 1);
    let _cleanup = Cleanup(pids.clone());
    publish(&serve, &token, "wo_in_flight").await;
    receiver.wait_for(1, Duration::from_secs(10)).await;

    // Ctrl-C in a terminal signals its whole foreground group at once. The managed Redis
    // runs in a group of its own, so it is not hit: weir finishes the attempt in flight,
    // records it, and only then shuts Redis down (the SHUTDOWN command, not the signal).
    // (Waited for off this thread: the receiver answering the attempt runs on it.)
    let status = tokio::task::spawn_blocking(move || {
        let mut serve = serve;
        serve.signal_group("INT")
    })
    .await
    .unwrap();
    assert!(status.success(), "clean exit on Ctrl-C: {status:?}");
    assert!(servers_of(&dir).is_empty(), "redis stopped with weir");
    let log = std::fs::read_to_string(dir.join("redis/redis.log")).unwrap();
    assert!(log.contains("User requested shutdown"), "redis was shut down by weir:\n{log}");
    assert!(!log.contains("Received SIGINT"), "the terminal's Ctrl-C reached redis:\n{log}");

    // The attempt that was in flight was recorded before Redis went away: sent once, succeeded.
    let serve = builder.spawn();
    serve.wait_ready().await;
    let http = serve.http();
    let list = http.get("/api/v2/webhook_deliveries").bearer(&admin_token).send().await.expect(200).json();
    let delivery = &list["data"][0];
    assert_eq!(delivery["status"], "succeeded", "{list}");
    assert_eq!(delivery["attempts"].as_array().map(Vec::len), Some(1), "{list}");
    assert_eq!(receiver.count(), 1);
}
