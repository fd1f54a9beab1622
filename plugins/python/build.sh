#!/usr/bin/env bash
# Builds a Python plugin (a folder with `app.py` defining `class WitWorld(Plugin)`) into a
# WebAssembly component of the weir:plugin/filter world with componentize-py (installed by
# scripts/setup.sh into target/py-toolchain):
#   plugins/python/build.sh <plugin folder> <out.wasm>
# WASI is stubbed out (--stub-wasi): the component imports nothing but weir:plugin/host.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[ $# -eq 2 ] || { echo "usage: plugins/python/build.sh <plugin folder> <out.wasm>" >&2; exit 2; }
[ -d "$root/plugins/sdk/wit" ] || { echo "plugins/python/build.sh: the WIT folder $root/plugins/sdk/wit is missing: build from a checkout of the Weir repository (plugins/ uses its wit/ and target/)" >&2; exit 2; }
[ -x "$root/target/py-toolchain/bin/componentize-py" ] || { echo "plugins/python/build.sh: componentize-py is not installed in $root/target/py-toolchain: run ./scripts/setup.sh --plugin-toolchains from the repository's root" >&2; exit 2; }
"$root/target/py-toolchain/bin/componentize-py" -d "$root/plugins/sdk/wit" -w filter componentize app \
  -p "$1" -p "$here/sdk" --stub-wasi -o "$2" >/dev/null
echo "built $2 ($(( $(stat -c %s "$2") / 1024 / 1024 )) MiB)" >&2
