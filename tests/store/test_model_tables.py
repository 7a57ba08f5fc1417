"""The model tables' Python definition (store/model/tables.py) against the migrations, which
define the schema, on both backends: every column of every model table is staged or computed by
the merge, in the migrations' order, and its key is the table's primary key."""

from __future__ import annotations

from headwater.store.base import EventStore
from headwater.store.model import MODEL_TABLES, TABLES


def _columns(store: EventStore, table: str) -> list[str]:
    with store.transaction() as cur:
        if store.backend == "sqlite":
            cur.execute(f"PRAGMA table_info({table})")
            return [row[1] for row in cur.fetchall()]
        cur.execute(
            store.sql(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position"
            ),
            (table,),
        )
        return [row[0] for row in cur.fetchall()]


def _primary_key(store: EventStore, table: str) -> set[str]:
    with store.transaction() as cur:
        if store.backend == "sqlite":
            cur.execute(f"PRAGMA table_info({table})")
            return {row[1] for row in cur.fetchall() if row[5]}
        cur.execute(
            store.sql(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = ?::regclass AND i.indisprimary"
            ),
            (table,),
        )
        return {row[0] for row in cur.fetchall()}


def test_every_model_table_is_defined_as_the_migrations_make_it(store: EventStore) -> None:
    for name in MODEL_TABLES:
        table = TABLES[name]
        assert _columns(store, name) == [*table.columns, *table.computed], name
        assert not set(table.computed) & set(table.columns), name


def test_each_tables_merge_key_is_its_primary_key(store: EventStore) -> None:
    for name in MODEL_TABLES:
        assert _primary_key(store, name) == set(TABLES[name].key), name
