//! A real HTTP proxy for the egress tests: Debian's `tinyproxy`, run in the foreground
//! with a config of its own on a free loopback port, its log read back (each tunnel is a
//! `CONNECT` line).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, temp_dir};

pub struct TinyProxy {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    log: PathBuf,
}

impl TinyProxy {
    /// Starts on a free port; with `credentials`, it requires them (`BasicAuth`).
    pub fn start(credentials: Option<(&str, &str)>) -> TinyProxy {
        TinyProxy::start_on(free_port(), credentials)
    }

    pub fn start_on(port: u16, credentials: Option<(&str, &str)>) -> TinyProxy {
        let dir = temp_dir("tinyproxy");
        let log = dir.join("tinyproxy.log");
        let mut config = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Connect\nMaxClients 200\nAllow 127.0.0.1\nDisableViaHeader Yes\n",
            log.display()
        );
        if let Some((user, password)) = credentials {
            config.push_str(&format!("BasicAuth {user} {password}\n"));
        }
        let file = dir.join("tinyproxy.conf");
        std::fs::write(&file, config).expect("tinyproxy config");
        // tinyproxy writes its log as the user it runs as: let anyone write the directory.
        let _ = Command::new("chmod").args(["0777", &dir.display().to_string()]).status();
        let child = Command::new("tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy (the test setup installs it: scripts/setup.sh --tests)");
        let proxy = TinyProxy { child: Some(child), port, dir, log };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "tinyproxy did not start on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        proxy
    }

    /// `http://[user:password@]127.0.0.1:port`.
    pub fn url(&self, credentials: Option<(&str, &str)>) -> String {
        match credentials {
            Some((user, password)) => format!("http://{user}:{password}@127.0.0.1:{}", self.port),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// The targets of the tunnels it opened, in order (`127.0.0.1:PORT`).
    pub fn connects(&self) -> Vec<String> {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        log.lines()
            .filter_map(|line| line.split("): CONNECT ").nth(1))
            .map(|rest| rest.split_whitespace().next().unwrap_or_default().to_owned())
            .collect()
    }

    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for TinyProxy {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
