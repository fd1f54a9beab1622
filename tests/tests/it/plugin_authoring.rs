//! What a plugin author does: add a crate under `plugins/` and run
//! `scripts/build-plugins.sh` (no `--locked` failure), and publish the SDK (`cargo package`).

use std::path::Path;
use std::process::Command;

use weir::store::tenants::orgs::Plan;

use crate::support::python::repo;
use crate::support::weir::Weir;
use crate::support::{temp_dir, terminal_command};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if meta.is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs a command (made by [`terminal_command`]); panics with its output if it fails.
fn run(command: &mut Command) -> String {
    let out = command.output().expect("runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{command:?} failed:\n{text}");
    text
}

#[tokio::test]
async fn a_new_plugin_crate_builds_with_the_script_and_uploads() {
    // A checkout's plugins/, wit/ and scripts/, with the SDK and one new plugin only (the
    // example plugins' outputs, which other tests read, are left alone).
    let root = temp_dir("author");
    for dir in ["wit", "scripts"] {
        copy_dir(&repo().join(dir), &root.join(dir));
    }
    copy_dir(&repo().join("plugins"), &root.join("plugins"));
    for example in ["redact", "report-export-filter", "slack-message"] {
        std::fs::remove_dir_all(root.join("plugins").join(example)).unwrap();
    }
    // (Nor the test plugins: they are not part of an author's copy.)
    let workspace = root.join("plugins/Cargo.toml");
    let text = std::fs::read_to_string(&workspace).unwrap().replace(r#", "../tests/plugins/*""#, "");
    std::fs::write(&workspace, text).unwrap();
    copy_dir(&repo().join("plugins/redact"), &root.join("plugins/my-filter"));
    let manifest = root.join("plugins/my-filter/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap().replace("name = \"redact\"", "name = \"my-filter\"");
    std::fs::write(&manifest, text).unwrap();

    let target = repo().join("target");
    let out = run(terminal_command(root.join("scripts/build-plugins.sh"))
        .arg("--rust-only")
        .env("CARGO_TARGET_DIR", &target));
    assert!(out.contains("recording new plugin crates"), "{out}");
    let lock = std::fs::read_to_string(root.join("plugins/Cargo.lock")).unwrap();
    assert!(lock.contains("name = \"my-filter\""), "{lock}");
    // Built again, it stays --locked and quiet.
    let again = run(terminal_command(root.join("scripts/build-plugins.sh"))
        .arg("--rust-only")
        .env("CARGO_TARGET_DIR", &target));
    assert!(!again.contains("recording"), "{again}");

    let wasm = std::fs::read(target.join("wasm32-wasip2/release/my_filter.wasm")).expect("built");
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let plugin = t.admin.upload_plugin("my-filter", wasm).await;
    assert_eq!(plugin["version"], 1);
}

#[test]
fn the_sdk_crate_packages_with_its_wit() {
    let out = run(terminal_command("cargo").current_dir(repo().join("plugins")).args([
        "package",
        "--locked",
        "--allow-dirty",
        "-p",
        "weir-plugin-sdk",
    ]));
    assert!(!out.contains("error"), "{out}");
    let listing = run(terminal_command("cargo").current_dir(repo().join("plugins")).args([
        "package",
        "--locked",
        "--allow-dirty",
        "--list",
        "-p",
        "weir-plugin-sdk",
    ]));
    for file in ["wit/plugin.wit", "src/lib.rs", "README.md"] {
        assert!(listing.lines().any(|l| l == file), "{file} is packaged: {listing}");
    }
}
