"""The peer race's parts: where everything is, the processes it starts (by PID), what
/proc says of them, and the small HTTP, Redis and psql calls it makes (`race.py` is the race).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = os.path.abspath(os.environ.get("PEERS_DIR", os.path.join(REPO, "target/peers")))
RUN = os.path.join(PEERS, "run")
WEIR_BIN = os.environ.get("WEIR_BIN", os.path.join(REPO, "target/release/weir"))
WEIR_BENCH = os.environ.get("WEIR_BENCH", os.path.join(REPO, "target/release/weir-bench"))
SVIX_BIN = os.environ.get("SVIX_BIN", os.path.join(PEERS, "svix/target/release/svix-server"))
PG_BIN = os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin")
PG_DATA = os.path.join(PEERS, "pg")
PORT = {"nginx": 18900, "pg": 15432, "redis-svix": 16379, "redis-weir": 16380, "svix": 18071, "weir": 18080}
RECEIPTS = os.path.join(RUN, "receipts.log")
PIDS = os.path.join(RUN, "pids.json")
RESULTS = os.path.join(RUN, "results.jsonl")
SCENARIOS = {"S1": (20_000, 1), "S2": (2_000, 10)}
CONNECTIONS = int(os.environ.get("PEERS_CONNECTIONS", "32"))
HZ = os.sysconf("SC_CLK_TCK")
TEXT = "Replace the worn mechanical seal on the feed pump and check the impeller for cavitation. " * 9


def say(*a):
    print(*a, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ processes

def pids():
    return json.load(open(PIDS)) if os.path.exists(PIDS) else {}


def remember(name, pid):
    p = pids()
    p[name] = pid
    json.dump(p, open(PIDS, "w"))


def running(pid):
    try:
        os.kill(pid, 0)
        return True
    except (OSError, TypeError):
        return False


def start(name, argv, env=None, log=None):
    out = open(os.path.join(RUN, log or f"{name}.log"), "a")
    pid = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True).pid
    remember(name, pid)
    return pid


def stop(pid, seconds=30):
    """SIGTERM a process this harness started, then SIGKILL if it has not ended in time."""
    if not running(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            if not running(pid):
                return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def listening(port, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def stat(pid):
    """(parent pid, CPU seconds of the process and its reaped children) or None."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), sum(int(x) for x in fields[11:15]) / HZ


def cpu(root):
    """CPU seconds of a process and its live children (PostgreSQL's backends, nginx's worker)."""
    total = 0.0
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = stat(int(d))
            if s and (int(d) == root or s[0] == root):
                total += s[1]
    return total


def threads(pid):
    """CPU seconds of each thread of a process, summed by thread name."""
    by_name = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return by_name
    for tid in tids:
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        by_name[name] = by_name.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / HZ
    return by_name


def machine():
    """(busy, total) CPU seconds of the whole machine so far."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / HZ, sum(v) / HZ


def http(method, url, body=None, headers=None, form=False):
    headers = dict(headers or {})
    data = None
    if body is not None:
        data = urllib.parse.urlencode(body).encode() if form else json.dumps(body).encode()
        headers["content-type"] = "application/x-www-form-urlencoded" if form else "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def redis(name, *args):
    return subprocess.run(["redis-cli", "-p", str(PORT[name]), *args], check=True, capture_output=True,
                          text=True).stdout


def psql(sql):
    subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(PORT["pg"]), "-U", "postgres", "-q", "-c", sql], check=True)
