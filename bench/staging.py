"""What staging a batch's model rows costs an executor: `StagingTarget.write` of tagged Arrow rows
shaped like a facet history's, on a fresh store of each backend.

    .venv/bin/python bench/staging.py [--backend sqlite|postgresql|both] [--rows 300000] [--rounds 3]
    PYTHONPATH=/tmp/base/src:bench .venv/bin/python bench/staging.py     # another checkout's code

Each round stages `--rows` rows of `dataset_facets` (node ids, facet names, 22-character hashes,
times; a fifth of the optional values NULL) in batches of 10,000, as one executor task would, then
empties staging. Printed per backend: the process CPU and the wall time of a round's `write`
(median of the rounds), and the CPU per row. On PostgreSQL the server's own CPU is not counted;
on SQLite the driver's `collect` into the store is left out (only the executor's share).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from _common import Database
from headwater.store import open_store
from headwater.store.model import TAGGED, prepare_staging, staging_target
from headwater.store.model.tables import TABLES

BATCH = 10_000


def tagged_batches(rows: int, seed: int = 1) -> list[pa.RecordBatch]:
    rng = random.Random(seed)
    width = len(TAGGED.names) - 1
    staged = TABLES["dataset_facets"].staged
    batches = []
    for start in range(0, rows, BATCH):
        count = min(BATCH, rows - start)
        columns: list[list[str | None]] = [["dataset_facets"] * count]
        for name in staged:
            if name.endswith("node_id"):
                values = [f"dataset:s3://bucket:warehouse/t{rng.randrange(10**5)}" for _ in range(count)]
            elif "hash" in name:
                values = [f"{rng.getrandbits(128):032x}"[:22] for _ in range(count)]
            elif "time" in name or name.endswith("from"):
                values = [
                    f"2025-01-0{1 + rng.randrange(9)}T10:00:00.{rng.randrange(10**7):07d}Z"
                    for _ in range(count)
                ]
            else:
                values = [None if rng.random() < 0.2 else str(rng.randrange(10**6)) for _ in range(count)]
            columns.append(list(values))
        columns += [[None] * count for _ in range(width - len(staged))]
        batches.append(pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in columns], schema=TAGGED))
    return batches


def measure(url: str, batches: list[pa.RecordBatch], rounds: int) -> tuple[float, float]:
    store = open_store(url)
    try:
        cpu, wall = [], []
        for _ in range(rounds):
            prepare_staging(store)
            target = staging_target(store)
            c0, w0 = time.process_time(), time.perf_counter()
            target.write(batches)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        prepare_staging(store)
        return statistics.median(cpu), statistics.median(wall)
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    args = parser.parse_args()
    batches = tagged_batches(args.rows)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    with tempfile.TemporaryDirectory(prefix="headwater-staging-") as folder:
        for backend in backends:
            database = Database(backend, Path(folder), "staging", args.pg_url)
            try:
                cpu, wall = measure(database.url, batches, args.rounds)
            finally:
                database.drop()
            print(
                f"{backend}: {args.rows:,} rows staged: CPU {cpu:.2f} s "
                f"({cpu / args.rows * 1e6:.2f} µs a row), wall {wall:.2f} s (median of {args.rounds})"
            )


if __name__ == "__main__":
    main()
