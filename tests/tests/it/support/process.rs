//! The real `weir` binary: where it is, a command that runs it without the harness's own
//! variables, and `weir serve` as a child process (for signals, crashes and restarts).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::eventually;
use super::http::Http;

/// The `weir` binary, built next to this test binary (`target/<profile>/weir`).
pub fn weir_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|deps| deps.parent()).expect("target dir");
    let bin = dir.join("weir");
    assert!(bin.exists(), "{} is missing: build it first (`cargo build -p weir`; the test script does)", bin.display());
    bin
}

/// A command running the `weir` binary with none of the harness's own `WEIR_*` variables
/// (`WEIR_TEST_REDIS`…): `weir` refuses a `WEIR_` variable that is no setting of its own.
pub fn weir_command() -> Command {
    let mut command = Command::new(weir_binary());
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(|n| n.starts_with("WEIR_")) {
            command.env_remove(&name);
        }
    }
    command
}

/// `weir serve` as a child process.
pub struct WeirProcess {
    child: Option<Child>,
    pub base: String,
    pub port: u16,
}

impl WeirProcess {
    /// The process `child`, listening on `port` of loopback.
    pub fn of(child: Child, port: u16) -> WeirProcess {
        WeirProcess { child: Some(child), base: format!("http://127.0.0.1:{port}"), port }
    }

    pub fn http(&self) -> Http {
        Http::new(&self.base)
    }

    pub async fn wait_ready(&self) {
        let http = self.http();
        eventually("weir serve ready", Duration::from_secs(30), async || {
            let ok = tokio::time::timeout(Duration::from_secs(2), async {
                let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                    .build_http::<http_body_util::Full<bytes::Bytes>>();
                let uri: hyper::Uri = format!("{}/readyz", http.base).parse().ok()?;
                client.get(uri).await.ok().map(|r| r.status().as_u16())
            })
            .await;
            matches!(ok, Ok(Some(200))).then_some(())
        })
        .await;
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// Sends `signal` (e.g. "TERM", "KILL") and waits for the process to end.
    pub fn signal(&mut self, signal: &str) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill").arg(format!("-{signal}")).arg(child.id().to_string()).status();
        child.wait().expect("wait")
    }

    /// Sends SIGTERM and waits up to `within` for the process to end: its status, or
    /// `None` if it was still running then (it is killed).
    pub fn terminate_within(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
        let deadline = std::time::Instant::now() + within;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// Sends `signal` to every process of the group this process leads (see
    /// [`WeirBuilder::spawn_as_group`]), as a terminal does on Ctrl-C, and waits for it.
    pub fn signal_group(&mut self, signal: &str) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill").arg(format!("-{signal}")).arg("--").arg(format!("-{}", child.id())).status();
        child.wait().expect("wait")
    }
}

impl Drop for WeirProcess {
    /// Stops the process as an operator would (SIGTERM, so a managed Redis is shut down
    /// too), and kills it if it has not ended within a few seconds.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
            for _ in 0..100 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

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
