//! Real PostgreSQL servers for the history tests (Debian's `postgresql` package, which the
//! test setup installs). `initdb` and `postgres` refuse to run as root: as root they run as
//! the `postgres` user (`runuser`), in a directory it owns. A server runs under a small
//! shell wrapper that holds a pipe from the test process, as `redis-server` does here: when
//! the test binary exits, the server stops.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{free_port, temp_dir};

/// A running PostgreSQL on a loopback port, with a `weir` login and database.
pub struct Postgres {
    pub port: u16,
    pub dir: PathBuf,
    wrapper: Option<(Child, ChildStdin)>,
}

/// The directory of the server's programs (the newest installed major version).
fn bin_dir() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL must be installed (scripts/setup.sh --tests installs it)")
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .collect();
    versions.sort();
    versions.pop().expect("a PostgreSQL version under /usr/lib/postgresql").1
}

fn is_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| {
        Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
    })
}

/// A command for one of the server's programs, run as `postgres` when the tests are root.
fn as_owner(program: &str) -> Command {
    let path = bin_dir().join(program);
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(path);
        command
    } else {
        Command::new(path)
    }
}

impl Postgres {
    /// A fresh server (`fsync` off: tests do not crash the machine).
    pub fn start() -> Postgres {
        let dir = temp_dir("pg");
        if is_root() {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status().expect("chown");
            assert!(status.success(), "chown of {}", dir.display());
        }
        let data = dir.join("data");
        let out = as_owner("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let mut server = Postgres { port: free_port(), dir, wrapper: None };
        server.spawn();
        server.psql("postgres", "CREATE ROLE weir LOGIN PASSWORD 'weir-test'");
        server.psql("postgres", "CREATE DATABASE weir OWNER weir");
        server
    }

    fn spawn(&mut self) {
        let postgres = bin_dir().join("postgres");
        let runner = if is_root() { "runuser -u postgres -- " } else { "" };
        let script = format!(
            "{runner}'{postgres}' -D '{dir}/data' -p {port} -c listen_addresses=127.0.0.1 \
             -c unix_socket_directories='{dir}' -c fsync=off -c max_connections=200 \
             >'{dir}/postgres.log' 2>&1 & read _; \
             pid=$(head -1 '{dir}/data/postmaster.pid' 2>/dev/null); [ -n \"$pid\" ] && kill -INT $pid; wait",
            postgres = postgres.display(),
            dir = self.dir.display(),
            port = self.port,
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("sh");
        let stdin = child.stdin.take().expect("piped stdin");
        self.wrapper = Some((child, stdin));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(bin_dir().join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-q"])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "postgres on port {} did not start: {}",
                self.port,
                std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The URL Weir is given (`WEIR_HISTORY_URL`).
    pub fn url(&self) -> String {
        format!("postgres://weir:weir-test@127.0.0.1:{}/weir", self.port)
    }

    /// Runs SQL as the superuser in `database`; its output (unaligned, tuples only).
    /// Blocking: only where no Weir runs in this test's runtime (use [`Postgres::query`]).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = self.psql_command(database, sql).output().expect("psql");
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Runs SQL as the superuser in the `weir` database, without blocking the runtime (a
    /// Weir in this process may hold a lock the statement waits for).
    pub async fn query(&self, sql: &str) -> String {
        let out = tokio::process::Command::from(self.psql_command("weir", sql)).output().await.expect("psql");
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn psql_command(&self, database: &str, sql: &str) -> Command {
        let mut command = Command::new(bin_dir().join("psql"));
        command.args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", database]).args([
            "-v",
            "ON_ERROR_STOP=1",
            "-A",
            "-t",
            "-c",
            sql,
        ]);
        command
    }

    /// A number `sql` selects in the `weir` database.
    pub async fn count(&self, sql: &str) -> u64 {
        self.query(sql).await.parse().unwrap_or_else(|_| panic!("{sql} is no number"))
    }

    /// Holds a `LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE` in a session of its own for
    /// `secs` seconds, or until the child is killed; returns once the lock is granted.
    pub async fn hold_lock(&self, table: &str, secs: u32) -> tokio::process::Child {
        let sql = format!("BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({secs}); COMMIT;");
        let mut command = tokio::process::Command::from(self.psql_command("weir", &sql));
        command.stdout(Stdio::null()).kill_on_drop(true);
        let child = command.spawn().expect("psql");
        let granted = format!(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'relation' AND relation = '{table}'::regclass \
             AND mode = 'AccessExclusiveLock' AND granted"
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.count(&granted).await == 0 {
            assert!(Instant::now() < deadline, "the lock on {table} is taken within 20 s");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        child
    }

    /// Stops every process of the server where it stands (`SIGSTOP`): connections stay
    /// open and nothing answers, as on a frozen machine — until the guard is dropped.
    pub fn freeze(&self) -> Frozen<'_> {
        self.signal_all("STOP");
        Frozen(self)
    }

    fn signal_all(&self, signal: &str) {
        let pid_file = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).expect("postmaster.pid");
        let pid = pid_file.lines().next().expect("a pid").trim().to_owned();
        let children = Command::new("pgrep").args(["-P", &pid]).output().expect("pgrep");
        let mut pids = vec![pid.clone()];
        pids.extend(String::from_utf8_lossy(&children.stdout).split_whitespace().map(str::to_owned));
        if signal == "CONT" {
            // `runuser` (the server's parent when the tests are root) stops itself when its
            // child stops, as `su` does for job control: it goes on too, or it never reaps
            // the server once stopped.
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let parent = stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1)).map(str::to_owned);
            pids.extend(parent);
        }
        // The postmaster must take it; a child may have ended since it was listed.
        let status = Command::new("kill").arg(format!("-{signal}")).arg(&pid).status().expect("kill");
        assert!(status.success(), "kill -{signal} {pid}");
        let _ = Command::new("kill").arg(format!("-{signal}")).args(&pids[1..]).stderr(Stdio::null()).status();
    }

    /// Stops the server (a fast shutdown: clients are disconnected at once).
    pub fn stop(&mut self) {
        if self.dir.join("data/postmaster.pid").exists() && self.wrapper.is_some() {
            // A frozen server would never take the signal to stop.
            self.signal_all("CONT");
        }
        if let Some((mut child, mut stdin)) = self.wrapper.take() {
            let _ = stdin.write_all(b"\n");
            drop(stdin);
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }
}

/// A frozen server ([`Postgres::freeze`]); dropped, it goes on.
pub struct Frozen<'a>(&'a Postgres);

impl Drop for Frozen<'_> {
    fn drop(&mut self) {
        self.0.signal_all("CONT");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server shared by the tests that do not stop it; each Weir keeps its tables in a
/// schema of its own (named after its key prefix).
pub fn shared() -> &'static Postgres {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    SHARED.get_or_init(Postgres::start)
}

/// The schema a Weir with key prefix `prefix` keeps its history in.
pub fn schema(prefix: &str) -> String {
    let cleaned: String =
        prefix.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    format!("weir_{cleaned}")
}
