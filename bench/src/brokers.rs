//! Broker destinations: the "1 webhook" load (work order events from 32 publishers, shipped
//! defaults) to a NATS JetStream subject on a local `nats-server -js`, to a durable queue on a
//! private RabbitMQ node and to a Kinesis stream on the moto emulator, against the same load to
//! the bench's HTTP receiver, interleaved over rounds: deliveries/s and CPU per delivery of
//! Weir, Redis and the destination's process. A delivery to a broker is counted when the
//! broker holds it (its acknowledgement is what ends the attempt; for Kinesis, Weir's count of
//! acknowledged attempts: moto counts no records).
//! `WEIR_BENCH_ONLY=brokers` (`WEIR_BENCH_EVENTS` scales the load, `WEIR_BENCH_ROUNDS` the rounds).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::load::{Http, Kind, Publisher};
use crate::procs::{RedisProc, WeirProc, cpu_seconds, free_port};
use crate::scenario::{Scenario, connections, run};

struct NatsProc {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl NatsProc {
    fn start() -> NatsProc {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("weir-bench-nats-{}", std::process::id()));
        let binary = if std::path::Path::new("/usr/sbin/nats-server").exists() {
            "/usr/sbin/nats-server"
        } else {
            "nats-server"
        };
        let child = Command::new(binary)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server (apt-get install nats-server)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "nats-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        NatsProc { child, port, dir }
    }
}

impl Drop for NatsProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A private RabbitMQ node (own epmd, loopback, a temp dir), stopped with its process groups.
struct RabbitProc {
    epmd: Child,
    node: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl RabbitProc {
    fn start() -> RabbitProc {
        use std::os::unix::process::CommandExt as _;
        let (port, epmd_port, dist_port) = (free_port(), free_port(), free_port());
        let dir = std::env::temp_dir().join(format!("weir-bench-rabbitmq-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("rabbitmq.conf"), format!("listeners.tcp.1 = 127.0.0.1:{port}\n")).expect("config");
        std::fs::write(dir.join("enabled_plugins"), "[].\n").expect("plugins");
        let erts = std::fs::read_dir("/usr/lib/erlang")
            .expect("Erlang (apt-get install rabbitmq-server)")
            .filter_map(Result::ok)
            .find(|e| e.file_name().to_string_lossy().starts_with("erts-"))
            .expect("an erts directory");
        let epmd = Command::new(erts.path().join("bin/epmd"))
            .args(["-port", &epmd_port.to_string(), "-address", "127.0.0.1"])
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("epmd");
        let node = Command::new("/usr/lib/rabbitmq/bin/rabbitmq-server")
            .env("HOME", &dir)
            .env("ERL_EPMD_PORT", epmd_port.to_string())
            .env("ERL_EPMD_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODENAME", format!("bench{port}@localhost"))
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", port.to_string())
            .env("RABBITMQ_DIST_PORT", dist_port.to_string())
            .env("RABBITMQ_CONFIG_FILE", dir.join("rabbitmq.conf"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", dir.join("enabled_plugins"))
            .env("RABBITMQ_MNESIA_BASE", dir.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", dir.join("log"))
            .env("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}")
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rabbitmq-server (apt-get install rabbitmq-server)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "rabbitmq-server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        RabbitProc { epmd, node, port, dir }
    }

    /// The node's CPU seconds (beam runs in the node's process group, under the script).
    fn cpu(&self) -> f64 {
        let group = self.node.id();
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace().collect();
                fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(group)
            })
            .map(cpu_seconds)
            .sum()
    }
}

impl Drop for RabbitProc {
    fn drop(&mut self) {
        for group in [self.node.id(), self.epmd.id()] {
            let _ = Command::new("kill").args(["-s", "KILL", "--"]).arg(format!("-{group}")).status();
        }
        let _ = self.node.wait();
        let _ = self.epmd.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The moto emulator's server (Kinesis), on loopback (the tests' Python environment).
struct MotoProc {
    child: Child,
    endpoint: String,
}

impl MotoProc {
    fn start() -> MotoProc {
        let port = free_port();
        let child = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/pyenv/bin/moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server (scripts/setup.sh --tests)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "moto_server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        MotoProc { child, endpoint: format!("http://127.0.0.1:{port}") }
    }
}

impl Drop for MotoProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Creates a webhook delivering to `destination`.
async fn webhook_to(weir: &WeirProc, token: &str, destination: serde_json::Value) {
    let body = serde_json::json!({"subscribed_actions": ["work_order_created"], "destination": destination});
    let (status, text) = Http::connect(&weir.base)
        .await
        .send("POST", "/api/v2/webhooks", token, "application/json", serde_json::to_vec(&body).expect("json"))
        .await;
    assert_eq!(status, 201, "create webhook: {text}");
}

/// One round of the load to `destination` (a fresh `weir serve` on `prefix`): deliveries/s and
/// CPU per delivery (µs) of Weir, Redis and the broker (`broker_cpu`), counting a delivery
/// when the broker holds it (`held`).
async fn measured(
    redis: &RedisProc,
    (prefix, destination): (&str, serde_json::Value),
    events: usize,
    broker_cpu: impl Fn() -> f64,
    mut held: impl AsyncFnMut(&str) -> usize,
) -> (f64, f64, f64, f64) {
    let weir = WeirProc::start(redis, prefix, &[]);
    let tenant = weir.tenant().await;
    webhook_to(&weir, &tenant.admin_token, destination).await;
    let publisher = Publisher::new(&weir.base, &tenant.publisher_token);
    let (weir_before, redis_before, broker_before) =
        (cpu_seconds(weir.pid()), redis.cpu_by_node().await.iter().sum::<f64>(), broker_cpu());
    let started = Instant::now();
    publisher.run(events, connections(), Kind::WorkOrder).await;
    let deadline = Instant::now() + Duration::from_secs(600);
    while held(&weir.base).await < events {
        assert!(Instant::now() < deadline, "not every delivery reached the broker");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let per = |before: f64, after: f64| (after - before) * 1e6 / events as f64;
    let row = (
        events as f64 / elapsed,
        per(weir_before, cpu_seconds(weir.pid())),
        per(redis_before, redis.cpu_by_node().await.iter().sum::<f64>()),
        per(broker_before, broker_cpu()),
    );
    weir.stop();
    row
}

/// One round to RabbitMQ: a durable queue on the default exchange.
async fn to_rabbitmq(redis: &RedisProc, rabbit: &RabbitProc, round: usize, events: usize) -> (f64, f64, f64, f64) {
    use lapin::options::QueueDeclareOptions;
    let uri = format!("amqp://guest:guest@127.0.0.1:{}", rabbit.port);
    let connection = lapin::Connection::connect(&uri, lapin::ConnectionProperties::default()).await.expect("connect");
    let channel = connection.create_channel().await.expect("a channel");
    let queue = format!("bench{round}");
    let durable = QueueDeclareOptions { durable: true, ..Default::default() };
    channel.queue_declare(queue.as_str().into(), durable, lapin::types::FieldTable::default()).await.expect("declare");
    let destination = serde_json::json!({"type": "amqp", "url": uri, "exchange": "", "routing_key": queue});
    let passive = QueueDeclareOptions { passive: true, durable: true, ..Default::default() };
    let held = async |_: &str| {
        let declared = channel
            .queue_declare(queue.as_str().into(), passive, lapin::types::FieldTable::default())
            .await
            .expect("the queue");
        declared.message_count() as usize
    };
    measured(redis, (&format!("amqp{round}"), destination), events, || rabbit.cpu(), held).await
}

/// One round to NATS: a file-backed stream.
async fn to_nats(redis: &RedisProc, nats: &NatsProc, round: usize, events: usize) -> (f64, f64, f64, f64) {
    let client = async_nats::connect(format!("127.0.0.1:{}", nats.port)).await.expect("connect to nats-server");
    let js = async_nats::jetstream::new(client);
    let name = format!("BENCH{round}");
    let config = async_nats::jetstream::stream::Config {
        name: name.clone(),
        subjects: vec![format!("bench{round}.>")],
        ..Default::default()
    };
    js.create_stream(config).await.expect("a stream");
    let destination = serde_json::json!({"type": "nats", "url": format!("nats://127.0.0.1:{}", nats.port),
        "subject": format!("bench{round}.orders")});
    let held = async |_: &str| {
        let mut stream = js.get_stream(&name).await.expect("the stream");
        stream.info().await.map(|i| i.state.messages as usize).unwrap_or(0)
    };
    measured(redis, (&format!("nats{round}"), destination), events, || cpu_seconds(nats.child.id()), held).await
}

/// One round to Kinesis (moto): a stream of two shards, the events keyed by subject.
async fn to_kinesis(redis: &RedisProc, moto: &MotoProc, round: usize, events: usize) -> (f64, f64, f64, f64) {
    let stream = format!("bench{round}");
    let made = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/pyenv/bin/python"))
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/python/aws.py"))
        .args([moto.endpoint.as_str(), "create-stream", &stream, "2"])
        .stdout(Stdio::null())
        .status()
        .expect("python runs");
    assert!(made.success(), "a Kinesis stream on moto");
    let destination = serde_json::json!({"type": "kinesis", "stream_name": stream, "region": "us-east-1",
        "access_key_id": "AKIDBENCH", "secret_access_key": "bench", "endpoint_url": moto.endpoint});
    let series = "weir_attempts_total{result=\"success\",class=\"ack\",destination=\"kinesis\"}";
    let held = async |base: &str| crate::history::metric(base, series).await.unwrap_or(0.0) as usize;
    measured(redis, (&format!("kinesis{round}"), destination), events, || cpu_seconds(moto.child.id()), held).await
}

pub async fn print() {
    let events = std::env::var("WEIR_BENCH_EVENTS").ok().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let rounds = std::env::var("WEIR_BENCH_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let redis = RedisProc::start();
    let nats = NatsProc::start();
    let rabbit = RabbitProc::start();
    let moto = MotoProc::start();
    let mut lines = Vec::new();
    for round in 0..rounds {
        let weir = WeirProc::start(&redis, &format!("http{round}"), &[]);
        let row = run(&weir, &redis, Scenario::new("1 webhook", 1, events, Kind::WorkOrder)).await;
        weir.stop();
        lines.push(format!(
            "| HTTP (bench receiver), round {} | {:.0} | {:.0} µs | {:.0} µs | {:.0} µs (receiver and load generator) |",
            round + 1,
            row.delivery_rate,
            row.cpu_us_per_delivery,
            row.redis_cpu_us_per_delivery,
            row.bench_cpu_us_per_delivery
        ));
        let (rate, weir_us, redis_us, nats_us) = to_nats(&redis, &nats, round, events).await;
        lines.push(format!(
            "| NATS JetStream (nats-server 2.9, one file-backed stream), round {} | {rate:.0} | {weir_us:.0} µs | {redis_us:.0} µs | {nats_us:.0} µs (nats-server) |",
            round + 1
        ));
        let (rate, weir_us, redis_us, node_us) = to_rabbitmq(&redis, &rabbit, round, events).await;
        lines.push(format!(
            "| RabbitMQ (3.10, a durable queue, persistent messages, publisher confirms), round {} | {rate:.0} | {weir_us:.0} µs | {redis_us:.0} µs | {node_us:.0} µs (the node) |",
            round + 1
        ));
        let (rate, weir_us, redis_us, moto_us) = to_kinesis(&redis, &moto, round, events).await;
        lines.push(format!(
            "| Kinesis (the moto 5.2 emulator, two shards, keyed by subject), round {} | {rate:.0} | {weir_us:.0} µs | {redis_us:.0} µs | {moto_us:.0} µs (moto) |",
            round + 1
        ));
    }
    println!();
    println!("\"1 webhook\", {events} work order events, {} publishers, shipped defaults:", connections());
    println!();
    println!("| destination | deliveries/s | Weir CPU per delivery | Redis | the destination's process |");
    println!("|---|---|---|---|---|");
    for line in lines {
        println!("{line}");
    }
}
