#!/usr/bin/env bash
# Writes Weir's OpenAPI document to clients/openapi.json and generates the client libraries
# from it: clients/typescript/src/schema.ts (openapi-typescript) and
# clients/python/weir_client/generated/ (openapi-python-client), both pinned by version.
#
#   scripts/clients.sh           write them (commit the result with the API change)
#   scripts/clients.sh --check   generate into a scratch directory and fail when anything
#                                committed differs (the tests run this: they cannot drift)
#
# Uses the `weir` binary of the dev build (scripts/build.sh) and the tools
# scripts/setup.sh --tests installs under target/.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
[ "${1:-}" = "--check" ] && check=1
weir="${WEIR_BINARY:-target/debug/weir}"
python_tool=target/pyenv/bin/openapi-python-client
ts_tool=target/clients-node/node_modules/.bin/openapi-typescript
for tool in "$weir" "$python_tool" "$ts_tool"; do
  [ -x "$tool" ] || { echo "clients.sh: $tool is missing (scripts/build.sh, scripts/setup.sh --tests)" >&2; exit 1; }
done

if [ "$check" = 1 ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
else
  out=clients
fi
mkdir -p "$out/typescript/src" "$out/python/weir_client"

# The document, from the code (no server needed; `weir` refuses WEIR_ variables it does not
# know, such as the tests' own).
unset_weir=()
for name in $(compgen -e | grep '^WEIR_' || true); do unset_weir+=(-u "$name"); done
env "${unset_weir[@]}" "$weir" openapi > "$out/openapi.json.new"
mv "$out/openapi.json.new" "$out/openapi.json"
"$ts_tool" "$out/openapi.json" -o "$out/typescript/src/schema.ts" >/dev/null 2>&1 \
  || { echo "clients.sh: openapi-typescript failed" >&2; "$ts_tool" "$out/openapi.json" -o /dev/null; exit 1; }
# (Two endpoints take bodies the generator has no type for — a plugin's WebAssembly and a
# provider's request to a source — and are left out of the Python client: it says so.)
"$python_tool" generate --path "$out/openapi.json" --meta none --overwrite \
  --output-path "$out/python/weir_client/generated" --config clients/python/generator.yaml >/dev/null 2>&1 \
  || { echo "clients.sh: openapi-python-client failed" >&2; exit 1; }

if [ "$check" = 1 ]; then
  status=0
  diff -u clients/openapi.json "$out/openapi.json" >/dev/null || { echo "clients.sh: clients/openapi.json differs from the API's document" >&2; status=1; }
  diff -u clients/typescript/src/schema.ts "$out/typescript/src/schema.ts" >&2 || status=1
  diff -ru -x __pycache__ clients/python/weir_client/generated "$out/python/weir_client/generated" >&2 || status=1
  if [ "$status" != 0 ]; then
    echo "clients.sh: the committed clients are not what the API generates: run scripts/clients.sh and commit" >&2
    exit 1
  fi
  echo "clients.sh: the clients are what the API generates" >&2
else
  echo "clients.sh: wrote clients/openapi.json, clients/typescript/src/schema.ts, clients/python/weir_client/generated/" >&2
fi
