"""What `headwater serve` acknowledged survives its processes being killed outright: every event
answered 201 is in the store once, however the server died, on both backends."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid

import orjson

from headwater.store import open_store
from tests.api.test_ingest_protocol import Connection, post
from tests.api.test_serve_workers import _listening_pids, _wait_for_workers
from tests.conftest import LiveServer
from tests.factories import run_event


class _Producer(threading.Thread):
    """Sends events on one connection, each single or in a batch of `batch`, until the server is
    gone; remembers the run ids of those acknowledged."""

    def __init__(self, port: int, batch: int) -> None:
        super().__init__(daemon=True)
        self.port, self.batch = port, batch
        self.acknowledged: list[str] = []
        self.sent = 0

    def run(self) -> None:
        try:
            conn = Connection(self.port)
            while True:
                runs = [str(uuid.uuid4()) for _ in range(self.batch)]
                events = [run_event(run) for run in runs]
                if self.batch == 1:
                    conn.send(post("/api/v1/lineage", orjson.dumps(events[0])))
                else:
                    conn.send(post("/api/v1/lineage/batch", orjson.dumps(events)))
                self.sent += len(runs)
                status = conn.answer()[0]
                if status in (200, 201):
                    self.acknowledged.extend(runs)
        except (OSError, ValueError, IndexError):  # the server died mid-answer
            return


def test_what_was_acknowledged_survives_sigkill(database_url: str) -> None:
    server = LiveServer(database_url, "--workers", "2")
    workers = _wait_for_workers(server, 2)
    producers = [_Producer(server.port, batch) for batch in (1, 1, 1, 1, 50, 200)]
    for producer in producers:
        producer.start()
    deadline = time.monotonic() + 20
    while sum(len(p.acknowledged) for p in producers) < 2_000:
        assert time.monotonic() < deadline, "the server acknowledged too little"
        time.sleep(0.05)
    for pid in {server.process.pid, *workers, *_listening_pids(server.port)}:
        os.kill(pid, signal.SIGKILL)  # no shutdown, no last commit: whatever is durable stays
    server.process.wait(10)
    for producer in producers:
        producer.join(10)
        assert not producer.is_alive()
    acknowledged = [run for p in producers for run in p.acknowledged]
    store = open_store(database_url)
    try:
        stored = store.list_events(after_time=None, before_time=None, descending=False, limit=10**6, offset=0)
    finally:
        store.close()
    runs = [event.run_id for event in stored]
    assert len(runs) == len(set(runs))  # nothing twice
    missing = set(acknowledged).difference(runs)
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged events were lost"
    assert len(runs) <= sum(p.sent for p in producers)
