//! Loopback ports for the servers tests start.
//!
//! A port found by binding port 0 comes from the kernel's ephemeral range, the range every
//! outgoing connection takes its local port from too: between the test releasing it and the
//! server binding it, one of the thousands of connections a test run makes can take it (CI
//! once saw a cluster node refused with `Address already in use`). Listeners here get ports
//! below that range instead, from one counter per test process, so no outgoing connection
//! and no other listener of this process is handed the same port. Cluster nodes also need
//! their bus port (+10000): ports are drawn from `[10000, 20000)`, so every bus port lies in
//! `[20000, 30000)`, which nothing else draws from.

use std::net::TcpListener;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

const FIRST: u32 = 10_000;
const COUNT: u32 = 10_000;
/// What a cluster node adds to its port for its bus.
pub const BUS_OFFSET: u16 = 10_000;

/// A free loopback port, outside the ephemeral range when the kernel's range allows it.
pub fn free_port() -> u16 {
    if !below_ephemeral() {
        return kernel_port();
    }
    static NEXT: OnceLock<AtomicU32> = OnceLock::new();
    // Each test process starts somewhere else in the range (two runs at once stay apart).
    let next = NEXT.get_or_init(|| AtomicU32::new(std::process::id().wrapping_mul(2_654_435_761) % COUNT));
    for _ in 0..COUNT {
        let port = (FIRST + next.fetch_add(1, Ordering::Relaxed) % COUNT) as u16;
        if is_free(port) {
            return port;
        }
    }
    panic!("no free port in {FIRST}..{}", FIRST + COUNT)
}

/// A free port whose cluster bus port is free too.
pub fn cluster_port() -> u16 {
    loop {
        let port = free_port();
        if port.checked_add(BUS_OFFSET).is_some_and(is_free) {
            return port;
        }
    }
}

fn is_free(port: u16) -> bool {
    TcpListener::bind(("127.0.0.1", port)).is_ok()
}

fn kernel_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

/// Whether the ports drawn here, and their bus ports, all lie below the ephemeral range.
fn below_ephemeral() -> bool {
    static BELOW: OnceLock<bool> = OnceLock::new();
    *BELOW.get_or_init(|| {
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default();
        let low: u32 = range.split_whitespace().next().and_then(|l| l.parse().ok()).unwrap_or(0);
        low >= FIRST + COUNT + u32::from(BUS_OFFSET)
    })
}

#[test]
fn ports_are_distinct_free_and_below_the_ephemeral_range() {
    let ports: Vec<u16> = (0..200).map(|_| free_port()).collect();
    let distinct: std::collections::HashSet<_> = ports.iter().collect();
    assert_eq!(distinct.len(), ports.len(), "{ports:?}");
    assert!(ports.iter().all(|&p| is_free(p)));
    if below_ephemeral() {
        assert!(ports.iter().all(|&p| (FIRST..FIRST + COUNT).contains(&u32::from(p))), "{ports:?}");
    }
    let port = cluster_port();
    assert!(is_free(port + BUS_OFFSET));
}
