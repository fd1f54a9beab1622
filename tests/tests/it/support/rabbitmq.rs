//! A real RabbitMQ for the destination tests: Debian's `rabbitmq-server` as a private node —
//! its own `epmd`, ports, config, data and logs in a temp directory, everything on loopback —
//! started by the test (a few seconds) and stopped with its process group (`epmd` included).

use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::mtls::MutualTls;
use super::{free_port, temp_dir};

pub struct RabbitMq {
    epmd: Option<Child>,
    node: Option<Child>,
    pub port: u16,
    ports: (u16, u16),
    dir: PathBuf,
}

fn epmd_binary() -> PathBuf {
    let erts = std::fs::read_dir("/usr/lib/erlang")
        .expect("Erlang (scripts/setup.sh --tests installs rabbitmq-server)")
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("erts-"))
        .expect("an erts directory");
    erts.path().join("bin/epmd")
}

fn kill_group(child: &mut Option<Child>) {
    if let Some(mut child) = child.take() {
        // The node's script starts beam in its process group: stop them all.
        let _ = Command::new("kill").args(["-s", "KILL", "--"]).arg(format!("-{}", child.id())).status();
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl RabbitMq {
    /// Starts a node with the `guest` user (allowed from loopback only, which is all there is).
    pub fn start() -> RabbitMq {
        RabbitMq::start_with(String::new())
    }

    /// A node that also listens for AMQP over TLS (`amqps`) on the returned port, with the
    /// `openssl`-made server certificate of `certs` (for `localhost` and 127.0.0.1).
    pub fn start_tls(certs: &MutualTls) -> (RabbitMq, u16) {
        let tls_port = free_port();
        let dir = certs.dir.display().to_string();
        let broker = RabbitMq::start_with(format!(
            "listeners.ssl.1 = 127.0.0.1:{tls_port}\n\
                 ssl_options.cacertfile = {dir}/ca.pem\n\
                 ssl_options.certfile = {dir}/server.pem\n\
                 ssl_options.keyfile = {dir}/server.key\n\
                 ssl_options.verify = verify_none\n"
        ));
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", tls_port)).is_err() {
            assert!(Instant::now() < deadline, "rabbitmq-server did not listen for TLS on port {tls_port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        (broker, tls_port)
    }

    /// A node with `more` added to its configuration.
    fn start_with(more: String) -> RabbitMq {
        let dir = temp_dir("rabbitmq");
        let (port, epmd_port, dist_port) = (free_port(), free_port(), free_port());
        let config = format!("listeners.tcp.1 = 127.0.0.1:{port}\n{more}");
        std::fs::write(dir.join("rabbitmq.conf"), config).unwrap();
        std::fs::write(dir.join("enabled_plugins"), "[].\n").unwrap();
        let mut broker = RabbitMq { epmd: None, node: None, port, ports: (epmd_port, dist_port), dir };
        broker.run();
        broker
    }

    fn run(&mut self) {
        let (port, (epmd_port, dist_port), dir) = (self.port, self.ports, self.dir.clone());
        let epmd = Command::new(epmd_binary())
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
            .env("RABBITMQ_NODENAME", format!("weir{port}@localhost"))
            .env("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1")
            .env("RABBITMQ_NODE_PORT", port.to_string())
            .env("RABBITMQ_DIST_PORT", dist_port.to_string())
            .env("RABBITMQ_CONFIG_FILE", dir.join("rabbitmq.conf"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", dir.join("enabled_plugins"))
            .env("RABBITMQ_MNESIA_BASE", dir.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", dir.join("log"))
            .env("RABBITMQ_PID_FILE", dir.join("pid"))
            .env("RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-kernel inet_dist_use_interface {127,0,0,1}")
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("rabbitmq-server (scripts/setup.sh --tests installs it)");
        self.epmd = Some(epmd);
        self.node = Some(node);
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "rabbitmq-server did not start on port {port} within 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the node (its durable queues and persistent messages stay for [`RabbitMq::restart`]).
    pub fn stop(&mut self) {
        kill_group(&mut self.node);
        kill_group(&mut self.epmd);
    }

    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// `amqp://guest:guest@127.0.0.1:port` (or with `password` for guest).
    pub fn url(&self, password: &str) -> String {
        format!("amqp://guest:{password}@127.0.0.1:{}", self.port)
    }

    /// A consumer's connection and channel, with `queue` declared (durable).
    pub async fn channel(&self, queue: &str) -> (lapin::Connection, lapin::Channel) {
        let connection = lapin::Connection::connect(&self.url("guest"), lapin::ConnectionProperties::default())
            .await
            .expect("connect to rabbitmq");
        let channel = connection.create_channel().await.expect("a channel");
        let options = lapin::options::QueueDeclareOptions { durable: true, ..Default::default() };
        channel.queue_declare(queue.into(), options, lapin::types::FieldTable::default()).await.expect("declare");
        (connection, channel)
    }
}

impl Drop for RabbitMq {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
