//! The managed Redis: when no `WEIR_REDIS_URL` is set, Weir runs its own `redis-server`
//! with AOF persistence in `<data_dir>/redis`, reachable only through a Unix socket there.
//!
//! One process at a time owns it, decided by an exclusive lock on `<dir>/owner.lock`.
//! `weir serve` supervises it: every second it checks the socket answers and, if not, starts
//! `redis-server` again (adopting one left behind by a process that died). `weir admin`
//! uses the running one, or starts one just for its command when no `weir serve` runs.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

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
    #[error("redis-server did not start within {secs}s; see {log}")]
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
        Ok(Layout { lock: dir.join("owner.lock"), log: dir.join("redis.log"), socket, dir })
    }

    /// The URL clients use to reach it.
    pub fn url(&self) -> String {
        format!("redis+unix://{}", self.socket.display())
    }
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

fn check_installed() -> Result<(), ManagedError> {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|p| p.join("redis-server").is_file()))
        .unwrap_or(false);
    if found { Ok(()) } else { Err(ManagedError::NotInstalled) }
}

/// Starts `redis-server` on the layout and waits until it answers.
async fn start(layout: &Layout) -> Result<Child, ManagedError> {
    check_installed()?;
    let _ = std::fs::remove_file(&layout.socket);
    let mut child = Command::new("redis-server")
        .arg("--port")
        .arg("0")
        .arg("--unixsocket")
        .arg(&layout.socket)
        .arg("--unixsocketperm")
        .arg("700")
        .arg("--dir")
        .arg(&layout.dir)
        .args(["--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no"])
        .arg("--logfile")
        .arg(&layout.log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(ManagedError::Spawn)?;
    for _ in 0..300 {
        if answers(layout).await {
            return Ok(child);
        }
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = child.start_kill();
    Err(ManagedError::StartTimeout { secs: 30, log: layout.log.clone() })
}

/// Asks the server to shut down (it flushes the AOF first) and waits for the child.
async fn stop_server(layout: &Layout, child: Option<Child>) {
    if let Ok(client) = redis::Client::open(layout.url())
        && let Ok(mut conn) = client.get_multiplexed_async_connection().await
    {
        let _ = redis::cmd("SHUTDOWN").query_async::<()>(&mut conn).await;
    }
    if let Some(mut child) = child
        && tokio::time::timeout(Duration::from_secs(10), child.wait()).await.is_err()
    {
        let _ = child.start_kill();
        let _ = child.wait().await;
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
    /// Makes sure the managed Redis runs, and keeps it running.
    pub async fn start(redis_dir: &Path) -> Result<Supervisor, ManagedError> {
        let layout = Layout::new(redis_dir)?;
        let mut owner = Owner { layout: layout.clone(), lock: None, child: None };
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
            if owner.lock.is_some() {
                stop_server(&owner.layout, owner.child.take()).await;
            }
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

struct Owner {
    layout: Layout,
    lock: Option<File>,
    child: Option<Child>,
}

impl Owner {
    /// Starts the server if nobody serves the socket and the lock can be taken.
    async fn ensure(&mut self, first: bool) -> Result<(), ManagedError> {
        if let Some(child) = &mut self.child
            && let Ok(Some(status)) = child.try_wait()
        {
            tracing::warn!(%status, "managed redis-server exited; restarting it");
            self.child = None;
        }
        if answers(&self.layout).await {
            return Ok(());
        }
        if self.lock.is_none() {
            self.lock = try_lock(&self.layout)?;
        }
        if self.lock.is_none() {
            // Another process owns the server and is (re)starting it; wait for it.
            if first {
                for _ in 0..300 {
                    if answers(&self.layout).await {
                        return Ok(());
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if let Some(lock) = try_lock(&self.layout)? {
                        self.lock = Some(lock);
                        break;
                    }
                }
                if self.lock.is_none() {
                    return Err(ManagedError::StartTimeout { secs: 30, log: self.layout.log.clone() });
                }
            } else {
                return Ok(());
            }
        }
        if answers(&self.layout).await {
            return Ok(());
        }
        tracing::info!(dir = %self.layout.dir.display(), "starting managed redis-server");
        self.child = Some(start(&self.layout).await?);
        Ok(())
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

/// The managed Redis for one `weir admin` command: the running one, or a temporary one
/// that is shut down when the command is done.
#[derive(Debug)]
pub struct ForCommand {
    layout: Layout,
    temporary: Option<(File, Child)>,
}

impl ForCommand {
    pub async fn open(redis_dir: &Path) -> Result<ForCommand, ManagedError> {
        let layout = Layout::new(redis_dir)?;
        if answers(&layout).await {
            return Ok(ForCommand { layout, temporary: None });
        }
        for _ in 0..100 {
            if let Some(lock) = try_lock(&layout)? {
                if answers(&layout).await {
                    return Ok(ForCommand { layout, temporary: None });
                }
                let child = start(&layout).await?;
                return Ok(ForCommand { layout, temporary: Some((lock, child)) });
            }
            if answers(&layout).await {
                return Ok(ForCommand { layout, temporary: None });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(ManagedError::StartTimeout { secs: 10, log: layout.log.clone() })
    }

    pub fn url(&self) -> String {
        self.layout.url()
    }

    /// Shuts down a temporary server (after flushing its AOF).
    pub async fn close(self) {
        if let Some((lock, child)) = self.temporary {
            stop_server(&self.layout, Some(child)).await;
            drop(lock);
        }
    }
}
