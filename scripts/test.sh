#!/usr/bin/env bash
# Runs every test of Weir: unit tests, and integration tests against a real redis-server,
# real HTTP(S) over loopback and real plugins compiled from plugins/.
# Installs what is missing first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --tests
# A failing test's own message last, not a backtrace after it: CI keeps only the end of the
# output (WEIR_TEST_BACKTRACE=1 brings backtraces back).
export RUST_BACKTRACE="${WEIR_TEST_BACKTRACE:-0}"
# Each step's time, on standard error (CI has a budget: see .ci/run).
step() { echo "test.sh: $1 done at ${SECONDS}s" >&2; }
# The demo's build (the binaries the tests run); building --workspace here would resolve
# other dependency features and compile Weir a second time.
./scripts/build.sh
step build
# Everything the tests write (data directories, PostgreSQL and Redis files, browser profiles,
# ~0.3 GB a run, 83 MB of it compiled interpreters) under one directory of this run, removed
# when the run ends, passed or failed (WEIR_KEEP_TEST_TMP=1 keeps it to look at). Left in
# /tmp, a hundred runs took 28 GB of this machine's disk (the CI run at 7bdcc80 then failed
# to write a plugin cache, most likely for want of space).
# (Readable by all, as /tmp is: PostgreSQL runs as `postgres` when the tests run as root.)
export TMPDIR; TMPDIR="$(mktemp -d /tmp/weir-tests.XXXXXX)"; chmod 1777 "$TMPDIR"
[ "${WEIR_KEEP_TEST_TMP:-0}" = 1 ] || trap 'rm -rf "$TMPDIR"' EXIT
cargo test --locked --workspace -- --test-threads "${WEIR_TEST_THREADS:-6}" --skip plugin_languages:: --skip hardening_compile:: --skip image::
step "unit and integration tests"
# The container image and the compose installation, alone: making the base images from
# Debian's packages (the first time on a machine) and starting containers would slow the
# timing tests above. The Docker daemon is started by the test when none is running.
cargo test --locked --workspace --test it -- image::
step "image and compose"
# The JavaScript and Python plugin tests on their own: compiling an interpreter takes both
# cores for tens of seconds in a debug build (once per run, then it is cached in target/),
# which would starve the timing tests above.
cargo test --locked --workspace --test it -- --test-threads "${WEIR_TEST_THREADS:-6}" plugin_languages::
step "plugin languages"
# Six interpreter uploads at once beside another tenant, alone: its uploads must compile
# within their 50 s wait, which the interpreter builds above would slow down.
cargo test --locked --workspace --test it -- hardening_compile::
step "compile budget"
# The delivery, queue, crash and API tests once more, on a local Redis Cluster of three
# masters with a replica each (the cluster:: tests above start their own clusters).
# (`--workspace --test it`, not `-p weir-tests`: the same features as above, so the same
# test binary, not a second build of Weir.)
WEIR_TEST_REDIS=cluster cargo test --locked --workspace --test it -- --test-threads "${WEIR_TEST_THREADS:-6}" \
  delivery:: delivery_faults:: filters:: noisy_tenants:: telemetry:: history:: history_faults:: history_snapshots:: isolation:: replay:: notices:: ordering::a_failed ordering::three_ ordering::order_is ordering::ordering_is ordering::a_delivery_its events_api:: signatures:: webhooks_api:: exports:: exports_snapshots:: plugins:: plugin_delivery:: oauth:: errors:: retries:: portal:: test_events:: settings_glance:: destinations:: destinations_amqp:: destinations_aws:: plans:: plans_history:: destinations_history:: kept:: sources:: sources_history:: sources_kept:: destinations_kinesis:: destinations_kafka::
step "again on a Redis Cluster"
