# Weir's container image. `docker build .` builds Weir from source in a Rust stage and copies
# the binary into a small Debian runtime (glibc, and ca-certificates for HTTPS deliveries and
# brokers); nothing of the plugins' toolchains is needed at run time. `scripts/image.sh` makes
# the same image as `weir:local` where no registry can be reached — its base images made from
# Debian's packages — and can put a binary built outside into the same runtime
# (`--target prebuilt`, the binary in `docker/prebuilt/`).
#
# Run: docker run -e WEIR_REDIS_URL=redis://… -p 8080:8080 weir:local (or compose.yaml).
ARG DEBIAN_IMAGE=debian:bookworm-slim
ARG RUST_IMAGE=rust:1.95-slim-bookworm

# --- the runtime every Weir image shares --------------------------------------------------
FROM ${DEBIAN_IMAGE} AS runtime
RUN if [ ! -e /etc/ssl/certs/ca-certificates.crt ]; then \
        apt-get update && apt-get install -y --no-install-recommends ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --system --uid 10001 --user-group --home-dir /var/lib/weir --shell /usr/sbin/nologin weir \
    && mkdir -p /var/lib/weir && chown weir:weir /var/lib/weir
# Inside a container Weir listens on every address; its data directory (the key that seals
# secrets when WEIR_SECRET_KEY is not set) is the volume.
ENV WEIR_LISTEN=0.0.0.0:8080 \
    WEIR_DATA_DIR=/var/lib/weir
VOLUME /var/lib/weir
WORKDIR /var/lib/weir
EXPOSE 8080
USER weir
# SIGTERM: Weir stops taking work, lets attempts in flight finish, and exits 0.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["weir", "health"]
ENTRYPOINT ["weir"]
CMD ["serve"]

# --- a binary built outside the image (scripts/image.sh --binary) -------------------------
FROM runtime AS prebuilt
COPY docker/prebuilt/ /usr/local/bin/

# --- from source -----------------------------------------------------------------------------
FROM ${RUST_IMAGE} AS builder
WORKDIR /src
COPY . .
ENV CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols
RUN cargo build --release --locked -p weir && cp target/release/weir /usr/local/bin/weir

FROM runtime
COPY --from=builder /usr/local/bin/weir /usr/local/bin/weir
