"""`headwater ingest` of a large NDJSON file, timed whole as a user runs it: events a second, the
command's peak memory, and its CPU (its validating processes included).

    .venv/bin/python bench/replay.py [--events 200000] [--backend sqlite|postgresql|both] [--gzip]
    .venv/bin/python bench/replay.py --src /tmp/base/src      # another checkout's code, for before/after

The events are `EventFactory`'s (about 6.5 KB each), written once to `--workdir` and kept there
for the next run (`--fresh` writes them again). Each run replays them into an empty store with the
command's defaults (`--batch-size` 1,000, its progress bar off); the figures are the median of
`--runs`. Nothing is asserted and there is no target: issue 13's targets are for HTTP and Kafka,
which this path shares its validation and its appends with.
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

from _common import Database, EventFactory, Figure, human_bytes, print_table

ROOT = Path(__file__).resolve().parent.parent


def write_events(path: Path, events: int, compress: bool) -> None:
    stream = EventFactory().stream(events, seed=11)
    opener = gzip.open if compress else open
    with opener(path, "wb") as out:
        for doc in stream:
            out.write(orjson.dumps(doc) + b"\n")


def replay_once(url: str, path: Path, src: Path) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (the command and its children), peak resident bytes of its
    largest process, and its summary line."""
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "headwater", "ingest", "--database-url", url, "-q", str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"headwater ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss * 1024, done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--gzip", action="store_true", help="replay a gzipped file (.ndjson.gz)")
    parser.add_argument("--runs", type=int, default=2, help="replays per backend (the median is shown)")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the checkout's src folder to run")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/headwater-bench-replay"))
    parser.add_argument("--fresh", action="store_true", help="write the events file again")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()

    args.workdir.mkdir(parents=True, exist_ok=True)
    path = args.workdir / f"events-{args.events}.ndjson{'.gz' if args.gzip else ''}"
    if args.fresh or not path.exists():
        print(f"writing {args.events:,} events to {path}", flush=True)
        write_events(path, args.events, args.gzip)
    size = path.stat().st_size
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    figures: list[Figure] = []
    for backend in backends:
        runs = []
        for n in range(args.runs):
            db = Database(backend, args.workdir, f"replay{n}", args.pg_url)
            try:
                runs.append(replay_once(db.url, path, args.src))
            finally:
                db.drop()
            wall, cpu, peak, line = runs[-1]
            print(
                f"{backend} run {n + 1}: {wall:.1f} s, CPU {cpu:.1f} s, peak {human_bytes(peak)}: {line}",
                flush=True,
            )
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        peak = max(r[2] for r in runs)
        note = (
            f"{human_bytes(size)} file, {wall:.1f} s (runs {', '.join(f'{r[0]:.1f}' for r in runs)}), "
            f"CPU {cpu / args.events * 1e6:.0f} µs/event, peak memory {human_bytes(peak)}"
        )
        figures.append(Figure(backend, "headwater ingest, NDJSON", args.events / wall, "ev/s", note=note))
    print()
    print_table(figures)


if __name__ == "__main__":
    main()
