"""`headwater db backup`: a consistent copy of a live SQLite store while a thread ingests, and the
PostgreSQL answer (pg_dump)."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.events.generic import validate_generic_event
from headwater.events.validate import validate_event
from headwater.store import EventStore, open_store
from headwater.store.backup import backup_store
from headwater.store.generic import generic_store
from tests.factories import facet, run_event

RECEIVED = "2024-06-01T00:00:00.0000000Z"
BATCH = 40  # OpenLineage events per append: one transaction, so a copy holds all of a batch or none


def _batch(number: int) -> list[object]:
    """BATCH events of job `batch-{number}` with a wide schema facet (copies take a while)."""
    fields = [{"name": f"column_{i}", "type": "STRING", "description": "x" * 40} for i in range(30)]
    outputs = [
        {
            "namespace": "s3://lake",
            "name": f"t{number}",
            "facets": {"schema": facet("SchemaDatasetFacet", "1-1-1", fields=fields)},
        }
    ]
    return [
        validate_event(
            doc := run_event(
                job=f"batch-{number}",
                event_time=f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}.000Z",
                outputs=outputs,
            ),
            orjson.dumps(doc),
        )
        for i in range(BATCH)
    ]


class Ingest(threading.Thread):
    """Appends batches of OpenLineage events and one generic event after each, until stopped."""

    def __init__(self, store: EventStore) -> None:
        super().__init__(name="ingest", daemon=True)
        self.store = store
        self.batches = 0
        self.stop = threading.Event()
        self.failure: BaseException | None = None

    def run(self) -> None:
        generic = generic_store(self.store)
        try:
            while not self.stop.is_set():
                self.store.append(_batch(self.batches), RECEIVED)  # type: ignore[arg-type]
                doc = {
                    "type": "put model",
                    "description": f"model {self.batches}",
                    "elements": [{"type": "model", "description": f"m{self.batches}", "tags": {"n": "1"}}],
                    "tags": {"batch": str(self.batches)},
                }
                generic.append_generic([validate_generic_event(doc)], RECEIVED)
                self.batches += 1
        except BaseException as exc:  # reported by the test
            self.failure = exc


def _check_copy(copy: Path, low_seq: int, high_seq: int) -> int:
    """The copy passes integrity_check, opens as a store, and holds a prefix of the events:
    seqs 1..N without a gap, whole batches, a generic event with each of its browse rows.
    Returns N, which lies between the store's newest seq before and after the backup."""
    with sqlite3.connect(copy) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        seqs = [row[0] for row in conn.execute("SELECT seq FROM events ORDER BY seq")]
        assert seqs == list(range(1, len(seqs) + 1)), "the copy's events are not a prefix"
        per_job = Counter(name for (name,) in conn.execute("SELECT job_name FROM events WHERE kind = 'run'"))
        generic = {row[0] for row in conn.execute("SELECT seq FROM events WHERE kind = 'generic'")}
        browse = {row[0] for row in conn.execute("SELECT id FROM generic_events")}
        linked = {row[0] for row in conn.execute("SELECT event_id FROM generic_event_elements")}
    assert low_seq <= len(seqs) <= high_seq
    assert set(per_job.values()) <= {BATCH}, f"a batch was copied in part: {per_job}"
    assert sorted(per_job) == sorted(f"batch-{n}" for n in range(len(per_job))), "batches out of order"
    assert generic == browse == linked, "a generic event without its browse rows, or the reverse"
    # a generic event follows each batch: the copy ends after a batch or after its generic event
    assert len(generic) in (len(per_job), len(per_job) - 1)

    store = open_store(f"sqlite:///{copy}")
    try:
        assert store.migrate() == []
        assert store.count_events(after_time=None, before_time=None) == len(seqs)
        assert store.last_seq() == len(seqs)
    finally:
        store.close()
    return len(seqs)


def test_backup_while_a_thread_ingests(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'live.db'}"
    store = open_store(url)
    ingest = Ingest(store)
    ingest.start()
    try:
        while ingest.batches < 30 and ingest.is_alive():
            threading.Event().wait(0.01)
        sizes = []
        for attempt in range(3):
            before = store.last_seq()
            target = tmp_path / "backups" / f"copy-{attempt}.db"
            if attempt == 2:  # through the command, as an operator runs it
                result = CliRunner().invoke(
                    main, ["db", "backup", str(target), "--database-url", url], catch_exceptions=False
                )
                assert result.exit_code == 0, result.output
                assert f"to {target}:" in result.stdout and "event(s) up to seq" in result.stdout
            else:
                summary = backup_store(url, target)
                assert summary.path == target and summary.bytes == target.stat().st_size
            after = store.last_seq()
            assert not target.with_name(target.name + ".partial").exists()
            sizes.append(_check_copy(target, before, after))
            if attempt < 2:
                assert summary.events == summary.last_seq == sizes[-1]
                assert summary.schema_version == store.schema_version()
        assert ingest.is_alive() and ingest.failure is None
        assert sizes == sorted(sizes) and sizes[0] < store.last_seq(), "ingest stopped during the backups"
    finally:
        ingest.stop.set()
        ingest.join(timeout=30)
        store.close()
    assert ingest.failure is None, ingest.failure


def test_backup_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    open_store(url).close()
    target = tmp_path / "copy.db"
    target.write_text("precious")
    runner = CliRunner()
    refused = runner.invoke(main, ["db", "backup", str(target), "--database-url", url])
    assert refused.exit_code == 1 and "--force" in refused.stderr
    assert target.read_text() == "precious"
    forced = runner.invoke(main, ["db", "backup", str(target), "--database-url", url, "--force"])
    assert forced.exit_code == 0, forced.output
    with sqlite3.connect(target) as conn:
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone() == (0,)
    itself = runner.invoke(main, ["db", "backup", str(tmp_path / "store.db"), "--database-url", url])
    assert itself.exit_code == 1 and "the store itself" in itself.stderr


def test_backup_of_a_missing_store_says_so(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'nothing-here.db'}"
    result = CliRunner().invoke(main, ["db", "backup", str(tmp_path / "copy.db"), "--database-url", url])
    assert result.exit_code == 1
    assert "no SQLite store at" in result.stderr and "nothing-here.db" in result.stderr
    assert not (tmp_path / "nothing-here.db").exists() and not (tmp_path / "copy.db").exists()


def test_postgresql_backup_points_to_pg_dump(postgres_url: str, tmp_path: Path) -> None:
    target = tmp_path / "copy.db"
    result = CliRunner().invoke(main, ["db", "backup", str(target), "--database-url", postgres_url])
    assert result.exit_code == 1
    assert "pg_dump --format=custom" in result.stderr and "pg_restore" in result.stderr
    assert not target.exists()
    with pytest.raises(Exception, match="pg_dump"):
        backup_store(postgres_url, target)
