#!/bin/sh
# Makes the database on first start (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB), then runs
# PostgreSQL in the foreground, listening on every address with password authentication.
set -eu
bin=/usr/lib/postgresql/15/bin
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile="$(mktemp)"
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > "$pwfile"
  "$bin/initdb" -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$db" != postgres ]; then
    "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    "$bin/psql" -U "$user" -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$db\" OWNER \"$user\"" >/dev/null
    "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*'
