#!/usr/bin/env python3
"""Replays the Redis traffic of a `weir-bench` load against a fresh redis-server and counts the
instructions Redis runs, so that a change to a Lua script is weighed on Redis alone, with the very
same commands both ways, by a measure that does not drift (the same replay twice differs by 0.1%;
timed, it spreads by a fifth on this machine).

  lua_replay.py capture SCENARIO [FILE]  runs `target/release/weir-bench` for one scenario (at
                                         WEIR_BENCH_SCALE, default 0.25) and records every command
                                         Weir sends (redis-cli MONITOR, which slows Redis ~3x while
                                         it records) into FILE (default
                                         target/lua-replay/<scenario>.monitor), and into
                                         FILE.scripts which script each SHA-1 is
  lua_replay.py run FILE [NAME=VARIANT.lua ...]
                                         replays FILE ROUNDS times (default 1: the count is
                                         steady) per build: the scripts as this checkout has
                                         them, and with each given file (e.g.
                                         `record.lua=/tmp/record.lua`; a helper such as
                                         `lease.lua` changes in every script given it) replaced
                                         by its variant (several at once: joined by commas);
                                         the builds alternated, a fresh redis-server each time
                                         (AOF everysec, as the bench runs it) under valgrind; prints per build the instructions Redis
                                         ran (the median), and the time inside scripts and
                                         Redis's CPU (both slowed some 50x by valgrind)

LUA_REPLAY_PROFILE=FILE runs Redis under callgrind instead and writes its profile there
(`callgrind_annotate --inclusive=yes FILE`; Debian's Redis has Lua without symbols).

The capture's calls run the scripts as this checkout has them (FILE.scripts names them), so a
capture stays usable while the scripts change, as long as their arguments do not. The commands
go in their captured order over one connection: a variant must keep its script's contract (its
replies are not checked against the original's; run the tests for that). Commands run inside
scripts, and the bench's own INFO/CONFIG/SLOWLOG/FLUSHALL, are left out. Only stdlib Python;
needs redis-server and redis-cli (scripts/setup.sh installs them) and valgrind
(`apt-get install valgrind`).
"""
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LUA = os.path.join(ROOT, "host/src/store/lua")
SKIP = {b"INFO", b"CONFIG", b"SLOWLOG", b"FLUSHALL", b"BGREWRITEAOF", b"MONITOR", b"SCRIPT", b"PING", b"HELLO", b"CLIENT"}


def scripts():
    """Each script's file name and text, as `core/scripts.rs` composes it."""
    source = open(os.path.join(ROOT, "host/src/store/core/scripts.rs")).read()
    out = {}
    for libs, name in re.findall(r'lua!\(\w+, (?:\[([^\]]*)\], )?"([\w.]+)"\)', source):
        parts = [open(os.path.join(LUA, lib.strip().strip('"'))).read() + "\n" for lib in libs.split(",") if lib.strip()]
        out[name] = "".join(parts) + open(os.path.join(LUA, name)).read()
    return out


def listpack_value():
    """Redis's `hash-max-listpack-value` as the bench runs it (`weir::store::LISTPACK_VALUE`)."""
    source = open(os.path.join(ROOT, "host/src/store/mod.rs")).read()
    return re.search(r'pub const LISTPACK_VALUE: &str = "(\d+)";', source).group(1)


def sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


# --- RESP over a socket -------------------------------------------------------------------

def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")

    def read(self):
        line = self.file.readline()
        kind, body = line[:1], line[1:-2]
        if kind == b"+":
            return body
        if kind == b"-":
            return Exception(body.decode())
        if kind == b":":
            return int(body)
        if kind == b"$":
            n = int(body)
            return None if n < 0 else self.file.read(n + 2)[:-2]
        if kind == b"*":
            n = int(body)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line!r}")

    def pipe(self, commands):
        self.sock.sendall(b"".join(encode(c) for c in commands))
        return [self.read() for _ in commands]

    def __call__(self, *args):
        reply = self.pipe([args])[0]
        if isinstance(reply, Exception):
            raise reply
        return reply


def start_redis(home):
    """A fresh redis-server as weir-bench runs it, in `home`, under valgrind counting the
    instructions it runs into `home`/counts (the same count every time for the same commands,
    where time drifts by a fifth between runs on this machine); its process and a connection."""
    port = free_port()
    profile = os.environ.get("LUA_REPLAY_PROFILE")
    tool = ["--tool=callgrind", "--callgrind-out-file=" + profile] if profile else \
        ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    proc = subprocess.Popen(
        ["valgrind", *tool, "--log-file=" + os.path.join(home, "counts"),
         "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "yes",
         "--appendfsync", "everysec", "--hash-max-listpack-value", listpack_value(), "--dir", home],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(1000):
        try:
            return proc, Conn(port)
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- capture ------------------------------------------------------------------------------

def capture(scenario, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    env = dict(os.environ, WEIR_BENCH_SCENARIO=scenario)
    env.setdefault("WEIR_BENCH_SCALE", "0.25")
    bench = subprocess.Popen([os.path.join(ROOT, "target/release/weir-bench")], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    port = None
    deadline = time.time() + 30
    while port is None and time.time() < deadline:
        # The bench's Redis is its child: `redis-server 127.0.0.1:<port>`.
        ps = subprocess.run(["ps", "-o", "args=", "--ppid", str(bench.pid)], capture_output=True, text=True).stdout
        found = re.search(r"redis-server 127\.0\.0\.1:(\d+)", ps)
        port = found and int(found.group(1))
        time.sleep(0.01)
    if port is None:
        os.killpg(bench.pid, signal.SIGTERM)
        raise SystemExit("capture: the bench's redis-server did not appear")
    # Which script each SHA-1 is (as this checkout has them: the build the bench runs should
    # be of it), so that a replay can run the scripts as they are by then.
    with open(path + ".scripts", "w") as out:
        out.write("".join(f"{sha1(text)} {name}\n" for name, text in scripts().items()))
    with open(path, "wb") as out:
        monitor = subprocess.Popen(["redis-cli", "-p", str(port), "monitor"], stdout=out, stderr=subprocess.DEVNULL)
        table = bench.communicate()[0].decode()
        monitor.terminate()
        monitor.wait()
    rows = [line for line in table.splitlines() if line.startswith(f"| {scenario} |")]
    print("\n".join(rows[:2]))
    print(f"captured {sum(1 for _ in open(path, 'rb'))} lines into {path}")


# --- replay -------------------------------------------------------------------------------

ESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", "a": b"\a", "b": b"\b", '"': b'"', "\\": b"\\"}


def unquote(text):
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            n = text[i + 1]
            if n == "x":
                out.append(int(text[i + 2:i + 4], 16))
                i += 4
                continue
            out += ESCAPES.get(n, n.encode())
            i += 2
            continue
        out += c.encode("latin-1")
        i += 1
    return bytes(out)


def commands(path):
    """The captured commands clients sent (not those scripts ran), in order. MONITOR writes
    every byte outside printable ASCII as an escape, so the lines are ASCII."""
    out = []
    for raw in open(path, "rb"):
        line = raw.decode("latin-1").rstrip("\n")
        head = line.find("] ")
        if head < 0 or "[0 lua]" in line[:head + 1]:
            continue
        args, i = [], head + 2
        while i < len(line):
            if line[i] == '"':
                j = i + 1
                while line[j] != '"':
                    j += 2 if line[j] == "\\" else 1
                args.append(unquote(line[i + 1:j]))
                i = j + 2
            else:
                i += 1
        if args and args[0].upper() not in SKIP:
            out.append(args)
    return out


def replay_once(cmds, names, texts):
    """One replay; `names`: each captured SHA-1's script, `texts`: each script's text."""
    home = tempfile.mkdtemp(prefix="lua-replay-")
    proc, conn = start_redis(home)
    try:
        loaded = {name: conn("SCRIPT", "LOAD", text).decode() for name, text in texts.items()}
        shas = {sha: loaded[name] for sha, name in names.items() if name in loaded}
        cpu0 = cpu(conn)
        errors = 0
        for i in range(0, len(cmds), 256):
            batch = []
            for c in cmds[i:i + 256]:
                if c[0].upper() == b"EVALSHA":
                    c = [c[0], shas.get(c[1].decode(), c[1].decode()).encode()] + c[2:]
                batch.append(c)
            errors += sum(isinstance(r, Exception) for r in conn.pipe(batch))
        stats = conn("INFO", "commandstats").decode()
        used = re.search(r"cmdstat_evalsha:calls=(\d+),usec=(\d+)", stats)
        inside, total = int(used.group(2)) if used else 0, cpu(conn) - cpu0
    finally:
        # valgrind writes its counts once redis-server has gone.
        conn.sock.sendall(encode([b"SHUTDOWN", b"NOSAVE"]))
        proc.wait()
    text = open(os.path.join(home, "counts")).read()
    shutil.rmtree(home, ignore_errors=True)
    refs = re.search(r"(?:I\s+refs|Collected)\s*:\s+([\d,]+)", text)
    instructions = int(refs.group(1).replace(",", "")) if refs else 0
    return inside, total, errors, instructions


def cpu(conn):
    info = conn("INFO", "cpu").decode()
    return sum(float(v) for v in re.findall(r"used_cpu_(?:user|sys):([\d.]+)", info))


def run(path, swaps):
    if shutil.which("valgrind") is None:
        sys.exit("lua_replay.py run needs valgrind (apt-get install valgrind)")
    current = scripts()
    names = {sha1(text): name for name, text in current.items()}
    if os.path.exists(path + ".scripts"):
        names.update(line.split() for line in open(path + ".scripts") if line.strip())
    builds = {"as is": current}
    for swap in swaps:
        # Several files change together when given as one argument, joined by commas. A file
        # given first to other scripts (a helper such as `lease.lua`) changes in each.
        texts = dict(current)
        for one in swap.split(","):
            name, variant = one.split("=", 1)
            original, replacement = open(os.path.join(LUA, name)).read(), open(variant).read()
            if not any(original in text for text in texts.values()):
                sys.exit(f"{name} is in no script as this checkout has it")
            texts = {n: text.replace(original, replacement) for n, text in texts.items()}
        builds[swap] = texts
    cmds = commands(path)
    unknown = {c[1] for c in cmds if c[0].upper() == b"EVALSHA" and c[1].decode() not in names}
    if unknown:
        sys.exit(f"scripts not known by their SHA-1: {sorted(unknown)} (capture again with this checkout)")
    evalshas = sum(1 for c in cmds if c[0].upper() == b"EVALSHA")
    print(f"{len(cmds)} commands, {evalshas} script calls")
    rounds = int(os.environ.get("ROUNDS", "1"))
    results = {b: [] for b in builds}
    for r in range(rounds):
        order = list(builds) if r % 2 == 0 else list(reversed(builds))
        for b in order:
            results[b].append(replay_once(cmds, names, builds[b]))
    for b, rs in results.items():
        inside = sorted(x[0] for x in rs)
        total = sorted(x[1] for x in rs)
        instructions = sorted(x[3] for x in rs)
        mid = len(rs) // 2
        print(f"{b}: Redis instructions {instructions[mid] / 1e6:.1f} M (median; {', '.join(f'{x / 1e6:.1f}' for x in instructions)});"
              f" time inside scripts {inside[mid] / 1000:.1f} ms, Redis CPU {total[mid] * 1000:.1f} ms (medians); errors {max(x[2] for x in rs)}")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "capture":
        name = re.sub(r"\W+", "-", sys.argv[2]).strip("-")
        capture(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "target/lua-replay", name + ".monitor"))
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
