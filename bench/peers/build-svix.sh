#!/usr/bin/env bash
# Builds svix-server (release) at a pinned commit for the peer race (bench/peers/race.py).
#
# Sources are four public repositories, taken from local git directories (bare clones or
# checkouts) so that the build needs no github.com access, only the crates.io registry:
#   SVIX_GIT        svix/svix-webhooks                 (required; built at SVIX_REV)
#   SVIX_HYPER_GIT  svix/hyper (svix's HeaderCaseMap change, commits 30f2961e..a05ef03d)
#   OMNIQUEUE_GIT   svix/omniqueue-rs                  (at the revision svix-server names)
#   REM_GIT         svix/rust-executable-metadata      (at the revision svix-server names)
# svix-server pins hyper =1.11.0 and patches it with a commit of svix's fork; that change
# (HeaderCaseMap made public, with get() and From<HeaderMap>) is applied here to hyper 1.11.0
# from the registry. Output: $PEERS_DIR/svix/target/release/svix-server (about 11 minutes on
# 2 cores; run no other cargo build meanwhile).
set -euo pipefail
: "${SVIX_GIT:?a git directory of github.com/svix/svix-webhooks}"
: "${SVIX_HYPER_GIT:?a git directory of github.com/svix/hyper}"
: "${OMNIQUEUE_GIT:?a git directory of github.com/svix/omniqueue-rs}"
: "${REM_GIT:?a git directory of github.com/svix/rust-executable-metadata}"
SVIX_REV=${SVIX_REV:-4fc0cfb8b}   # svix-server 1.99.0 workspace, "bridge: Upgrade dependencies (#2574)"
PEERS_DIR=${PEERS_DIR:-$(pwd)/target/peers}
src="$PEERS_DIR/svix"
export_tree() { # git-dir rev destination
  rm -rf "$3" && mkdir -p "$3"
  git --git-dir="$(git -C "$1" rev-parse --absolute-git-dir)" archive "$2" | tar -x -C "$3"
}

mkdir -p "$src"
export_tree "$SVIX_GIT" "$SVIX_REV" "$src/svix-webhooks"
manifest="$src/svix-webhooks/server/svix-server/Cargo.toml"
rev_of() { sed -n "s|.*$1\", rev = \"\([0-9a-f]*\)\".*|\1|p" "$manifest"; }
export_tree "$OMNIQUEUE_GIT" "$(rev_of svix/omniqueue-rs)" "$src/omniqueue-rs"
export_tree "$REM_GIT" "$(rev_of svix/rust-executable-metadata)" "$src/rust-executable-metadata"

# hyper 1.11.0 as published, plus the fork's change.
if [ ! -d "$src/hyper" ]; then
  mkdir -p "$src/fetch-hyper/src" && echo 'fn main() {}' > "$src/fetch-hyper/src/main.rs"
  printf '[package]\nname = "fetch-hyper"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\nhyper = "=1.11.0"\n' \
    > "$src/fetch-hyper/Cargo.toml"
  (cd "$src/fetch-hyper" && cargo fetch -q)
  cp -r "$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/hyper-1.11.0 | head -1)" "$src/hyper.tmp"
  git --git-dir="$(git -C "$SVIX_HYPER_GIT" rev-parse --absolute-git-dir)" diff 30f2961e a05ef03d -- src/ext/mod.rs \
    | (cd "$src/hyper.tmp" && patch -p1 -s)
  # As a path dependency hyper's deny(missing_docs) applies, and the fork's get() has no doc.
  sed -i 's/^#!\[deny(missing_docs)\]/#![warn(missing_docs)]/' "$src/hyper.tmp/src/lib.rs"
  mv "$src/hyper.tmp" "$src/hyper"
fi

# The workspace's [patch] table, pointed at the local copies.
workspace="$src/svix-webhooks/server/Cargo.toml"
python3 - "$workspace" "$src" <<'PY'
import sys
path, src = sys.argv[1], sys.argv[2]
text = open(path).read()
head, sep, _ = text.partition("[patch.crates-io]")
assert sep, "svix-server's workspace no longer patches hyper: check the pinned revision"
text = head + f"""[patch.crates-io]
hyper = {{ path = "{src}/hyper" }}

[patch."https://github.com/svix/omniqueue-rs"]
omniqueue = {{ path = "{src}/omniqueue-rs/omniqueue" }}

[patch."https://github.com/svix/rust-executable-metadata"]
rust-executable-metadata = {{ path = "{src}/rust-executable-metadata" }}
"""
open(path, "w").write(text)
PY

cd "$src/svix-webhooks/server"
CARGO_TARGET_DIR="$src/target" cargo build --release -p svix-server
ls -la "$src/target/release/svix-server"
