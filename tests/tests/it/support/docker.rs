//! Docker for the image tests: Debian's engine (`/usr/bin/docker`, `docker-compose`), its
//! daemon started here when none answers — and then stopped, by its PID, when the test ends.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Debian client (another `docker` on the PATH may lack what the tests use).
pub const DOCKER: &str = "/usr/bin/docker";

/// The repository's root (where `scripts/image.sh` and `compose.yaml` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the repository").to_path_buf()
}

/// Runs a command to its end: its standard output, or a panic with what it said.
pub async fn run(program: &str, args: &[&str], envs: &[(&str, &str)]) -> String {
    let out = tokio::process::Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap_or_else(|e| panic!("{program} cannot start: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{program} {args:?} failed ({}):\n{stderr}", out.status);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `docker …`, to its end.
pub async fn docker(args: &[&str]) -> String {
    run(DOCKER, args, &[]).await
}

/// The Docker daemon the test uses: one that answered already, or one started here.
#[derive(Debug)]
pub struct Dockerd {
    started: Option<Child>,
}

fn answers() -> bool {
    Command::new(DOCKER).arg("info").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

impl Dockerd {
    /// The running daemon, else `dockerd` started (its log in the test's directory).
    pub fn ensure() -> Dockerd {
        if answers() {
            return Dockerd { started: None };
        }
        let log = std::fs::File::create(super::temp_dir("dockerd").join("dockerd.log")).expect("dockerd's log");
        let child = Command::new("/usr/sbin/dockerd")
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("dockerd starts (the setup installs docker.io)");
        let deadline = Instant::now() + Duration::from_secs(60);
        while !answers() {
            assert!(Instant::now() < deadline, "dockerd did not answer within 60 s");
            std::thread::sleep(Duration::from_millis(250));
        }
        Dockerd { started: Some(child) }
    }
}

impl Drop for Dockerd {
    fn drop(&mut self) {
        if let Some(child) = &mut self.started {
            // SIGTERM: it stops its containers and removes its socket.
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline && child.try_wait().ok().flatten().is_none() {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits until a container's health check says `healthy` (panics on `unhealthy`, or after
/// `within`).
pub async fn wait_healthy(container: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let status = docker(&["inspect", "-f", "{{.State.Health.Status}}", container]).await;
        match status.as_str() {
            "healthy" => return,
            "unhealthy" => {
                let logs = run(DOCKER, &["logs", "--tail", "30", container], &[]).await;
                panic!("{container} is unhealthy:\n{logs}");
            }
            _ => {}
        }
        assert!(Instant::now() < deadline, "{container} was not healthy within {within:?} (it is {status:?})");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
