//! The processes under test: `redis-server` (AOF on) and the release `weir serve`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::load::Http;

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

/// A command running `weir` without the bench's own `WEIR_BENCH_*` variables (`weir`
/// refuses a `WEIR_` variable that is no setting of its own).
fn weir_command() -> Command {
    let mut command = Command::new(weir_binary());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("WEIR_BENCH_")) {
            command.env_remove(&name);
        }
    }
    command
}

/// The `weir` binary under test: `WEIR_BENCH_WEIR` if set (to compare builds with the
/// same harness), else the release build next to this binary.
pub fn weir_binary() -> PathBuf {
    match std::env::var_os("WEIR_BENCH_WEIR") {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe().expect("exe").with_file_name("weir"),
    }
}

/// The release `weir serve`, next to this binary.
pub struct WeirProc {
    child: Child,
    pub base: String,
    prefix: String,
    /// How it finds Redis (for `weir admin`).
    redis: (&'static str, String),
}

/// An organisation with an admin token and a publisher token.
pub struct Tenant {
    pub admin_token: String,
    pub publisher_token: String,
}

/// `WEIR_BENCH_PLAN=metered`: the bench's organisation is on a plan with a daily limit it never
/// reaches (so each publish takes its place in the organisation's counter, issue 57), from a
/// configuration file given to `weir serve` and `weir admin`; unset, the shipped `pro`. The
/// plan's name and the file.
fn bench_plan() -> (&'static str, Option<&'static std::path::Path>) {
    static FILE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    if std::env::var("WEIR_BENCH_PLAN").as_deref() != Ok("metered") {
        return ("pro", None);
    }
    let file = FILE.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("weir-bench-plans-{}.toml", std::process::id()));
        std::fs::write(&path, "[plans.metered]\napi_integrations = true\nevents_per_day = 1000000000\n")
            .expect("write the bench's plans");
        path
    });
    ("metered", Some(file.as_path()))
}

impl WeirProc {
    /// Starts `weir serve` with the shipped defaults, plus `env`.
    pub fn start(redis: &RedisProc, prefix: &str, env: &[(&str, &str)]) -> WeirProc {
        let port = free_port();
        let mut command = weir_command();
        command.arg("serve");
        if let (_, Some(file)) = bench_plan() {
            command.arg("--config").arg(file);
        }
        command
            .env(redis.weir_env().0, redis.weir_env().1)
            .env("WEIR_REDIS_PREFIX", prefix)
            .env("WEIR_LISTEN", format!("127.0.0.1:{port}"))
            .env("WEIR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8")
            .env("WEIR_LOG", "warn");
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.stdout(Stdio::null()).spawn().expect("weir binary (cargo build --release)");
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "weir did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        WeirProc { child, base, prefix: prefix.to_owned(), redis: redis.weir_env() }
    }

    /// Runs `weir admin ARGS` against this process's Redis; its JSON output.
    fn admin(&self, args: &[&str]) -> serde_json::Value {
        let mut command = weir_command();
        command.arg("admin");
        if let (_, Some(file)) = bench_plan() {
            command.arg("--config").arg(file);
        }
        let out = command
            .args(args)
            .env(self.redis.0, &self.redis.1)
            .env("WEIR_REDIS_PREFIX", &self.prefix)
            .env("WEIR_LOG", "warn")
            .output()
            .expect("weir admin");
        assert!(out.status.success(), "weir admin {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("weir admin prints JSON")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stop(mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }

    /// A new organisation with an admin and a publisher client, made with `weir admin` (so
    /// the harness works with any build's key layout).
    pub async fn tenant(&self) -> Tenant {
        let org = self.admin(&["org", "create", "--name", "bench", "--plan", bench_plan().0]);
        let org_id = org["id"].as_str().expect("org id").to_owned();
        let mut tokens = Vec::new();
        for role in ["--admin", "--publisher"] {
            let client = self.admin(&["client", "create", "--org", &org_id, "--name", "bench", role]);
            let (id, secret) =
                (client["client_id"].as_str().expect("id"), client["client_secret"].as_str().expect("secret"));
            let form = format!("grant_type=client_credentials&client_id={id}&client_secret={secret}");
            let (status, body) = Http::connect(&self.base)
                .await
                .send("POST", "/oauth/token", "", "application/x-www-form-urlencoded", form.into_bytes())
                .await;
            assert_eq!(status, 200, "token: {body}");
            let body: serde_json::Value = serde_json::from_str(&body).expect("json");
            tokens.push(body["access_token"].as_str().expect("token").to_owned());
        }
        Tenant { admin_token: tokens.remove(0), publisher_token: tokens.remove(0) }
    }
}

impl Tenant {
    /// Subscribes `url` to the bench's events, with `plugins` attached.
    pub async fn create_webhook(&self, base: &str, url: &str, plugins: serde_json::Value) {
        let extra = serde_json::json!({ "plugins": plugins });
        self.create_webhook_for(base, url, &["work_order_created", "report_export_completed"], extra).await;
    }

    /// Subscribes `url` to `actions`, with `extra` fields (plugins, rate_limit…); its id.
    pub async fn create_webhook_for(
        &self,
        base: &str,
        url: &str,
        actions: &[&str],
        extra: serde_json::Value,
    ) -> String {
        let mut body = serde_json::json!({"url": url, "subscribed_actions": actions});
        if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
            body.extend(extra.clone());
        }
        let (status, text) = Http::connect(base)
            .await
            .send(
                "POST",
                "/api/v2/webhooks",
                &self.admin_token,
                "application/json",
                serde_json::to_vec(&body).expect("json"),
            )
            .await;
        assert_eq!(status, 201, "create webhook: {text}");
        let created: serde_json::Value = serde_json::from_str(&text).expect("json");
        created["id"].as_str().expect("webhook id").to_owned()
    }

    /// Uploads `report-export-filter`; returns its id.
    pub async fn upload_filter(&self, base: &str) -> String {
        let exe = std::env::current_exe().expect("exe");
        let path = exe
            .parent()
            .and_then(|d| d.parent())
            .expect("target")
            .join("wasm32-wasip2/release/report_export_filter.wasm");
        let wasm = std::fs::read(&path).expect("report_export_filter.wasm (scripts/build-plugins.sh)");
        let (status, text) = Http::connect(base)
            .await
            .send("POST", "/api/v2/plugins?name=filter", &self.admin_token, "application/wasm", wasm)
            .await;
        assert_eq!(status, 201, "upload: {text}");
        let body: serde_json::Value = serde_json::from_str(&text).expect("json");
        body["id"].as_str().expect("id").to_owned()
    }
}

impl Drop for WeirProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
