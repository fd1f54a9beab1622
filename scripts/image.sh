#!/usr/bin/env bash
# Builds Weir's container image (the root Dockerfile) as weir:local, on any machine with
# Docker. The base images it needs are pulled, or — where no registry can be reached — made
# here from Debian's packages (debootstrap from the Debian mirror, then `docker import`).
#
#   scripts/image.sh                  Weir built inside the image from source (a release build:
#                                     ~20 minutes on two cores; needs crates.io)
#   scripts/image.sh --binary FILE    the Dockerfile's `prebuilt` stage with a Weir binary built
#                                     outside (its debug information stripped): seconds
#   --tag NAME                        the image's name (default weir:local)
#   --services                        also the Redis and PostgreSQL images compose.yaml runs,
#                                     made from Debian's packages when they cannot be pulled:
#                                     weir-local/redis and weir-local/postgres (compose.yaml
#                                     takes them through WEIR_REDIS_IMAGE, WEIR_POSTGRES_IMAGE)
#
# Made images are cached by Docker: a second run only builds Weir's own layer. Work files go
# under target/image/.
set -euo pipefail
cd "$(dirname "$0")/.."

DOCKER="${DOCKER:-/usr/bin/docker}"
[ -x "$DOCKER" ] || DOCKER=docker
DEBIAN_IMAGE=debian:bookworm-slim
RUST_IMAGE=rust:1.95-slim-bookworm
SUITE=bookworm
MIRROR="${WEIR_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
WORK=target/image
tag=weir:local binary="" services=0
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --services) services=1; shift ;;
    *) echo "image.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
  esac
done
say() { echo "image.sh: $*" >&2; }
mkdir -p "$WORK"

# Whether an image is here, or can be pulled (a registry that cannot be reached fails fast;
# a minute at most).
have_or_pull() {
  "$DOCKER" image inspect "$1" >/dev/null 2>&1 && return 0
  say "pulling $1"
  timeout 60 "$DOCKER" pull -q "$1" >/dev/null 2>&1
}

# A Debian root file system of `$1` with the packages `$2` (comma-separated), without apt's
# caches, documentation or locales.
rootfs() {
  local dir="$WORK/rootfs-$1" include="$2"
  command -v debootstrap >/dev/null || { say "debootstrap is needed (apt-get install debootstrap)"; exit 1; }
  rm -rf "$dir"
  say "debootstrap $SUITE ($include) from $MIRROR"
  debootstrap --variant=minbase --include="$include" "$SUITE" "$dir" "$MIRROR" >"$WORK/debootstrap-$1.log" 2>&1 \
    || { tail -20 "$WORK/debootstrap-$1.log" >&2; exit 1; }
  rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* \
    "$dir"/usr/share/man/* "$dir"/usr/share/locale/* "$dir"/tmp/*
  echo "$dir"
}

# debian:bookworm-slim, made from Debian's packages (with ca-certificates: Weir's runtime needs
# them, and the Dockerfile installs them only where they are missing).
make_debian() {
  local dir; dir="$(rootfs debian ca-certificates)"
  tar -C "$dir" -c . | "$DOCKER" import --change 'CMD ["bash"]' - "$DEBIAN_IMAGE" >/dev/null
  rm -rf "$dir"
  say "made $DEBIAN_IMAGE from Debian's packages"
}

# The builder: Debian with a C toolchain and this machine's Rust toolchain (the one rustup
# installed), for `docker build` from source where rust:… cannot be pulled.
make_rust() {
  local dir sysroot; dir="$(rootfs rust ca-certificates,gcc,libc6-dev,pkg-config)"
  sysroot="$(rustc --print sysroot)"
  mkdir -p "$dir/usr/local/rust" "$dir/usr/local/cargo"
  cp -a "$sysroot"/. "$dir/usr/local/rust/"
  # This machine's trust (a proxy's certificate authority, say), so that cargo reaches
  # crates.io from the builder as it does from here.
  cp /etc/ssl/certs/ca-certificates.crt "$dir/etc/ssl/certs/ca-certificates.crt"
  tar -C "$dir" -c . | "$DOCKER" import \
    --change 'ENV PATH=/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV CARGO_HOME=/usr/local/cargo' - "$RUST_IMAGE" >/dev/null
  rm -rf "$dir"
  say "made $RUST_IMAGE from Debian's packages and $(rustc --version)"
}

have_or_pull "$DEBIAN_IMAGE" || make_debian

# The Docker engine's classic builder takes local images as they are (BuildKit may ask a
# registry about them first); the Dockerfile builds with either.
export DOCKER_BUILDKIT=0
if [ -n "$binary" ]; then
  [ -x "$binary" ] || { say "$binary is not an executable"; exit 1; }
  context="$WORK/context"
  rm -rf "$context"; mkdir -p "$context/docker/prebuilt"
  cp Dockerfile "$context/"
  strip -o "$context/docker/prebuilt/weir" "$binary"
  say "building $tag from $binary ($(du -h "$context/docker/prebuilt/weir" | cut -f1) stripped)"
  "$DOCKER" build -q --target prebuilt -t "$tag" "$context" >/dev/null
  rm -rf "$context"
else
  have_or_pull "$RUST_IMAGE" || make_rust
  say "building $tag from source (a release build inside the image)"
  # The host's network: cargo fetches the crates.
  "$DOCKER" build --network host -t "$tag" .
fi
say "$tag: $("$DOCKER" image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1e6}')"

if [ "$services" = 1 ]; then
  for service in redis postgres; do
    official="$(sed -n "s/^ *image: \${WEIR_${service^^}_IMAGE:-\(.*\)}$/\1/p" compose.yaml)"
    if "$DOCKER" image inspect "weir-local/$service" >/dev/null 2>&1; then continue; fi
    if [ -n "$official" ] && have_or_pull "$official"; then
      "$DOCKER" tag "$official" "weir-local/$service"
    else
      say "making weir-local/$service from Debian's packages"
      "$DOCKER" build -q --network host -t "weir-local/$service" -f "docker/local/$service.Dockerfile" docker/local >/dev/null
    fi
  done
fi
