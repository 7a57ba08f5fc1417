"""How busy SQLite's write turn is while the server ingests: the share of the time each server
process holds the store's write lock, waits for it, and spends CPU (its writer thread's) while
holding it.

    .venv/bin/python bench/write_turns.py                      # bench/ingest.py --scenarios 1
    .venv/bin/python bench/write_turns.py -- --scenarios 2     # any bench/ingest.py arguments
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/write_turns.py   # another checkout's code

SQLite has one writer at a time: the server's processes take turns (`SqliteEventStore.write_turn`,
an flock), and a group commit gathers and commits inside its turn. When the turns together hold
the lock nearly all the time, commits are the bottleneck, whatever the CPU; when the writer's CPU
in its turn is well below the time held, the turn waits inside (fdatasync, or the GIL that the
process's event loop holds).

It runs `bench/ingest.py --backend sqlite` (scenario 1 unless told otherwise) with a
`sitecustomize` module first on the servers' path that wraps `write_turn` with clocks; every
5 seconds each server process appends its shares of that interval to a file, and this command
prints their medians per process once the bench is done, with each turn's wait for the lock (its
99th percentile, the median of the intervals', and the longest wait of all). The wrapper's own
cost is two clock reads per turn.
"""

from __future__ import annotations

import bisect
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

# Put first on the servers' sys.path as sitecustomize.py: wraps write_turn, appends JSON lines.
_PATCH = """
import contextlib, json, os, threading, time
try:
    from headwater.store.sqlite import store as _store
except Exception:
    _store = None
if _store is not None:
    _original = _store.SqliteEventStore.write_turn
    _state = {"pid": None}

    _depth = threading.local()

    @contextlib.contextmanager
    def write_turn(self):
        depth = getattr(_depth, "n", 0)  # turns nest (a transaction inside the group commit's)
        asked = time.perf_counter()
        with _original(self):
            got, cpu = time.perf_counter(), time.thread_time()
            _depth.n = depth + 1
            try:
                yield
            finally:
                _depth.n = depth
                held, used = time.perf_counter() - got, time.thread_time() - cpu
        if depth == 0:
            try:
                _note(asked, got - asked, held, used)
            except Exception:  # never the writer's problem
                pass

    def _note(asked, waited, held, used):
        pid = os.getpid()
        if _state["pid"] != pid:
            _state.update(pid=pid, since=time.perf_counter(), waited=0.0, held=0.0, used=0.0)
            _state.update(turns=0, waits=[], spans=[])
        _state["waits"].append(waited)
        _state["spans"].append((round(asked, 6), round(asked + waited, 6)))
        _state["waited"] += waited
        _state["held"] += held
        _state["used"] += used
        _state["turns"] += 1
        elapsed = time.perf_counter() - _state["since"]
        if elapsed >= 5.0:
            line = {k: _state[k] / elapsed for k in ("waited", "held", "used", "turns")}
            waits = sorted(_state["waits"])
            line["wait_p99"] = waits[int(len(waits) * 0.99)] * 1000 if waits else 0.0
            line["wait_max"] = waits[-1] * 1000 if waits else 0.0
            line["spans"] = _state["spans"]  # each turn's (asked, got), on the machine's clock
            with open(os.environ["BENCH_WRITE_TURNS_LOG"], "a") as out:
                out.write(json.dumps({"pid": pid, **line}) + "\\n")
            _state.update(since=time.perf_counter(), waited=0.0, held=0.0, used=0.0)
            _state.update(turns=0, waits=[], spans=[])

    _store.SqliteEventStore.write_turn = write_turn
"""


def main() -> None:
    bench_args = sys.argv[1:]
    if bench_args[:1] == ["--"]:
        bench_args = bench_args[1:]
    if not bench_args:
        bench_args = ["--scenarios", "1"]
    with tempfile.TemporaryDirectory(prefix="headwater-turns-") as folder:
        (Path(folder) / "sitecustomize.py").write_text(_PATCH)
        log = Path(folder) / "turns.jsonl"
        env = dict(os.environ, BENCH_WRITE_TURNS_LOG=str(log))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH", "")) if p)
        bench = Path(__file__).with_name("ingest.py")
        subprocess.run([sys.executable, str(bench), "--backend", "sqlite", *bench_args], env=env, check=True)
        lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    by_pid: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        by_pid[int(line["pid"])].append(line)
    print("\nwrite turns, per server process (median of its 5-second intervals):")
    print("     pid  intervals  held  waited  writer CPU while held  turns/s  wait p99 ms  wait max ms")
    held_total = 0.0
    for pid, intervals in sorted(by_pid.items()):
        keys = ("held", "waited", "used", "turns", "wait_p99")
        med = {key: statistics.median(i[key] for i in intervals) for key in keys}
        held_total += med["held"]
        print(
            f"  {pid:6d} {len(intervals):10d} {med['held']:5.2f} {med['waited']:7.2f} "
            f"{med['used']:22.2f} {med['turns']:8.0f} {med['wait_p99']:12.1f} "
            f"{max(i['wait_max'] for i in intervals):12.1f}"
        )
    print(f"  the lock held {held_total:.2f} of the time, all processes together (1.00: never free)")
    _print_long_waits(by_pid)


def _print_long_waits(by_pid: dict[int, list[dict[str, Any]]], longer_than: float = 0.03) -> None:
    """Each process's waits longer than `longer_than` seconds, and how many turns the other
    processes began while it waited: a lock that is not fair shows as long runs of them."""
    spans = {pid: [tuple(s) for i in intervals for s in i["spans"]] for pid, intervals in by_pid.items()}
    print(f"\nwaits over {longer_than * 1000:.0f} ms, and the turns others began meanwhile:")
    for pid, own in sorted(spans.items()):
        others = sorted(got for other, theirs in spans.items() if other != pid for _, got in theirs)
        runs = [
            bisect.bisect_left(others, got) - bisect.bisect_right(others, asked)
            for asked, got in own
            if got - asked > longer_than
        ]
        longest = max(runs, default=0)
        print(f"  {pid:6d}: {len(runs)} waits, others' turns during each: up to {longest}")


if __name__ == "__main__":
    main()
