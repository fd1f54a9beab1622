//! `weir-bench race-load URL EVENTS CONNECTIONS BODY_FILE AUTHORIZATION STATUS`: the load
//! generator of the peer race (`bench/peers/race.py`), the same for every system raced.
//!
//! POSTs `EVENTS` copies of the JSON body in `BODY_FILE` (each `{{ID}}` in it replaced by a
//! unique id) to `URL` over `CONNECTIONS` keep-alive HTTP/1.1 connections, each as soon as its
//! connection is free (closed loop), on one thread. Prints one JSON object: answers by status,
//! how many were `STATUS`, transport errors, the rate, publish latency p50/p99, the wall-clock
//! start and end (Unix ms, to line up with a receiver's log) and its own CPU seconds.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};

use crate::load::{handshake, percentile};
use crate::procs::cpu_seconds;

/// The run's arguments.
struct Load {
    authority: String,
    path: String,
    events: usize,
    connections: usize,
    /// The body, split at each `{{ID}}`.
    body_parts: Vec<String>,
    authorization: String,
    expected: u16,
}

/// What one connection saw.
#[derive(Default)]
struct Seen {
    latencies: Vec<Duration>,
    statuses: BTreeMap<u16, usize>,
    errors: usize,
}

/// Runs the load from the command line's arguments (after `race-load`); exit code 2 on
/// arguments it cannot use.
pub fn main(args: &[String]) -> std::process::ExitCode {
    let load = match parse(args) {
        Ok(load) => Arc::new(load),
        Err(e) => {
            eprintln!(
                "weir-bench race-load: {e}\nusage: weir-bench race-load URL EVENTS CONNECTIONS BODY_FILE AUTHORIZATION STATUS"
            );
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let summary = runtime.block_on(run(load));
    println!("{summary}");
    std::process::ExitCode::SUCCESS
}

fn parse(args: &[String]) -> Result<Load, String> {
    let [url, events, connections, body_file, authorization, expected] = args else {
        return Err(format!("six arguments expected, {} given", args.len()));
    };
    let rest = url.strip_prefix("http://").ok_or("the URL must start with http://")?;
    let (authority, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let number = |what: &str, s: &str| s.parse::<usize>().map_err(|_| format!("{what}: not a number: {s}"));
    let body = std::fs::read_to_string(body_file).map_err(|e| format!("{body_file}: {e}"))?;
    Ok(Load {
        authority: authority.to_owned(),
        path,
        events: number("EVENTS", events)?,
        connections: number("CONNECTIONS", connections)?.max(1),
        body_parts: body.split("{{ID}}").map(str::to_owned).collect(),
        authorization: authorization.clone(),
        expected: expected.parse().map_err(|_| format!("STATUS: not a status: {expected}"))?,
    })
}

async fn run(load: Arc<Load>) -> serde_json::Value {
    let next = Arc::new(AtomicUsize::new(0));
    let run_id = unix_ms() % 100_000_000;
    let (start_ms, started) = (unix_ms(), Instant::now());
    let tasks: Vec<_> =
        (0..load.connections).map(|_| tokio::spawn(connection(load.clone(), next.clone(), run_id))).collect();
    let mut all = Seen::default();
    for task in tasks {
        let seen = task.await.expect("a connection's task");
        all.latencies.extend(seen.latencies);
        all.errors += seen.errors;
        for (status, n) in seen.statuses {
            *all.statuses.entry(status).or_default() += n;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let ms = |d: Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
    serde_json::json!({
        "ok": all.statuses.get(&load.expected).copied().unwrap_or(0),
        "statuses": all.statuses.iter().map(|(s, n)| (s.to_string(), *n)).collect::<BTreeMap<_, _>>(),
        "errors": all.errors,
        "rate": (load.events as f64 / elapsed).round(),
        "p50_ms": ms(percentile(&mut all.latencies, 50.0)),
        "p99_ms": ms(percentile(&mut all.latencies, 99.0)),
        "start_unix_ms": start_ms,
        "end_unix_ms": unix_ms(),
        "cpu_s": cpu_seconds(std::process::id()),
    })
}

/// One keep-alive connection publishing until every event is taken; a connection that
/// breaks is opened again (its request counted as an error).
async fn connection(load: Arc<Load>, next: Arc<AtomicUsize>, run_id: u64) -> Seen {
    let mut seen = Seen::default();
    let mut sender = None;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= load.events {
            return seen;
        }
        if sender.is_none() {
            sender = handshake(&load.authority).await.ok();
        }
        let Some(open) = sender.as_mut() else {
            seen.errors += 1;
            continue;
        };
        let body = load.body_parts.join(&format!("r{run_id}x{i}"));
        let request = hyper::Request::post(&load.path)
            .header("host", &load.authority)
            .header("content-type", "application/json")
            .header("authorization", &load.authorization)
            .body(Full::new(Bytes::from(body)))
            .expect("a request");
        let t = Instant::now();
        let answer = match open.ready().await {
            Ok(()) => open.send_request(request).await,
            Err(e) => Err(e),
        };
        match answer {
            Ok(response) => {
                let status = response.status().as_u16();
                let _ = response.into_body().collect().await;
                seen.latencies.push(t.elapsed());
                *seen.statuses.entry(status).or_default() += 1;
            }
            Err(_) => {
                seen.errors += 1;
                sender = None;
            }
        }
    }
}

fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_arguments_name_the_target_the_load_and_the_body_with_its_id_places() {
        let body = std::env::temp_dir().join(format!("race-load-{}.json", std::process::id()));
        std::fs::write(&body, r#"{"id":"evt_{{ID}}","subject":{"id":"rec_{{ID}}"}}"#).unwrap();
        let body_arg = body.to_str().unwrap();
        let load = parse(&args(&["http://127.0.0.1:18080/api/v2/events", "20000", "32", body_arg, "Bearer t", "202"]))
            .unwrap();
        assert_eq!((load.authority.as_str(), load.path.as_str()), ("127.0.0.1:18080", "/api/v2/events"));
        assert_eq!((load.events, load.connections, load.expected), (20_000, 32, 202));
        assert_eq!(load.body_parts.join("r1x7"), r#"{"id":"evt_r1x7","subject":{"id":"rec_r1x7"}}"#);
        let bad = |list: &[&str]| parse(&args(list)).err().unwrap();
        assert!(bad(&["https://127.0.0.1/", "1", "1", body_arg, "", "202"]).contains("http://"));
        assert!(bad(&["http://127.0.0.1/", "many", "1", body_arg, "", "202"]).contains("EVENTS"));
        assert!(bad(&["http://127.0.0.1/", "1", "1", "/nonexistent/body.json", "", "202"]).contains("body.json"));
        assert!(bad(&["http://127.0.0.1/"]).contains("six arguments"));
        std::fs::remove_file(body).unwrap();
    }
}
