"""`headwater consume --processes N`: N consumers of one group, each a process of its own.

Decoding and validating hold the GIL, so one process uses at most one core, and it waits for the
broker and the store part of the time (hence two per core by default, `headwater consume`); Kafka's
own way to scale is more consumers in the group, each owning some partitions (so order within a
partition still holds) and storing them itself. The first consumer runs in the calling process;
the others are forked before any store connection or librdkafka thread exists, stop on SIGTERM
like it, and stop by themselves when their parent disappears. Each sends what it did back to the
first when it stops.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Sequence
from multiprocessing.queues import SimpleQueue
from pathlib import Path

from headwater.config import Settings
from headwater.ingest import metrics_shared
from headwater.ingest.kafka import ConsumeTotals, KafkaIngester
from headwater.store import open_store

log = logging.getLogger(__name__)


def consume_in_this_process(
    settings: Settings, *, parent: int | None = None, started: Callable[[], None] = lambda: None
) -> ConsumeTotals:
    """Open the store, consume until SIGINT/SIGTERM (or until `parent` is gone); what it did."""
    store = open_store(settings.database_url)
    try:
        ingester = KafkaIngester(settings, store)
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, lambda *_: ingester.stop())
        if parent is not None:
            threading.Thread(target=_watch_parent, args=(parent, ingester), daemon=True).start()
        started()
        ingester.run()
    finally:
        store.close()
    return ingester.totals


def _watch_parent(parent: int, ingester: KafkaIngester) -> None:
    while not ingester.stopping:
        if os.getppid() != parent:
            log.warning("the parent consumer process is gone; stopping")
            ingester.stop()
            return
        threading.Event().wait(1)


def _child(
    settings: Settings, parent: int, metrics_folder: Path, results: SimpleQueue[ConsumeTotals]
) -> None:
    metrics_shared.share(metrics_folder)
    try:
        results.put(consume_in_this_process(settings, parent=parent))
    finally:
        metrics_shared.stop_sharing()


def consume_in_processes(
    settings: Settings, processes: int, *, started: Callable[[], None] = lambda: None
) -> tuple[int, list[ConsumeTotals]]:
    """Run `processes` consumers (this process and processes - 1 forked ones) until SIGINT/SIGTERM,
    their metrics shared (each renders the sum). Returns the exit status (1 when a forked consumer
    failed) and what each did, this process's first (a consumer that failed or did not stop
    within a minute of the others is left out)."""
    if processes == 1:
        return _consume_with(settings, [], None, started)
    with metrics_shared.shared_folder() as folder:
        context = multiprocessing.get_context("fork")
        results: SimpleQueue[ConsumeTotals] = context.SimpleQueue()
        children = [
            context.Process(
                target=_child, args=(settings, os.getpid(), folder, results), name=f"headwater-consume-{i}"
            )
            for i in range(1, processes)
        ]
        for child in children:
            child.start()
        metrics_shared.share(folder)  # after the forks: a child shares on its own
        try:
            return _consume_with(settings, children, results, started)
        finally:
            metrics_shared.stop_sharing()


def _consume_with(
    settings: Settings,
    children: Sequence[multiprocessing.process.BaseProcess],
    results: SimpleQueue[ConsumeTotals] | None,
    started: Callable[[], None],
) -> tuple[int, list[ConsumeTotals]]:
    """Consume in this process beside the forked `children`; stop them when this one stops, and
    collect what each sent to `results`."""
    failed = threading.Event()
    stopping = threading.Event()

    def watch(child: multiprocessing.process.BaseProcess) -> None:
        child.join()  # the only thread that waits for this child, so exitcode is reliable
        if not stopping.is_set() and child.exitcode != 0:
            log.error("consumer process %s exited with %s; stopping the others", child.pid, child.exitcode)
            failed.set()
            os.kill(os.getpid(), signal.SIGTERM)

    watchers = [threading.Thread(target=watch, args=(child,), daemon=True) for child in children]
    for watcher in watchers:
        watcher.start()
    try:
        totals = [consume_in_this_process(settings, started=started)]
    finally:
        stopping.set()
        for child, watcher in zip(children, watchers, strict=True):
            if child.pid is not None and watcher.is_alive():  # not reaped yet: its pid is its own
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGTERM)  # finish the batch in hand, leave the group
        for watcher in watchers:
            watcher.join(60)
    while results is not None and not results.empty():  # a child puts its totals before it exits
        totals.append(results.get())
    return (1 if failed.is_set() else 0), totals
