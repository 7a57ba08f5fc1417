"""A PostgreSQL store warns its operator when autovacuum does not run on the server."""

from __future__ import annotations

import logging

import psycopg
import pytest

from headwater.store import open_store
from headwater.store.postgres import store as postgres_store
from headwater.store.postgres.store import maintenance_warning


@pytest.mark.parametrize(
    ("autovacuum", "track_counts", "warned"),
    [("on", "on", False), ("off", "on", True), ("on", "off", True)],
)
def test_the_warning_names_what_keeps_autovacuum_from_running(
    autovacuum: str, track_counts: str, warned: bool
) -> None:
    warning = maintenance_warning(autovacuum, track_counts, "db:5432/lineage")
    assert (warning is not None) == warned
    if warning is not None:
        assert f"autovacuum = {autovacuum}, track_counts = {track_counts}" in warning
        assert "db:5432/lineage" in warning and "VACUUM (ANALYZE)" in warning


def test_opening_a_store_warns_once_when_the_server_runs_without_autovacuum(
    postgres_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute("SELECT current_setting('autovacuum'), current_setting('track_counts')").fetchone()
    assert row is not None
    expected = row != ("on", "on")
    monkeypatch.setattr(postgres_store, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="headwater.store.postgres.store"):
        for _ in range(2):
            open_store(postgres_url).close()
    warnings = [r.getMessage() for r in caplog.records if "runs without autovacuum" in r.getMessage()]
    assert len(warnings) == (1 if expected else 0), warnings
