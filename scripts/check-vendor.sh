#!/usr/bin/env bash
# Checks that vendor/redis is redis-rs as published on crates.io plus vendor/redis.patch, and
# nothing else: downloads the published crate (once, into target/vendor-upstream), drops what
# the copy leaves out (upstream's tests, benches and examples: they are not built as a
# dependency), applies the patch and compares the result with vendor/redis file by file.
# `--write` makes vendor/redis that way instead (after a change to the patch, or to move to
# another upstream version: set UPSTREAM_VERSION).
set -euo pipefail
cd "$(dirname "$0")/.."

UPSTREAM_VERSION="${UPSTREAM_VERSION:-1.8.1}"
for tool in curl patch; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "check-vendor: installing $tool" >&2
    if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null
    else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$tool" >/dev/null; fi
  fi
done
crate=redis
work=target/vendor-upstream
archive="$work/$crate-$UPSTREAM_VERSION.crate"
mkdir -p "$work"
if [ ! -s "$archive" ]; then
  echo "check-vendor: downloading $crate $UPSTREAM_VERSION from crates.io" >&2
  curl -sSfL -o "$archive.part" "https://static.crates.io/crates/$crate/$crate-$UPSTREAM_VERSION.crate"
  mv "$archive.part" "$archive"
fi

expected="$work/$crate-expected"
rm -rf "$expected" "$work/$crate-$UPSTREAM_VERSION"
tar -xzf "$archive" -C "$work"
mv "$work/$crate-$UPSTREAM_VERSION" "$expected"
# Left out of the copy: not part of the library.
rm -rf "$expected/tests" "$expected/benches" "$expected/examples" "$expected/.cargo_vcs_info.json"
patch --quiet --directory="$expected" --strip=1 --no-backup-if-mismatch < vendor/redis.patch

if [ "${1:-}" = "--write" ]; then
  rm -rf vendor/redis
  cp -r "$expected" vendor/redis
  echo "check-vendor: vendor/redis is $crate $UPSTREAM_VERSION + vendor/redis.patch" >&2
  exit 0
fi

if ! diff -r "$expected" vendor/redis; then
  echo "check-vendor: vendor/redis is not $crate $UPSTREAM_VERSION + vendor/redis.patch (the diff above)." >&2
  echo "check-vendor: change the patch, not the copy; then scripts/check-vendor.sh --write" >&2
  exit 1
fi
echo "check-vendor: vendor/redis is $crate $UPSTREAM_VERSION + vendor/redis.patch" >&2
