# Redis from Debian's packages, for machines where the official image cannot be pulled
# (scripts/image.sh --services). It takes compose.yaml's command as the official image does.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends redis-server redis-tools \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data && chown redis:redis /data
USER redis
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no", "--dir", "/data"]
