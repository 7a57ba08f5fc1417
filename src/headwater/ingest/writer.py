"""Group commit: one thread appends whatever events are waiting in one durable transaction, so
concurrent requests share an fsync and each is acknowledged only after its commit. OpenLineage
and generic events wait in the same queue; each kind is committed by its own store call."""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from headwater.errors import HeadwaterError, StoreRefused, StoreUnavailable
from headwater.events.generic import GenericEvent
from headwater.events.model import Event
from headwater.events.times import format_ticks, now_ticks
from headwater.store.base import EventStore
from headwater.store.generic import GenericStored, generic_store

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Pending:
    events: Sequence[Any]  # Event, or GenericEvent when `generic`
    future: Future[list[Any]]  # list[bool], or list[GenericStored] when `generic`
    generic: bool = False


class GroupCommitWriter:
    """Serializes appends to the store through one thread, batching concurrent callers."""

    def __init__(self, store: EventStore, max_events: int = 2_000) -> None:
        self.store = store
        self.max_events = max_events
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="headwater-writer", daemon=True)
        self._thread.start()
        self.commits = 0
        self.events_committed = 0

    def submit(self, events: Sequence[Event]) -> Future[list[bool]]:
        future: Future[list[bool]] = Future()
        if not events:
            future.set_result([])
        else:
            self._queue.put(_Pending(events, future))
        return future

    def submit_generic(self, events: Sequence[GenericEvent]) -> Future[list[GenericStored]]:
        future: Future[list[GenericStored]] = Future()
        if not events:
            future.set_result([])
        else:
            self._queue.put(_Pending(events, future, generic=True))
        return future

    async def append_generic(self, events: Sequence[GenericEvent]) -> list[GenericStored]:
        """Resolve once the generic events are durable: each one's id and whether it is new."""
        return await asyncio.wrap_future(self.submit_generic(events))

    def append_generic_sync(self, events: Sequence[GenericEvent]) -> list[GenericStored]:
        return self.submit_generic(events).result()

    async def append(self, events: Sequence[Event]) -> list[bool]:
        """Resolve once the events are durable: True for each newly stored event."""
        return await asyncio.wrap_future(self.submit(events))

    def append_sync(self, events: Sequence[Event]) -> list[bool]:
        return self.submit(events).result()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group = [first]
            size = len(first.events)
            stop = False
            while size < self.max_events:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stop = True
                    break
                group.append(item)
                size += len(item.events)
            self._commit(group)
            if stop:
                return

    def _commit(self, group: list[_Pending]) -> None:
        for generic in (False, True):
            same = [pending for pending in group if pending.generic is generic]
            if same:
                self._commit_kind(same)

    def _commit_kind(self, group: list[_Pending]) -> None:
        failure = self._try_commit(group)
        if failure is None:
            return
        if len(group) > 1 and not isinstance(failure, StoreUnavailable):
            # The store refused this data (not an outage): retry each request alone, so one
            # request it refuses cannot fail the others.
            for pending in group:
                self._commit_kind([pending])
            return
        for pending in group:
            pending.future.set_exception(failure)

    def _try_commit(self, group: list[_Pending]) -> HeadwaterError | None:
        events = [event for pending in group for event in pending.events]
        append: Callable[[Any, str], list[Any]] = self.store.append
        try:
            if group[0].generic:
                append = generic_store(self.store).append_generic
            stored = append(events, format_ticks(now_ticks()))
        except HeadwaterError as exc:
            log.error("group commit of %d events failed: %s", len(events), exc.message)
            return exc
        except Exception as exc:
            log.exception("group commit of %d events failed", len(events))
            return StoreRefused(f"the store refused to keep these events: {exc}")
        self.commits += 1
        self.events_committed += len(events)
        start = 0
        for pending in group:
            end = start + len(pending.events)
            pending.future.set_result(stored[start:end])
            start = end
        return None
