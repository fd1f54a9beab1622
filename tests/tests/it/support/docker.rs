//! Docker for the image tests: Debian's engine (`/usr/bin/docker`, `docker-compose`), its
//! daemon started here when none answers — and then stopped, by its PID, when the test ends.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use super::process::{repo_root, run};

/// The Debian client (another `docker` on the PATH may lack what the tests use).
pub const DOCKER: &str = "/usr/bin/docker";

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
