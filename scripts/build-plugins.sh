#!/usr/bin/env bash
# Builds the example plugins (plugins/) and the test plugins (tests/plugins/) as
# WebAssembly components for wasm32-wasip2, into target/wasm32-wasip2/release/*.wasm.
# (plugins/.cargo/config.toml sets the target and the shared target directory.)
set -euo pipefail
cd "$(dirname "$0")/../plugins"
cargo build --locked --release --quiet
