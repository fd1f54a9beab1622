#!/usr/bin/env python3
"""The peer race: Svix and Weir delivering the same load to the same receiver, in one run.

  race.py setup                 start the shared parts (below); PIDs in $PEERS_DIR/run/pids.json
  race.py run SYSTEM SCENARIO   one measured run, appended to $PEERS_DIR/run/results.jsonl
  race.py race                  setup, then ROUNDS (default 3) rounds of S1 and S2 with the systems
                                alternated (svix, weir), then the table (earlier results are kept
                                aside as results-<time>.jsonl)
  race.py table                 every run, then medians per system and the Weir/Svix ratios
  race.py teardown              stop what setup and run started (by PID)

SYSTEM: svix | weir.  SCENARIO: S1 (20,000 events of ~1 KB to one endpoint) or S2 (2,000 events
fanned out to 10 endpoints); both 20,000 deliveries, published by `weir-bench race-load` over 32
keep-alive connections as fast as each system accepts them.

The shared parts, all on loopback: the receiver is nginx (one worker, `return 204`, one access-log
line per delivery: time, path, status, the delivery's id header); PostgreSQL 15 with its defaults
(fsync and synchronous_commit on) for Svix; one Redis for Svix (its queue and cache; no
persistence, as Svix needs none) and one for Weir with AOF `everysec` (what Weir's guide asks for).

Each run starts the system fresh (an empty database and Redis, a new process), creates an
application or organisation with the endpoints, waits 2 s, publishes, and waits until the receiver
has seen every delivery (at most 10 minutes). It records: publish rate and p50/p99 as the load
generator saw them; deliveries/s = deliveries / (last receipt - first publish); deliveries
received and unique (by the delivery id header: a duplicate counts once in `unique`); CPU per
delivery of each process from /proc (user + system, children included) over the same span; and
how busy the machine's cores were.

Both systems run at their shipped defaults. Svix: `RUST_LOG=warn` (Weir logs at warn too), its own
pool sizes; Weir: nothing set but its addresses and WEIR_ALLOW_PRIVATE_TARGETS for the loopback
receiver. `PEERS_WEIR_ENV="NAME=value ..."` runs Weir with other settings: such a row is labelled.
`PEERS_CONNECTIONS=N` publishes over N connections instead of 32 (both systems; labelled too).

Needs root (PostgreSQL runs as the postgres user), nginx, PostgreSQL 15, redis-server, psql, the
release `weir` and `weir-bench` (scripts/bench.sh builds them) and svix-server (build-svix.sh).
Environment: PEERS_DIR (default target/peers), WEIR_BIN, WEIR_BENCH, SVIX_BIN, PG_BIN, ROUNDS.
Ports: 18900 (nginx), 15432 (PostgreSQL), 16379 / 16380 (Redis), 18071 (Svix), 18080 (Weir).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

from parts import (
    REPO,
    PEERS,
    RUN,
    WEIR_BIN,
    WEIR_BENCH,
    SVIX_BIN,
    PG_BIN,
    PG_DATA,
    PORT,
    RECEIPTS,
    PIDS,
    RESULTS,
    SCENARIOS,
    CONNECTIONS,
    HZ,
    TEXT,
    say,
    pids,
    remember,
    running,
    start,
    stop,
    listening,
    stat,
    cpu,
    threads,
    machine,
    http,
    redis,
    psql,
)


# ------------------------------------------------------------------ the shared parts

NGINX = """worker_processes 1;
pid {run}/nginx.pid;
error_log {run}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
  log_format receipt '$msec $request_uri $status $http_webhook_id$http_svix_id';
  access_log off;
  client_body_temp_path {run}/nginx-body;
  keepalive_requests 1000000;
  keepalive_timeout 600s;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    access_log {receipts} receipt;
    location / {{ return 204; }}
  }}
}}
"""


def setup():
    if os.geteuid() != 0:
        sys.exit("race.py needs root: PostgreSQL is run as the postgres user")
    for binary, how in ((WEIR_BIN, "./scripts/bench.sh"), (WEIR_BENCH, "./scripts/bench.sh"),
                        (SVIX_BIN, "bench/peers/build-svix.sh"), (f"{PG_BIN}/postgres", "apt-get install postgresql")):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary} is missing: {how}")
    os.makedirs(RUN, exist_ok=True)
    p = pids()
    if not running(p.get("nginx")):
        conf = os.path.join(RUN, "nginx.conf")
        open(conf, "w").write(NGINX.format(run=RUN, port=PORT["nginx"], receipts=RECEIPTS))
        start("nginx", ["nginx", "-c", conf, "-g", "daemon off;"])
        listening(PORT["nginx"])
    if not os.path.exists(os.path.join(PG_DATA, "PG_VERSION")):
        os.makedirs(PG_DATA, mode=0o700, exist_ok=True)
        subprocess.run(["chown", "postgres:postgres", PG_DATA], check=True)
        subprocess.run(["runuser", "-u", "postgres", "--", f"{PG_BIN}/initdb", "-D", PG_DATA, "-U", "postgres",
                        "--auth=trust", "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
    if not running(p.get("pg")):
        subprocess.run(["chown", "postgres:postgres", RUN], check=True)
        start("pg", ["runuser", "-u", "postgres", "--", f"{PG_BIN}/postgres", "-D", PG_DATA, "-p", str(PORT["pg"]),
                     "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={RUN}",
                     "-c", "max_connections=200"])
        listening(PORT["pg"])
    for name, persistence in (("redis-svix", ["--appendonly", "no"]),
                              ("redis-weir", ["--appendonly", "yes", "--appendfsync", "everysec",
                                             "--hash-max-listpack-value", "512"])):
        if not running(p.get(name)):
            d = os.path.join(RUN, name)
            os.makedirs(d, exist_ok=True)
            start(name, ["redis-server", "--port", str(PORT[name]), "--bind", "127.0.0.1", "--dir", d, "--save", "",
                         *persistence])
            listening(PORT[name])
            loaded(name)
    say("shared parts:", pids())


def loaded(name, seconds=120):
    """Waits while a Redis loads its AOF (it answers LOADING until then)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        answer = subprocess.run(["redis-cli", "-p", str(PORT[name]), "PING"], capture_output=True, text=True).stdout
        if answer.strip() == "PONG":
            return
        time.sleep(0.2)
    sys.exit(f"{name} still loading after {seconds} s")


def postmaster():
    return int(open(os.path.join(PG_DATA, "postmaster.pid")).readline())


def empty_redis(name):
    redis(name, "FLUSHALL")
    if name == "redis-weir":  # start each run from a small AOF
        redis(name, "BGREWRITEAOF")
        for _ in range(600):
            info = redis(name, "INFO", "persistence")
            if "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info:
                return
            time.sleep(0.1)


def teardown():
    p = pids()
    for name in ("svix", "weir", "nginx", "redis-svix", "redis-weir"):
        stop(p.get(name))
    if os.path.exists(os.path.join(PG_DATA, "postmaster.pid")):
        stop(postmaster(), 60)
    stop(p.get("pg"))
    json.dump({}, open(PIDS, "w"))


# ------------------------------------------------------------------ the systems

def envelope(action, kind, snapshot):
    """~1 KB of JSON with {{ID}} where the load generator puts a unique id."""
    return {"id": "evt_{{ID}}", "action": action, "creator": {"id": "usr_bench", "name": "Bench Publisher"},
            "subject": {"type": kind, "id": "rec_{{ID}}"},
            snapshot: {"id": "rec_{{ID}}", "title": "Pump maintenance", "status": "open", "priority": 2,
                       "description": TEXT}}


def svix(endpoints):
    """Starts a fresh svix-server; returns (pid, databases, publish URL, authorization, body)."""
    psql("DROP DATABASE IF EXISTS svix")
    psql("CREATE DATABASE svix")
    empty_redis("redis-svix")
    env = dict(os.environ, SVIX_JWT_SECRET="race-jwt-secret-for-loopback-only",
               SVIX_DB_DSN=f"postgresql://postgres@127.0.0.1:{PORT['pg']}/svix",
               SVIX_REDIS_DSN=f"redis://127.0.0.1:{PORT['redis-svix']}", SVIX_QUEUE_TYPE="redis",
               SVIX_CACHE_TYPE="redis", SVIX_LISTEN_ADDRESS=f"127.0.0.1:{PORT['svix']}",
               SVIX_WHITELIST_SUBNETS="[127.0.0.0/8]", RUST_LOG="warn")
    pid = start("svix", [SVIX_BIN, "--run-migrations"], env)
    listening(PORT["svix"], 120)
    out = subprocess.run([SVIX_BIN, "jwt", "generate"], env=env, capture_output=True, text=True, check=True).stdout
    auth = "Bearer " + re.search(r"Token \(Bearer\): (\S+)", out).group(1)
    base = f"http://127.0.0.1:{PORT['svix']}/api/v1"
    status, app = http("POST", f"{base}/app/", {"name": "race"}, {"authorization": auth})
    assert status == 201, (status, app)
    for k in range(endpoints):
        status, answer = http("POST", f"{base}/app/{app['id']}/endpoint/",
                              {"url": f"http://127.0.0.1:{PORT['nginx']}/svix/{k}", "version": 1},
                              {"authorization": auth})
        assert status == 201, (status, answer)
    # No eventId: Svix would look each one up for idempotency; Weir's ids are in the body.
    body = {"eventType": "work_order.created", "payload": envelope("work_order_created", "WorkOrder", "work_order")}
    return pid, {"postgres": postmaster(), "redis": pids()["redis-svix"]}, f"{base}/app/{app['id']}/msg/", auth, body


def weir_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEIR_")}
    env.update(WEIR_REDIS_URL=f"redis://127.0.0.1:{PORT['redis-weir']}", WEIR_LISTEN=f"127.0.0.1:{PORT['weir']}",
               WEIR_ALLOW_PRIVATE_TARGETS="127.0.0.0/8", WEIR_LOG="warn",
               WEIR_DATA_DIR=os.path.join(RUN, "weir-data"))
    for setting in os.environ.get("PEERS_WEIR_ENV", "").split():
        name, _, value = setting.partition("=")
        env[name] = value
    return env


def weir(endpoints):
    empty_redis("redis-weir")
    env = weir_env()
    pid = start("weir", [WEIR_BIN, "serve"], env)
    listening(PORT["weir"])
    admin = lambda *a: json.loads(subprocess.run([WEIR_BIN, "admin", *a], env=env, check=True, capture_output=True,
                                                 text=True).stdout)
    org = admin("org", "create", "--name", "race", "--plan", "pro")["id"]
    client = admin("client", "create", "--org", org, "--name", "race", "--admin", "--publisher")
    base = f"http://127.0.0.1:{PORT['weir']}"
    status, token = http("POST", f"{base}/oauth/token", {"grant_type": "client_credentials",
                                                          "client_id": client["client_id"],
                                                          "client_secret": client["client_secret"]}, form=True)
    assert status == 200, (status, token)
    auth = "Bearer " + token["access_token"]
    for k in range(endpoints):
        status, answer = http("POST", f"{base}/api/v2/webhooks",
                              {"url": f"http://127.0.0.1:{PORT['nginx']}/weir/{k}",
                               "subscribed_actions": ["work_order_created"]}, {"authorization": auth})
        assert status == 201, (status, answer)
    return pid, {"redis": pids()["redis-weir"]}, f"{base}/api/v2/events", auth, envelope("work_order_created", "WorkOrder", "work_order")


def receipts():
    with open(RECEIPTS) as f:
        rows = [line.split() for line in f if line.strip()]
    return {"count": len(rows), "unique": len({(r[1], r[3] if len(r) > 3 else "") for r in rows}),
            "statuses": {s: sum(1 for r in rows if r[2] == s) for s in {r[2] for r in rows}},
            "last_ms": max((float(r[0]) * 1000 for r in rows), default=0)}


def lines():
    with open(RECEIPTS, "rb") as f:
        return f.read().count(b"\n")


def measure(system, scenario):
    events, endpoints = SCENARIOS[scenario]
    deliveries = events * endpoints
    pid, stores, url, auth, body = (svix if system == "svix" else weir)(endpoints)
    body_file = os.path.join(RUN, "body.json")
    json.dump(body, open(body_file, "w"), separators=(",", ":"))
    time.sleep(2)
    open(RECEIPTS, "w").close()
    nginx = pids()["nginx"]
    procs = {"service": pid, **stores, "receiver": nginx}
    cpu0, m0, t0 = {k: cpu(v) for k, v in procs.items()}, machine(), threads(pid)
    load = subprocess.run([WEIR_BENCH, "race-load", url, str(events), str(CONNECTIONS), body_file, auth, "202"],
                          capture_output=True, text=True)
    if load.returncode != 0:
        sys.exit(f"the load generator failed: {load.stderr}")
    load = json.loads(load.stdout)
    if load["ok"] != events:
        stop(pid)
        sys.exit(f"{system} did not accept every event: {load}")
    deadline = time.time() + 600
    while lines() < deliveries and time.time() < deadline:
        time.sleep(0.02)
    cpu1, m1, t1 = {k: cpu(v) for k, v in procs.items()}, machine(), threads(pid)
    time.sleep(1)  # duplicates arriving late still count
    got = receipts()
    stop(pid)
    if system == "svix":  # leave PostgreSQL quiet for the next run
        psql("DROP DATABASE IF EXISTS svix")
        psql("CHECKPOINT")
    span = (got["last_ms"] - load["start_unix_ms"]) / 1000
    per = lambda seconds: round(seconds * 1e6 / deliveries, 1)
    used = {k: per(cpu1[k] - cpu0[k]) for k in procs}
    used["load"] = per(load["cpu_s"])
    return {
        "system": system, "scenario": scenario, "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "settings": " ".join(filter(None, [os.environ.get("PEERS_WEIR_ENV", "") if system == "weir" else "",
                                            f"{CONNECTIONS} connections" if CONNECTIONS != 32 else ""])),
        "deliveries": deliveries, "published": load["ok"], "publish_statuses": load["statuses"],
        "publish_errors": load["errors"], "received": got["count"], "unique": got["unique"],
        "receiver_statuses": got["statuses"], "publish_rate": load["rate"], "publish_p50_ms": load["p50_ms"],
        "publish_p99_ms": load["p99_ms"], "deliveries_per_s": round(deliveries / span) if span > 0 else 0,
        "cpu_us_per_delivery": used,
        "service_threads_us": {k: per(v - t0.get(k, 0.0)) for k, v in t1.items() if v - t0.get(k, 0.0) > 0},
        "busy_cores": round((m1[0] - m0[0]) / ((m1[1] - m0[1]) / os.cpu_count()), 2),
    }


# ------------------------------------------------------------------ the table

def label(r):
    return r["system"] + (f" ({r['settings']})" if r.get("settings") else "")


def table():
    rows = [json.loads(line) for line in open(RESULTS)]
    print("| scenario | at | system | published | received (unique) | publish/s | publish p50 / p99 | deliveries/s "
          "| CPU µs/delivery: service | PostgreSQL | Redis | receiver | load | busy cores |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["cpu_us_per_delivery"]
        print(f"| {r['scenario']} | {r['at']} | {label(r)} | {r['published']} | {r['received']} ({r['unique']}) | "
              f"{r['publish_rate']:.0f} | {r['publish_p50_ms']:.1f} / {r['publish_p99_ms']:.1f} ms | "
              f"{r['deliveries_per_s']:.0f} | {c['service']:.0f} | {c.get('postgres', 0):.0f} | {c['redis']:.0f} | "
              f"{c['receiver']:.0f} | {c['load']:.0f} | {r['busy_cores']} |")
    print()
    print("Medians:")
    print()
    print("| scenario | system | runs | deliveries/s | publish p99 | CPU µs/delivery, service + stores | busy cores "
          "| Weir / Svix |")
    print("|---|---|---|---|---|---|---|---|")
    for scenario in SCENARIOS:
        groups = {}
        for r in rows:
            if r["scenario"] == scenario:
                groups.setdefault(label(r), []).append(r)
        med = lambda rs, f: statistics.median(f(r) for r in rs)
        svix_rate = med(groups["svix"], lambda r: r["deliveries_per_s"]) if "svix" in groups else None
        for name, rs in sorted(groups.items()):
            rate = med(rs, lambda r: r["deliveries_per_s"])
            own = med(rs, lambda r: sum(v for k, v in r["cpu_us_per_delivery"].items() if k not in ("receiver", "load")))
            ratio = f"{rate / svix_rate:.1f}×" if svix_rate and name != "svix" else ""
            print(f"| {scenario} | {name} | {len(rs)} | {rate:.0f} | {med(rs, lambda r: r['publish_p99_ms']):.1f} ms "
                  f"| {own:.0f} | {med(rs, lambda r: r['busy_cores']):.2f} | {ratio} |")


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "setup":
        setup()
    elif command == "teardown":
        teardown()
    elif command == "table":
        table()
    elif command == "run" and len(sys.argv) == 4 and sys.argv[3] in SCENARIOS and sys.argv[2] in ("svix", "weir"):
        row = measure(sys.argv[2], sys.argv[3])
        open(RESULTS, "a").write(json.dumps(row) + "\n")
        print(json.dumps(row))
    elif command == "race":
        setup()
        if os.path.exists(RESULTS):  # a race's table holds its own runs only
            os.rename(RESULTS, os.path.join(RUN, time.strftime("results-%Y%m%d-%H%M%S.jsonl")))
        for round_ in range(int(os.environ.get("ROUNDS", "3"))):
            for scenario in SCENARIOS:
                for system in ("svix", "weir"):
                    say(f"round {round_ + 1}: {scenario} {system} {time.strftime('%H:%M:%S')}")
                    row = measure(system, scenario)
                    open(RESULTS, "a").write(json.dumps(row) + "\n")
        table()
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
