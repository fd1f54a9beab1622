#!/usr/bin/env bash
# Runs every test of Weir: unit tests, and integration tests against a real redis-server,
# real HTTP(S) over loopback and real plugins compiled from plugins/.
# Installs what is missing first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --tests
./scripts/build-plugins.sh
cargo build --locked --workspace --bins
cargo test --locked --workspace -- --test-threads "${WEIR_TEST_THREADS:-6}"
