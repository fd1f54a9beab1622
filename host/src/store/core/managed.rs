//! The managed Redis: when no `WEIR_REDIS_URL` is set, Weir runs its own `redis-server`
//! with AOF persistence in `<data_dir>/redis`, reachable only through a Unix socket there.
//!
//! One process at a time owns it, decided by an exclusive lock on `<dir>/owner.lock`; the
//! server writes its pid to `<dir>/redis.pid`. The rule that keeps its AOF safe: **a
//! `redis-server` whose process is alive is never replaced.** A server that is slow to
//! answer (busy, paused, loading a large AOF) is waited for; only one whose process has
//! exited is started again. An owner that finds a live server left by a process that died
//! adopts it, and shuts it down on exit as if it had started it.
//!
//! `weir serve` supervises it ([`Supervisor`]); `weir admin` uses the running one, or runs
//! one just for its command when no `weir serve` does ([`ForCommand`]).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};
use tokio::sync::watch;

/// Why the managed Redis could not be provided.
#[derive(Debug, thiserror::Error)]
pub enum ManagedError {
    #[error(
        "`redis-server` was not found on PATH. Install it (Debian/Ubuntu: `sudo apt-get install redis-server`) \
         or point Weir at a running Redis with WEIR_REDIS_URL=redis://host:port"
    )]
    NotInstalled,
    #[error("cannot use data directory {dir}: {source}")]
    DataDir { dir: PathBuf, source: std::io::Error },
    #[error("the Unix socket path {0} is too long (at most 100 bytes); use a shorter WEIR_DATA_DIR")]
    SocketPathTooLong(PathBuf),
    #[error("redis-server exited while starting; see {log}")]
    Exited { log: PathBuf },
    #[error("the managed redis-server did not answer within {secs}s; see {log}")]
    StartTimeout { secs: u64, log: PathBuf },
    #[error("cannot start redis-server: {0}")]
    Spawn(std::io::Error),
}

/// Paths of the managed Redis under a data directory.
#[derive(Debug, Clone)]
pub struct Layout {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub lock: PathBuf,
    pub log: PathBuf,
    pub pidfile: PathBuf,
}

impl Layout {
    pub fn new(redis_dir: &Path) -> Result<Layout, ManagedError> {
        std::fs::create_dir_all(redis_dir)
            .map_err(|source| ManagedError::DataDir { dir: redis_dir.to_owned(), source })?;
        let dir =
            redis_dir.canonicalize().map_err(|source| ManagedError::DataDir { dir: redis_dir.to_owned(), source })?;
        let socket = dir.join("redis.sock");
        if socket.as_os_str().len() > 100 {
            return Err(ManagedError::SocketPathTooLong(socket));
        }
        Ok(Layout {
            lock: dir.join("owner.lock"),
            log: dir.join("redis.log"),
            pidfile: dir.join("redis.pid"),
            socket,
            dir,
        })
    }

    /// The URL clients use to reach it.
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket.display())
    }

    /// The `redis-server` process serving this directory, if one is alive (by its pid file).
    fn live_server(&self) -> Option<u32> {
        let pid: u32 = std::fs::read_to_string(&self.pidfile).ok()?.trim().parse().ok()?;
        is_redis_alive(pid).then_some(pid)
    }
}

/// Whether the process `pid` is a `redis-server` that has not exited (Linux `/proc`).
fn is_redis_alive(pid: u32) -> bool {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let Ok(stat) = std::fs::read_to_string(proc_dir.join("stat")) else { return false };
    // The state follows the command name in parentheses; `Z` is a zombie, `X` dead.
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
    if matches!(state, Some('Z' | 'X') | None) {
        return false;
    }
    std::fs::read(proc_dir.join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains("redis-server"))
}

/// Whether a Redis answers PING on the socket (a server still loading its AOF does not).
pub async fn answers(layout: &Layout) -> bool {
    let Ok(client) = redis::Client::open(layout.url()) else {
        return false;
    };
    let attempt = async {
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING").query_async::<String>(&mut conn).await.ok()
    };
    matches!(tokio::time::timeout(Duration::from_secs(2), attempt).await, Ok(Some(_)))
}

/// The pid of a server answering on the socket (one started without a pid file, by an
/// older Weir). `INFO` is answered even while the server loads its data.
async fn pid_through_socket(layout: &Layout) -> Option<u32> {
    let client = redis::Client::open(layout.url()).ok()?;
    let info = async {
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("INFO").arg("server").query_async::<String>(&mut conn).await.ok()
    };
    let info = tokio::time::timeout(Duration::from_secs(2), info).await.ok()??;
    let pid = info.lines().find_map(|l| l.strip_prefix("process_id:"))?.trim().parse().ok()?;
    is_redis_alive(pid).then_some(pid)
}

fn check_installed() -> Result<(), ManagedError> {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join("redis-server").is_file()))
        .unwrap_or(false);
    if found { Ok(()) } else { Err(ManagedError::NotInstalled) }
}

/// The server an owner answers for: one it started, or a live one it adopted.
#[derive(Debug)]
enum Server {
    Child(Child),
    Adopted(u32),
}

impl Server {
    fn alive(&mut self) -> bool {
        match self {
            Server::Child(child) => matches!(child.try_wait(), Ok(None)),
            Server::Adopted(pid) => is_redis_alive(*pid),
        }
    }

    fn pid(&self) -> Option<u32> {
        match self {
            Server::Child(child) => child.id(),
            Server::Adopted(pid) => Some(*pid),
        }
    }
}

/// Starts `redis-server` on the layout. Call only while holding the lock, with no live
/// server in the directory.
fn spawn(layout: &Layout) -> Result<Child, ManagedError> {
    check_installed()?;
    let _ = std::fs::remove_file(&layout.socket);
    Command::new("redis-server")
        .arg("--port")
        .arg("0")
        .arg("--unixsocket")
        .arg(&layout.socket)
        .arg("--unixsocketperm")
        .arg("700")
        .arg("--dir")
        .arg(&layout.dir)
        .arg("--pidfile")
        .arg(&layout.pidfile)
        .args(["--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no"])
        // A finished delivery's row holds its signature and attempts: values past the
        // default 64 bytes would turn its compact listpack into a hash table (2.4× the memory).
        .args(["--hash-max-listpack-value", crate::store::core::base::LISTPACK_VALUE])
        .arg("--logfile")
        .arg(&layout.log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: a Ctrl-C in the terminal reaches Weir, which then stops
        // Redis after its own work is done, instead of both at once.
        .process_group(0)
        .spawn()
        .map_err(ManagedError::Spawn)
}

/// Waits until `server` answers, however long it takes while its process lives (a large
/// AOF can take minutes to load), up to `limit` if one is given.
async fn wait_answering(layout: &Layout, server: &mut Server, limit: Option<Duration>) -> Result<(), ManagedError> {
    let started = Instant::now();
    let mut told = Instant::now();
    loop {
        if answers(layout).await {
            return Ok(());
        }
        if !server.alive() {
            return Err(ManagedError::Exited { log: layout.log.clone() });
        }
        if limit.is_some_and(|l| started.elapsed() > l) {
            return Err(ManagedError::StartTimeout { secs: started.elapsed().as_secs(), log: layout.log.clone() });
        }
        if told.elapsed() > Duration::from_secs(5) {
            tracing::info!(pid = server.pid(), "waiting for the managed redis-server to answer (loading its data?)");
            told = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Asks the server to shut down (it flushes the AOF first) and waits for its process.
async fn stop_server(layout: &Layout, mut server: Server) {
    if let Ok(client) = redis::Client::open(layout.url())
        && let Ok(Ok(mut conn)) =
            tokio::time::timeout(Duration::from_secs(2), client.get_multiplexed_async_connection()).await
    {
        let _ = tokio::time::timeout(Duration::from_secs(5), redis::cmd("SHUTDOWN").query_async::<()>(&mut conn)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.alive() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if server.alive() {
        // It did not take the command (hung?): SIGTERM also makes Redis flush and exit.
        tracing::warn!(pid = server.pid(), "managed redis-server did not shut down; sending SIGTERM");
        match &mut server {
            Server::Child(child) => {
                if let Some(pid) = child.id() {
                    terminate(pid);
                }
                let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
            }
            Server::Adopted(pid) => terminate(*pid),
        }
    }
}

fn terminate(pid: u32) {
    let _ = std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
}

/// The process that owns the managed Redis (or waits to).
#[derive(Debug)]
struct Owner {
    layout: Layout,
    lock: Option<File>,
    server: Option<Server>,
}

impl Owner {
    fn new(layout: Layout) -> Owner {
        Owner { layout, lock: None, server: None }
    }

    /// Makes sure a server runs, starting one only if none is alive. With `wait`, returns
    /// once it answers; otherwise (the supervisor's tick) does not wait for a slow one.
    async fn ensure(&mut self, wait: bool) -> Result<(), ManagedError> {
        if let Some(server) = &mut self.server {
            if server.alive() {
                return if wait { wait_answering(&self.layout, server, None).await } else { Ok(()) };
            }
            tracing::warn!(pid = server.pid(), "managed redis-server exited; starting it again");
            self.server = None;
        }
        if self.lock.is_none() {
            self.lock = try_lock(&self.layout)?;
        }
        if self.lock.is_none() {
            // Another process owns the server; it starts it again if it dies.
            return if wait { self.wait_for_other_owner().await } else { Ok(()) };
        }
        let live = match self.layout.live_server() {
            Some(pid) => Some(pid),
            None => pid_through_socket(&self.layout).await,
        };
        let mut server = match live {
            Some(pid) => {
                tracing::info!(pid, dir = %self.layout.dir.display(), "adopting a running managed redis-server");
                Server::Adopted(pid)
            }
            None => {
                tracing::info!(dir = %self.layout.dir.display(), "starting managed redis-server");
                Server::Child(spawn(&self.layout)?)
            }
        };
        let waited = if wait { wait_answering(&self.layout, &mut server, None).await } else { Ok(()) };
        self.server = Some(server);
        waited
    }

    /// Waits for the owning process's server to answer, or for its lock to come free.
    async fn wait_for_other_owner(&mut self) -> Result<(), ManagedError> {
        for _ in 0..300 {
            if answers(&self.layout).await {
                return Ok(());
            }
            if let Some(lock) = try_lock(&self.layout)? {
                self.lock = Some(lock);
                return Box::pin(self.ensure(true)).await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(ManagedError::StartTimeout { secs: 30, log: self.layout.log.clone() })
    }

    /// Shuts down the server this owner answers for, and releases the lock.
    async fn release(&mut self) {
        if self.lock.is_some()
            && let Some(server) = self.server.take()
        {
            stop_server(&self.layout, server).await;
        }
        self.lock = None;
    }
}

fn try_lock(layout: &Layout) -> Result<Option<File>, ManagedError> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&layout.lock)
        .map_err(|source| ManagedError::DataDir { dir: layout.dir.clone(), source })?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(source)) => Err(ManagedError::DataDir { dir: layout.dir.clone(), source }),
    }
}

/// A managed Redis that `weir serve` keeps running until [`Supervisor::shutdown`].
#[derive(Debug)]
pub struct Supervisor {
    layout: Layout,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Supervisor {
    /// Makes sure the managed Redis runs and answers, and keeps it running.
    pub async fn start(redis_dir: &Path) -> Result<Supervisor, ManagedError> {
        let layout = Layout::new(redis_dir)?;
        let mut owner = Owner::new(layout.clone());
        owner.ensure(true).await?;
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tokio::select! {
                    _ = tick.tick() => {
                        if let Err(e) = owner.ensure(false).await {
                            tracing::error!(error = %e, "managed redis-server is down and could not be restarted");
                        }
                    }
                    _ = stopped.changed() => break,
                }
            }
            owner.release().await;
        });
        Ok(Supervisor { layout, stop, task })
    }

    pub fn url(&self) -> String {
        self.layout.url()
    }

    /// Stops supervising and, if this process owns the server, shuts it down cleanly.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// The managed Redis for one `weir admin` command: the running one, or one run just for
/// the command (started, or adopted from a process that died) and shut down after it.
#[derive(Debug)]
pub struct ForCommand {
    layout: Layout,
    owner: Option<Owner>,
}

impl ForCommand {
    pub async fn open(redis_dir: &Path) -> Result<ForCommand, ManagedError> {
        let layout = Layout::new(redis_dir)?;
        if answers(&layout).await {
            return Ok(ForCommand { layout, owner: None });
        }
        let mut owner = Owner::new(layout.clone());
        owner.ensure(true).await?;
        // Another process owned and served it: nothing of ours to shut down after.
        let owner = owner.lock.is_some().then_some(owner);
        Ok(ForCommand { layout, owner })
    }

    pub fn url(&self) -> String {
        self.layout.url()
    }

    /// Shuts down a server run for this command (after flushing its AOF).
    pub async fn close(self) {
        if let Some(mut owner) = self.owner {
            owner.release().await;
        }
    }
}
