"""More incremental passes on a store `bench/pipeline.py --keep` left: append the next events of
the same generated stream and run one pipeline pass after each, printing each pass's stages and
the pipeline's own log (a late facet read-back says so there).

    .venv/bin/python bench/pipeline.py --events 200000 --backend sqlite --skip-duckdb \\
        --skip-cluster --skip-continuous --keep --workdir /tmp/pb          # a store to go on from
    .venv/bin/python bench/more_passes.py sqlite:////tmp/pb/pipeline.db --skip 205000

`--skip`: the events the store already holds from the stream (the load, plus `bench/pipeline.py`'s
five incremental passes of 1,000). On a store published by an earlier Headwater version this shows
what its first passes cost (the facet history is trimmed as batches touch it, docs/operations.md).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import logging
import time

from headwater.pipeline.runner import Pipeline
from headwater.pipeline.session import spark_session
from headwater.store import open_store
from pipeline import EventFactory, EventStream, append_inline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="the store's database URL")
    parser.add_argument("--skip", type=int, default=205_000, help="events of the stream the store holds")
    parser.add_argument("--passes", type=int, default=3, help="passes to run")
    parser.add_argument("--events", type=int, default=1_000, help="events appended before each pass")
    parser.add_argument("--seed", type=int, default=7, help="the stream's seed (bench/pipeline.py's)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    logging.getLogger("headwater.pipeline.runner").setLevel(logging.INFO)

    store = open_store(args.url)
    stream = EventStream(EventFactory(seed=1), seed=args.seed)
    stream.take(args.skip)
    pipeline = Pipeline(spark_session("local[2]"), store, dogfood=False)
    for n in range(1, args.passes + 1):
        append_inline(store, stream.take(args.events))
        started = time.perf_counter()
        result = pipeline.run_once()
        stages = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in result.stages.items())
        print(f"pass {n}: {time.perf_counter() - started:.2f} s ({stages})", flush=True)


if __name__ == "__main__":
    main()
