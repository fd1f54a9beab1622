#!/usr/bin/env bash
# Builds the example plugins (plugins/) and the test plugins (tests/plugins/) as
# WebAssembly components for wasm32-wasip2, into target/wasm32-wasip2/release/*.wasm.
# (plugins/.cargo/config.toml sets the target and the shared target directory.)
#
# A plugin crate an author adds under plugins/ is a workspace member by itself; the first
# build records it (and only what it adds) in plugins/Cargo.lock, then builds stay --locked.
set -euo pipefail
cd "$(dirname "$0")/../plugins"
if ! cargo metadata --locked --format-version 1 >/dev/null 2>&1; then
  echo "build-plugins: recording new plugin crates in plugins/Cargo.lock" >&2
  cargo update --workspace --quiet
fi
cargo build --locked --release --quiet
