//! A PostgreSQL server of the bench's own for the history scenario: Debian's package, its
//! default settings but the port, run as the `postgres` user.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::procs::free_port;

/// The key prefix (and so the schema, `weir_hist`) of the history runs.
pub const PREFIX: &str = "hist";

/// A PostgreSQL server of its own (Debian's package, default settings but the port; the
/// bench's runs keep their tables in schema `weir_hist`, dropped between runs).
pub struct PgProc {
    child: Child,
    port: u16,
    dir: PathBuf,
}

fn bin(program: &str) -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL (scripts/setup.sh --postgres installs it)")
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .collect();
    versions.sort();
    versions.pop().expect("a PostgreSQL under /usr/lib/postgresql").1.join(program)
}

/// `program` as the `postgres` user when this runs as root (`initdb` and `postgres` refuse
/// to run as root).
fn as_owner(program: &str) -> Command {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(bin(program));
        command
    } else {
        Command::new(bin(program))
    }
}

impl PgProc {
    pub fn start() -> PgProc {
        let dir = std::env::temp_dir().join(format!("weir-bench-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("pg dir");
        let _ = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status();
        let data = dir.join("data");
        let out = as_owner("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8"])
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let port = free_port();
        let child = as_owner("postgres")
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("postgres");
        let pg = PgProc { child, port, dir };
        let started = Instant::now();
        while !Command::new(bin("pg_isready"))
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-q"])
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(started.elapsed() < Duration::from_secs(30), "postgres did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        pg.psql("postgres", "CREATE ROLE weir LOGIN PASSWORD 'bench'");
        pg.psql("postgres", "CREATE DATABASE weir OWNER weir");
        pg
    }

    /// The postmaster's pid (the child is `runuser` when this runs as root).
    fn postmaster(&self) -> u32 {
        let file = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).unwrap_or_default();
        file.lines().next().and_then(|l| l.trim().parse().ok()).unwrap_or(self.child.id())
    }

    pub(crate) fn url(&self) -> String {
        format!("postgres://weir:bench@127.0.0.1:{}/weir", self.port)
    }

    pub(crate) fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(bin("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", database])
            .args(["-v", "ON_ERROR_STOP=1", "-A", "-t", "-c", sql])
            .output()
            .expect("psql");
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub(crate) fn number(&self, sql: &str) -> u64 {
        self.psql("weir", sql).parse().unwrap_or(0)
    }

    /// The server's CPU time, its backends' included (those that ended are counted in the
    /// postmaster's children's time), in seconds.
    pub(crate) fn cpu_seconds(&self) -> f64 {
        let postmaster = self.postmaster();
        let ticks = 100.0;
        let mut total = 0.0;
        let Ok(entries) = std::fs::read_dir("/proc") else { return 0.0 };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else { continue };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
            let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
            // After the name: state (0), ppid (1), …, utime (11), stime (12), cutime (13), cstime (14).
            let ppid = fields.get(1).and_then(|f| f.parse::<u32>().ok()).unwrap_or(0);
            if pid == postmaster {
                total += field(11) + field(12) + field(13) + field(14);
            } else if ppid == postmaster {
                total += field(11) + field(12);
            }
        }
        total / ticks
    }

    /// Rows of the runs' deliveries and events in history.
    pub(crate) fn moved(&self) -> (u64, u64) {
        let count = |table: &str| {
            let exists = self.number(&format!(
                "SELECT count(*) FROM pg_tables WHERE schemaname = 'weir_{PREFIX}' AND tablename = 'migrations'"
            ));
            if exists == 0 { 0 } else { self.number(&format!("SELECT count(*) FROM weir_{PREFIX}.{table}")) }
        };
        (count("deliveries"), count("events"))
    }

    /// Bytes on disk of the deliveries' partitions with the day indexes' runs, and of the
    /// events' partitions with the records' snapshot pointers (tables, their indexes, TOAST).
    pub(crate) fn bytes(&self) -> (u64, u64) {
        let size = |table: &str| {
            self.number(&format!(
                "SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0)::bigint FROM pg_inherits i
                   JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace
                  WHERE n.nspname = 'weir_{PREFIX}' AND p.relname = '{table}'"
            ))
        };
        self.psql("weir", "CHECKPOINT");
        (size("deliveries") + size("indexes"), size("events") + size("snapshots"))
    }

    pub(crate) fn reset(&self) {
        self.psql("weir", &format!("DROP SCHEMA IF EXISTS weir_{PREFIX} CASCADE"));
    }
}

impl Drop for PgProc {
    fn drop(&mut self) {
        // `runuser` waits for the server without passing signals on: the postmaster itself
        // is told to stop (SIGINT: fast shutdown).
        let _ = Command::new("kill").arg("-INT").arg(self.postmaster().to_string()).status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
