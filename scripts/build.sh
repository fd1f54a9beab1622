#!/usr/bin/env bash
# The one build both `./scripts/demo.sh` and `./scripts/test.sh` use: the plugins
# (wasm32-wasip2, release) and Weir's binaries (dev profile, the same features), so that after
# either command the other starts without compiling anything again.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-plugins.sh "$@"
cargo build --locked -p weir -p weir-receiver --bins
