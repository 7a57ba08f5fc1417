"""GET /api/v1/pipeline, the overview's `pipeline`, the pipeline gauges of /metrics and `headwater
status`: how far the pipeline has published the events stored, on both backends. The checkpoints
are moved by the merge's own `checkpoint.advance`; tests/ui/test_home_waiting.py runs the real
pipeline behind the home page."""

from __future__ import annotations

import time
from typing import Any

from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.events.times import format_ticks, now_ticks
from headwater.events.validate import validate_event
from headwater.store.base import EventStore
from headwater.store.model import checkpoint
from headwater.store.model_rows import PIPELINE_REPORT_JOB
from tests.factories import run_event


def store_events(store: EventStore, count: int) -> None:
    events = [
        validate_event(doc, None)
        for doc in (run_event(event_time=f"2024-05-01T10:00:{i:02d}.000Z") for i in range(count))
    ]
    assert sum(store.append(events, format_ticks(now_ticks()))) == count


def progress(client: TestClient) -> Any:
    response = client.get("/api/v1/pipeline")
    assert response.status_code == 200, response.text
    return response.json()


def publish_through(store: EventStore, seq: int, graph_seq: int) -> None:
    with store.transaction() as cur:
        checkpoint.state_in(store, cur)
        checkpoint.advance(store, cur, seq, graph_seq)


def test_a_pipeline_that_never_ran_leaves_every_event_waiting(client: TestClient, store: EventStore) -> None:
    assert progress(client) == {
        "storedThrough": 0,
        "publishedThrough": 0,
        "graphThrough": 0,
        "waitingEvents": 0,
        "waitingMore": False,
        "waitingReports": 0,
        "publishedAt": None,
    }
    store_events(store, 5)
    answer = progress(client)
    assert (answer["storedThrough"], answer["waitingEvents"], answer["publishedAt"]) == (5, 5, None)
    assert client.get("/api/v1/overview").json()["pipeline"] == answer


def test_the_events_above_the_checkpoint_wait(client: TestClient, store: EventStore) -> None:
    store_events(store, 6)
    publish_through(store, 4, 3)
    answer = progress(client)
    assert (answer["publishedThrough"], answer["graphThrough"], answer["waitingEvents"]) == (4, 3, 2)
    assert answer["publishedAt"] is not None and answer["publishedAt"].endswith("Z")
    result = CliRunner().invoke(main, ["status", "--database-url", store.url, "--url", "http://127.0.0.1:9"])
    assert result.exit_code == 0, result.output
    assert "pipeline: published through seq 4 of 6, its graph through 3; 2 event(s) waiting" in result.output

    publish_through(store, 6, 6)
    answer = progress(client)
    assert (answer["publishedThrough"], answer["graphThrough"], answer["waitingEvents"]) == (6, 6, 0)


def test_metrics_carry_the_pipelines_gauges(client: TestClient, store: EventStore) -> None:
    def gauges() -> dict[str, float]:
        text = client.get("/metrics").text
        found = {}
        for line in text.splitlines():
            if line.startswith("headwater_pipeline_"):
                name, value = line.split()
                found[name.removeprefix("headwater_pipeline_")] = float(value)
        return found

    store_events(store, 3)
    assert gauges() == {"events_waiting": 3, "stored_seq": 3, "published_seq": 0, "graph_seq": 0}
    before = time.time()
    publish_through(store, 2, 2)
    after = gauges()
    assert (after["events_waiting"], after["published_seq"], after["graph_seq"]) == (1, 2, 2)
    assert before - 1 <= after["last_published_timestamp_seconds"] <= time.time() + 1


def test_the_pipelines_reports_of_its_passes_are_told_apart(client: TestClient, store: EventStore) -> None:
    store_events(store, 2)
    reports = [
        validate_event(run_event(namespace=namespace, job=name, event_type=kind), None)
        for kind in ("START", "COMPLETE")
        for namespace, name in [PIPELINE_REPORT_JOB]
    ]
    assert sum(store.append(reports, format_ticks(now_ticks()))) == 2
    answer = progress(client)
    assert (answer["waitingEvents"], answer["waitingReports"]) == (4, 2)
    result = CliRunner().invoke(main, ["status", "--database-url", store.url, "--url", "http://127.0.0.1:9"])
    assert "4 event(s) waiting (2 of them its report of its last pass)" in result.output


def test_a_long_backlog_is_counted_up_to_a_bound(store: EventStore) -> None:
    store_events(store, 7)
    found = store.pipeline_progress(count_up_to=3)
    assert (found.stored_through, found.published_through, found.waiting) == (7, 0, 3)
