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

log = logging.getLogger(__name__)

COLUMNS = (
    "seq, event_id, kind, run_id, parent_run_id, root_run_id, event_type, event_time, job_namespace, "
    "job_name, dataset_namespace, dataset_name, producer, received_at, payload, untrusted_facets"
)
_INSERT_COLUMNS = COLUMNS.removeprefix("seq, ") + ", content_hash"
_INSERT = (
    f"INSERT INTO events ({_INSERT_COLUMNS}) VALUES ({', '.join('?' * (_INSERT_COLUMNS.count(',') + 1))}) "
    "ON CONFLICT (event_id) DO NOTHING"
)
_EXISTING_CHUNK = 500
_DEAD_LETTER_COLUMNS = "topic, partition_no, msg_offset, msg_key, msg_value, error, received_at"
_NEWEST_FIRST = "ORDER BY event_time DESC, event_id DESC"


def _row_to_event(row: Sequence[Any]) -> StoredEvent:
    untrusted = row[15]
    values = list(row[:15])
    values.append(tuple(orjson.loads(untrusted)) if untrusted else ())
    return StoredEvent(*values)


def _text(value: Any) -> Any:
    # JSON allows "\u0000" in strings; PostgreSQL TEXT does not. The payload keeps it escaped;
    # only the extracted index columns need cleaning.
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _insert_params(event: Event, received_at: str) -> tuple[Any, ...]:
    return tuple(
        map(
            _text,
            (
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
                event.payload,
                orjson.dumps(list(event.untrusted_facets)).decode() if event.untrusted_facets else None,
                event.content_hash,
            ),
        )
    )


class SqlEventStore(EventStore):
    """Queries use `?` placeholders; a backend whose driver wants `%s` sets `paramstyle`."""

    paramstyle = "qmark"
    migrations_package: str

    # -- what a backend provides -------------------------------------------------------------
    @abstractmethod
    def _reading(self) -> AbstractContextManager[Any]:
        """A cursor for reads."""

    @abstractmethod
    def _writing(self) -> AbstractContextManager[Any]:
        """A cursor inside one write transaction, committed durably on exit, serialized with any
        other writer so that seq grows in commit order."""

    @abstractmethod
    def _run_script(self, cursor: Any, script: str) -> None:
        """Run a migration script (several statements) on the cursor."""

    # -- shared SQL ------------------------------------------------------------------------------
    def _sql(self, query: str) -> str:
        return query.replace("?", "%s") if self.paramstyle == "format" else query

    def sql(self, query: str) -> str:
        return self._sql(query)

    def transaction(self) -> AbstractContextManager[Any]:
        return self._writing()

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
        fresh: dict[str, int] = {}
        for position, event in enumerate(events):
            fresh.setdefault(event.event_id, position)
        with self._writing() as cur:
            ids = list(fresh)
            for start in range(0, len(ids), _EXISTING_CHUNK):
                chunk = ids[start : start + _EXISTING_CHUNK]
                marks = ", ".join("?" * len(chunk))
                cur.execute(self._sql(f"SELECT event_id FROM events WHERE event_id IN ({marks})"), chunk)
                for (existing,) in cur.fetchall():
                    fresh.pop(existing, None)
            new_positions = sorted(fresh.values())
            if new_positions:
                cur.executemany(
                    self._sql(_INSERT), [_insert_params(events[p], received_at) for p in new_positions]
                )
        stored = set(new_positions)
        return [position in stored for position in range(len(events))]

    def run_events(
        self, run_id: str, *, include_children: bool, limit: int, after: RunCursor | None
    ) -> list[StoredEvent]:
        keys = ("run_id", "parent_run_id", "root_run_id") if include_children else ("run_id",)
        branches: list[str] = []
        params: list[Any] = []
        for key in keys:
            where = f"{key} = ?"
            params.append(run_id)
            if after is not None:
                where += " AND (event_time, event_id) < (?, ?)"
                params += [after.event_time, after.event_id]
            branches.append(
                f"SELECT * FROM (SELECT {COLUMNS} FROM events WHERE {where} {_NEWEST_FIRST} LIMIT ?) AS b"
            )
            params.append(limit)
        query = " UNION ".join(branches)
        if len(branches) > 1:
            query = f"SELECT * FROM ({query}) AS u {_NEWEST_FIRST} LIMIT ?"
            params.append(limit)
        with self._reading() as cur:
            cur.execute(self._sql(query), params)
            return [_row_to_event(row) for row in cur.fetchall()]

    def has_run(self, run_id: str, *, include_children: bool) -> bool:
        keys = ("run_id", "parent_run_id", "root_run_id") if include_children else ("run_id",)
        with self._reading() as cur:
            for key in keys:
                cur.execute(self._sql(f"SELECT 1 FROM events WHERE {key} = ? LIMIT 1"), (run_id,))
                if cur.fetchone():
                    return True
        return False

    def get_event(self, event_id: str) -> StoredEvent | None:
        with self._reading() as cur:
            cur.execute(self._sql(f"SELECT {COLUMNS} FROM events WHERE event_id = ?"), (event_id,))
            row = cur.fetchone()
        return _row_to_event(row) if row else None

    @staticmethod
    def _time_range(after_time: str | None, before_time: str | None) -> tuple[str, list[Any]]:
        clauses, params = [], []
        if after_time is not None:
            clauses.append("event_time >= ?")
            params.append(after_time)
        if before_time is not None:
            clauses.append("event_time <= ?")
            params.append(before_time)
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params

    def list_events(
        self, *, after_time: str | None, before_time: str | None, descending: bool, limit: int, offset: int
    ) -> list[StoredEvent]:
        where, params = self._time_range(after_time, before_time)
        order = "DESC" if descending else "ASC"
        query = (
            f"SELECT {COLUMNS} FROM events{where} ORDER BY event_time {order}, seq {order} LIMIT ? OFFSET ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), [*params, limit, offset])
            return [_row_to_event(row) for row in cur.fetchall()]

    def count_events(self, *, after_time: str | None, before_time: str | None) -> int:
        where, params = self._time_range(after_time, before_time)
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
