"""The event store in SQL, written once for both backends; they supply connections and dialect."""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from importlib import resources
from typing import Any

import orjson

from headwater.events.model import Event
from headwater.store.base import DeadLetter, EventStore, RunCursor, StoredEvent
from headwater.store.catalog_sql import CatalogSql
from headwater.store.deletions_sql import DeletionsSql, visible, visible_namespace
from headwater.store.event_facets import (
    SWEEPS,
    RecentHashes,
    assemble_payloads,
    fetch_values,
    scan_references,
    stored_core,
    write_facets,
)
from headwater.store.graph_sql import GraphSql
from headwater.store.in_force_sql import facets_in_force
from headwater.store.model_rows import (
    PIPELINE_REPORT_JOB,
    DatasetRef,
    DatasetRow,
    Facet,
    JobRow,
    NamespaceRow,
    NamespaceSummary,
    PipelineProgress,
    RunRow,
)
from headwater.store.packing import pack_core
from headwater.store.sql_reads import CHUNK, SqlReads
from headwater.store.stats_sql import StatsSql
from headwater.store.vertical_sql import VerticalSql

log = logging.getLogger(__name__)

COLUMNS = (
    "seq, event_id, kind, run_id, parent_run_id, root_run_id, event_type, event_time, job_namespace, "
    "job_name, dataset_namespace, dataset_name, producer, received_at, payload, untrusted_facets, "
    "facet_count, core"
)
_INSERT_COLUMNS = COLUMNS.removeprefix("seq, ")
# content_hash is written empty: the SHA-256 of the event's canonical JSON, which the stored event
# gives back, read by nothing, took 65 bytes of every row as hex (bench/README.md, issue 13); the
# eventId keeps 62 bits of it. Rows written before keep theirs. The same for generic events.
NO_CONTENT_HASH = ""
_INSERT = (
    f"INSERT INTO events ({_INSERT_COLUMNS}, content_hash) "
    f"VALUES ({', '.join('?' * (_INSERT_COLUMNS.count(',') + 1))}, '{NO_CONTENT_HASH}') "
    "ON CONFLICT (event_id) DO NOTHING"
)
_DEAD_LETTER_COLUMNS = "topic, partition_no, msg_offset, msg_key, msg_value, error, received_at"
_NEWEST_FIRST = "ORDER BY event_time DESC, event_id DESC"
# A page of one key's events of a run (`where`), newest first, after a cursor (`after`: empty or
# " AND " and a condition), read in that order from the key's index; a backend whose index keeps
# no order for the key overrides this (`SqlEventStore.run_page`).
RUN_PAGE = "SELECT {columns} FROM events WHERE {where}{after} " + _NEWEST_FIRST + " LIMIT ?"
_AFTER = " AND (event_time, event_id) < (?, ?)"
# A run's events, then those of its tree: its children by parent, and the rest by root. The root's
# index holds only the events the first two do not find (migration 0014); a query repeats its
# condition to use it.
RUN_ONLY = "run_id = ?"
RUN_TREE = (
    RUN_ONLY,
    "parent_run_id = ?",
    "root_run_id = ? AND root_run_id <> run_id AND root_run_id <> parent_run_id",
)

# -- the lineage model --------------------------------------------------------------------------
LATEST_RUNS = 10  # runs a job answer carries in latestRuns, like Marquez
_DATASET_COLUMNS = (
    "d.node_id, d.namespace, d.name, d.created_at, d.updated_at, d.source_name, d.current_version, "
    "v.lifecycle, v.schema_hash, "
    "(SELECT MAX(r.ended_at) FROM dataset_versions dv "
    "JOIN dataset_version_runs dvr ON dvr.version_id = dv.version_id "
    "JOIN runs r ON r.run_id = dvr.run_id WHERE dv.node_id = d.node_id AND r.state = 'COMPLETED')"
)
_DATASET_FROM = "datasets d LEFT JOIN dataset_versions v ON v.version_id = d.current_version"
_JOB_COLUMNS = (
    "j.node_id, j.namespace, j.name, j.created_at, j.updated_at, j.current_version, j.latest_run_id, "
    "(SELECT MIN(p.name) FROM job_parents jp JOIN jobs p ON p.node_id = jp.parent_node_id "
    "WHERE jp.child_node_id = j.node_id)"
)
_RUN_COLUMNS = (
    "r.run_id, j.namespace, j.name, r.state, r.state_time, r.started_at, r.ended_at, r.duration_ms, "
    "r.nominal_start, r.nominal_end, r.parent_run_id, r.root_run_id, r.job_version, r.first_event_time, "
    "r.last_event_time"
)
_RUN_ORDER = "COALESCE(r.started_at, r.first_event_time) DESC, r.run_id DESC"


def _row_to_event(row: Sequence[Any], payload: str) -> StoredEvent:
    untrusted = row[15]
    values = list(row[:14])
    values.append(payload)
    values.append(tuple(orjson.loads(untrusted)) if untrusted else ())
    return StoredEvent(*values)


def _text(value: Any) -> Any:
    # JSON allows "\u0000" in strings; PostgreSQL TEXT does not. The payload keeps it escaped;
    # only the extracted index columns need cleaning.
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _insert_params(event: Event, received_at: str) -> tuple[Any, ...]:
    core = None if event.core is None else pack_core(event.core)
    params = (
        event.event_id,
        event.kind,
        event.run_id,
        event.parent_run_id,
        event.root_run_id,
        event.event_type,
        event.event_time,
        event.job_namespace,
        event.job_name,
        event.dataset_namespace,
        event.dataset_name,
        event.producer,
        received_at,
        event.payload if core is None else "",  # a core goes to `core`, as bytes (migration 0018)
        orjson.dumps(list(event.untrusted_facets)).decode() if event.untrusted_facets else None,
        None if event.core is None else len(event.facet_values),
        core,
    )
    names = (
        f"{event.run_id}{event.parent_run_id}{event.root_run_id}{event.job_namespace}{event.job_name}"
        f"{event.dataset_namespace}{event.dataset_name}{event.producer}"
    )
    # two tests, not sixteen calls (a core is orjson's writing: a NUL in it is escaped)
    clean = "\x00" in names or (core is None and "\x00" in (event.payload or ""))
    return tuple(map(_text, params)) if clean else params


class SqlEventStore(CatalogSql, GraphSql, VerticalSql, StatsSql, DeletionsSql, SqlReads, EventStore):
    """The store in SQL; a backend provides connections (`_reading`, `_writing`) and dialect."""

    migrations_package: str
    run_page = RUN_PAGE

    # -- what a backend provides -------------------------------------------------------------
    @abstractmethod
    def _writing(self) -> AbstractContextManager[Any]:
        """A cursor inside one write transaction, committed durably on exit, serialized with any
        other writer so that seq grows in commit order."""

    @abstractmethod
    def _run_script(self, cursor: Any, script: str) -> None:
        """Run a migration script (several statements) on the cursor."""

    # -- shared SQL ------------------------------------------------------------------------------
    def _recent_facets(self) -> RecentHashes:
        """The hashes of facet values this store object wrote lately (event_facets.py)."""
        recent: RecentHashes | None = getattr(self, "_facets_written", None)
        if recent is None:
            recent = self._facets_written = RecentHashes()
        return recent

    def _stored_events(self, cur: Any, rows: Sequence[Sequence[Any]]) -> list[StoredEvent]:
        """Rows of COLUMNS as events, each payload whole again."""
        payloads = assemble_payloads(
            [(stored_core(row[14], row[17]), row[16]) for row in rows],
            lambda hashes: fetch_values(cur, self._sql, hashes),
        )
        return [_row_to_event(row, payload) for row, payload in zip(rows, payloads, strict=True)]

    def sweep_facet_values(self, candidates: set[str]) -> int:
        left = set(candidates)
        if not left:
            return 0
        with self._reading() as cur:  # the long read holds no writer back
            seen = scan_references(cur, self._sql, 0, left)
        with self._writing() as cur:
            scan_references(cur, self._sql, seen, left)  # what came in meanwhile
            doomed = sorted(left)
            for start in range(0, len(doomed), CHUNK):
                chunk = doomed[start : start + CHUNK]
                cur.execute(
                    self._sql(f"DELETE FROM event_facets WHERE hash IN ({', '.join('?' * len(chunk))})"),
                    chunk,
                )
            cur.execute(self._sql("UPDATE store_state SET value = value + 1 WHERE name = ?"), (SWEEPS,))
        return len(doomed)

    def sql(self, query: str) -> str:
        return self._sql(query)

    def transaction(self) -> AbstractContextManager[Any]:
        return self._writing()

    def last_seq(self) -> int:
        with self._reading() as cur:
            cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def pipeline_progress(self, *, count_up_to: int) -> PipelineProgress:
        with self.snapshot(), self._reading() as cur:
            cur.execute(
                "SELECT checkpoint, graph_checkpoint, updated_at FROM pipeline_state WHERE name = 'lineage'"
            )
            state = cur.fetchone() or (0, 0, None)
            checkpoint, graph, published_at = int(state[0]), int(state[1]), state[2]
            cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events")
            last = int(cur.fetchone()[0])
            cur.execute(
                self._sql(
                    "SELECT COUNT(*), "
                    "COALESCE(SUM(CASE WHEN job_namespace = ? AND job_name = ? THEN 1 ELSE 0 END), 0) "
                    "FROM (SELECT job_namespace, job_name FROM events WHERE seq > ? LIMIT ?) AS waiting"
                ),
                (*PIPELINE_REPORT_JOB, checkpoint, count_up_to),
            )
            waiting, reports = (int(value) for value in cur.fetchone())
        published = str(published_at) if published_at and (checkpoint or graph) else None
        return PipelineProgress(last, checkpoint, graph, waiting, reports, published)

    def _migrations(self) -> Iterator[tuple[int, str, str]]:
        folder = resources.files(self.migrations_package)
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.name.endswith(".sql"):
                version = int(entry.name.split("_", 1)[0])
                yield version, entry.name.removesuffix(".sql"), entry.read_text()

    def schema_version(self) -> int:
        with self._reading() as cur:
            try:
                cur.execute("SELECT MAX(version) FROM schema_migrations")
            except Exception:  # no table yet: nothing applied
                return 0
            row = cur.fetchone()
            return int(row[0]) if row and row[0] is not None else 0

    def migrate(self) -> list[int]:
        """Apply the migrations not applied yet (`migrations_package`'s NNNN_name.sql, in order),
        all in one write transaction: an upgrade that fails leaves the store as it was.

        The rule every migration keeps, because this transaction holds every writer back while it
        runs and a store may hold hundreds of millions of events: never rewrite, empty or drop a
        table an earlier migration created — no UPDATE or DELETE of it, no copy-and-swap rebuild,
        no ALTER TABLE but ADD COLUMN with a constant default or none (which rewrites no row on
        SQLite or PostgreSQL 11+). Creating tables and indexes is fine (an index over `events`
        reads it once); so is filling a new table from existing ones when that is one pass. A
        change to existing rows is made by code in bounded batches after the migration, or, for
        the lineage model, by `pipeline rebuild`. tests/store/test_upgrade.py checks the scripts
        against this rule, and that a store of the previous release serves the same answers
        once upgraded (docs/operations.md)."""
        applied: list[int] = []
        with self._writing() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            cur.execute("SELECT version FROM schema_migrations")
            done = {int(row[0]) for row in cur.fetchall()}
            for version, name, script in self._migrations():
                if version in done:
                    continue
                log.info("applying migration %s to %s", name, self.backend)
                self._run_script(cur, script)
                cur.execute(
                    self._sql("INSERT INTO schema_migrations VALUES (?, ?, CURRENT_TIMESTAMP)"),
                    (version, name),
                )
                applied.append(version)
        return applied

    def append(self, events: Sequence[Event], received_at: str) -> list[bool]:
        if not events:
            return []
        first: dict[str, int] = {}
        for position, event in enumerate(events):
            first.setdefault(event.event_id, position)
        positions = list(first.values())  # the first of each eventId, in order
        unique = [events[p] for p in positions]
        params = [_insert_params(event, received_at) for event in unique]  # before the lock
        new = self._insert_events(unique, params)
        stored = {p for p, is_new in zip(positions, new, strict=True) if is_new}
        return [position in stored for position in range(len(events))]

    def _insert_events(self, events: Sequence[Event], params: Sequence[tuple[Any, ...]]) -> list[bool]:
        """Store events of distinct eventIds (`params`: their rows, `_insert_params`) with their
        facet values in one durable transaction; True for each new, False for each stored before.
        PostgreSQL does the same in one round trip (`PostgresEventStore._insert_events`)."""
        recent = self._recent_facets()
        with self._writing() as cur:
            # Insert first, ask later: events sent again are rare, so the insert's count of rows
            # tells almost always that every event was new, with no lookup of the eventIds before.
            cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events")
            before = cur.fetchone()[0]
            written = write_facets(cur, self._sql, events, recent)
            cur.executemany(self._sql(_INSERT), params)
            inserted = None
            if cur.rowcount != len(events):  # some were stored before: which are new?
                cur.execute(self._sql("SELECT event_id FROM events WHERE seq > ?"), (before,))
                inserted = {row[0] for row in cur.fetchall()}
        recent.add(written)  # only once committed
        return [True] * len(events) if inserted is None else [e.event_id in inserted for e in events]

    def run_events(
        self, run_id: str, *, include_children: bool, limit: int, after: RunCursor | None
    ) -> list[StoredEvent]:
        branches: list[str] = []
        params: list[Any] = []
        for where in RUN_TREE if include_children else (RUN_ONLY,):
            params.append(run_id)
            if after is not None:
                params += [after.event_time, after.event_id]
            page = self.run_page.format(columns=COLUMNS, where=where, after="" if after is None else _AFTER)
            branches.append(f"SELECT * FROM ({page}) AS b")
            params.append(limit)
        query = " UNION ".join(branches)
        if len(branches) > 1:
            query = f"SELECT * FROM ({query}) AS u {_NEWEST_FIRST} LIMIT ?"
            params.append(limit)
        with self._reading() as cur:
            cur.execute(self._sql(query), params)
            return self._stored_events(cur, cur.fetchall())

    def has_run(self, run_id: str, *, include_children: bool) -> bool:
        with self._reading() as cur:
            for where in RUN_TREE if include_children else (RUN_ONLY,):
                cur.execute(self._sql(f"SELECT 1 FROM events WHERE {where} LIMIT 1"), (run_id,))
                if cur.fetchone():
                    return True
        return False

    def get_event(self, event_id: str) -> StoredEvent | None:
        with self._reading() as cur:
            cur.execute(self._sql(f"SELECT {COLUMNS} FROM events WHERE event_id = ?"), (event_id,))
            found = self._stored_events(cur, cur.fetchall())
        return found[0] if found else None

    @staticmethod
    def _event_filters(
        after_time: str | None,
        before_time: str | None,
        namespace: str | None,
        job: str | None,
        event_types: Sequence[str],
    ) -> tuple[str, list[Any]]:
        """The WHERE of the event listing: a job (with its namespace) is read by events_by_job."""
        clauses, params = [], []
        if after_time is not None:
            clauses.append("event_time >= ?")
            params.append(after_time)
        if before_time is not None:
            clauses.append("event_time <= ?")
            params.append(before_time)
        if job is not None:
            if namespace is not None:
                clauses.append("job_namespace = ?")
                params.append(namespace)
            clauses.append("job_name = ?")
            params.append(job)
        elif namespace is not None:
            clauses.append("(job_namespace = ? OR (job_namespace IS NULL AND dataset_namespace = ?))")
            params += [namespace, namespace]
        if event_types:
            clauses.append(f"event_type IN ({', '.join('?' * len(event_types))})")
            params += list(event_types)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def list_events(
        self,
        *,
        after_time: str | None,
        before_time: str | None,
        descending: bool,
        limit: int,
        offset: int,
        namespace: str | None = None,
        job: str | None = None,
        event_types: Sequence[str] = (),
    ) -> list[StoredEvent]:
        where, params = self._event_filters(after_time, before_time, namespace, job, event_types)
        order = "DESC" if descending else "ASC"
        query = (
            f"SELECT {COLUMNS} FROM events{where} ORDER BY event_time {order}, seq {order} LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit, offset])
            return self._stored_events(cur, cur.fetchall())

    def count_events(
        self,
        *,
        after_time: str | None,
        before_time: str | None,
        namespace: str | None = None,
        job: str | None = None,
        event_types: Sequence[str] = (),
    ) -> int:
        where, params = self._event_filters(after_time, before_time, namespace, job, event_types)
        with self._reading() as cur:
            cur.execute(self._sql(f"SELECT COUNT(*) FROM events{where}"), params)
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def add_dead_letters(self, letters: Sequence[DeadLetter]) -> int:
        if not letters:
            return 0
        query = (
            f"INSERT INTO dead_letters ({_DEAD_LETTER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (topic, partition_no, msg_offset) DO NOTHING"
        )
        added = 0
        with self._writing() as cur:
            for letter in letters:  # one by one: executemany's rowcount differs between drivers
                cur.execute(
                    self._sql(query),
                    (
                        _text(letter.topic),
                        letter.partition,
                        letter.offset,
                        letter.key,
                        letter.value,
                        _text(letter.error),
                        letter.received_at,
                    ),
                )
                added += max(cur.rowcount, 0)
        return added

    def dead_letters(self, *, topic: str | None, limit: int, before_id: int | None) -> list[DeadLetter]:
        clauses: list[str] = []
        params: list[Any] = []
        if topic is not None:
            clauses.append("topic = ?")
            params.append(topic)
        if before_id is not None:
            clauses.append("id < ?")
            params.append(before_id)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        query = f"SELECT {_DEAD_LETTER_COLUMNS}, id FROM dead_letters{where} ORDER BY id DESC LIMIT ?"
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit])
            rows = cur.fetchall()
        return [
            DeadLetter(
                str(row[0]),
                int(row[1]),
                int(row[2]),
                bytes(row[3]) if row[3] is not None else None,
                bytes(row[4]) if row[4] is not None else None,
                str(row[5]),
                str(row[6]),
                int(row[7]),
            )
            for row in rows
        ]

    def count_dead_letters(self, *, topic: str | None) -> int:
        where, params = (" WHERE topic = ?", [topic]) if topic is not None else ("", [])
        with self._reading() as cur:
            cur.execute(self._sql(f"SELECT COUNT(*) FROM dead_letters{where}"), params)
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def ping(self) -> None:
        with self._reading() as cur:
            cur.execute("SELECT 1")
            cur.fetchone()

    # -- the lineage model (read only; the pipeline writes it) ------------------------------------
    def _current_facets(self, cur: Any, table: str, node_ids: Sequence[str]) -> dict[str, list[Facet]]:
        facets: dict[str, list[Facet]] = {}
        query = facets_in_force(table, None)
        for node_id, name, value in self._chunked(cur, query.sql, node_ids, *query.after):
            facets.setdefault(node_id, []).append(Facet(name, value))
        return facets

    def list_namespaces(self, *, limit: int, offset: int) -> list[NamespaceRow]:
        query = (
            f"SELECT name, created_at, updated_at FROM namespaces WHERE {visible_namespace('name')} "
            "ORDER BY name LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (limit, offset))
            return [NamespaceRow(*row) for row in cur.fetchall()]

    def get_namespace(self, name: str) -> NamespaceRow | None:
        with self._reading() as cur:
            query = "SELECT name, created_at, updated_at FROM namespaces WHERE name = ? AND "
            query += visible_namespace("name")
            cur.execute(self._sql(query), (name,))
            row = cur.fetchone()
        return NamespaceRow(*row) if row else None

    def _datasets(self, cur: Any, rows: list[Any]) -> list[DatasetRow]:
        facets = self._current_facets(cur, "dataset_facets", [row[0] for row in rows])
        fields = self._schema_fields(cur, [row[8] for row in rows if row[8] is not None])
        tags = self._tags_of(cur, "dataset_tags", [row[0] for row in rows])
        field_tags = self._field_tags_of(cur, [row[0] for row in rows])
        return [
            DatasetRow(
                namespace=row[1],
                name=row[2],
                created_at=row[3],
                updated_at=row[4],
                source_name=row[5],
                current_version=row[6],
                lifecycle=row[7],
                last_modified_at=row[9],
                fields=tuple(fields.get(row[8], ())) if row[8] is not None else (),
                facets=tuple(facets.get(row[0], ())),
                tags=tuple(tags.get(row[0], ())),
                field_tags=tuple(field_tags.get(row[0], ())),
            )
            for row in rows
        ]

    def list_datasets(self, namespace: str, *, limit: int, offset: int) -> list[DatasetRow]:
        query = (
            f"SELECT {_DATASET_COLUMNS} FROM {_DATASET_FROM} WHERE d.namespace = ? AND {visible('d')} "
            "ORDER BY d.name LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (namespace, limit, offset))
            return self._datasets(cur, cur.fetchall())

    def count_datasets(self, namespace: str) -> int:
        with self._reading() as cur:
            query = f"SELECT COUNT(*) FROM datasets d WHERE d.namespace = ? AND {visible('d')}"
            cur.execute(self._sql(query), (namespace,))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def get_dataset(self, namespace: str, name: str) -> DatasetRow | None:
        query = (
            f"SELECT {_DATASET_COLUMNS} FROM {_DATASET_FROM} WHERE d.namespace = ? AND d.name = ? "
            f"AND {visible('d')}"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (namespace, name))
            found = self._datasets(cur, cur.fetchall())
        return found[0] if found else None

    def _runs(self, cur: Any, rows: list[Any]) -> list[RunRow]:
        facets: dict[str, list[Facet]] = {}
        query = (
            "SELECT f.run_id, f.name, v.value FROM run_facets f JOIN facet_values v ON v.hash = f.value_hash "
            "WHERE f.run_id IN ({marks}) ORDER BY f.run_id, f.name"
        )
        for run_id, name, value in self._chunked(cur, query, [row[0] for row in rows]):
            facets.setdefault(run_id, []).append(Facet(name, value))
        return [
            RunRow(
                run_id=row[0],
                job_namespace=row[1],
                job_name=row[2],
                state=row[3],
                state_time=row[4],
                started_at=row[5],
                ended_at=row[6],
                duration_ms=int(row[7]) if row[7] is not None else None,
                nominal_start=row[8],
                nominal_end=row[9],
                parent_run_id=row[10],
                root_run_id=row[11],
                job_version=row[12],
                created_at=row[13],
                updated_at=row[14],
                facets=tuple(facets.get(row[0], ())),
            )
            for row in rows
        ]

    def _jobs(self, cur: Any, rows: list[Any]) -> list[JobRow]:
        node_ids = [row[0] for row in rows]
        facets = self._current_facets(cur, "job_facets", node_ids)
        io: dict[str, tuple[list[DatasetRef], list[DatasetRef]]] = {}
        query = (
            "SELECT io.version_id, io.direction, d.namespace, d.name FROM job_version_io io "
            "JOIN datasets d ON d.node_id = io.node_id WHERE io.version_id IN ({marks}) "
            "ORDER BY io.version_id, d.namespace, d.name"
        )
        for version_id, direction, namespace, name in self._chunked(
            cur, query, [row[5] for row in rows if row[5] is not None]
        ):
            inputs, outputs = io.setdefault(version_id, ([], []))
            (inputs if direction == "input" else outputs).append(DatasetRef(namespace, name))
        latest = self._newest_runs(cur, node_ids)
        latest_ids = {row[0] for row in latest}
        missing = [row[6] for row in rows if row[6] is not None and row[6] not in latest_ids]
        if missing:
            query = f"SELECT {_RUN_COLUMNS}, 0 FROM runs r JOIN jobs j ON j.node_id = r.job_node_id "
            latest += self._chunked(cur, query + "WHERE r.run_id IN ({marks})", missing)
        runs = {run.run_id: (run, raw) for run, raw in zip(self._runs(cur, latest), latest, strict=True)}
        by_job: dict[tuple[str, str], list[tuple[int, RunRow]]] = {}
        for run, row in runs.values():
            if row[15] > 0:
                by_job.setdefault((run.job_namespace, run.job_name), []).append((int(row[15]), run))
        tags = self._tags_of(cur, "job_tags", node_ids)
        jobs = []
        for row in rows:
            inputs, outputs = io.get(row[5], ([], [])) if row[5] is not None else ([], [])
            recent = sorted(by_job.get((row[1], row[2]), []), key=lambda pair: pair[0])
            jobs.append(
                JobRow(
                    namespace=row[1],
                    name=row[2],
                    created_at=row[3],
                    updated_at=row[4],
                    current_version=row[5],
                    parent_name=row[7],
                    inputs=tuple(inputs),
                    outputs=tuple(outputs),
                    facets=tuple(facets.get(row[0], ())),
                    latest_run=runs[row[6]][0] if row[6] in runs else None,
                    latest_runs=tuple(run for _, run in recent),
                    tags=tuple(tags.get(row[0], ())),
                )
            )
        return jobs

    @staticmethod
    def _job_filter(namespace: str | None, states: Sequence[str] | None) -> tuple[str, list[Any]]:
        clauses: list[str] = [visible("j")]
        params: list[Any] = []
        if namespace is not None:
            clauses.append("j.namespace = ?")
            params.append(namespace)
        if states:
            marks = ", ".join("?" * len(states))
            clauses.append(f"j.latest_run_id IN (SELECT run_id FROM runs WHERE state IN ({marks}))")
            params += list(states)
        return " WHERE " + " AND ".join(clauses), params

    def list_jobs(
        self, *, namespace: str | None, states: Sequence[str] | None, limit: int, offset: int
    ) -> list[JobRow]:
        where, params = self._job_filter(namespace, states)
        query = (
            f"SELECT {_JOB_COLUMNS} FROM jobs j{where} "
            "ORDER BY j.updated_at DESC, j.namespace, j.name LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit, offset])
            return self._jobs(cur, cur.fetchall())

    def count_jobs(self, *, namespace: str | None, states: Sequence[str] | None) -> int:
        where, params = self._job_filter(namespace, states)
        with self._reading() as cur:
            cur.execute(self._sql(f"SELECT COUNT(*) FROM jobs j{where}"), params)
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def get_job(self, namespace: str, name: str) -> JobRow | None:
        query = f"SELECT {_JOB_COLUMNS} FROM jobs j WHERE j.namespace = ? AND j.name = ? AND {visible('j')}"
        with self._reading() as cur:
            cur.execute(self._sql(query), (namespace, name))
            found = self._jobs(cur, cur.fetchall())
        return found[0] if found else None

    def _newest_runs(self, cur: Any, node_ids: Sequence[str]) -> list[Any]:
        """The LATEST_RUNS newest runs of each job, each row ending with its rank (1: newest).
        A job at a time, so each reads the few newest entries of the index runs_by_job_newest
        whatever the number of its runs."""
        one_job = (
            f"SELECT * FROM (SELECT {_RUN_COLUMNS} FROM runs r JOIN jobs j ON j.node_id = r.job_node_id "
            f"WHERE r.job_node_id = ? ORDER BY {_RUN_ORDER} LIMIT {LATEST_RUNS}) AS t{{n}}"
        )
        rows: list[Any] = []
        unique = list(dict.fromkeys(node_ids))
        for start in range(0, len(unique), 50):
            chunk = unique[start : start + 50]
            query = " UNION ALL ".join(one_job.format(n=n) for n in range(len(chunk)))
            cur.execute(self._sql(query), chunk)
            rows += cur.fetchall()
        by_job: dict[tuple[str, str], list[Any]] = {}
        for row in rows:
            by_job.setdefault((row[1], row[2]), []).append(row)
        ranked: list[Any] = []
        for runs in by_job.values():  # _RUN_ORDER: COALESCE(started_at, first_event_time), run_id
            runs.sort(key=lambda row: (row[5] or row[13], row[0]), reverse=True)
            ranked += [(*row, rank) for rank, row in enumerate(runs, 1)]
        return ranked

    def list_runs(self, namespace: str, job: str, *, limit: int, offset: int) -> list[RunRow]:
        # the job's node id first, so that its runs are read newest first from runs_by_job_newest
        query = (
            f"SELECT {_RUN_COLUMNS} FROM runs r JOIN jobs j ON j.node_id = r.job_node_id "
            "WHERE r.job_node_id = (SELECT node_id FROM jobs WHERE namespace = ? AND name = ?) "
            f"ORDER BY {_RUN_ORDER} LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (namespace, job, limit, offset))
            return self._runs(cur, cur.fetchall())

    def count_runs(self, namespace: str, job: str) -> int:
        query = (
            "SELECT COUNT(*) FROM runs r JOIN jobs j ON j.node_id = r.job_node_id "
            "WHERE j.namespace = ? AND j.name = ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (namespace, job))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def namespace_summaries(self, *, since: str) -> list[NamespaceSummary]:
        query = (
            "SELECT n.name, "
            f"(SELECT COUNT(*) FROM datasets d WHERE d.namespace = n.name AND {visible('d')}), "
            f"(SELECT COUNT(*) FROM jobs j WHERE j.namespace = n.name AND {visible('j')}), "
            "COALESCE(r.runs, 0), COALESCE(r.recent, 0), r.last_run_at FROM namespaces n LEFT JOIN "
            "(SELECT j.namespace AS namespace, COUNT(*) AS runs, "
            "SUM(CASE WHEN x.last_event_time >= ? THEN 1 ELSE 0 END) AS recent, "
            "MAX(x.last_event_time) AS last_run_at "
            "FROM runs x JOIN jobs j ON j.node_id = x.job_node_id "
            f"WHERE {visible('j')} GROUP BY j.namespace) r "
            f"ON r.namespace = n.name WHERE {visible_namespace('n.name')} ORDER BY n.name"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (since,))
            return [
                NamespaceSummary(row[0], int(row[1]), int(row[2]), int(row[3]), int(row[4]), row[5])
                for row in cur.fetchall()
            ]

    def latest_runs(self, *, states: Sequence[str] | None, limit: int) -> list[RunRow]:
        where, params = f" WHERE {visible('j')}", []
        if states:
            where += f" AND r.state IN ({', '.join('?' * len(states))})"
            params = list(states)
        query = (
            f"SELECT {_RUN_COLUMNS} FROM runs r JOIN jobs j ON j.node_id = r.job_node_id{where} "
            "ORDER BY r.last_event_time DESC, r.run_id DESC LIMIT ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit])
            return self._runs(cur, cur.fetchall())

    def get_run(self, run_id: str) -> RunRow | None:
        query = (
            f"SELECT {_RUN_COLUMNS} FROM runs r JOIN jobs j ON j.node_id = r.job_node_id "
            f"WHERE r.run_id = ? AND {visible('j')}"  # a deleted job's runs go with it
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (run_id,))
            found = self._runs(cur, cur.fetchall())
        return found[0] if found else None

    def _runs_by_id(self, cur: Any, run_ids: Sequence[str]) -> dict[str, RunRow]:
        query = (
            f"SELECT {_RUN_COLUMNS} FROM runs r JOIN jobs j ON j.node_id = r.job_node_id "
            "WHERE r.run_id IN ({marks})"
        )
        return {run.run_id: run for run in self._runs(cur, self._chunked(cur, query, run_ids))}

    def run_job_facets(self, run_id: str) -> list[Facet] | None:
        with self._reading() as cur:
            query = "SELECT job_node_id, last_event_time FROM runs WHERE run_id = ?"
            cur.execute(self._sql(query), (run_id,))
            run = cur.fetchone()
            if run is None:
                return None
            in_force = facets_in_force("job_facets", run[1])  # the job's facets as the run last saw them
            rows = self._chunked(cur, in_force.sql, [run[0]], *in_force.after)
            return [Facet(name, value) for _node, name, value in rows]
