"""Metrics shared by sibling processes (`headwater.ingest.metrics_shared`): each renders the sum of
every process's counters and histograms, a process that ended included, and the gauges of those
still alive. The siblings are real spawned processes writing to a real folder."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable
from multiprocessing.synchronize import Event
from pathlib import Path

from headwater.ingest import metrics, metrics_shared
from headwater.ingest.metrics import parse_samples

STORED = ("headwater_ingest_events_total", (("outcome", "stored"), ("source", "http")))
LATENCIES = ("headwater_http_ingest_seconds_count", ())
LAG_0 = ("headwater_kafka_consumer_lag", (("partition", "0"), ("topic", "t")))
LAG_1 = ("headwater_kafka_consumer_lag", (("partition", "1"), ("topic", "t")))


def _sibling(folder: Path, stored: int, partition: int, counted: Event, leave: Event | None) -> None:
    """A process that counts, publishes, and ends at once or once told to."""
    metrics_shared.share(folder)
    metrics.EVENTS.inc(stored, source="http", outcome="stored")
    metrics.HTTP_SECONDS.observe(0.002)
    metrics.KAFKA_LAG.set(10 + partition, topic="t", partition=partition)
    counted.set()
    if leave is not None:
        leave.wait(60)
    metrics_shared.stop_sharing()


def _rendered(reader: metrics_shared.SharedMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.REGISTRY.render(reader.siblings())
    return {(name, tuple(sorted(labels.items()))): value for name, labels, value in parse_samples(text)}


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 15
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_each_process_renders_the_sum_of_all_and_a_gone_one_keeps_its_counts_not_its_gauges(
    tmp_path: Path,
) -> None:
    context = multiprocessing.get_context("spawn")  # a fresh registry in each sibling
    reader = metrics_shared.SharedMetrics(tmp_path)  # this process, not publishing
    own = _rendered(reader)
    stays_counted, ends_counted, leave = context.Event(), context.Event(), context.Event()
    stays = context.Process(target=_sibling, args=(tmp_path, 3, 0, stays_counted, leave))
    ends = context.Process(target=_sibling, args=(tmp_path, 5, 1, ends_counted, None))
    stays.start()
    ends.start()
    try:
        assert stays_counted.wait(60) and ends_counted.wait(60)
        ends.join(60)
        assert ends.exitcode == 0

        def summed() -> bool:
            now = _rendered(reader)
            return now.get(STORED, 0) == own.get(STORED, 0) + 8 and now.get(LAG_0) == 10

        _until(summed, "the siblings' counts in the sum")
        now = _rendered(reader)
        assert now[LATENCIES] == own.get(LATENCIES, 0) + 2  # histograms add up too
        assert LAG_1 not in now  # the gauge of a process that ended
    finally:
        leave.set()
        stays.join(60)
    assert stays.exitcode == 0
    after = _rendered(reader)
    assert after[STORED] == own.get(STORED, 0) + 8  # what ended processes counted stays counted
    assert LAG_0 not in after and LAG_1 not in after
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        f"{pid}.json" for pid in (stays.pid, ends.pid)
    )


def test_folders_that_killed_parents_left_behind_are_removed_and_no_other(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    old = time.time() - 2 * metrics_shared.STALE_SECONDS

    def folder(name: str, pids: list[int], modified: float) -> Path:
        made = tmp_path / f"headwater-metrics-{name}"
        made.mkdir()
        for pid in pids:
            (made / f"{pid}.json").write_bytes(b"{}")
        os.utime(made, (modified, modified))
        return made

    stale = folder("stale", [dead.pid], old)
    empty_and_old = folder("empty", [], old)
    alive = folder("alive", [dead.pid, os.getpid()], old)
    recent = folder("recent", [dead.pid], time.time())
    other = tmp_path / "headwater-other"
    other.mkdir()
    os.utime(other, (old, old))
    with metrics_shared.shared_folder(tmp_path) as mine:
        assert mine.exists()
        assert not stale.exists() and not empty_and_old.exists()
        assert alive.exists() and recent.exists() and other.exists()
    assert not mine.exists()
