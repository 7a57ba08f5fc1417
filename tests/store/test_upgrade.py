"""Upgrades: a store made by the previous release's schema, holding events and a published model,
serves the same answers after `headwater db upgrade` as a store made by this version; and no
migration rewrites an existing table (the rule in `SqlEventStore.migrate`), on both backends.

There are no release tags. PREVIOUS_RELEASE is migration 0005: migrations 0006-0008 came with the
generic events (issue 11), still open when this test was written, so 0005 — the last migration of
the work landed before it, the lineage queries' store reads — is the schema of the last whole
release. Upgrading from it runs 0006, 0007 (which numbers the published datasets and jobs as
browse elements: a migration that carries data) and every later migration. Bump it when a release
is cut.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Iterator
from graphlib import TopologicalSorter
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from pyspark.sql import SparkSession

from headwater.api.app import create_app
from headwater.cli import main
from headwater.config import Settings
from headwater.events.validate import validate_event
from headwater.pipeline.runner import Pipeline
from headwater.store import EventStore, open_store
from headwater.store.base import DeadLetter
from headwater.store.sqlite.store import _statements
from tests.conftest import BACKENDS
from tests.factories import run_event
from tests.pipeline.conftest import spark
from tests.query.lineage_graph import DAY2, RUNS, events
from tests.store.whole_payloads import store_whole

pytestmark = pytest.mark.slow  # long: started first under xdist (tests/conftest.py)

__all__ = ["spark"]

PREVIOUS_RELEASE = 5
RECEIVED = f"{DAY2}T23:00:00.0000000Z"
LATER = "2024-01-03T00:00:00.0000000Z"

# Reads of every API family that the previous release served, over tests/query/lineage_graph.py.
READS = [
    "/api/v1/namespaces",
    "/api/v1/namespaces/ns",
    "/api/v1/namespaces/ns/datasets?limit=100",
    "/api/v1/namespaces/ns/datasets/d",
    "/api/v1/namespaces/warehouse/datasets/public.a",
    "/api/v1/namespaces/ns/jobs?limit=100",
    "/api/v1/namespaces/ns/jobs/transform",
    "/api/v1/namespaces/ns/jobs/transform/runs",
    "/api/v1/jobs?limit=100",
    f"/api/v1/jobs/runs/{RUNS['transform_v2']}",
    f"/api/v1/jobs/runs/{RUNS['transform_v2']}/facets?type=job",
    "/api/v1/lineage?nodeId=dataset:ns:d&depth=20",
    "/api/v1/lineage?nodeId=job:ns:report&depth=2",
    "/api/v1/column-lineage?nodeId=dataset:ns:d",
    "/api/v1/search?q=tra",
    "/api/v1/sources",
    "/api/v1/tags",
    "/api/v1/overview",
    f"/api/v1/runlineage/upstream?runId={RUNS['report']}",
    "/api/v1/events/lineage?limit=200",
    "/api/v1/ingest/errors",
    f"/api/atlas/v2/openlineage/runs/{RUNS['extract']}",
    "/api/warehouse/v1/lineage/end-to-end?nodeId=dataset:ns:d",
    "/api/warehouse/v1/lineage/ultimate-source?nodeId=dataset:ns:h",
    "/api/warehouse/v1/lineage/vertical?nodeId=dataset:ns:d",
    "/api/warehouse/v1/impact?nodeId=dataset:ns:b",
]


def migrate_to(store: EventStore, version: int) -> None:
    """Apply the migrations up to `version` only, with the real runner."""
    every = store._migrations  # type: ignore[attr-defined]
    store._migrations = lambda: (m for m in every() if m[0] <= version)  # type: ignore[attr-defined]
    try:
        store.migrate()
    finally:
        del store._migrations  # type: ignore[attr-defined]
    assert store.schema_version() == version


def migrations(backend: str) -> Traversable:
    """The folder of the backend's migration scripts."""
    return resources.files(f"headwater.store.{'postgres' if backend == 'postgresql' else backend}.migrations")


def migration_versions(backend: str) -> list[int]:
    folder = migrations(backend)
    return sorted(int(e.name.split("_", 1)[0]) for e in folder.iterdir() if e.name.endswith(".sql"))


class Databases:
    """Fresh, empty store URLs of one backend, dropped at the end."""

    def __init__(self, backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.backend, self.request, self.tmp_path = backend, request, tmp_path
        self.dropped: list[str] = []

    def new(self, label: str) -> str:
        if self.backend == "sqlite":
            return f"sqlite:///{self.tmp_path / label}.db"
        self.admin: str = self.request.getfixturevalue("postgres_admin_url")
        name = f"headwater_upgrade_{label}_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.dropped.append(name)
        return self.admin.rsplit("/", 1)[0] + "/" + name

    def drop(self) -> None:
        for name in self.dropped:
            with psycopg.connect(self.admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=BACKENDS)
def databases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Databases]:
    made = Databases(str(request.param), request, tmp_path)
    yield made
    made.drop()


def _fill(store: EventStore, *, whole: bool = False) -> None:
    """What a store of the previous release holds besides the model: the events (`whole`: as that
    release wrote them, whole payloads), dead letters."""
    validated = [validate_event(doc, orjson.dumps(doc)) for doc in events()]
    if whole:
        store_whole(store, validated, RECEIVED)
    else:
        store.append(validated, RECEIVED)
    store.add_dead_letters(
        [DeadLetter("openlineage.events", 0, 41, b"k", b"{not json", "not JSON: line 1", RECEIVED)]
    )


def _tables(store: EventStore) -> list[str]:
    """The store's own tables (not FTS shadow tables, not views), a table after those its foreign
    keys name."""
    with store._reading() as cur:  # type: ignore[attr-defined]
        if store.backend == "sqlite":
            cur.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            rows = cur.fetchall()
            virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL")]
            names = [
                name
                for name, _ in rows
                if not name.startswith("sqlite_") and not any(name.startswith(v) for v in virtual)
            ]
            references = {}
            for name in names:
                cur.execute('SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)', (name,))
                references[name] = {row[0] for row in cur.fetchall()}
        else:
            cur.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
            references = {row[0]: set() for row in cur.fetchall()}
            cur.execute(
                "SELECT tc.table_name, ccu.table_name FROM information_schema.table_constraints tc "
                "JOIN information_schema.constraint_column_usage ccu "
                "USING (constraint_schema, constraint_name) "
                "WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = 'public'"
            )
            for table, referenced in cur.fetchall():
                references[table].add(referenced)
    return list(TopologicalSorter(references).static_order())


def _columns(store: EventStore, table: str) -> list[str]:
    with store._reading() as cur:  # type: ignore[attr-defined]
        cur.execute(f"SELECT * FROM {table} WHERE 1 = 0")
        return [d[0] for d in cur.description]


# Tables the previous release kept and this one does not, as its pipeline filled them
_GONE = {
    "condensed_edges": (  # each input of a job to each of its outputs (dropped by 0020)
        "SELECT i.src_id, o.dst_id, i.dst_id FROM lineage_edges i JOIN lineage_edges o "
        "ON o.src_id = i.dst_id AND o.edge_type = 'output' "
        "WHERE i.edge_type = 'input' AND i.src_id <> o.dst_id"
    )
}


def copy_model(source: EventStore, target: EventStore) -> int:
    """Copy the rows of every table the target has, by column name, but those `_fill` writes
    (events and dead letters keep their ids by being written the same way); returns how many."""
    copied = 0
    skip = {"events", "dead_letters", "schema_migrations"}
    with target.transaction() as cur:
        for table in _tables(target):
            if table in skip:
                continue
            columns = ", ".join(_columns(target, table))
            with source._reading() as read:  # type: ignore[attr-defined]
                # in the source's physical order, which some answers follow as an upgrade keeps it
                order = "rowid" if source.backend == "sqlite" else "ctid"
                read.execute(_GONE.get(table, f"SELECT {columns} FROM {table} ORDER BY {order}"))
                rows = read.fetchall()
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                cur.executemany(target.sql(f"INSERT INTO {table} ({columns}) VALUES ({marks})"), rows)
                copied += len(rows)
    return copied


def answers(store: EventStore) -> dict[str, tuple[int, Any]]:
    """Status and JSON of every read; the overview's `recentSince` (a week before now) and its
    `pipeline` left out: that is the pipeline's progress, not the model, and an upgraded store's
    graph waits for the next pass (migration 0020 recomputes it whole)."""
    found = {}
    with TestClient(create_app(Settings(database_url=store.url), store)) as client:
        for url in READS:
            answer = client.get(url)
            body = answer.json()
            if isinstance(body, dict):
                body.pop("recentSince", None)
                body.pop("pipeline", None)
            found[url] = (answer.status_code, body)
    return found


def unordered(value: Any) -> Any:
    """The JSON value with every list sorted (by the JSON of its items, themselves unordered)."""
    if isinstance(value, dict):
        return {key: unordered(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [unordered(item) for item in value]
        return sorted(items, key=lambda item: orjson.dumps(item, option=orjson.OPT_SORT_KEYS))
    return value


def assert_same(
    actual: dict[str, tuple[int, Any]], expected: dict[str, tuple[int, Any]], *, ordered: bool = True
) -> None:
    """Equal answers (lists in the same order, unless not `ordered`), or the differing reads with
    a diff of their JSON."""
    if not ordered:
        actual, expected = unordered(actual), unordered(expected)
    differing = []
    for url, answer in expected.items():
        if actual.get(url) != answer:
            lines = [
                orjson.dumps(a, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode().splitlines()
                for a in (answer, actual.get(url))
            ]
            diff = "\n".join(difflib.unified_diff(*lines, "new store", "upgraded store", lineterm="", n=2))
            differing.append(f"{url}:\n{diff}")
    assert not differing, "\n".join(differing)


def elements(store: EventStore) -> dict[str, list[str]]:
    """The browse API's dataset and job elements by description (ids are numbered differently:
    by the pipeline in publish order, by migration 0007 in name order)."""
    found = {}
    with TestClient(create_app(Settings(database_url=store.url), store)) as client:
        for kind in ("dataset", "job"):
            answer = client.get(f"/lineage/1/elements?element_type={kind}&limit=1000")
            assert answer.status_code == 200, answer.text
            found[kind] = sorted(row["description"] for row in answer.json())
    return found


def test_upgrade_from_the_previous_release_serves_the_same_answers(
    databases: Databases, spark: SparkSession
) -> None:
    current = open_store(databases.new("current"))
    previous = open_store(databases.new("previous"), migrate=False)
    try:
        _fill(current)
        Pipeline(spark, current, dogfood=False, partitions=2).run_once()
        current.set_tag("dataset:ns:d", "PII", field=None, tagged=True, now=RECEIVED)
        current.set_tag("dataset:ns:b", "PII", field="x", tagged=True, now=RECEIVED)

        migrate_to(previous, PREVIOUS_RELEASE)
        _fill(previous, whole=True)
        assert copy_model(current, previous) > 100
        previous.close()

        result = CliRunner().invoke(main, ["db", "upgrade", "--database-url", previous.url])
        assert result.exit_code == 0, result.output
        newer = [v for v in migration_versions(databases.backend) if v > PREVIOUS_RELEASE]
        latest = max(newer)
        applied, converted = result.stdout.strip().splitlines()
        assert applied == f"applied migrations {', '.join(map(str, newer))}; schema version {latest}"
        assert converted.startswith("converted ")  # the events, each facet value kept once
        previous = open_store(previous.url, migrate=False)
        assert previous.schema_version() == latest

        expected = answers(current)
        assert all(status == 200 for status, _ in expected.values()), expected
        assert_same(answers(previous), expected)
        assert elements(previous) == elements(current)
        assert elements(current)["dataset"], "no elements to compare"

        # and the pipeline goes on from the upgraded store's checkpoint as from the new one's
        later = run_event(
            "00000000-0000-4000-8000-000000000099",
            event_type="COMPLETE",
            event_time="2024-01-03T00:00:00Z",
            namespace="ns",
            job="archive",
            inputs=[{"namespace": "ns", "name": "h"}],
            outputs=[{"namespace": "ns", "name": "archive"}],
        )
        for store in (current, previous):
            store.append([validate_event(later, orjson.dumps(later))], LATER)
            assert Pipeline(spark, store, dogfood=False, partitions=2).run_once().batches == 1
        # Spark wrote each store's graph tables in an order of its own this time, and the order of
        # some lists (a lineage graph's nodes, a job's inputs) follows the tables' (issue noted).
        expected = answers(current)
        assert_same(answers(previous), expected, ordered=False)
        assert "dataset:ns:archive" in str(expected["/api/v1/lineage?nodeId=dataset:ns:d&depth=20"])
        assert elements(previous) == elements(current)
    finally:
        current.close()
        previous.close()


# -- no migration rewrites an existing table ---------------------------------------------------------
_CREATED = re.compile(r"^CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)
_REWRITES = [
    re.compile(r"^UPDATE\s+(\w+)", re.I),
    re.compile(r"^DELETE\s+FROM\s+(\w+)", re.I),
    re.compile(r"^DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\w+)", re.I),
    re.compile(r"^TRUNCATE\s+(?:TABLE\s+)?(\w+)", re.I),
    re.compile(r"^CREATE\s+TABLE\s+\w+\s+AS\s+SELECT\b.*?\bFROM\s+(\w+)", re.I | re.S),
]
_ALTER = re.compile(r"^ALTER\s+TABLE\s+(?:ONLY\s+)?(\w+)\s+(.*)$", re.I | re.S)
# An added column whose default is a constant (or none) rewrites no row, on SQLite and on
# PostgreSQL 11+; anything else ALTER TABLE does to an existing table may.
_ADD_COLUMN = re.compile(
    r"^ADD\s+(?:COLUMN\s+)?\w+\s+[\w ()]+?(?:\s+DEFAULT\s+(?:'[^']*'|-?\d+(?:\.\d+)?|NULL|TRUE|FALSE))?"
    r"(?:\s+(?:NOT\s+)?NULL)?$",
    re.I,
)


# The pipeline's state, a row per pipeline, which a migration may set (to have the graph computed
# whole again, 0020); and a graph table the pipeline recomputed whole, which 0020 drops.
_SET_OR_DROPPED = frozenset({"pipeline_state", "condensed_edges"})


def rewrites(folder: Traversable) -> list[str]:
    """Statements of the migrations in `folder` that rewrite, empty or drop a table an earlier
    migration created (where a live store keeps its data), but for the pipeline's state."""
    existing: set[str] = set()
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        created = set()
        for statement in _statements(entry.read_text()):
            text = statement.strip().rstrip(";")
            if match := _CREATED.match(text):
                created.add(match.group(1).lower())
            targets = [m.group(1).lower() for pattern in _REWRITES if (m := pattern.match(text))]
            if (alter := _ALTER.match(text)) and not _ADD_COLUMN.match(alter.group(2).strip()):
                targets.append(alter.group(1).lower())
            found += [
                f"{entry.name}: {text[:80]}"
                for table in targets
                if table in existing and table not in _SET_OR_DROPPED
            ]
        existing |= created
    return found


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_migration_rewrites_an_existing_table(backend: str) -> None:
    assert rewrites(migrations(backend)) == []


def test_the_rewrite_check_finds_rewrites(tmp_path: Path) -> None:
    """The check above can fail: migrations that break the rule are caught, and only those."""
    package = tmp_path
    (package / "0001_events.sql").write_text("CREATE TABLE events (seq INTEGER, payload TEXT);\n")
    (package / "0002_ok.sql").write_text(
        "CREATE TABLE other (a TEXT);\nUPDATE other SET a = 'x';\n"
        "ALTER TABLE events ADD COLUMN kind TEXT DEFAULT 'run' NOT NULL;\n"
    )
    (package / "0003_bad.sql").write_text(
        "UPDATE events SET payload = lower(payload);\nALTER TABLE events ALTER COLUMN seq TYPE BIGINT;\n"
        "CREATE TABLE events2 AS SELECT * FROM events;\nDROP TABLE events;\nDELETE FROM other WHERE 1;\n"
    )
    found = rewrites(package)
    assert [line.split(": ", 1)[1].split()[0] for line in found] == [
        "UPDATE",
        "ALTER",
        "CREATE",
        "DROP",
        "DELETE",
    ]
    assert all(line.startswith("0003_bad.sql") for line in found)
