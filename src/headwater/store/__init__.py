"""The store: the event store (system of record) and the lineage model, behind one interface (the
model's write side, which the pipeline publishes through, is `headwater.store.model`).

`open_store(url)` picks the backend from the URL: SQLite (embedded default) or PostgreSQL.
"""

from headwater.store.base import EventStore, RunCursor, StoredEvent
from headwater.store.factory import open_store

__all__ = ["EventStore", "RunCursor", "StoredEvent", "open_store"]
