//! Real `redis-server` processes for tests.
//!
//! A server runs under a small shell wrapper that holds a pipe from the test process: when
//! the test binary exits (even by panic or signal) the pipe closes and the wrapper stops
//! the server, so no test leaves a `redis-server` behind.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::ports::{cluster_port, free_port};
use super::temp_dir;

/// A running `redis-server` on a loopback port.
pub struct RedisServer {
    pub port: u16,
    pub dir: PathBuf,
    wrapper: Option<(Child, ChildStdin)>,
    aof: bool,
    /// Arguments every start of this server gets.
    extra: String,
    /// How long the log was when this server last started (a restart appends to it).
    log_start: usize,
}

/// What became of a server's start.
enum Ready {
    /// It answers on its port.
    Ours,
    /// Its port was taken: another server answers there, or it could not bind.
    PortTaken,
}

impl RedisServer {
    /// A fresh server without persistence.
    pub fn start() -> RedisServer {
        RedisServer::start_with(false)
    }

    /// A fresh server with AOF persistence (data survives a restart of the server).
    pub fn start_persistent() -> RedisServer {
        RedisServer::start_with(true)
    }

    fn start_with(aof: bool) -> RedisServer {
        RedisServer::start_on(free_port(), aof)
    }

    /// A fresh server that tries `port` first.
    fn start_on(port: u16, aof: bool) -> RedisServer {
        let mut server =
            RedisServer { port, dir: temp_dir("redis"), wrapper: None, aof, extra: String::new(), log_start: 0 };
        server.spawn_fresh(free_port);
        server
    }

    /// A node for a Redis Cluster (AOF on; `node_timeout_ms`: how long a node may not answer
    /// before the others fail it over), on a port whose cluster bus port (+10000) is free too.
    pub fn start_cluster_node(node_timeout_ms: u32) -> RedisServer {
        let port = cluster_port();
        let extra = format!(
            "--cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout {node_timeout_ms} \
             --hash-max-listpack-value 512 --appendfsync everysec"
        );
        let mut server = RedisServer { port, dir: temp_dir("rnode"), wrapper: None, aof: true, extra, log_start: 0 };
        server.spawn_fresh(cluster_port);
        server
    }

    /// Starts a new server on its port; when something took that port (or a cluster node's
    /// bus port) between `free_port` and the start, starts again on a port from `port`.
    fn spawn_fresh(&mut self, port: fn() -> u16) {
        for _ in 0..5 {
            self.spawn_with("");
            match self.wait_ready() {
                Ready::Ours => return,
                Ready::PortTaken => {
                    self.stop();
                    self.port = port();
                }
            }
        }
        panic!("no free port for redis-server after 5 tries");
    }

    fn spawn(&mut self) {
        self.spawn_with("");
        assert!(
            matches!(self.wait_ready(), Ready::Ours),
            "port {}, which this server had, is taken by something else",
            self.port
        );
    }

    /// The process id of the running `redis-server` (from its pid file).
    pub fn pid(&self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(pid) =
                std::fs::read_to_string(self.dir.join("redis.pid")).ok().and_then(|p| p.trim().parse().ok())
            {
                return pid;
            }
            assert!(Instant::now() < deadline, "redis-server on port {} wrote no pid file", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts the server with extra arguments, without waiting for it to answer.
    fn spawn_with(&mut self, extra: &str) {
        self.log_start = self.log().len();
        let aof = if self.aof { "--appendonly yes --appendfsync always" } else { "--appendonly no" };
        let script = format!(
            "redis-server --port {port} --bind 127.0.0.1 --dir '{dir}' --save '' {aof} {own} {extra} \
             --logfile '{dir}/redis.log' --pidfile '{dir}/redis.pid' & pid=$!; read _; kill $pid 2>/dev/null; wait $pid",
            port = self.port,
            dir = self.dir.display(),
            own = self.extra,
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("redis-server must be installed (the test command installs it)");
        let stdin = child.stdin.take().expect("piped stdin");
        self.wrapper = Some((child, stdin));
    }

    /// Restarts the server so that loading its data set takes a while (each key loads
    /// `delay_us` late): until it is done, it answers every command with `LOADING`.
    /// Returns once it accepts connections.
    pub fn restart_loading_slowly(&mut self, delay_us: u32) {
        self.stop();
        self.spawn_with(&format!("--key-load-delay {delay_us} --loading-process-events-interval-bytes 1024"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server on port {} did not start", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until a server answers on the port: this one (its `dir` is ours), or another;
    /// or until this one says it could not bind (something that is not a Redis server, such
    /// as a client's connection, holds the port).
    fn wait_ready(&self) -> Ready {
        let ours = self.dir.canonicalize().unwrap_or_else(|_| self.dir.clone());
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.log_since_start().contains("Address already in use") {
                return Ready::PortTaken;
            }
            // Bounded: what holds the port may accept a connection and never answer.
            let wait = Duration::from_secs(2);
            if let Ok(mut conn) = redis::Client::open(self.url()).and_then(|c| c.get_connection_with_timeout(wait))
                && conn.set_read_timeout(Some(wait)).is_ok()
                && redis::cmd("PING").query::<String>(&mut conn).is_ok()
            {
                let dir: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("dir").query(&mut conn).unwrap_or_default();
                return match dir.get(1) {
                    Some(dir) if std::path::Path::new(dir) == ours => Ready::Ours,
                    _ => Ready::PortTaken,
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // What it said, for the next reader of a failed run.
        let log = self.log();
        let tail: Vec<&str> = log.lines().rev().take(25).collect::<Vec<_>>().into_iter().rev().collect();
        panic!("redis-server on port {} did not start within 60 s; its log ends:\n{}", self.port, tail.join("\n"));
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }

    /// What this server logged since it last started.
    fn log_since_start(&self) -> String {
        self.log().get(self.log_start..).unwrap_or_default().to_owned()
    }

    /// Whether this server was started and not stopped since.
    pub fn is_running(&self) -> bool {
        self.wrapper.is_some()
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Stops the server (as a crash would: no clean shutdown is asked for).
    pub fn stop(&mut self) {
        if let Some((mut child, mut stdin)) = self.wrapper.take() {
            let _ = stdin.write_all(b"\n");
            drop(stdin);
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// A synchronous connection for assertions on raw keys.
    pub fn conn(&self) -> redis::Connection {
        redis::Client::open(self.url()).and_then(|c| c.get_connection()).expect("redis connection")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server shared by every test that does not restart Redis. Tests stay apart through
/// a distinct key prefix each.
pub fn shared() -> &'static RedisServer {
    static SHARED: OnceLock<RedisServer> = OnceLock::new();
    SHARED.get_or_init(RedisServer::start)
}

#[test]
fn a_server_whose_port_a_client_holds_starts_on_another() {
    // What an outgoing connection holding the port looks like to redis-server: something
    // that is not a Redis server has it bound.
    let holder = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let held = holder.local_addr().expect("address").port();
    let server = RedisServer::start_on(held, false);
    assert_ne!(server.port, held);
    let pong: String = redis::cmd("PING").query(&mut server.conn()).expect("PING");
    assert_eq!(pong, "PONG");
}
