"""Where a group commit's time goes while the server ingests: per server process, the commits a
second, the events a commit, and each commit's wall time split into its write transaction's
start (BEGIN and the wait for the turn: SQLite's file lock, PostgreSQL's advisory lock), its body
(the inserts), its end (COMMIT, the flush to disk included) and what the writer thread does
outside the transaction; with the writer's CPU per commit.

    .venv/bin/python bench/group_commits.py                                  # PostgreSQL, scenario 1
    .venv/bin/python bench/group_commits.py -- --backend sqlite --scenarios 1
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/group_commits.py         # another checkout's code

It runs `bench/ingest.py` (`--backend postgresql --scenarios 1` unless told otherwise) with a
`sitecustomize` module first on the servers' path that wraps `GroupCommitWriter._try_commit` and
the stores' `_writing` with clocks; each server process writes its commits to a file, and this
command prints their means per process once the bench is done (the first fifth of each
process's commits, the warm-up, left out). The wrappers cost a few clock reads a commit. On
SQLite the writer takes its turn before the commit starts (`write_turn`: bench/write_turns.py
times it), so the start there is BEGIN alone. On PostgreSQL, since migration 0019, an append is
one statement outside `_writing` (`headwater_append`): its start, body and end read 0 and the
whole commit counts as outside; commits a second, events a commit, the commit's wall time and
the writer's CPU still hold.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Put first on the servers' sys.path as sitecustomize.py: each commit as one JSON list.
_PATCH = """
import contextlib, json, os, threading, time
_stores = []
try:
    from headwater.ingest import writer as _writer
    from headwater.store.sqlite.store import SqliteEventStore
    _stores.append(SqliteEventStore)
    from headwater.store.postgres.store import PostgresEventStore
    _stores.append(PostgresEventStore)
except Exception:
    _writer = None
if _writer is not None:
    _last = threading.local()
    _log = {"file": None}

    def _wrap(cls):
        original = cls._writing

        @contextlib.contextmanager
        def _writing(self, *args, **kwargs):
            start = time.perf_counter()
            with original(self, *args, **kwargs) as cur:
                began = time.perf_counter()
                yield cur
                ended = time.perf_counter()
            _last.times = (began - start, ended - began, time.perf_counter() - ended)

        cls._writing = _writing

    for _cls in _stores:
        _wrap(_cls)
    _original_commit = _writer.GroupCommitWriter._try_commit

    def _try_commit(self, group):
        _last.times = (0.0, 0.0, 0.0)
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return _original_commit(self, group)
        finally:
            wall, used = time.perf_counter() - start, time.thread_time() - cpu
            try:
                if _log["file"] is None:
                    folder = os.environ["BENCH_GROUP_COMMITS_DIR"]
                    _log["file"] = open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", buffering=1)
                events = sum(len(pending.events) for pending in group)
                _log["file"].write(json.dumps([start, wall, used, events, *_last.times]) + "\\n")
            except Exception:  # never the writer's problem
                pass

    _writer.GroupCommitWriter._try_commit = _try_commit
"""


def main() -> None:
    bench_args = sys.argv[1:]
    if bench_args[:1] == ["--"]:
        bench_args = bench_args[1:]
    if "--backend" not in bench_args:
        bench_args = ["--backend", "postgresql", *bench_args]
    if "--scenarios" not in bench_args:
        bench_args += ["--scenarios", "1"]
    with tempfile.TemporaryDirectory(prefix="headwater-commits-") as folder:
        (Path(folder) / "sitecustomize.py").write_text(_PATCH)
        env = dict(os.environ, BENCH_GROUP_COMMITS_DIR=folder)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH", "")) if p)
        bench = Path(__file__).with_name("ingest.py")
        subprocess.run([sys.executable, str(bench), *bench_args], env=env, check=True)
        logs = {
            int(path.stem): [json.loads(line) for line in path.read_text().splitlines()]
            for path in Path(folder).glob("*.jsonl")
        }
    print("\ngroup commits, per server process (means; ms):")
    print("     pid  commits/s  events/commit  commit  writer CPU  start+turn  body  end  outside  busy")
    for pid, commits in sorted(logs.items()):
        commits = commits[len(commits) // 5 :]
        if len(commits) < 2:
            continue
        span = commits[-1][0] + commits[-1][1] - commits[0][0]

        def mean(column: int, rows: list[list[float]] = commits) -> float:
            return statistics.mean(row[column] for row in rows) * 1000

        outside = statistics.mean(row[1] - row[4] - row[5] - row[6] for row in commits) * 1000
        print(
            f"  {pid:6d} {len(commits) / span:10.0f} {statistics.mean(c[3] for c in commits):14.1f} "
            f"{mean(1):7.2f} {mean(2):11.2f} {mean(4):11.2f} {mean(5):5.2f} {mean(6):4.2f} "
            f"{outside:8.2f} {sum(c[1] for c in commits) / span:5.2f}"
        )


if __name__ == "__main__":
    main()
