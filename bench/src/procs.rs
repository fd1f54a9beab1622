//! The processes under test: `redis-server` (AOF on), and (`weir_proc.rs`) the release
//! `weir serve`; what each costs in CPU and memory.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

/// `redis-server` with AOF persistence (`appendfsync everysec`, the production setting):
/// one, or the masters of a Redis Cluster (without replicas: on a 2-core machine a replica
/// would take CPU from the masters being measured).
pub struct RedisProc {
    nodes: Vec<(Child, u16)>,
    cluster: bool,
    dir: PathBuf,
}

impl RedisProc {
    pub fn start() -> RedisProc {
        let dir = std::env::temp_dir().join(format!("weir-bench-redis-{}", std::process::id()));
        let node = spawn_node(free_port(), &dir, &[]);
        RedisProc { nodes: vec![node], cluster: false, dir }
    }

    /// A Redis Cluster of `masters` masters (`redis-cli --cluster create`).
    pub fn start_cluster(masters: usize) -> RedisProc {
        let dir = std::env::temp_dir().join(format!("weir-bench-cluster-{}", std::process::id()));
        let nodes: Vec<(Child, u16)> = (0..masters)
            .map(|i| {
                let port = loop {
                    let port = free_port();
                    if port < 55000 && std::net::TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
                        break port;
                    }
                };
                let cluster = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"];
                spawn_node(port, &dir.join(format!("n{i}")), &cluster)
            })
            .collect();
        let proc = RedisProc { nodes, cluster: true, dir };
        let mut create = Command::new("redis-cli");
        create.args(["--cluster", "create"]);
        for (_, port) in &proc.nodes {
            create.arg(format!("127.0.0.1:{port}"));
        }
        let out = create.args(["--cluster-replicas", "0", "--cluster-yes"]).output().expect("redis-cli");
        assert!(out.status.success(), "cluster create: {}", String::from_utf8_lossy(&out.stdout));
        let started = Instant::now();
        while !proc.nodes.iter().all(|(_, port)| {
            let info = Command::new("redis-cli").args(["-p", &port.to_string(), "CLUSTER", "INFO"]).output();
            info.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("cluster_state:ok"))
        }) {
            assert!(started.elapsed() < Duration::from_secs(30), "cluster did not become healthy");
            std::thread::sleep(Duration::from_millis(100));
        }
        proc
    }

    /// How `weir` finds this Redis: `WEIR_REDIS_URL`, or `WEIR_REDIS_CLUSTER` with every node.
    pub fn weir_env(&self) -> (&'static str, String) {
        if self.cluster {
            ("WEIR_REDIS_CLUSTER", self.nodes.iter().map(|(_, p)| url(*p)).collect::<Vec<_>>().join(","))
        } else {
            ("WEIR_REDIS_URL", self.url())
        }
    }

    /// The first node's URL (the only one unless this is a cluster).
    pub fn url(&self) -> String {
        url(self.nodes[0].1)
    }

    /// Redis' own CPU time (user + system, `INFO cpu`) in seconds, per node.
    pub async fn cpu_by_node(&self) -> Vec<f64> {
        let mut out = Vec::new();
        for (_, port) in &self.nodes {
            let info: String =
                redis::cmd("INFO").arg("cpu").query_async(&mut node_conn(*port).await).await.expect("info");
            out.push(
                info.lines()
                    .filter(|l| l.starts_with("used_cpu_sys:") || l.starts_with("used_cpu_user:"))
                    .filter_map(|l| l.split(':').nth(1).and_then(|v| v.trim().parse::<f64>().ok()))
                    .sum(),
            );
        }
        out
    }

    /// Redis' own CPU time, summed over the nodes.
    pub async fn cpu_seconds(&self) -> f64 {
        self.cpu_by_node().await.iter().sum()
    }

    /// `used_memory` (`INFO memory`), summed over the nodes.
    pub async fn used_memory(&self) -> u64 {
        let mut total = 0;
        for (_, port) in &self.nodes {
            let info: String =
                redis::cmd("INFO").arg("memory").query_async(&mut node_conn(*port).await).await.expect("info");
            let used = info.lines().find_map(|l| l.strip_prefix("used_memory:")).and_then(|v| v.trim().parse().ok());
            total += used.unwrap_or(0u64);
        }
        total
    }

    /// Memory by kind of key (`MEMORY USAGE`, each key's variable parts as `*`), largest
    /// first: what a data set is made of.
    pub async fn memory_by_kind(&self) -> Vec<(String, u64, u64)> {
        let mut kinds: std::collections::HashMap<String, (u64, u64)> = std::collections::HashMap::new();
        for (_, port) in &self.nodes {
            let mut conn = node_conn(*port).await;
            let mut cursor = 0u64;
            loop {
                let (next, keys): (u64, Vec<String>) =
                    redis::cmd("SCAN").arg(cursor).arg("COUNT").arg(1000).query_async(&mut conn).await.expect("scan");
                for key in keys {
                    let bytes: Option<u64> =
                        redis::cmd("MEMORY").arg("USAGE").arg(&key).query_async(&mut conn).await.expect("memory usage");
                    let kind: Vec<&str> = key
                        .split(':')
                        .map(|part| if part.len() > 3 && part.chars().any(|c| c.is_ascii_digit()) { "*" } else { part })
                        .collect();
                    let entry = kinds.entry(kind.join(":")).or_default();
                    entry.0 += 1;
                    entry.1 += bytes.unwrap_or(0);
                }
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
        }
        let mut kinds: Vec<(String, u64, u64)> = kinds.into_iter().map(|(k, (n, b))| (k, n, b)).collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.2));
        kinds
    }

    /// Empties Redis and compacts its AOF, so one scenario's data does not slow the next.
    pub async fn flush(&self) {
        for (_, port) in &self.nodes {
            let mut conn = node_conn(*port).await;
            let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await.expect("flush");
            // A rewrite Redis started on its own during the load runs to its end first.
            rewrite_done(&mut conn).await;
            let _: redis::Value = redis::cmd("BGREWRITEAOF").query_async(&mut conn).await.expect("rewrite");
            rewrite_done(&mut conn).await;
        }
    }

    /// `INFO commandstats` and the slow log by command (scripts by SHA-1) of every node
    /// (a cluster's masters one after another), then resets both.
    pub async fn commandstats(&self) -> String {
        let mut out = String::new();
        for (_, port) in &self.nodes {
            if self.cluster {
                out.push_str(&format!("# master :{port}\n"));
            }
            out.push_str(&node_commandstats(*port).await);
        }
        out
    }
}

/// Waits (up to a minute) until no AOF rewrite runs or waits to run.
async fn rewrite_done(conn: &mut redis::aio::MultiplexedConnection) {
    for _ in 0..600 {
        let info: String = redis::cmd("INFO").arg("persistence").query_async(conn).await.expect("info");
        if info.contains("aof_rewrite_in_progress:0") && info.contains("aof_rewrite_scheduled:0") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// [`RedisProc::commandstats`] of one node.
async fn node_commandstats(port: u16) -> String {
    let mut conn = node_conn(port).await;
    let mut info: String = redis::cmd("INFO").arg("commandstats").query_async(&mut conn).await.expect("info");
    let log: Vec<redis::Value> =
        redis::cmd("SLOWLOG").arg("GET").arg(200_000).query_async(&mut conn).await.expect("slowlog");
    let mut by_kind: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for entry in log {
        if let redis::Value::Array(fields) = entry {
            let micros = match &fields[2] {
                redis::Value::Int(i) => *i as u64,
                _ => 0,
            };
            let args: Vec<String> = match &fields[3] {
                redis::Value::Array(a) => a
                    .iter()
                    .take(2)
                    .map(|v| match v {
                        redis::Value::BulkString(b) => String::from_utf8_lossy(&b[..b.len().min(8)]).into_owned(),
                        _ => String::new(),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            // Scripts by the start of their SHA1 (`sha1sum host/src/store/lua/*.lua`),
            // other commands by name.
            let kind = match args.as_slice() {
                [cmd, sha] if cmd.eq_ignore_ascii_case("evalsha") => format!("EVALSHA {sha}"),
                [cmd, ..] => cmd.to_uppercase(),
                [] => String::new(),
            };
            let e = by_kind.entry(kind).or_default();
            e.0 += 1;
            e.1 += micros;
        }
    }
    for (k, (n, us)) in by_kind {
        info.push_str(&format!("slowlog {k}: {n} calls, {:.1} µs each, {us} µs in all\n", us as f64 / n as f64));
    }
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query_async(&mut conn).await.expect("slowlog reset");
    let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query_async(&mut conn).await.expect("resetstat");
    info
}

impl Drop for RedisProc {
    fn drop(&mut self) {
        for (child, _) in &mut self.nodes {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn url(port: u16) -> String {
    format!("redis://127.0.0.1:{port}")
}

async fn node_conn(port: u16) -> redis::aio::MultiplexedConnection {
    // No response timeout: a long slow log takes Redis a while to hand over.
    let config = redis::AsyncConnectionConfig::new().set_response_timeout(None);
    let client = redis::Client::open(url(port)).expect("url");
    client.get_multiplexed_async_connection_with_config(&config).await.expect("redis")
}

/// One `redis-server` on `port` with the production settings, once it accepts connections.
fn spawn_node(port: u16, dir: &std::path::Path, extra: &[&str]) -> (Child, u16) {
    std::fs::create_dir_all(dir).expect("temp dir");
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", ""])
        .args([
            "--appendonly",
            &std::env::var("WEIR_BENCH_AOF").unwrap_or_else(|_| "yes".into()),
            "--appendfsync",
            "everysec",
        ])
        // As the managed Redis runs (and the README asks of an operator's).
        .args(["--hash-max-listpack-value", weir::store::LISTPACK_VALUE])
        .args([
            "--slowlog-log-slower-than",
            // WEIR_BENCH_SLOWLOG_US=0 logs every command (itself a cost Redis pays).
            &std::env::var("WEIR_BENCH_SLOWLOG_US").unwrap_or_else(|_| "10000".into()),
            "--slowlog-max-len",
            "200000",
        ])
        .args(extra)
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("redis-server on PATH (scripts/setup.sh installs it)");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "redis-server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, port)
}

pub use crate::weir_proc::{Tenant, WeirProc};

/// User plus system CPU time of a process, in seconds (`/proc/<pid>/stat`).
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the name.
    let hz = clock_ticks();
    (ticks(11) + ticks(12)) / hz
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Peak resident set size of a process, KiB (`VmHWM`).
pub fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
