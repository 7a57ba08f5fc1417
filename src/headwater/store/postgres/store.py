"""PostgreSQL behind the store interface: one write connection (group commits serialized by an
advisory lock so seq follows commit order, each one call of `headwater_append`), a pool for reads."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from headwater.errors import StoreUnavailable
from headwater.events.model import Event
from headwater.store.event_facets import facet_rows
from headwater.store.generic_sql import GenericSql
from headwater.store.sql import SqlEventStore

log = logging.getLogger(__name__)
# Any constant works; it only has to be the same for every Headwater writer of one database.
_APPEND_LOCK = 0x4844_5752  # "HDWR"
# A group commit in one statement, in a transaction of its own (migrations 0019, 0021): the lock
# is held while PostgreSQL works, not across the writer's round trips. The short columns go as
# JSON (one call of compiled code here), the packed bytes as binary `bytea[]` beside them.
_APPEND = (
    "SELECT sweeps, stored FROM headwater_append(%s, %s, %s::jsonb, %b::bytea[], %s::jsonb, %b::bytea[], %s)"
)
_RECEIVED = 12  # the position of received_at among an event's insert parameters


def _json_row(params: tuple[Any, ...]) -> tuple[Any, ...]:
    """An event's insert parameters as `headwater_append` reads them in its JSON: without
    received_at and the packed core (the last; it goes in the `cores` array)."""
    return (*params[:_RECEIVED], *params[_RECEIVED + 1 : -1])


def _writer_settings(conn: psycopg.Connection[Any]) -> None:
    """The writer connection's settings (each kept where the server refuses it):
    - lz4 for TOAST: payloads over 2 KB are compressed as they are written, and lz4 costs
      PostgreSQL about half the CPU of its default pglz per appended event (bench/ingest.py).
      Reads decompress either method, so a store holds both kinds side by side; a server built
      without lz4 keeps pglz.
    - no JIT compilation: the writer's statements are short, but the planner's estimates for the
      pipeline's merges (a subquery per touched job version) pass `jit_above_cost`, and the
      recount of job versions in the merge of +1,000 events on 200,000 spent 208 of its 252 ms
      compiling (EXPLAIN ANALYZE)."""
    for setting in ("default_toast_compression = lz4", "jit = off"):
        try:
            conn.execute(f"SET {setting}")
            conn.commit()
        except psycopg.Error:
            conn.rollback()


def maintenance_warning(autovacuum: str, track_counts: str, where: str) -> str | None:
    """What to tell the operator of a server whose autovacuum does not run (off, or without the
    statistics it needs), or None. Nothing else keeps the planner's statistics and the visibility
    maps current, and the model's merges lean on both: a job version's run count is an
    index-only scan once `runs` is vacuumed, a heap scan of every run of the version before (a
    +1,000-event pass on 1,000,000 events merged in 0.40 s, 0.17 s after `VACUUM (ANALYZE)`)."""
    if autovacuum == "on" and track_counts == "on":
        return None
    return (
        f"PostgreSQL at {where} runs without autovacuum (autovacuum = {autovacuum}, track_counts = "
        f"{track_counts}): the pipeline's merges and some reads slow down as the store grows. Turn it "
        "on, or run VACUUM (ANALYZE) on the database regularly (docs/operations.md)."
    )


_warned: set[str] = set()  # the servers warned about in this process


def libpq_url(url: str) -> str:
    """A PostgreSQL URL as libpq (psycopg) takes it: SQLAlchemy's `postgresql+psycopg:` scheme
    becomes `postgresql:`."""
    return url.replace("postgresql+psycopg:", "postgresql:", 1)


class PostgresEventStore(GenericSql, SqlEventStore):
    backend = "postgresql"
    paramstyle = "format"
    snapshot_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
    migrations_package = "headwater.store.postgres.migrations"
    # The run and parent-run indexes are keyed by the run id alone (migration 0017): a run's events
    # are read whole from them, then sorted. OFFSET 0 keeps that read apart from the sort and the
    # cursor: else the planner, which takes a run's events to be spread over all time, may walk
    # events_by_time newest first until it meets enough of them (44 ms a page instead of 0.8 on
    # the bench's store), or AND the run's rows with every event before the cursor (12 ms).
    run_page = (
        "SELECT * FROM (SELECT {columns} FROM events WHERE {where} OFFSET 0) AS r "
        "WHERE true{after} ORDER BY event_time DESC, event_id DESC LIMIT ?"
    )

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = url
        self._conninfo = libpq_url(url)
        self._write_lock = threading.Lock()
        self._writer: psycopg.Connection[Any] | None = None
        self._pool = ConnectionPool(
            self._conninfo,
            min_size=1,
            max_size=pool_size,
            open=False,
            timeout=10,
            # Lineage reads take key lists of any length (`= ANY(%s)`): a generic prepared plan
            # cannot see their length and may scan a whole table, so plan each query for its keys.
            kwargs={"autocommit": True, "prepare_threshold": None},
        )
        try:
            self._pool.open(wait=True, timeout=10)
        except PoolTimeout:
            self._pool.close()
            raise StoreUnavailable(f"cannot connect to PostgreSQL at {self._safe_url()}") from None
        self._check_maintenance()

    def _check_maintenance(self) -> None:
        """Warn once per process and server when autovacuum does not run (`maintenance_warning`)."""
        where = self._safe_url()
        if where in _warned:
            return
        _warned.add(where)
        try:
            with self._read_cursor() as cur:
                cur.execute("SELECT current_setting('autovacuum'), current_setting('track_counts')")
                row = cur.fetchone()
        except (StoreUnavailable, psycopg.Error):  # only a warning: the next read will say what is wrong
            return
        warning = None if row is None else maintenance_warning(str(row[0]), str(row[1]), where)
        if warning is not None:
            log.warning("%s", warning)

    def _safe_url(self) -> str:
        info = psycopg.conninfo.conninfo_to_dict(self._conninfo)
        return f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', '')}"

    def _writer_conn(self) -> psycopg.Connection[Any]:
        if self._writer is None or self._writer.closed or self._writer.broken:
            try:
                # autocommit: an append is one statement; `_writing` opens its transactions
                self._writer = psycopg.connect(self._conninfo, autocommit=True)
            except psycopg.OperationalError as exc:
                raise StoreUnavailable(f"cannot connect to PostgreSQL: {exc}".strip()) from None
            _writer_settings(self._writer)
        return self._writer

    @contextmanager
    def _read_cursor(self) -> Iterator[Any]:
        try:
            with self._pool.connection() as conn, conn.cursor() as cur:
                yield cur
        except (PoolTimeout, psycopg.OperationalError) as exc:
            raise StoreUnavailable(f"PostgreSQL read failed: {exc}".strip()) from None

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        with self._write_lock:
            conn = self._writer_conn()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute("SELECT pg_advisory_xact_lock(%s)", (_APPEND_LOCK,))
                    yield cur
            except psycopg.OperationalError as exc:
                raise StoreUnavailable(f"PostgreSQL write failed: {exc}".strip()) from None

    def _insert_events(self, events: Sequence[Event], params: Sequence[tuple[Any, ...]]) -> list[bool]:
        recent = self._recent_facets()
        received = params[0][_RECEIVED]
        rows = orjson.dumps([_json_row(row) for row in params]).decode()
        cores = [row[-1] for row in params]
        while True:
            facets = facet_rows((v for event in events for v in event.facet_values), *recent.generations())
            values = orjson.dumps([(h, r, d) for h, _, r, d in facets.values()]).decode()
            packed = [row[1] for row in facets.values()]
            arguments = (_APPEND_LOCK, recent.generation, values, packed, rows, cores, received)
            with self._write_lock:
                try:
                    with self._writer_conn().cursor() as cur:
                        cur.execute(_APPEND, arguments)
                        row = cur.fetchone()  # a function's call: always one row
                        assert row is not None
                        sweeps, stored = row
                except psycopg.OperationalError as exc:
                    raise StoreUnavailable(f"PostgreSQL write failed: {exc}".strip()) from None
            recent.check(int(sweeps))  # a sweep ran since the hashes were remembered: forget them
            if stored is not None:
                break  # else nothing was written: send every value again
        recent.add(list(facets))
        if len(stored) == len(events):
            return [True] * len(events)
        new = set(stored)
        return [str(event_row[0]) in new for event_row in params]

    def _run_script(self, cursor: Any, script: str) -> None:
        cursor.execute(script)

    def close(self) -> None:
        self._pool.close()
        if self._writer is not None:
            self._writer.close()
