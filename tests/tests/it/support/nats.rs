//! A real NATS server with JetStream for the destination tests: Debian's `nats-server -js`,
//! on a free loopback port, its store in a temp directory; stopped (and can be restarted on
//! the same port and store) by the test.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, temp_dir};

pub struct NatsServer {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
    credentials: Option<(String, String)>,
}

impl NatsServer {
    /// Starts a server; with `credentials`, clients must give them.
    pub fn start(credentials: Option<(&str, &str)>) -> NatsServer {
        let mut server = NatsServer {
            child: None,
            port: free_port(),
            dir: temp_dir("nats"),
            credentials: credentials.map(|(u, p)| (u.to_owned(), p.to_owned())),
        };
        server.run();
        server
    }

    fn run(&mut self) {
        let binary = if std::path::Path::new("/usr/sbin/nats-server").exists() {
            "/usr/sbin/nats-server"
        } else {
            "nats-server"
        };
        let mut command = Command::new(binary);
        command.args(["-js", "-a", "127.0.0.1", "-p", &self.port.to_string(), "-sd"]).arg(&self.dir);
        if let Some((user, password)) = &self.credentials {
            command.args(["--user", user, "--pass", password]);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server (the test setup installs it: scripts/setup.sh --tests)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start on port {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server (its stored streams stay for [`NatsServer::restart`]).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// `nats://[user:password@]127.0.0.1:port`.
    pub fn url(&self, credentials: Option<(&str, &str)>) -> String {
        match credentials {
            Some((user, password)) => format!("nats://{user}:{password}@127.0.0.1:{}", self.port),
            None => format!("nats://127.0.0.1:{}", self.port),
        }
    }

    /// A client of this server, as a subscriber would connect.
    pub async fn client(&self) -> async_nats::jetstream::Context {
        // A loaded machine (the whole suite at once) can take the default 5 s to answer the
        // first connection: three tries of 20 s each.
        let mut last = None;
        for _ in 0..3 {
            let mut options = async_nats::ConnectOptions::new().connection_timeout(Duration::from_secs(20));
            if let Some((user, password)) = &self.credentials {
                options = options.user_and_password(user.clone(), password.clone());
            }
            match options.connect(format!("127.0.0.1:{}", self.port)).await {
                Ok(client) => return async_nats::jetstream::new(client),
                Err(e) => last = Some(e),
            }
        }
        panic!("connect to nats-server on port {}: {last:?}", self.port)
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
