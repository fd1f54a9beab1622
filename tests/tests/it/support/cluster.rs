//! A real local Redis Cluster for tests: `redis-server --cluster-enabled yes` nodes on
//! loopback joined by `redis-cli --cluster create`, three masters with one replica each.

use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::redis::RedisServer;

/// A running cluster. Dropping it stops every node.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
    /// Its nodes' `cluster-node-timeout` (a node added later gets the same).
    node_timeout_ms: u32,
}

/// How long a master may not answer before its replica takes over, in a cluster a test
/// fails over on purpose: a failover then takes a few seconds.
const QUICK_FAILOVER_MS: u32 = 2_000;
/// The same in every other cluster: long enough that a node stalled by a loaded machine (a
/// slow `fsync` beside a dozen other servers) is never failed over behind a test's back —
/// which would lose slot states a test set by hand (`MIGRATING` is kept by a master only).
const STEADY_MS: u32 = 15_000;

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    pub id: String,
    pub port: u16,
    pub master: bool,
    pub failed: bool,
    pub slots: usize,
    /// The slot ranges it serves (first and last, inclusive).
    pub ranges: Vec<(u16, u16)>,
}

impl NodeInfo {
    pub fn serves(&self, slot: u16) -> bool {
        self.ranges.iter().any(|(first, last)| (*first..=*last).contains(&slot))
    }
}

impl RedisCluster {
    /// Three masters, each with one replica, none failed over unless a test stops it.
    pub fn start() -> RedisCluster {
        RedisCluster::start_with(STEADY_MS)
    }

    /// [`RedisCluster::start`] for a test that stops a master: its replica takes over
    /// within a few seconds.
    pub fn start_quick_failover() -> RedisCluster {
        RedisCluster::start_with(QUICK_FAILOVER_MS)
    }

    fn start_with(node_timeout_ms: u32) -> RedisCluster {
        // One cluster made at a time in this process: nodes of two clusters started at once
        // can be handed the same free port, and the clusters then meet (seen once when two
        // failover tests started together).
        static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = MAKING.lock().unwrap_or_else(|e| e.into_inner());
        let nodes: Vec<RedisServer> = (0..6).map(|_| RedisServer::start_cluster_node(node_timeout_ms)).collect();
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for node in &nodes {
            create.arg(format!("127.0.0.1:{}", node.port));
        }
        let out = create
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .output()
            .expect("redis-cli must be installed (the test command installs it)");
        assert!(out.status.success(), "redis-cli --cluster create: {}", String::from_utf8_lossy(&out.stdout));
        let cluster = RedisCluster { nodes, node_timeout_ms };
        cluster.wait_healthy(3);
        cluster.wait_replicas_online();
        cluster.wait_views_agree(3);
        cluster
    }

    /// Waits until every running node sees the same `masters` masters. Each node learns
    /// that another turned replica from that node itself, so for a moment after `create`
    /// a node can still list a replica as a master: a test that picks "the master holding
    /// a slot's keys" from such a view gets a replica (which holds them too), and Redis
    /// refuses `CLUSTER SETSLOT` naming it (seen on a loaded CI machine).
    pub fn wait_views_agree(&self, masters: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let masters_seen_from = |port: u16| {
            self.view_of(port).map(|view| {
                let mut ports: Vec<u16> = view.iter().filter(|n| n.master && !n.failed).map(|n| n.port).collect();
                ports.sort_unstable();
                ports
            })
        };
        loop {
            let views: Vec<Option<Vec<u16>>> =
                self.nodes.iter().filter(|n| n.is_running()).map(|n| masters_seen_from(n.port)).collect();
            let agreed = views.first().cloned().flatten();
            if agreed.as_ref().is_some_and(|first| first.len() == masters) && views.iter().all(|v| *v == agreed) {
                return;
            }
            assert!(Instant::now() < deadline, "the nodes never agreed on {masters} masters: {views:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Seeds for `WEIR_REDIS_CLUSTER`: every node that is still running.
    pub fn seeds(&self) -> String {
        self.nodes.iter().filter(|n| n.is_running()).map(|n| n.url()).collect::<Vec<_>>().join(",")
    }

    /// The cluster as one node (the first one running) sees it.
    pub fn topology(&self) -> Vec<NodeInfo> {
        for node in self.nodes.iter().filter(|n| n.is_running()) {
            if let Some(view) = self.view_of(node.port) {
                return view;
            }
        }
        panic!("no cluster node answers");
    }

    /// The cluster as the node on `port` sees it (`None` if it does not answer).
    pub fn view_of(&self, port: u16) -> Option<Vec<NodeInfo>> {
        let mut conn = redis::Client::open(self.node(port).url()).and_then(|c| c.get_connection()).ok()?;
        let text = redis::cmd("CLUSTER").arg("NODES").query::<String>(&mut conn).ok()?;
        Some(text.lines().filter_map(parse_node).collect())
    }

    /// The node serving as a master on each port, with its slot count.
    pub fn masters(&self) -> Vec<NodeInfo> {
        self.topology().into_iter().filter(|n| n.master && !n.failed).collect()
    }

    /// Waits until every running node reports the cluster healthy with `masters` masters
    /// serving all 16384 slots.
    pub fn wait_healthy(&self, masters: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let healthy = self.nodes.iter().filter(|n| n.is_running()).all(|node| {
                let Ok(mut conn) = redis::Client::open(node.url()).and_then(|c| c.get_connection()) else {
                    return false;
                };
                let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut conn).unwrap_or_default();
                info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:16384")
            });
            if healthy && self.masters().iter().filter(|m| m.slots > 0).count() == masters {
                return;
            }
            assert!(Instant::now() < deadline, "cluster not healthy with {masters} masters: {:?}", self.topology());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until every master with slots has a replica in sync (so `WAIT 1` is answered).
    pub fn wait_replicas_online(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let online = self.masters().iter().filter(|m| m.slots > 0).all(|m| {
                let info: String =
                    redis::cmd("INFO").arg("replication").query(&mut self.node(m.port).conn()).unwrap_or_default();
                info.contains("role:master")
                    && info.lines().any(|l| l.starts_with("slave") && l.contains("state=online"))
            });
            if online {
                return;
            }
            assert!(Instant::now() < deadline, "replicas never came online: {:?}", self.topology());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn node(&self, port: u16) -> &RedisServer {
        self.nodes.iter().find(|n| n.port == port).expect("a node on that port")
    }

    pub fn node_mut(&mut self, port: u16) -> &mut RedisServer {
        self.nodes.iter_mut().find(|n| n.port == port).expect("a node on that port")
    }

    /// Starts a new empty node and adds it to the cluster as a master without slots.
    pub fn add_master(&mut self) -> u16 {
        let node = RedisServer::start_cluster_node(self.node_timeout_ms);
        let port = node.port;
        let seed = format!("127.0.0.1:{}", self.masters()[0].port);
        let out = Command::new("redis-cli")
            .args(["--cluster", "add-node", &format!("127.0.0.1:{port}"), &seed])
            .output()
            .expect("redis-cli");
        assert!(out.status.success(), "add-node: {}", String::from_utf8_lossy(&out.stdout));
        self.nodes.push(node);
        // Every running node must know it (gossip spreads it one node at a time): a slot
        // handed to it by a node that has not heard of it yet is refused (`Unknown node`).
        let deadline = Instant::now() + Duration::from_secs(30);
        let knows_it = |view: Option<Vec<NodeInfo>>| view.is_some_and(|v| v.iter().any(|n| n.port == port && n.master));
        while !self.nodes.iter().filter(|n| n.is_running()).all(|n| knows_it(self.view_of(n.port))) {
            assert!(Instant::now() < deadline, "new node never joined");
            std::thread::sleep(Duration::from_millis(100));
        }
        port
    }
}

/// Moves `slots` slots from every other master to the master on `target`
/// (`redis-cli --cluster reshard`, through the node on `seed`), while clients keep running.
pub fn reshard(seed: u16, target: u16, slots: usize) {
    let mut conn =
        redis::Client::open(format!("redis://127.0.0.1:{seed}")).and_then(|c| c.get_connection()).expect("seed");
    let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(&mut conn).expect("CLUSTER NODES");
    let target_id = nodes.lines().filter_map(parse_node).find(|n| n.port == target).expect("target node").id;
    let out = Command::new("redis-cli")
        .args(["--cluster", "reshard", &format!("127.0.0.1:{seed}"), "--cluster-from", "all"])
        .args(["--cluster-to", &target_id, "--cluster-slots", &slots.to_string(), "--cluster-yes"])
        .args(["--cluster-pipeline", "100"])
        .output()
        .expect("redis-cli");
    assert!(out.status.success(), "reshard: {}", String::from_utf8_lossy(&out.stdout));
}

fn parse_node(line: &str) -> Option<NodeInfo> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.len() < 8 {
        return None;
    }
    let port = fields[1].split(['@', ':']).nth(1)?.parse().ok()?;
    let flags = fields[2];
    // Slots being moved are listed in brackets (`[slot->-node]`): not served yet, or still.
    let ranges: Vec<(u16, u16)> = fields[8..]
        .iter()
        .filter(|s| !s.starts_with('['))
        .filter_map(|s| match s.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => s.parse().ok().map(|one| (one, one)),
        })
        .collect();
    Some(NodeInfo {
        id: fields[0].to_owned(),
        port,
        master: flags.contains("master"),
        failed: flags.contains("fail"),
        slots: ranges.iter().map(|(first, last)| usize::from(last - first) + 1).sum(),
        ranges,
    })
}

/// The cluster shared by the tests that do not kill or reshard it.
pub fn shared() -> &'static RedisCluster {
    static SHARED: OnceLock<RedisCluster> = OnceLock::new();
    SHARED.get_or_init(RedisCluster::start)
}
