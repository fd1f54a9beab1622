//! Weir under test: in-process on port 0 (fast, most tests), or the real `weir` binary as a
//! child process (for signals, crashes and restarts). Both against real Redis.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use weir::config::Config;
use weir::store::Store;
use weir::store::tenants::orgs::Plan;

use super::http::Http;
use super::{eventually, free_port, temp_dir, unique};

/// Settings for a Weir under test. Defaults: the shared Redis, a fresh key prefix, a
/// compressed retry schedule, loopback exempt from the URL rule (receivers live there), and
/// a plugin time limit of [`PLUGIN_TIMEOUT`](super::plugins::PLUGIN_TIMEOUT).
#[derive(Clone)]
pub struct WeirBuilder {
    env: HashMap<String, String>,
    /// A configuration file (`--config`) under the variables.
    file: Option<PathBuf>,
}

impl WeirBuilder {
    pub fn new(redis_url: &str) -> WeirBuilder {
        let mut env = HashMap::new();
        env.insert("WEIR_REDIS_URL".into(), redis_url.to_owned());
        env.insert("WEIR_REDIS_PREFIX".into(), unique("t"));
        env.insert("WEIR_ALLOW_PRIVATE_TARGETS".into(), "127.0.0.0/8".into());
        env.insert("WEIR_RETRY_SCHEDULE".into(), "50ms,100ms,200ms".into());
        env.insert("WEIR_DELIVERY_RETENTION".into(), "1d".into());
        env.insert("WEIR_DELIVERY_TIMEOUT".into(), "3s".into());
        env.insert("WEIR_DATA_DIR".into(), temp_dir("data").display().to_string());
        // Several partitions even on one Redis, so every path across partitions is tested.
        env.insert("WEIR_REDIS_PARTITIONS".into(), "4".into());
        env.insert("WEIR_PLUGIN_TIMEOUT".into(), super::plugins::PLUGIN_TIMEOUT.into());
        WeirBuilder { env, file: None }
    }

    /// Uses the shared test Redis — or, when `WEIR_TEST_REDIS=cluster` is set for the test
    /// run, the shared local Redis Cluster (the test command runs the delivery, queue and
    /// crash tests a second time that way).
    pub fn shared() -> WeirBuilder {
        if on_cluster() {
            WeirBuilder::cluster(super::cluster::shared())
        } else {
            WeirBuilder::new(&super::redis::shared().url())
        }
    }

    /// Uses a Redis Cluster (partition count automatic, as an operator would run it).
    pub fn cluster(cluster: &super::cluster::RedisCluster) -> WeirBuilder {
        WeirBuilder::new("")
            .without("WEIR_REDIS_URL")
            .without("WEIR_REDIS_PARTITIONS")
            .env("WEIR_REDIS_CLUSTER", &cluster.seeds())
    }

    pub fn env(mut self, name: &str, value: &str) -> WeirBuilder {
        self.env.insert(name.to_owned(), value.to_owned());
        self
    }

    /// Serves HTTPS with the test CA's server certificate.
    pub fn tls(self, ca: &super::tls::TestCa) -> WeirBuilder {
        self.env("WEIR_TLS_CERT", &ca.cert_pem.display().to_string())
            .env("WEIR_TLS_KEY", &ca.key_pem.display().to_string())
    }

    /// Reads `toml` as the configuration file (`weir serve --config`), under the variables.
    pub fn config_file(mut self, toml: &str) -> WeirBuilder {
        let path = super::temp_dir("config").join("weir.toml");
        std::fs::write(&path, toml).expect("write the configuration file");
        self.file = Some(path);
        self
    }

    pub fn without(mut self, name: &str) -> WeirBuilder {
        self.env.remove(name);
        self
    }

    pub fn prefix(&self) -> String {
        self.env["WEIR_REDIS_PREFIX"].clone()
    }

    pub fn config(&self) -> Config {
        weir::config::load_with(self.file.as_deref(), |k| self.env.get(k).cloned())
            .expect("test configuration is valid")
    }

    /// Starts Weir in this process on a free port.
    pub async fn start(&self) -> Weir {
        weir::install_crypto_provider();
        log_to_the_test();
        let config = self.config();
        let store =
            Store::connect(&config.store_settings().expect("a Redis to use")).await.expect("test redis reachable");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            weir::run(config, listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("weir runs");
        });
        let scheme = if self.env.contains_key("WEIR_TLS_CERT") { "https" } else { "http" };
        let weir = Weir {
            addr,
            base: format!("{scheme}://{addr}"),
            store,
            builder: self.clone(),
            stop: Some(stop),
            task: Some(task),
        };
        if scheme == "http" {
            let http = weir.http();
            eventually("weir ready", Duration::from_secs(10), async || {
                (http.get("/readyz").send().await.status == 200).then_some(())
            })
            .await;
        }
        weir
    }

    /// The `WEIR_*` variables of these settings (for running the binary).
    pub fn vars(&self) -> impl Iterator<Item = (&String, &String)> {
        self.env.iter()
    }

    /// Starts the `weir serve` binary with these settings on a free port.
    pub fn spawn(&self) -> WeirProcess {
        self.spawn_in(None, None)
    }

    /// Like [`WeirBuilder::spawn`], with its stderr (the log) written to `log`.
    pub fn spawn_logging_to(&self, log: &std::path::Path) -> WeirProcess {
        self.spawn_in(None, Some(std::fs::File::create(log).expect("log file")))
    }

    /// Like [`WeirBuilder::spawn`], as the leader of a new process group: what a terminal
    /// does with a foreground command, so a test can send the group a Ctrl-C.
    pub fn spawn_as_group(&self) -> WeirProcess {
        self.spawn_in(Some(0), None)
    }

    fn spawn_in(&self, group: Option<i32>, log: Option<std::fs::File>) -> WeirProcess {
        use std::os::unix::process::CommandExt;
        let port = free_port();
        let mut command = weir_command();
        command.arg("serve").env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
        if let Some(file) = &self.file {
            command.arg("--config").arg(file);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command.env("WEIR_LISTEN", format!("127.0.0.1:{port}"));
        if !self.env.contains_key("WEIR_LOG") {
            command.env("WEIR_LOG", "warn");
        }
        if let Some(group) = group {
            command.process_group(group);
        }
        let stderr = log.map_or_else(Stdio::inherit, Stdio::from);
        let child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr).spawn().expect("spawn weir");
        WeirProcess::of(child, port)
    }
}

/// Whether this test run puts the shared store on a Redis Cluster (`WEIR_TEST_REDIS=cluster`).
pub fn on_cluster() -> bool {
    std::env::var("WEIR_TEST_REDIS").is_ok_and(|v| v == "cluster")
}

/// A synchronous connection to the store a builder points at, for assertions on raw keys
/// (commands are routed by key on a cluster).
pub fn raw_conn(builder: &WeirBuilder) -> Box<dyn redis::ConnectionLike> {
    match builder.env.get("WEIR_REDIS_CLUSTER") {
        Some(seeds) => Box::new(
            redis::cluster::ClusterClient::new(seeds.split(',').collect::<Vec<_>>())
                .and_then(|c| c.get_connection())
                .expect("cluster connection"),
        ),
        None => Box::new(
            redis::Client::open(builder.env["WEIR_REDIS_URL"].as_str())
                .and_then(|c| c.get_connection())
                .expect("redis connection"),
        ),
    }
}

/// Every key matching `pattern` in the store a builder points at (`KEYS` on each master of
/// a cluster): tests may look at the whole key space, Weir never does.
pub fn raw_keys(builder: &WeirBuilder, pattern: &str) -> Vec<String> {
    let urls: Vec<&str> = match builder.env.get("WEIR_REDIS_CLUSTER") {
        Some(seeds) => seeds.split(',').collect(),
        None => vec![builder.env["WEIR_REDIS_URL"].as_str()],
    };
    let mut keys = Vec::new();
    for url in urls {
        let mut conn = redis::Client::open(url).and_then(|c| c.get_connection()).expect("redis connection");
        let role: Vec<redis::Value> = redis::cmd("ROLE").query(&mut conn).expect("ROLE");
        if redis::from_redis_value::<String>(role[0].clone()).is_ok_and(|r| r == "master") {
            keys.extend(redis::cmd("KEYS").arg(pattern).query::<Vec<String>>(&mut conn).expect("KEYS"));
        }
    }
    keys
}

/// Weir running in this process.
pub struct Weir {
    pub addr: SocketAddr,
    pub base: String,
    pub store: Store,
    pub builder: WeirBuilder,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Weir {
    pub async fn start_default() -> Weir {
        WeirBuilder::shared().start().await
    }

    pub fn http(&self) -> Http {
        Http::new(&self.base)
    }

    /// Stops it the way SIGTERM would, and waits until it has finished.
    pub async fn stop(mut self) {
        self.shutdown().await;
    }

    async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(30), task).await;
        }
    }

    /// A new organisation with an admin client and a publisher client, both with tokens.
    pub async fn tenant(&self, plan: Plan) -> Tenant {
        let org = self.store.orgs().create_org(&unique("org"), plan).await.expect("org");
        let admin = self.client(&org.id, true, false).await;
        let publisher = self.client(&org.id, false, true).await;
        Tenant { org_id: org.id, admin, publisher }
    }

    /// A client of `org_id` with a token.
    pub async fn client(&self, org_id: &str, admin: bool, publisher: bool) -> Api {
        let creds = self.credentials(org_id, admin, publisher).await;
        let token = self.token(&creds).await;
        Api { http: self.http(), token, creds }
    }

    /// A client of `org_id`, without a token yet.
    pub async fn credentials(&self, org_id: &str, admin: bool, publisher: bool) -> Credentials {
        let secret = weir::auth::secrets::generate(weir::auth::CLIENT_SECRET_PREFIX);
        let hash = weir::auth::secrets::hash(&secret);
        let client =
            self.store.clients().create_client(org_id, "test client", admin, publisher, &hash).await.expect("client");
        Credentials { client_id: client.client_id, client_secret: secret }
    }

    pub async fn token(&self, creds: &Credentials) -> String {
        let resp = self
            .http()
            .post("/oauth/token")
            .form(&[
                ("grant_type", "client_credentials"),
                ("client_id", &creds.client_id),
                ("client_secret", &creds.client_secret),
            ])
            .send()
            .await
            .expect(200);
        resp.json()["access_token"].as_str().expect("access_token").to_owned()
    }
}

impl Drop for Weir {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub use super::api::{Api, Credentials, Tenant, export_event, work_order_event};

impl Tenant {
    /// The same organisation and clients, speaking to another Weir of the same data set.
    pub fn on(&self, weir: &Weir) -> Tenant {
        let to = |api: &Api| Api { http: weir.http(), ..api.clone() };
        Tenant { org_id: self.org_id.clone(), admin: to(&self.admin), publisher: to(&self.publisher) }
    }
}

pub use super::process::{WeirProcess, weir_binary, weir_command};

/// Whether a Redis answers on a Unix socket.
pub async fn socket_answers(path: &std::path::Path) -> bool {
    let Ok(client) = redis::Client::open(format!("redis+unix://{}", path.display())) else {
        return false;
    };
    matches!(tokio::time::timeout(Duration::from_secs(2), client.get_multiplexed_async_connection()).await, Ok(Ok(_)))
}

/// Weir's warnings and errors (of every in-process Weir) go to the output of the test that
/// caused them, which libtest shows only when that test fails: a failure says what Weir saw.
/// (`WEIR_TEST_LOG` sets another filter, e.g. `weir=debug`.)
fn log_to_the_test() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let filter = std::env::var("WEIR_TEST_LOG").unwrap_or_else(|_| "weir=warn".into());
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .with_ansi(false)
            .try_init();
    });
}
