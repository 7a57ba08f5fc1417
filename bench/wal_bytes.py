"""What SQLite writes to disk for each appended event: the bytes this process writes (the WAL's
frames and the checkpoints that copy them back, from /proc/self/io's `wchar`) and its CPU, per
event, appending in commits of `--size` events, with the store as it is or with one of its
indexes on `events` dropped (`--drop NAME`, repeatable: one line each).

    .venv/bin/python bench/wal_bytes.py [--size 16] [--events 6000] [--drop events_by_run ...]
    .venv/bin/python bench/wal_bytes.py --size 1000 --events 20000 --live --from /tmp/pb1m/pipeline.db

A commit writes every page it changed whole (8 KB), so a small group of events costs the pages
of every index leaf its random keys touch. Small commits are what single POSTs make (groups of
8-16 events from 32 connections), so this is where their write turns go (bench/README).
SQLite only, in a temporary folder; the events are `EventFactory`'s, validated before timing.

`--from FILE` appends to a copy of that store instead of an empty one (one `bench/pipeline.py
--keep` left: an index of 1,000,000 entries has so many leaves that each random key dirties one
of its own). `--live` gives the events eventTimes 100 µs apart, as a live stream at 10,000
events a second would, instead of the generator's (about 375 s for 1,000 events): eventIds begin
with the time's low bits, so only live events keep their keys in a narrow range.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta

import orjson

from _common import EventFactory
from headwater.events.model import Event
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest.bodies import read_documents
from headwater.ingest.service import validate_documents
from headwater.store import open_store

WARM = 2_000  # events stored before timing, so the indexes are not empty


def written_bytes() -> int:
    """Bytes this process has passed to write calls so far (Linux)."""
    with open("/proc/self/io", encoding="ascii") as io:
        for line in io:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise SystemExit("no wchar in /proc/self/io: Linux only")


def validated(count: int, *, live: bool = False) -> list[Event]:
    stream = EventFactory().stream(count, seed=5)
    docs = [next(stream) for _ in range(count)]
    if live:
        start = datetime(2026, 1, 1, tzinfo=UTC)
        for i, doc in enumerate(docs):
            doc["eventTime"] = (start + timedelta(microseconds=100 * i)).isoformat().replace("+00:00", "Z")
    body = b"[" + b",".join(orjson.dumps(doc) for doc in docs) + b"]"
    documents, _ = read_documents(body, "application/json", None, len(body) + 1, lazy=True)
    return validate_documents(documents).events


def measure(events: list[Event], size: int, drop: str | None, start: str | None) -> tuple[float, float]:
    """(bytes written, CPU seconds) per event, appending all but the first WARM in commits of `size`
    (to a copy of the store `start` when given)."""
    folder = tempfile.mkdtemp(prefix="headwater-wal-")
    if start:
        shutil.copyfile(start, f"{folder}/wal.db")
    store = open_store(f"sqlite:///{folder}/wal.db")
    try:
        if drop is not None:
            with store.transaction() as cur:
                cur.execute(f"DROP INDEX {drop}")
        store.append(events[:WARM], format_ticks(now_ticks()))
        timed = events[WARM:]
        start_bytes, start_cpu = written_bytes(), time.process_time()
        for at in range(0, len(timed), size):
            store.append(timed[at : at + size], format_ticks(now_ticks()))
        time.sleep(1.0)  # the checkpointer thread copies the last commits back
        return (written_bytes() - start_bytes) / len(timed), (time.process_time() - start_cpu) / len(timed)
    finally:
        store.close()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=16, help="events per commit [16]")
    parser.add_argument("--events", type=int, default=6_000, help="events timed [6,000]")
    parser.add_argument("--drop", action="append", default=[], help="an index on events to drop (repeatable)")
    parser.add_argument("--from", dest="start", metavar="FILE", help="append to a copy of this SQLite store")
    parser.add_argument("--live", action="store_true", help="eventTimes 100 µs apart, as a live stream")
    args = parser.parse_args()
    events = validated(WARM + args.events, live=args.live)
    held = f", on a copy of {args.start}" if args.start else ""
    print(f"commits of {args.size} events, {args.events:,} events timed{held}")
    for drop in [None, *args.drop]:
        written, cpu = measure(events, args.size, drop, args.start)
        label = f"without {drop}" if drop else "the store as it is"
        print(f"  {label:36s} {written / 1024:6.1f} KB written/event  {cpu * 1e6:6.1f} µs CPU/event")


if __name__ == "__main__":
    main()
