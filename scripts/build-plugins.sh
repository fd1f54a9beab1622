#!/usr/bin/env bash
# Builds the example plugins (plugins/) and the test plugins (tests/plugins/) as
# WebAssembly components for wasm32-wasip2, into target/wasm32-wasip2/release/*.wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f plugins/Cargo.toml ]; then
  cargo build --locked --manifest-path plugins/Cargo.toml --release --target wasm32-wasip2 --quiet
fi
