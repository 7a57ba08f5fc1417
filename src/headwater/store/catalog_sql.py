"""The catalog in SQL (both backends): sources, dataset and job versions, search and tags.

Tags are user metadata set through the API, kept in their own tables (migration 0004): the
pipeline never rebuilds them.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from headwater.store.deletions_sql import visible
from headwater.store.in_force_sql import facets_in_force
from headwater.store.model_rows import (
    DatasetRef,
    DatasetVersionRow,
    Facet,
    FieldRow,
    JobVersionRow,
    RunRow,
    SearchRow,
    SourceRow,
    TagRow,
)
from headwater.store.sql_reads import SqlReads

_SOURCE = "SELECT name, uri, created_at, updated_at FROM sources"
_DATASET_VERSION = (
    "SELECT dv.version_id, d.namespace, d.name, d.source_name, dv.version_label, dv.lifecycle, "
    "dv.created_at, dv.schema_hash, dv.created_by_run, d.node_id FROM dataset_versions dv "
    "JOIN datasets d ON d.node_id = dv.node_id WHERE d.namespace = ? AND d.name = ?"
)
_JOB_VERSION = (
    "SELECT v.version_id, j.namespace, j.name, v.source_code_location, v.created_at, v.updated_at, "
    "v.run_count, j.node_id, (SELECT r.run_id FROM runs r WHERE r.job_version = v.version_id "
    "ORDER BY COALESCE(r.started_at, r.first_event_time) DESC, r.run_id DESC LIMIT 1) "
    "FROM job_versions v JOIN jobs j ON j.node_id = v.node_id WHERE j.namespace = ? AND j.name = ?"
)
_TAG_TABLES = {"dataset": "dataset_tags", "job": "job_tags"}
SEARCH_COUNT_CAP = 1000  # matches counted for totalCount (Marquez counts only the results returned)
SEARCH_WALK = 2000  # rows of the name (or update time) index a search walks, plus 50 per result
# The name as PostgreSQL's trigram indexes hold it (migration 0005): lower-cased, and `.`, `_`,
# `-` and `/` as capitals, which pg_trgm keeps inside a word where it would split at them.
_NAME_KEY = "replace(replace(replace(replace(LOWER(name), '.', 'D'), '_', 'U'), '-', 'H'), '/', 'S')"
_NAME_KEY_CHARACTERS = str.maketrans("._-/", "DUHS")
_SEARCH_ORDER = {"NAME": "@name, @namespace", "UPDATE_AT": "@updated_at DESC, @name, @namespace"}


def _like(q: str) -> str:
    """A LIKE pattern matching `q` anywhere, its own % and _ taken literally; lower-cased as the
    databases' LOWER and LIKE fold case: ASCII letters only."""
    lowered = "".join(c.lower() if c.isascii() else c for c in q)
    escaped = lowered.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _phrase(q: str) -> str:
    """An FTS5 query for the text `q` anywhere (with the trigram tokenizer: `q` as a substring)."""
    return '"' + q.replace('"', '""') + '"'


def _order(sort: str, table: str = "") -> str:
    """ORDER BY terms of a search sort (NAME or UPDATE_AT), of the columns of `table` if named."""
    return _SEARCH_ORDER[sort].replace("@", f"{table}." if table else "")


@dataclass(frozen=True, slots=True)
class _SearchFilters:
    """The filters of a search besides its text."""

    namespace: str | None
    after: str | None
    before: str | None
    hide_deleted: bool = False  # markers exist (migration 0011): skip what they hide

    def clauses(self, table: str, names: Sequence[str]) -> tuple[str, list[str]]:
        """` AND …` for the filters among `names` that are set (on the columns of `table`, when
        named), and their parameters."""
        tests = {"namespace": "namespace = ?", "after": "updated_at >= ?", "before": "updated_at < ?"}
        given = [(name, getattr(self, name)) for name in names if getattr(self, name) is not None]
        prefix = f"{table}." if table else ""
        return "".join(f" AND {prefix}{tests[name]}" for name, _ in given), [value for _, value in given]


_NO_FILTERS = _SearchFilters(None, None, None)


class CatalogSql(SqlReads):
    """The catalog methods of the store; mixed into the SQL store."""

    @abstractmethod
    def _writing(self) -> Any:
        """A cursor inside one write transaction."""

    @abstractmethod
    def _runs_by_id(self, cur: Any, run_ids: Sequence[str]) -> dict[str, RunRow]:
        """Runs with their facets, by id."""

    # -- sources ---------------------------------------------------------------------------------
    def list_sources(self, *, limit: int, offset: int) -> list[SourceRow]:
        with self._reading() as cur:
            cur.execute(self._sql(f"{_SOURCE} ORDER BY name LIMIT ? OFFSET ?"), (limit, offset))
            return [SourceRow(*row) for row in cur.fetchall()]

    def get_source(self, name: str) -> SourceRow | None:
        with self._reading() as cur:
            cur.execute(self._sql(f"{_SOURCE} WHERE name = ?"), (name,))
            row = cur.fetchone()
        return SourceRow(*row) if row else None

    # -- versions --------------------------------------------------------------------------------
    def _facets_at(self, cur: Any, table: str, node_id: str, time: str | None) -> tuple[Facet, ...]:
        if time is None:
            return ()
        query = facets_in_force(table, time)
        rows = self._chunked(cur, query.sql, [node_id], *query.after)
        return tuple(Facet(name, value) for _node, name, value in rows)

    def _schema_fields(self, cur: Any, schema_hashes: Sequence[str]) -> dict[str, list[FieldRow]]:
        """The fields of each schema, in their order."""
        query = (
            "SELECT schema_hash, path, position, type, description FROM schema_fields "
            "WHERE schema_hash IN ({marks}) ORDER BY schema_hash, position"
        )
        fields: dict[str, list[FieldRow]] = {}
        for schema_hash, path, position, kind, text in self._chunked(cur, query, schema_hashes):
            fields.setdefault(schema_hash, []).append(FieldRow(path, int(position), kind, text))
        return fields

    def _dataset_versions(self, cur: Any, rows: list[Any]) -> list[DatasetVersionRow]:
        fields = self._schema_fields(cur, [r[7] for r in rows if r[7]])
        runs = self._runs_by_id(cur, [r[8] for r in rows])
        tags = self._tags_of(cur, "dataset_tags", [r[9] for r in rows])
        return [
            DatasetVersionRow(
                version_id=r[0],
                namespace=r[1],
                name=r[2],
                source_name=r[3],
                version_label=r[4],
                lifecycle=r[5],
                created_at=r[6],
                fields=tuple(fields.get(r[7], ())) if r[7] else (),
                facets=self._facets_at(cur, "dataset_facets", r[9], r[6]),
                created_by_run=runs.get(r[8]),
                tags=tuple(tags.get(r[9], ())),
            )
            for r in rows
        ]

    def list_dataset_versions(
        self, namespace: str, name: str, *, limit: int, offset: int
    ) -> tuple[list[DatasetVersionRow], int]:
        with self._reading() as cur:
            order = " ORDER BY dv.created_at DESC, dv.created_seq DESC, dv.version_id LIMIT ? OFFSET ?"
            cur.execute(self._sql(_DATASET_VERSION + order), (namespace, name, limit, offset))
            versions = self._dataset_versions(cur, cur.fetchall())
            count = "SELECT COUNT(*) FROM dataset_versions dv JOIN datasets d ON d.node_id = dv.node_id "
            cur.execute(self._sql(count + "WHERE d.namespace = ? AND d.name = ?"), (namespace, name))
            row = cur.fetchone()
        return versions, int(row[0]) if row else 0

    def get_dataset_version(self, namespace: str, name: str, version: str) -> DatasetVersionRow | None:
        with self._reading() as cur:
            cur.execute(self._sql(_DATASET_VERSION + " AND dv.version_id = ?"), (namespace, name, version))
            found = self._dataset_versions(cur, cur.fetchall())
        return found[0] if found else None

    def _job_versions(self, cur: Any, rows: list[Any]) -> list[JobVersionRow]:
        io: dict[str, tuple[list[DatasetRef], list[DatasetRef]]] = {}
        query = (
            "SELECT io.version_id, io.direction, d.namespace, d.name FROM job_version_io io "
            "JOIN datasets d ON d.node_id = io.node_id WHERE io.version_id IN ({marks}) "
            "ORDER BY io.version_id, d.namespace, d.name"
        )
        for version_id, direction, namespace, name in self._chunked(cur, query, [r[0] for r in rows]):
            inputs, outputs = io.setdefault(version_id, ([], []))
            (inputs if direction == "input" else outputs).append(DatasetRef(namespace, name))
        runs = self._runs_by_id(cur, [r[8] for r in rows if r[8]])
        versions = []
        for r in rows:
            inputs, outputs = io.get(r[0], ([], []))
            latest = runs.get(r[8]) if r[8] else None
            facet_time = latest.updated_at if latest else r[5]
            versions.append(
                JobVersionRow(
                    version_id=r[0],
                    namespace=r[1],
                    name=r[2],
                    location=r[3],
                    created_at=r[4],
                    updated_at=r[5],
                    run_count=int(r[6]),
                    inputs=tuple(inputs),
                    outputs=tuple(outputs),
                    latest_run=latest,
                    facets=self._facets_at(cur, "job_facets", r[7], facet_time),
                )
            )
        return versions

    def list_job_versions(
        self, namespace: str, name: str, *, limit: int, offset: int
    ) -> tuple[list[JobVersionRow], int]:
        with self._reading() as cur:
            order = " ORDER BY v.created_at DESC, v.version_id LIMIT ? OFFSET ?"
            cur.execute(self._sql(_JOB_VERSION + order), (namespace, name, limit, offset))
            versions = self._job_versions(cur, cur.fetchall())
            count = "SELECT COUNT(*) FROM job_versions v JOIN jobs j ON j.node_id = v.node_id "
            cur.execute(self._sql(count + "WHERE j.namespace = ? AND j.name = ?"), (namespace, name))
            row = cur.fetchone()
        return versions, int(row[0]) if row else 0

    def get_job_version(self, namespace: str, name: str, version: str) -> JobVersionRow | None:
        with self._reading() as cur:
            cur.execute(self._sql(_JOB_VERSION + " AND v.version_id = ?"), (namespace, name, version))
            found = self._job_versions(cur, cur.fetchall())
        return found[0] if found else None

    # -- search ----------------------------------------------------------------------------------
    # A search answers the first `limit` matches in the order asked and how many match (up to
    # SEARCH_COUNT_CAP), at a cost bounded whatever `q` is. The trigram indexes (migration 0005)
    # count the matches up to the cap at once; when that is all of them, they are sorted. When
    # there are more, SQLite walks the first rows in the order asked (an index of that order,
    # migration 0005), where the first matches usually are; PostgreSQL, and SQLite when they
    # are not there (a cluster further on, such as names under `raw.`), sort the matches, no
    # further than the last of the first `limit` among those counted.
    def search(
        self,
        q: str,
        *,
        kind: str | None,
        namespace: str | None,
        sort: str,
        limit: int,
        before: str | None,
        after: str | None,
    ) -> tuple[list[SearchRow], int]:
        found: list[SearchRow] = []
        total = 0
        with self.snapshot(), self._reading() as cur:
            cur.execute("SELECT 1 FROM deleted_nodes LIMIT 1")
            where = _SearchFilters(namespace, after, before, cur.fetchone() is not None)
            if self.paramstyle == "format" and len(q) >= 3:
                # PostgreSQL prices the name key's four replace() calls as almost free, so on a
                # table of some 50,000 rows it may scan them all (40 ms) rather than read the
                # trigram index (5 ms): keep it on the index for this transaction
                cur.execute("SET LOCAL enable_seqscan = off")
            for label, table, index in (
                ("DATASET", "datasets", "dataset_names"),
                ("JOB", "jobs", "job_names"),
            ):
                if kind in (None, label):
                    rows, matches = self._search_table(cur, table, index, q, where, sort, limit)
                    found += [SearchRow(label, *row) for row in rows]
                    total += matches
        found.sort(key=lambda r: (r.name, r.namespace, r.kind))
        if sort != "NAME":
            found.sort(key=lambda r: r.updated_at, reverse=True)
        return found[:limit], min(total, SEARCH_COUNT_CAP)

    def _search_table(
        self, cur: Any, table: str, index: str, q: str, where: _SearchFilters, sort: str, limit: int
    ) -> tuple[list[Any], int]:
        """The first `limit` matches of one table in the order asked, and how many match (up to
        SEARCH_COUNT_CAP + 1)."""
        matches, params = self._search_matches(table, index, q, where)
        first: list[Any] | None = None
        if self.paramstyle == "qmark" and len(q) >= 3 and where == _NO_FILTERS:
            # SQLite counts in the trigram table alone, reading no row
            cur.execute(
                f"SELECT COUNT(*) FROM (SELECT rowid FROM {index} WHERE {index} MATCH ? LIMIT ?)",
                [*params, SEARCH_COUNT_CAP + 1],
            )
            count = int(cur.fetchone()[0])
        else:  # one pass: how many match, and the first ones when that is all of them
            cur.execute(
                self._sql(
                    f"SELECT *, COUNT(*) OVER () FROM ({matches} LIMIT ?) c ORDER BY {_order(sort)} LIMIT ?"
                ),
                [*params, SEARCH_COUNT_CAP + 1, limit],
            )
            first = cur.fetchall()
            count = int(first[0][4]) if first else 0
        if first is not None and count <= SEARCH_COUNT_CAP:
            return [row[:4] for row in first], count
        if count > SEARCH_COUNT_CAP and self.paramstyle == "qmark" and not where.hide_deleted:
            walked = self._search_walk(cur, table, q, where, sort, limit)
            if len(walked) == limit:
                return walked, count
        if count > SEARCH_COUNT_CAP and first is not None and len(first) == limit:
            # `first` are the first of some matches: the first of all come no later than its last.
            # PostgreSQL reads the rows up to there through the index of that order (or those
            # that the trigram index and that index both hold), not every match.
            bound = ("d.name <= ?", first[-1][1]) if sort == "NAME" else ("d.updated_at >= ?", first[-1][3])
            matches, params = self._search_matches(table, index, q, where, bound)
        if count:  # sort the matches
            cur.execute(self._sql(f"{matches} ORDER BY {_order(sort)} LIMIT ?"), [*params, limit])
            return list(cur.fetchall()), count
        return [], 0

    def _search_matches(
        self, table: str, index: str, q: str, where: _SearchFilters, bound: tuple[str, str] | None = None
    ) -> tuple[str, list[str]]:
        """A query of the matches (namespace, name, node_id, updated_at), unsorted, also within
        `bound` (a condition and its parameter). SQLite reads its FTS5 trigram table `index` as a
        stream, which a limit stops early (under 3 characters, no trigram: it scans).
        PostgreSQL plans the query for every match (a limit would make it scan the table for the
        first ones, hoping that they come early), through its trigram index where it sees fit,
        and reads as far as asked."""
        filters, params = where.clauses("d", ("namespace", "after", "before"))
        if bound:
            filters, params = f"{filters} AND {bound[0]}", [*params, bound[1]]
        if where.hide_deleted:
            filters += f" AND {visible('d')}"
        columns = "d.namespace, d.name, d.node_id, d.updated_at"
        if self.paramstyle == "format":
            match, pattern = self._name_match(index, q)
            query = f"SELECT {columns} FROM {table} d WHERE {match}{filters}"
            return f"WITH m AS MATERIALIZED ({query}) SELECT * FROM m", [pattern, *params]
        if len(q) >= 3:
            source = f"{index} f CROSS JOIN {table} d ON d.rowid = f.rowid WHERE f.{index} MATCH ?"
            return f"SELECT * FROM (SELECT {columns} FROM {source}{filters}) m", [_phrase(q), *params]
        # SQLite's LIKE ignores ASCII case, as its LOWER folds only ASCII
        query = f"SELECT {columns} FROM {table} d WHERE d.name LIKE ? ESCAPE '\\'{filters}"
        return f"SELECT * FROM ({query}) m", [_like(q), *params]

    def _name_match(self, index: str, q: str) -> tuple[str, str]:
        """The condition (and its parameter) for a name holding `q` in any case, in PostgreSQL.
        From 3 characters, its pg_trgm index serves it (migration 0005): the same expression,
        the pattern with the same stand-ins for `.`, `_`, `-` and `/`, which LIKE's escapes keep
        literal (`\\_` becomes `\\U`, a literal U)."""
        if len(q) < 3:
            return "LOWER(name) LIKE ? ESCAPE '\\'", _like(q)
        return f"{_NAME_KEY} LIKE ? ESCAPE '\\'", _like(q).translate(_NAME_KEY_CHARACTERS)

    def _search_walk(
        self, cur: Any, table: str, q: str, where: _SearchFilters, sort: str, limit: int
    ) -> list[Any]:
        """SQLite: the first `limit` matches among the first rows in the order asked (of the
        namespace asked, or in the time range asked), read from an index of that order
        (migration 0005: (name, namespace), (updated_at DESC, name, namespace)); fewer when the
        matches lie further on."""
        walked: tuple[str, ...] = ("namespace",)  # the filters the index serves
        tested: tuple[str, ...] = ("after", "before")
        if sort != "NAME":
            walked, tested = tested, walked
        inner, inner_params = where.clauses("", walked)
        keys = _order(sort).replace(" DESC", "")
        window = f"SELECT rowid AS id, {keys} FROM {table} WHERE 1 = 1{inner} ORDER BY {_order(sort)} LIMIT ?"
        rows = "SELECT d.namespace, d.name, d.node_id, d.updated_at FROM"
        if sort == "NAME" and (where.after or where.before):  # the times are in the rows only
            tests, test_params = where.clauses("d", tested)
            query = (
                f"{rows} ({window}) w CROSS JOIN {table} d ON d.rowid = w.id "
                f"WHERE w.name LIKE ? ESCAPE '\\'{tests} ORDER BY w.name, w.namespace LIMIT ?"
            )
        else:  # the first matches from the index alone, then their rows
            tests, test_params = where.clauses("", tested)
            first = f"SELECT * FROM ({window}) WHERE name LIKE ? ESCAPE '\\'{tests}"
            first += f" ORDER BY {_order(sort)} LIMIT ?"
            query = f"{rows} ({first}) w CROSS JOIN {table} d ON d.rowid = w.id"
        walk = SEARCH_WALK + 50 * limit
        cur.execute(query, [*inner_params, walk, _like(q), *test_params, limit])
        return list(cur.fetchall())

    # -- tags ------------------------------------------------------------------------------------
    def _tags_of(self, cur: Any, table: str, node_ids: Sequence[str]) -> dict[str, list[str]]:
        tags: dict[str, list[str]] = {}
        query = f"SELECT node_id, tag FROM {table} WHERE node_id IN ({{marks}}) ORDER BY node_id, tag"
        for node_id, tag in self._chunked(cur, query, node_ids):
            tags.setdefault(node_id, []).append(tag)
        return tags

    def _field_tags_of(self, cur: Any, node_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        tags: dict[str, list[tuple[str, str]]] = {}
        query = (
            "SELECT node_id, field, tag FROM field_tags WHERE node_id IN ({marks}) "
            "ORDER BY node_id, field, tag"
        )
        for node_id, field, tag in self._chunked(cur, query, node_ids):
            tags.setdefault(node_id, []).append((field, tag))
        return tags

    def list_tags(self, *, limit: int, offset: int) -> list[TagRow]:
        with self._reading() as cur:
            cur.execute(
                self._sql("SELECT name, description FROM tags ORDER BY name LIMIT ? OFFSET ?"),
                (limit, offset),
            )
            return [TagRow(*row) for row in cur.fetchall()]

    def put_tag(self, name: str, description: str | None, now: str) -> TagRow:
        with self._writing() as cur:
            cur.execute(
                self._sql(
                    "INSERT INTO tags (name, description, created_at, updated_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET description = excluded.description, "
                    "updated_at = excluded.updated_at"
                ),
                (name, description, now, now),
            )
        return TagRow(name, description)

    def set_tag(self, node_id: str, tag: str, *, field: str | None, tagged: bool, now: str) -> None:
        kind = "dataset" if node_id.startswith("dataset:") else "job"
        table, keys = (
            ("field_tags", (node_id, field, tag))
            if field is not None
            else (_TAG_TABLES[kind], (node_id, tag))
        )
        columns = "node_id, field, tag" if field is not None else "node_id, tag"
        with self._writing() as cur:
            if not tagged:
                where = " AND ".join(f"{c.strip()} = ?" for c in columns.split(","))
                cur.execute(self._sql(f"DELETE FROM {table} WHERE {where}"), keys)
                return
            cur.execute(
                self._sql(
                    "INSERT INTO tags (name, description, created_at, updated_at) VALUES (?, NULL, ?, ?) "
                    "ON CONFLICT (name) DO NOTHING"
                ),
                (tag, now, now),
            )
            marks = ", ".join("?" * (len(keys) + 1))
            cur.execute(
                self._sql(
                    f"INSERT INTO {table} ({columns}, tagged_at) VALUES ({marks}) ON CONFLICT DO NOTHING"
                ),
                (*keys, now),
            )
