//! Test support: real Redis, real Weir, real HTTP.

#![allow(dead_code)]

pub mod api;
pub mod browser;
pub mod cluster;
pub mod docker;
pub mod http;
pub mod moto;
pub mod mtls;
pub mod nats;
pub mod otlp;
pub mod plugins;
pub mod ports;
pub mod postgres;
pub mod process;
pub mod providers;
pub mod proxy;
pub mod python;
pub mod rabbitmq;
pub mod receiver;
pub mod redis;
pub mod tansu;
pub mod tls;
pub mod weir;

pub use ports::free_port;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A unique name for this test process and call.
pub fn unique(tag: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{tag}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A fresh, empty temporary directory (short path, so Unix sockets fit).
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(&format!("weir-{tag}")));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// `program` as a newcomer's terminal runs it: without the variables `cargo test` sets for
/// the test (`CARGO`, `CARGO_PKG_NAME`, `CARGO_MANIFEST_DIR`, `OUT_DIR`…). Build scripts such
/// as ring's watch some of them: with them, a script's own `cargo build` would compile again.
/// Cargo's own settings stay (`CARGO_HOME`, `CARGO_TARGET_DIR`, `CARGO_INCREMENTAL`…): CI
/// sets `CARGO_INCREMENTAL=0`, and a build without it is another profile, compiled again.
pub fn terminal_command(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    const SET_BY_CARGO_TEST: [&str; 6] =
        ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_CRATE_", "CARGO_BIN_", "CARGO_TARGET_TMPDIR", "CARGO_RUSTC_"];
    let mut command = std::process::Command::new(program);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_by_cargo_test = SET_BY_CARGO_TEST.iter().any(|prefix| name.starts_with(prefix))
            || ["CARGO", "CARGO_PRIMARY_PACKAGE", "OUT_DIR"].contains(&name.as_ref());
        if set_by_cargo_test {
            command.env_remove(name.as_ref());
        }
    }
    command
}

/// Polls `check` until it returns `Some`, or panics after `timeout` with `what`.
pub async fn eventually<T>(what: &str, timeout: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        if Instant::now() > deadline {
            panic!("timed out after {timeout:?} waiting for: {what}");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
