"""Metrics shared by sibling processes (`headwater.ingest.metrics_shared`): each renders the sum of
every process's counters and histograms, a process that ended included, and the gauges of those
still alive. The siblings are real spawned processes writing to a real folder."""

from __future__ import annotations

import multiprocessing
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
