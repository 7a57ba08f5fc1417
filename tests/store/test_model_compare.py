"""Comparing two stores' models table by table (store/model/compare.py), on real SQLite stores."""

from __future__ import annotations

from pathlib import Path

from headwater.store import open_store
from headwater.store.base import EventStore
from headwater.store.model.compare import compare_models, model_rows


def _namespaces(store: EventStore, *names: str) -> None:
    with store.transaction() as cur:
        for name in names:
            cur.execute(
                "INSERT INTO namespaces (name, created_at, updated_at) VALUES (?, ?, ?)",
                (name, "2026-01-01T00:00:00.0000000Z", "2026-01-02T00:00:00.0000000Z"),
            )


def test_equal_models_have_no_difference_and_each_extra_row_is_shown(tmp_path: Path) -> None:
    first, second = (open_store(f"sqlite:///{tmp_path / n}.db") for n in ("a", "b"))
    _namespaces(first, "etl", "dbt")
    _namespaces(second, "dbt", "etl")  # the order rows were written in does not matter
    assert compare_models(first, second) == []
    assert model_rows(first) == model_rows(second)

    _namespaces(first, "spark")
    _namespaces(second, "airflow", "kafka")
    (diff,) = compare_models(first, second)
    assert diff.name == "namespaces"
    assert (diff.rows_first, diff.rows_second) == (3, 4)
    assert [row[0] for row in diff.only_first] == ["spark"]
    assert sorted(row[0] for row in diff.only_second) == ["airflow", "kafka"]
    assert len(compare_models(first, second, show=1)[0].only_second) == 1
