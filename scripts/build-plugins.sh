#!/usr/bin/env bash
# Builds the example plugins (plugins/) and the test plugins (tests/plugins/) as
# WebAssembly components for wasm32-wasip2, into target/wasm32-wasip2/release/*.wasm,
# and the JavaScript and Python versions of report-export-filter into plugins/dist/
# (with the toolchains scripts/setup.sh installs under target/: ComponentizeJS from npm,
# componentize-py from PyPI, both pinned). A language whose toolchain is missing is
# installed first. With --rust-only (the demo's build: it needs no other language, and no
# registry), only the Rust plugins.
# (plugins/.cargo/config.toml sets the target and the shared target directory.)
#
# A plugin crate an author adds under plugins/ is a workspace member by itself; the first
# build records it (and only what it adds) in plugins/Cargo.lock, then builds stay --locked.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/plugins"
if ! cargo metadata --locked --format-version 1 >/dev/null 2>&1; then
  echo "build-plugins: recording new plugin crates in plugins/Cargo.lock" >&2
  cargo update --workspace --quiet
fi
cargo build --locked --release --quiet
if [ "${1:-}" = "--rust-only" ]; then exit 0; fi

"$root/scripts/setup.sh" --plugin-toolchains
mkdir -p "$root/plugins/dist"
# Rebuilt only when a source changed (each build takes some seconds).
build_if_changed() { # out, sources...
  local out="$1"; shift
  if [ -f "$out" ] && [ -z "$(find "$@" -newer "$out" 2>/dev/null | head -n 1)" ]; then return; fi
  "${BUILD[@]}" || { echo "build-plugins: building $out failed" >&2; exit 1; }
}
BUILD=(node "$root/plugins/js/build.mjs" "$root/plugins/js/report-export-filter/report-export-filter.js"
  "$root/plugins/dist/report-export-filter-js.wasm")
build_if_changed "$root/plugins/dist/report-export-filter-js.wasm" "$root/plugins/js" "$root/plugins/sdk/wit"
BUILD=("$root/plugins/python/build.sh" "$root/plugins/python/report-export-filter"
  "$root/plugins/dist/report-export-filter-py.wasm")
build_if_changed "$root/plugins/dist/report-export-filter-py.wasm" "$root/plugins/python" "$root/plugins/sdk/wit"
# The tests' hostile plugins in both languages.
BUILD=(node "$root/plugins/js/build.mjs" "$root/tests/plugins-js/hostile/hostile.js" "$root/plugins/dist/hostile-js.wasm")
build_if_changed "$root/plugins/dist/hostile-js.wasm" "$root/tests/plugins-js" "$root/plugins/js/sdk" "$root/plugins/sdk/wit"
BUILD=("$root/plugins/python/build.sh" "$root/tests/plugins-py/hostile" "$root/plugins/dist/hostile-py.wasm")
build_if_changed "$root/plugins/dist/hostile-py.wasm" "$root/tests/plugins-py" "$root/plugins/python/sdk" "$root/plugins/sdk/wit"
