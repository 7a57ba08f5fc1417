"""`headwater retention` on both backends, before any pipeline pass (no Spark needed): the dry run
counts, the real run deletes the events past the limit, whole runs, and leaves the rest."""

from __future__ import annotations

import uuid
from typing import Any

from headwater.cli_pipeline import daily_retention
from headwater.config import Settings
from headwater.store.base import EventStore
from tests.pipeline.test_pipeline import ingest, query
from tests.test_cli import cli


def run_event(run_id: str, event_type: str, when: str) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": when,
        "producer": "https://example.com/retention-test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id},
        "job": {"namespace": "etl", "name": "daily"},
        "inputs": [{"namespace": "lake", "name": "raw"}],
        "outputs": [{"namespace": "lake", "name": "clean"}],
    }


def test_retention_from_the_command_line(store: EventStore, database_url: str) -> None:
    old, crossing, recent = (str(uuid.uuid4()) for _ in range(3))
    ingest(
        store,
        [
            run_event(old, "START", "2020-01-01T00:00:00Z"),
            run_event(old, "COMPLETE", "2020-01-01T01:00:00Z"),
            run_event(crossing, "START", "2020-01-02T00:00:00Z"),  # its run ends within the limit
            run_event(crossing, "COMPLETE", "2999-01-01T00:00:00Z"),
            run_event(recent, "START", "2999-01-02T00:00:00Z"),
        ],
    )
    dry = cli("retention", "--older-than", "30d", "--dry-run", "--database-url", database_url)
    assert dry.exit_code == 0, dry.output
    assert "would delete 2 event(s) (1 run(s), 0 generic event(s))" in dry.stdout
    assert len(query(store, "SELECT seq FROM events")) == 5

    done = cli("retention", "--older-than", "30d", "--database-url", database_url)
    assert done.exit_code == 0, done.output
    assert "deleted 2 event(s) (1 run(s)" in done.stdout
    assert sorted(r[0] for r in query(store, "SELECT DISTINCT run_id FROM events")) == sorted(
        [crossing, recent]
    )

    again = cli("retention", "--older-than", "30d", "--database-url", database_url)
    assert "deleted 0 event(s)" in again.stdout

    bad = cli("retention", "--older-than", "soon", "--database-url", database_url)
    assert bad.exit_code == 2 and "'soon' is not an age" in bad.output
    missing = cli("retention", "--database-url", database_url)
    assert missing.exit_code == 2 and "--older-than" in missing.output


def test_the_continuous_pipeline_applies_retention_days_once_a_day(
    store: EventStore, database_url: str
) -> None:
    old, recent = str(uuid.uuid4()), str(uuid.uuid4())
    ingest(store, [run_event(old, "COMPLETE", "2020-01-01T00:00:00Z")])
    after_pass = daily_retention(Settings(database_url=database_url, retention_days=30), store, runner=None)
    after_pass(None)  # the store has no published model yet: no Spark needed
    assert query(store, "SELECT run_id FROM events") == []
    ingest(store, [run_event(recent, "COMPLETE", "2020-01-02T00:00:00Z")])
    after_pass(None)  # retention ran less than a day ago
    assert query(store, "SELECT run_id FROM events") == [(recent,)]
    never = daily_retention(Settings(database_url=database_url), store, runner=None)  # 0 days
    never(None)
    assert query(store, "SELECT run_id FROM events") == [(recent,)]
