"""Generic events in SQL, for both backends: the event store row and the browse rows, written in
one transaction; the browse reads (elements, events, tags). OpenLineage datasets and jobs are
elements too (type `dataset` / `job`, numbered when the pipeline first publishes them): their
events are the events of the runs that read, wrote or ran them."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from headwater.events.generic import GENERIC_KIND, GENERIC_PRODUCER, GenericEvent
from headwater.store.generic import (
    ElementRow,
    EventElement,
    GenericEventDetail,
    GenericEventRow,
    GenericStore,
    GenericStored,
    GenericTagRow,
)
from headwater.store.sql import NO_CONTENT_HASH
from headwater.store.sql_reads import CHUNK, SqlReads

_INSERT_EVENT = (
    "INSERT INTO events (event_id, kind, event_time, producer, received_at, payload, content_hash)"
)
_ROWS_PER_INSERT = 250  # rows per multi-row INSERT: at most 7 values each, well under the limits
_PAIRS = 250  # (a, b) pairs per lookup: 500 parameters
_EVENT_COLUMNS = "e.id, e.type, e.description, e.received_at"
# the runs behind an OpenLineage element, by its type: the runs that read or wrote a dataset, of a job
_MODEL_RUNS = {
    "dataset": "SELECT run_id FROM run_io WHERE node_id = ?",
    "job": "SELECT run_id FROM runs WHERE job_node_id = ?",
}
_FILTERS = {"type": "{type} = ?", "after": "{time} >= ?", "before": "{time} <= ?"}
# an OpenLineage run event as a browse event: {id: seq, type: eventType, description, timestamp: eventTime}
_RUN_EVENT_COLUMNS = (
    "o.seq, o.event_type, 'run ' || o.run_id || ' of ' || o.job_namespace || ':' || o.job_name, o.event_time"
)


def _event_row(row: Sequence[Any]) -> GenericEventRow:
    return GenericEventRow(int(row[0]), row[1], row[2], row[3])


def number_model_elements(cur: Any, datasets: str, jobs: str) -> None:
    """Give the datasets and jobs of two tables shaped like the model's (the model's own, or the
    pipeline's staged batch) their element rows, once: type `dataset` / `job`, description
    `{namespace}:{name}`. Rows are never removed, so ids survive `pipeline rebuild`."""
    for kind, table in (("dataset", datasets), ("job", jobs)):
        cur.execute(
            f"INSERT INTO generic_elements (type, description) SELECT DISTINCT '{kind}', "
            f"namespace || ':' || name FROM {table} WHERE true ORDER BY 2 "
            "ON CONFLICT (type, description) DO NOTHING"
        )


class GenericSql(SqlReads, GenericStore):
    """The generic-event tables of migration 0006; a backend provides the write transaction."""

    @abstractmethod
    def _writing(self) -> AbstractContextManager[Any]:
        """A cursor inside one durable write transaction, serialized with every other writer."""

    # -- writing ---------------------------------------------------------------------------------
    def _insert(self, cur: Any, head: str, rows: Sequence[tuple[Any, ...]], tail: str = "") -> list[Any]:
        """`head VALUES (…), (…) tail` for the rows, _ROWS_PER_INSERT to a statement: one round
        trip per chunk, where executemany costs PostgreSQL one statement per row. Returns what
        a `RETURNING` tail returns."""
        returned: list[Any] = []
        if not rows:
            return returned
        one = "(" + ", ".join("?" * len(rows[0])) + ")"
        for start in range(0, len(rows), _ROWS_PER_INSERT):
            chunk = rows[start : start + _ROWS_PER_INSERT]
            cur.execute(
                self._sql(f"{head} VALUES {', '.join([one] * len(chunk))}{tail}"),
                [value for row in chunk for value in row],
            )
            if "RETURNING" in tail:
                returned += cur.fetchall()
        return returned

    def append_generic(self, events: Sequence[GenericEvent], received_at: str) -> list[GenericStored]:
        if not events:
            return []
        with self._writing() as cur:
            ids = self._seqs(cur, [event.event_id for event in events])
            fresh: dict[str, GenericEvent] = {}
            for event in events:
                if event.event_id not in ids:
                    fresh.setdefault(event.event_id, event)
            if fresh:
                stored = self._insert(
                    cur,
                    _INSERT_EVENT,
                    [
                        (e.event_id, GENERIC_KIND, received_at, GENERIC_PRODUCER, received_at, e.payload,
                         NO_CONTENT_HASH)
                        for e in fresh.values()
                    ],
                    " RETURNING event_id, seq",
                )  # fmt: skip
                ids.update((row[0], int(row[1])) for row in stored)
                self._browse_rows(cur, [(ids[e.event_id], e) for e in fresh.values()], received_at)
        answered: list[GenericStored] = []
        seen: set[str] = set()
        for event in events:
            answered.append(
                GenericStored(ids[event.event_id], event.event_id in fresh and event.event_id not in seen)
            )
            seen.add(event.event_id)
        return answered

    def _seqs(self, cur: Any, event_ids: list[str]) -> dict[str, int]:
        # explicit marks, not `_chunked`'s `= ANY(array)`: the write connection prepares repeated
        # statements, and PostgreSQL's generic plan for an array of unknown length scans the table
        found: dict[str, int] = {}
        for start in range(0, len(event_ids), CHUNK):
            chunk = event_ids[start : start + CHUNK]
            marks = ", ".join("?" * len(chunk))
            cur.execute(self._sql(f"SELECT event_id, seq FROM events WHERE event_id IN ({marks})"), chunk)
            found.update((row[0], int(row[1])) for row in cur.fetchall())
        return found

    def _ids_of(
        self, cur: Any, table: str, columns: tuple[str, str], pairs: Iterable[tuple[str, str]]
    ) -> dict[tuple[str, str], int]:
        """Ids of the (a, b) pairs in `table`, inserting those it lacks (the write lock is held,
        so nobody inserts them meanwhile)."""
        wanted = list(dict.fromkeys(pairs))
        found: dict[tuple[str, str], int] = {}
        a, b = columns

        def look(keys: list[tuple[str, str]]) -> None:
            for start in range(0, len(keys), _PAIRS):
                chunk = keys[start : start + _PAIRS]
                values = ", ".join("(?, ?)" for _ in chunk)
                # a join, not `(a, b) IN (VALUES …)`: SQLite scans the whole table for that form
                cur.execute(
                    self._sql(
                        f"SELECT t.{a}, t.{b}, t.id FROM (VALUES {values}) AS v JOIN {table} t "
                        f"ON t.{a} = v.column1 AND t.{b} = v.column2"
                    ),
                    [part for pair in chunk for part in pair],
                )
                for row in cur.fetchall():
                    found[(row[0], row[1])] = int(row[2])

        look(wanted)
        missing = [pair for pair in wanted if pair not in found]
        if missing:
            self._insert(
                cur, f"INSERT INTO {table} ({a}, {b})", missing, f" ON CONFLICT ({a}, {b}) DO NOTHING"
            )
            look(missing)
        return found

    def _browse_rows(self, cur: Any, stored: list[tuple[int, GenericEvent]], received_at: str) -> None:
        elements = self._ids_of(
            cur,
            "generic_elements",
            ("type", "description"),
            ((el.type, el.description) for _, event in stored for el in event.elements),
        )
        tags = self._ids_of(
            cur,
            "generic_tags",
            ("key", "value"),
            (
                tag
                for _, event in stored
                for tag in (*event.tags, *(t for el in event.elements for t in el.tags))
            ),
        )
        event_rows: list[tuple[int, str, str, str]] = []
        element_links: list[tuple[int, int, int]] = []
        event_tags: list[tuple[int, int]] = []
        element_tags: list[tuple[int, int, int]] = []
        latest: dict[tuple[int, str], tuple[int, int]] = {}
        for seq, event in stored:
            event_rows.append((seq, event.type, event.description, received_at))
            event_tags += dict.fromkeys((seq, tags[tag]) for tag in event.tags)
            positions: dict[int, int] = {}
            for position, element in enumerate(event.elements):
                element_id = elements[(element.type, element.description)]
                positions.setdefault(element_id, position)
                for key, value in element.tags:
                    element_tags.append((seq, element_id, tags[(key, value)]))
                    latest[(element_id, key)] = (tags[(key, value)], seq)
            element_links += [(seq, element_id, position) for element_id, position in positions.items()]
        self._insert(cur, "INSERT INTO generic_events (id, type, description, received_at)", event_rows)
        self._insert(
            cur, "INSERT INTO generic_event_elements (event_id, element_id, position)", element_links
        )
        self._insert(cur, "INSERT INTO generic_event_tags (event_id, tag_id)", event_tags)
        self._insert(
            cur,
            "INSERT INTO generic_element_tags (event_id, element_id, tag_id)",
            list(dict.fromkeys(element_tags)),
            " ON CONFLICT DO NOTHING",
        )
        self._insert(
            cur,
            "INSERT INTO generic_element_latest_tags (element_id, key, tag_id, event_id)",
            [(element_id, key, tag_id, seq) for (element_id, key), (tag_id, seq) in latest.items()],
            " ON CONFLICT (element_id, key) DO UPDATE SET tag_id = excluded.tag_id, "
            "event_id = excluded.event_id WHERE excluded.event_id >= generic_element_latest_tags.event_id",
        )

    def number_published_elements(self) -> None:
        with self._writing() as cur:
            number_model_elements(cur, "datasets", "jobs")

    # -- reading ---------------------------------------------------------------------------------
    def element_types(self) -> list[str]:
        with self._reading() as cur:
            cur.execute("SELECT DISTINCT type FROM generic_elements ORDER BY type")
            return [row[0] for row in cur.fetchall()]

    def list_elements(self, *, element_type: str | None, limit: int, offset: int) -> list[ElementRow]:
        where, params = (" WHERE type = ?", [element_type]) if element_type is not None else ("", [])
        query = f"SELECT id, type, description FROM generic_elements{where} ORDER BY id LIMIT ? OFFSET ?"
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit, offset])
            return [ElementRow(int(row[0]), row[1], row[2]) for row in cur.fetchall()]

    def get_element(self, element_id: int) -> ElementRow | None:
        with self._reading() as cur:
            cur.execute(
                self._sql("SELECT id, type, description FROM generic_elements WHERE id = ?"), (element_id,)
            )
            row = cur.fetchone()
        return ElementRow(int(row[0]), row[1], row[2]) if row else None

    def element_latest_tags(self, element_id: int) -> list[GenericTagRow]:
        query = (
            "SELECT t.id, t.key, t.value FROM generic_element_latest_tags l "
            "JOIN generic_tags t ON t.id = l.tag_id WHERE l.element_id = ? ORDER BY l.key"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (element_id,))
            return [GenericTagRow(int(row[0]), row[1], row[2]) for row in cur.fetchall()]

    def list_generic_events(
        self,
        *,
        event_type: str | None,
        element_id: int | None,
        tag_id: int | None,
        after: str | None,
        before: str | None,
        limit: int,
        offset: int,
    ) -> list[GenericEventRow]:
        clauses: list[str] = []
        params: list[Any] = []
        source = "generic_events e"
        if element_id is not None:
            source = "generic_event_elements x JOIN generic_events e ON e.id = x.event_id"
            clauses.append("x.element_id = ?")
            params.append(element_id)
        elif tag_id is not None:
            clauses.append(
                "e.id IN (SELECT event_id FROM generic_event_tags WHERE tag_id = ? "
                "UNION SELECT event_id FROM generic_element_tags WHERE tag_id = ?)"
            )
            params += [tag_id, tag_id]
        filters = (("type", event_type), ("after", after), ("before", before))
        for name, value in filters:
            if value is not None:
                clauses.append(_FILTERS[name].format(time="e.received_at", type="e.type"))
                params.append(value)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        query = f"SELECT {_EVENT_COLUMNS} FROM {source}{where}"
        with self._reading() as cur:
            runs = self._model_runs(cur, element_id) if element_id is not None else None
            if runs is not None:  # an OpenLineage dataset or job: its runs' events as well
                run_query, node_id = runs
                run_clauses = [f"o.run_id IN ({run_query})"]
                params.append(node_id)
                for name, value in filters:
                    if value is not None:
                        run_clauses.append(_FILTERS[name].format(time="o.event_time", type="o.event_type"))
                        params.append(value)
                query = (
                    f"SELECT * FROM ({query} UNION ALL SELECT {_RUN_EVENT_COLUMNS} FROM events o "
                    f"WHERE {' AND '.join(run_clauses)}) u ORDER BY 1 DESC LIMIT ? OFFSET ?"
                )
            else:
                query += " ORDER BY e.id DESC LIMIT ? OFFSET ?"
            cur.execute(self._sql(query), [*params, limit, offset])
            return [_event_row(row) for row in cur.fetchall()]

    def _model_runs(self, cur: Any, element_id: int) -> tuple[str, str] | None:
        """(query of the run ids, its node id) when the element is an OpenLineage dataset or job."""
        cur.execute(self._sql("SELECT type, description FROM generic_elements WHERE id = ?"), (element_id,))
        row = cur.fetchone()
        if row is None or row[0] not in _MODEL_RUNS:
            return None
        return _MODEL_RUNS[row[0]], f"{row[0]}:{row[1]}"

    def get_generic_event(self, event_id: int) -> GenericEventDetail | None:
        with self.snapshot(), self._reading() as cur:
            cur.execute(
                self._sql(f"SELECT {_EVENT_COLUMNS} FROM generic_events e WHERE e.id = ?"), (event_id,)
            )
            row = cur.fetchone()
            if row is None:
                return self._run_event(cur, event_id)
            cur.execute(
                self._sql(
                    "SELECT el.id, el.type, el.description FROM generic_event_elements x "
                    "JOIN generic_elements el ON el.id = x.element_id "
                    "WHERE x.event_id = ? ORDER BY x.position"
                ),
                (event_id,),
            )
            elements = [ElementRow(int(r[0]), r[1], r[2]) for r in cur.fetchall()]
            cur.execute(
                self._sql(
                    "SELECT x.element_id, t.id, t.key, t.value FROM generic_element_tags x "
                    "JOIN generic_tags t ON t.id = x.tag_id WHERE x.event_id = ? ORDER BY t.key, t.id"
                ),
                (event_id,),
            )
            element_tags: dict[int, list[GenericTagRow]] = {}
            for r in cur.fetchall():
                element_tags.setdefault(int(r[0]), []).append(GenericTagRow(int(r[1]), r[2], r[3]))
            cur.execute(
                self._sql(
                    "SELECT t.id, t.key, t.value FROM generic_event_tags x "
                    "JOIN generic_tags t ON t.id = x.tag_id WHERE x.event_id = ? ORDER BY t.key, t.id"
                ),
                (event_id,),
            )
            tags = tuple(GenericTagRow(int(r[0]), r[1], r[2]) for r in cur.fetchall())
        return GenericEventDetail(
            _event_row(row),
            tuple(EventElement(el, tuple(element_tags.get(el.id, ()))) for el in elements),
            tags,
        )

    def _run_event(self, cur: Any, seq: int) -> GenericEventDetail | None:
        """An OpenLineage run event as an OpenLineage element's events list names it: its
        elements are the run's job and the datasets the run read or wrote (once published)."""
        cur.execute(
            self._sql(
                f"SELECT {_RUN_EVENT_COLUMNS}, o.job_namespace || ':' || o.job_name, o.run_id "
                "FROM events o WHERE o.seq = ? AND o.kind = 'run'"
            ),
            (seq,),
        )
        row = cur.fetchone()
        if row is None:
            return None
        cur.execute(
            self._sql(
                "SELECT el.id, el.type, el.description FROM generic_elements el "
                "WHERE el.type = 'job' AND el.description = ? "
                "UNION SELECT el.id, el.type, el.description FROM run_io r JOIN generic_elements el "
                "ON el.type = 'dataset' AND el.description = substr(r.node_id, 9) WHERE r.run_id = ? "
                "ORDER BY 1"
            ),
            (row[4], row[5]),
        )
        elements = tuple(EventElement(ElementRow(int(r[0]), r[1], r[2]), ()) for r in cur.fetchall())
        return GenericEventDetail(_event_row(row), elements, ())

    def list_generic_tags(self, *, key: str | None, limit: int, offset: int) -> list[GenericTagRow]:
        where, params = (" WHERE key = ?", [key]) if key is not None else ("", [])
        query = f"SELECT id, key, value FROM generic_tags{where} ORDER BY id LIMIT ? OFFSET ?"
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit, offset])
            return [GenericTagRow(int(row[0]), row[1], row[2]) for row in cur.fetchall()]

    def get_generic_tag(self, tag_id: int) -> GenericTagRow | None:
        with self._reading() as cur:
            cur.execute(self._sql("SELECT id, key, value FROM generic_tags WHERE id = ?"), (tag_id,))
            row = cur.fetchone()
        return GenericTagRow(int(row[0]), row[1], row[2]) if row else None

    def tag_elements(self, tag_id: int, *, limit: int, offset: int) -> list[ElementRow]:
        query = (
            "SELECT el.id, el.type, el.description FROM generic_elements el WHERE el.id IN "
            "(SELECT element_id FROM generic_element_tags WHERE tag_id = ?) ORDER BY el.id LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (tag_id, limit, offset))
            return [ElementRow(int(row[0]), row[1], row[2]) for row in cur.fetchall()]
