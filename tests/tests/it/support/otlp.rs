//! A real OTLP/HTTP trace receiver (`tests/python/otlp_receiver.py`, the official protobuf
//! definitions) that the tests point Weir at, and a collector that takes connections and
//! never answers.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::eventually;
use super::python::{script, tool};

/// The receiver, running; what it decoded, one JSON object per span.
pub struct Collector {
    child: Child,
    port: u16,
    spans: Arc<Mutex<Vec<Value>>>,
}

impl Collector {
    pub fn start() -> Collector {
        Collector::start_with(&[])
    }

    /// A receiver started with `args` (`--status 429 --retry-after 5`, `--delay 3`: a
    /// collector in trouble).
    pub fn start_with(args: &[&str]) -> Collector {
        let mut child = Command::new(tool("python"))
            .arg(script("otlp_receiver.py"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the OTLP receiver starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let port = lines.next().expect("the receiver's port").expect("read").trim().parse().expect("a port");
        let spans = Arc::new(Mutex::new(Vec::new()));
        let kept = spans.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Ok(span) = serde_json::from_str::<Value>(&line) {
                    kept.lock().unwrap().push(span);
                }
            }
        });
        Collector { child, port, spans }
    }

    /// `OTEL_EXPORTER_OTLP_ENDPOINT` for it.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans received so far.
    pub fn spans(&self) -> Vec<Value> {
        self.spans.lock().unwrap().iter().filter(|r| r.get("span_id").is_some()).cloned().collect()
    }

    /// How many exports it answered with its trouble's status.
    pub fn refused(&self) -> usize {
        self.spans.lock().unwrap().iter().filter(|r| r.get("answered").is_some()).count()
    }

    /// The metrics received so far (one record per metric per export).
    pub fn metrics(&self) -> Vec<Value> {
        self.spans.lock().unwrap().iter().filter(|r| r.get("metric").is_some()).cloned().collect()
    }

    /// Waits for a span `matches` accepts.
    pub async fn span(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        eventually(what, Duration::from_secs(20), async || self.spans().into_iter().find(|s| matches(s))).await
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A collector that takes connections and reads what is sent, but never answers.
pub struct Hanging {
    pub port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Hanging {
    pub async fn start() -> Hanging {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
            }
        });
        Hanging { port, task }
    }
}

impl Drop for Hanging {
    fn drop(&mut self) {
        self.task.abort();
    }
}
