//! An AWS emulator for the destination tests: `moto_server` (PyPI `moto[server]`, in the tests'
//! Python environment) on a free loopback port — SQS, SNS and EventBridge on one port — and
//! `tests/python/aws.py` to read it as a consumer would (boto3).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::free_port;
use super::python::{run, tool};

pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    pub fn start() -> Moto {
        let port = free_port();
        let child = Command::new(tool("moto_server"))
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto_server (scripts/setup.sh --tests installs it into target/pyenv)");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "moto_server did not start on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Moto { child, endpoint: format!("http://127.0.0.1:{port}") }
    }

    /// Runs `tests/python/aws.py` against this emulator; its output, trimmed.
    pub fn aws(&self, args: &[&str]) -> String {
        let mut all = vec![self.endpoint.as_str()];
        all.extend_from_slice(args);
        run("aws.py", &all, b"").trim().to_owned()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
