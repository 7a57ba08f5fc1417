"""bench/_common.py's realistic events: the runIds they carry, random or time-ordered."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest
from bench._common import EventFactory


def _run_ids(events: list[dict[str, object]]) -> list[str]:
    """The runIds in the order their runs first appear, parents included."""
    seen: dict[str, None] = {}
    for event in events:
        run = event["run"]
        assert isinstance(run, dict)
        parent = (run.get("facets") or {}).get("parent")
        if parent:
            seen.setdefault(parent["run"]["runId"])
        seen.setdefault(run["runId"])
    return list(seen)


def _millis(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def test_version_7_run_ids_begin_with_their_runs_start_and_sort_as_the_runs_start() -> None:
    events = list(EventFactory(seed=3, jobs=5).stream(300, seed=3, run_ids="v7"))
    ids = [uuid.UUID(text) for text in _run_ids(events)]
    assert len(ids) > 50
    assert all(i.version == 7 and i.variant == uuid.RFC_4122 for i in ids)
    own = [uuid.UUID(event["run"]["runId"]) for event in events]
    assert own == sorted(own), "a later run's id sorts after an earlier run's"
    for event in events:
        started = uuid.UUID(event["run"]["runId"]).int >> 80  # the id's first 48 bits: milliseconds
        assert 0 <= _millis(event["eventTime"]) - started < 60_000


def test_run_ids_are_random_by_default_and_the_same_for_a_seed() -> None:
    default = list(EventFactory(seed=3, jobs=5).stream(100, seed=3))
    assert default == list(EventFactory(seed=3, jobs=5).stream(100, seed=3, run_ids="v4"))
    ids = [uuid.UUID(text) for text in _run_ids(default)]
    assert all(i.version == 4 for i in ids)
    assert ids != sorted(ids)
    with pytest.raises(ValueError, match="run_ids"):
        next(EventFactory(seed=3, jobs=5).stream(1, run_ids="v1"))
