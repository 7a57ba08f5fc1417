"""How much of a published model's facet history repeats itself: for `dataset_facets` and
`job_facets`, the assertions (rows) and how many of them change the value in force (the first
of a node's facet, a value other than the one before it, a deletion or the first after one).

    .venv/bin/python bench/facet_changes.py sqlite:////tmp/pb/pipeline.db

A history that kept only the changes would answer "the facet in force at T" the same way, with
this many rows (bench/README: what keeping only changes would and would not save). Reads the
store's model; SQLite or PostgreSQL.
"""

from __future__ import annotations

import argparse

from headwater.store.model.connections import connect

TABLES = ("dataset_facets", "job_facets")
_CHANGES = """
SELECT COUNT(*), COALESCE(SUM(CASE WHEN before_hash IS NULL OR before_hash <> value_hash
                                    OR deleted = 1 OR before_deleted = 1 THEN 1 ELSE 0 END), 0)
FROM (SELECT value_hash, deleted,
             LAG(value_hash) OVER w AS before_hash, LAG(deleted) OVER w AS before_deleted
      FROM {table}
      WINDOW w AS (PARTITION BY node_id, name ORDER BY valid_from, seq)) AS history
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url", help="the store's URL (sqlite:///… or postgresql://…)")
    args = parser.parse_args()
    conn = connect(args.url)  # a reader's connection, as the pipeline's executors open one
    try:
        cur = conn.cursor()
        for table in TABLES:
            cur.execute(_CHANGES.format(table=table))
            rows, changes = cur.fetchone()
            share = f"{changes / rows:.1%}" if rows else "-"
            print(f"{table:15s} {rows:12,} assertions  {changes:10,} changes ({share})")
    finally:
        conn.close()


if __name__ == "__main__":
    main()
