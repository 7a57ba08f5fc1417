"""Consistent copies of a live store: SQLite's online backup API; PostgreSQL is pg_dump's job."""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from headwater.errors import ConfigError, StoreUnavailable
from headwater.store.sqlite.store import sqlite_path

PG_DUMP_ADVICE = (
    "headwater db backup copies SQLite stores; for PostgreSQL use its own tools, which copy a live "
    "database consistently too:\n"
    "  pg_dump --format=custom --file=headwater.dump 'postgresql://USER@HOST:5432/DB'\n"
    "and to restore into an empty database:\n"
    "  pg_restore --no-owner --dbname='postgresql://USER@HOST:5432/NEWDB' headwater.dump\n"
    "(see docs/operations.md)"
)


@dataclass(frozen=True)
class BackupSummary:
    """What a backup copied: the file written, its size, and the store's state in it."""

    path: Path
    bytes: int
    schema_version: int
    events: int
    last_seq: int
    seconds: float


def backup_store(url: str, target: str | Path, *, overwrite: bool = False) -> BackupSummary:
    """Copy the store at `url` to the SQLite file `target` while it keeps serving.

    One step of SQLite's online backup copies every page inside one read transaction: in WAL mode
    writers go on meanwhile, and the copy is the database as of one commit (whole transactions,
    no torn state). It is written to `target.partial` and renamed when complete, so a cut backup
    never looks like a good one. A PostgreSQL URL raises ConfigError with pg_dump's instructions.
    """
    if url.startswith(("postgresql:", "postgres:", "postgresql+psycopg:")):
        raise ConfigError(PG_DUMP_ADVICE)
    source_path = sqlite_path(url)
    if not source_path.is_file():
        raise ConfigError(f"no SQLite store at {source_path} (check --database-url / HEADWATER_DATABASE_URL)")
    destination = Path(target)
    if destination.resolve() == source_path.resolve():
        raise ConfigError(f"the backup {destination} would overwrite the store itself")
    if destination.exists() and not overwrite:
        raise ConfigError(f"{destination} exists: choose a new file, or pass --force to replace it")
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreUnavailable(f"cannot create the folder of {destination}: {exc}") from None
    partial = destination.with_name(destination.name + ".partial")
    partial.unlink(missing_ok=True)
    started = time.monotonic()
    try:
        source = sqlite3.connect(source_path, timeout=30)
        try:
            copy = sqlite3.connect(partial)
            try:
                source.backup(copy)  # pages=-1: every page in one step, from one snapshot
                schema_version, events, last_seq = _state(copy)
                # The copy keeps the source's WAL mode; fold everything into the main file so
                # that the single file is the whole backup.
                copy.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                copy.close()
        finally:
            source.close()
        _fsync(partial)
        os.replace(partial, destination)
        _fsync(destination.parent)
    except sqlite3.Error as exc:
        partial.unlink(missing_ok=True)
        raise StoreUnavailable(f"backup of {source_path} to {destination} failed: {exc}") from None
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise StoreUnavailable(f"cannot write the backup {destination}: {exc}") from None
    return BackupSummary(
        destination,
        destination.stat().st_size,
        schema_version,
        events,
        last_seq,
        time.monotonic() - started,
    )


def _state(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """Schema version, event count and newest seq of a store's database (zeros where it has none)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = 0
    if "schema_migrations" in tables:
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
    events = last_seq = 0
    if "events" in tables:
        events, last_seq = conn.execute("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM events").fetchone()
    return int(version), int(events), int(last_seq)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
