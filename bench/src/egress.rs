//! Egress: the `1 webhook` load delivered directly and through a real HTTP proxy
//! (`tinyproxy`, `WEIR_EGRESS_PROXY`), in interleaved rounds (this machine's speed drifts
//! between minutes), with the proxy's own CPU and the tunnels it opened.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::procs::{RedisProc, WeirProc, cpu_seconds, free_port};
use crate::load::Kind;
use crate::scenario::{Row, Scenario, per_round, run};

/// Rounds of direct and proxied runs.
const ROUNDS: usize = 3;

struct TinyProxy {
    child: Child,
    port: u16,
    dir: std::path::PathBuf,
}

impl TinyProxy {
    fn start() -> TinyProxy {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("weir-bench-tinyproxy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tinyproxy dir");
        let _ = Command::new("chmod").args(["0777", &dir.display().to_string()]).status();
        let config = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nLogFile \"{}\"\nLogLevel Connect\nMaxClients 1000\nAllow 127.0.0.1\nDisableViaHeader Yes\n",
            dir.join("tinyproxy.log").display()
        );
        std::fs::write(dir.join("tinyproxy.conf"), config).expect("tinyproxy config");
        let child = Command::new("tinyproxy")
            .args(["-d", "-c"])
            .arg(dir.join("tinyproxy.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tinyproxy (apt-get install tinyproxy)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "tinyproxy did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        TinyProxy { child, port, dir }
    }

    fn tunnels(&self) -> usize {
        let log = std::fs::read_to_string(self.dir.join("tinyproxy.log")).unwrap_or_default();
        log.lines().filter(|l| l.contains("): CONNECT ")).count()
    }
}

impl Drop for TinyProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One proxied run's extra figures.
pub(super) struct Proxied {
    pub(super) row: Row,
    pub(super) proxy_cpu_us_per_delivery: f64,
    pub(super) tunnels: usize,
}

/// Per round: the load delivered directly, then through the proxy (the order swapped each
/// round).
pub(super) async fn figures(redis: &RedisProc, events: usize) -> Vec<(Row, Proxied)> {
    let proxy = TinyProxy::start();
    let url: &'static str = Box::leak(format!("http://127.0.0.1:{}", proxy.port).into_boxed_str());
    let through: &'static [(&'static str, &'static str)] = Box::leak(Box::new([("WEIR_EGRESS_PROXY", url)]));
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        let mut direct = None;
        let mut proxied = None;
        for proxied_first in [round % 2 == 1, round % 2 == 0] {
            if proxied_first {
                let weir = WeirProc::start(redis, "egress", through);
                let (cpu, tunnels) = (cpu_seconds(proxy.child.id()), proxy.tunnels());
                let row = run(
                    &weir,
                    redis,
                    Scenario {
                        env: through,
                        ..Scenario::new("1 webhook, through tinyproxy", 1, events, Kind::WorkOrder)
                    },
                )
                .await;
                let used = cpu_seconds(proxy.child.id()) - cpu;
                proxied = Some(Proxied {
                    proxy_cpu_us_per_delivery: used * 1e6 / row.deliveries as f64,
                    tunnels: proxy.tunnels() - tunnels,
                    row,
                });
                weir.stop();
            } else {
                let weir = WeirProc::start(redis, "egress", &[]);
                direct = Some(run(&weir, redis, Scenario::new("1 webhook, direct", 1, events, Kind::WorkOrder)).await);
                weir.stop();
            }
            redis.flush().await;
        }
        if let (Some(direct), Some(proxied)) = (direct, proxied) {
            rounds.push((direct, proxied));
        }
    }
    rounds
}

pub(super) fn print(rounds: &[(Row, Proxied)]) {
    println!();
    println!(
        "| egress (rounds interleaved) | events | deliveries/s | publish→receipt p50 | p99 | Weir CPU per delivery | proxy CPU per delivery | tunnels opened |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (direct, proxied) in rounds {
        for (row, proxy) in [(direct, None), (&proxied.row, Some(proxied))] {
            println!(
                "{} {:.0} µs | {} | {} |",
                row.lead_cells(),
                row.cpu_us_per_delivery,
                proxy.map_or("—".to_owned(), |p| format!("{:.0} µs", p.proxy_cpu_us_per_delivery)),
                proxy.map_or("—".to_owned(), |p| p.tunnels.to_string()),
            );
        }
    }
    println!();
    println!(
        "Deliveries/s through tinyproxy ÷ direct, per round: {}",
        per_round(rounds.iter().map(|(d, p)| p.row.delivery_rate / d.delivery_rate).collect())
    );
}
