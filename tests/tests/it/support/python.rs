//! The tests' Python tools: a virtual environment made by `scripts/setup.sh --tests` from
//! `tests/python/requirements.txt` (PyPI), and the scripts in `tests/python/`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A program of the tests' virtual environment (`python`, `schemathesis`, …).
pub fn tool(name: &str) -> PathBuf {
    let venv = std::env::var_os("WEIR_TEST_PYENV").map_or_else(|| repo().join("target/pyenv"), PathBuf::from);
    let path = venv.join("bin").join(name);
    assert!(path.exists(), "{} is missing: run ./scripts/setup.sh --tests", path.display());
    path
}

/// A script of `tests/python/`.
pub fn script(name: &str) -> PathBuf {
    repo().join("tests/python").join(name)
}

/// Runs a Python script of `tests/python/` with `args` and `stdin`; its standard output.
/// Panics (showing its standard error) if it fails.
pub fn run(name: &str, args: &[&str], stdin: &[u8]) -> String {
    let mut child = Command::new(tool("python"))
        .arg(script(name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python starts");
    child.stdin.take().expect("stdin").write_all(stdin).expect("write stdin");
    let out = child.wait_with_output().expect("python runs");
    assert!(out.status.success(), "{name} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}
