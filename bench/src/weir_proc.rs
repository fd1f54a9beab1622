//! The release `weir serve` under test, and the bench's tenant on it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::load::Http;
use crate::procs::{RedisProc, free_port};

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
