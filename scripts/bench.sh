#!/usr/bin/env bash
# Benchmarks Weir on loopback: Redis with AOF, the release build of weir, a fast receiver.
# Prints a table (see bench/src/main.rs for the scenarios). WEIR_BENCH_SCALE=0.1 runs a
# tenth of the load for a quick look.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --postgres
./scripts/build-plugins.sh
cargo build --locked --release -p weir -p weir-bench --bins
exec target/release/weir-bench "$@"
