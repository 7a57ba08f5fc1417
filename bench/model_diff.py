"""Compare the published lineage models of two Headwater stores, table by table.

    .venv/bin/python bench/model_diff.py sqlite:////tmp/a.db sqlite:////tmp/b.db

Every model table (and job_versions' counts) is read as a multiset of rows from each store; a table
whose rows differ is printed with its row counts and a few rows found only on one side. Exit
status 0 when the models are identical, 1 when they differ. Use it to check that a change to the
pipeline publishes the same model as before: build the same events' model with the old code (a
`git archive` of it, run with PYTHONPATH) in one store and with the new code in a copy, then
compare. Compare stores of one backend: values read back from SQLite and PostgreSQL differ in type.
"""

from __future__ import annotations

import argparse
import sys
import time

from headwater.store import open_store
from headwater.store.model.compare import compare_models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/model_diff.py",
        description="Compare the lineage models of two stores table by table; exit 1 when they differ.",
    )
    parser.add_argument("first", help="database URL of the first store (sqlite:///PATH or postgresql://...)")
    parser.add_argument("second", help="database URL of the second store")
    parser.add_argument("--show", type=int, default=5, help="rows shown per side of a table")
    args = parser.parse_args(argv)

    tick = time.perf_counter()
    first, second = open_store(args.first, migrate=False), open_store(args.second, migrate=False)
    diffs = compare_models(first, second, show=args.show)
    for diff in diffs:
        print(f"{diff.name}: {diff.rows_first:,} rows in the first, {diff.rows_second:,} in the second")
        for side, rows in (("only in the first ", diff.only_first), ("only in the second", diff.only_second)):
            for row in rows:
                print(f"  {side}: {row!r}")
    verdict = f"{len(diffs)} table(s) differ" if diffs else "the models are identical"
    print(f"{verdict} ({time.perf_counter() - tick:.1f} s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
