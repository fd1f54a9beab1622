# PostgreSQL from Debian's packages, for machines where the official image cannot be pulled
# (scripts/image.sh --services). Its entry point takes POSTGRES_USER, POSTGRES_PASSWORD and
# POSTGRES_DB and keeps its data in /var/lib/postgresql/data, as the official image does.
FROM debian:bookworm-slim
RUN mkdir -p /etc/postgresql-common \
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf \
    && apt-get update \
    && apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-confold postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/
USER postgres
ENV PGDATA=/var/lib/postgresql/data
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]
