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

use super::{free_port, temp_dir};

/// A running `redis-server` on a loopback port.
pub struct RedisServer {
    pub port: u16,
    pub dir: PathBuf,
    wrapper: Option<(Child, ChildStdin)>,
    aof: bool,
    /// Arguments every start of this server gets.
    extra: String,
}

/// Who answered on a server's port once it started.
enum Ready {
    Ours,
    Another,
}

/// A free port whose cluster bus port (+10000) is free too.
fn cluster_port() -> u16 {
    loop {
        let port = free_port();
        if port < 55000 && std::net::TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
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
        let mut server =
            RedisServer { port: free_port(), dir: temp_dir("redis"), wrapper: None, aof, extra: String::new() };
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
        let mut server = RedisServer { port, dir: temp_dir("rnode"), wrapper: None, aof: true, extra };
        server.spawn_fresh(cluster_port);
        server
    }

    /// Starts a new server on its port; when another server took that port between
    /// `free_port` and the start (another test starting one at the same moment — ours then
    /// cannot bind, and the other one answers), starts again on a port from `port`.
    fn spawn_fresh(&mut self, port: fn() -> u16) {
        for _ in 0..5 {
            self.spawn_with("");
            match self.wait_ready() {
                Ready::Ours => return,
                Ready::Another => {
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
            "another server answers on port {}, which this one had",
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

    /// Waits until a server answers on the port: this one (its `dir` is ours), or another.
    fn wait_ready(&self) -> Ready {
        let ours = self.dir.canonicalize().unwrap_or_else(|_| self.dir.clone());
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(mut conn) = redis::Client::open(self.url()).and_then(|c| c.get_connection())
                && redis::cmd("PING").query::<String>(&mut conn).is_ok()
            {
                let dir: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("dir").query(&mut conn).unwrap_or_default();
                return match dir.get(1) {
                    Some(dir) if std::path::Path::new(dir) == ours => Ready::Ours,
                    _ => Ready::Another,
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // What it said, for the next reader of a failed run.
        let log = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(25).collect::<Vec<_>>().into_iter().rev().collect();
        panic!("redis-server on port {} did not start within 60 s; its log ends:\n{}", self.port, tail.join("\n"));
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
