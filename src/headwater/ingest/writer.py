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
from headwater.ingest.service import collector_paused
from headwater.store.base import EventStore
from headwater.store.generic import GenericStored, generic_store

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Pending:
    events: Sequence[Any]  # Event, or GenericEvent when `generic`
    generic: bool
    # Who waits: a thread on `future`, or a coroutine of `loop` on `waiter`. Each holds a
    # list[bool], or a list[GenericStored] when `generic`.
    future: Future[list[Any]] | None = None
    loop: asyncio.AbstractEventLoop | None = None
    waiter: asyncio.Future[list[Any]] | None = None


def _settle(answers: list[tuple[asyncio.Future[list[Any]], list[Any] | BaseException]]) -> None:
    for waiter, answer in answers:
        if waiter.done():  # a request cancelled meanwhile has nobody to tell
            continue
        if isinstance(answer, BaseException):
            waiter.set_exception(answer)
        else:
            waiter.set_result(answer)


def _answer(group: Sequence[_Pending], answers: Sequence[list[Any] | BaseException]) -> None:
    """Tell each request of a commit its answer: threads one by one, each event loop in one call
    (one wake-up of the loop for the whole group, not one per request)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[list[Any]], Any]]] = {}
    for pending, answer in zip(group, answers, strict=True):
        if pending.future is not None:
            if isinstance(answer, BaseException):
                pending.future.set_exception(answer)
            else:
                pending.future.set_result(answer)
        elif pending.loop is not None and pending.waiter is not None:
            by_loop.setdefault(pending.loop, []).append((pending.waiter, answer))
    for loop, settled in by_loop.items():
        try:
            loop.call_soon_threadsafe(_settle, settled)
        except RuntimeError:  # the loop closed (shutdown): nobody waits any more
            log.warning("%d answers of a group commit had no event loop to go to", len(settled))


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

    def _submit(self, events: Sequence[Any], generic: bool) -> Future[list[Any]]:
        future: Future[list[Any]] = Future()
        if not events:
            future.set_result([])
        else:
            self._queue.put(_Pending(events, generic, future=future))
        return future

    def enqueue(self, events: Sequence[Event]) -> asyncio.Future[list[bool]]:
        """A future of the running event loop, resolved from the writer thread once the events
        are durable (no concurrent Future to chain: that cost a request more than its share of
        the commit). Called on the loop's thread; `headwater.api.http_protocol` adds a callback
        to it, coroutines await it (`append`)."""
        return self._enqueue(events, False)

    def _enqueue(self, events: Sequence[Any], generic: bool) -> asyncio.Future[list[Any]]:
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[list[Any]] = loop.create_future()
        if not events:
            waiter.set_result([])
        else:
            self._queue.put(_Pending(events, generic, loop=loop, waiter=waiter))
        return waiter

    async def _wait(self, events: Sequence[Any], generic: bool) -> list[Any]:
        if not events:
            return []
        return await self._enqueue(events, generic)

    def submit(self, events: Sequence[Event]) -> Future[list[bool]]:
        return self._submit(events, False)

    def submit_generic(self, events: Sequence[GenericEvent]) -> Future[list[GenericStored]]:
        return self._submit(events, True)

    async def append_generic(self, events: Sequence[GenericEvent]) -> list[GenericStored]:
        """Resolve once the generic events are durable: each one's id and whether it is new."""
        return await self._wait(events, True)

    def append_generic_sync(self, events: Sequence[GenericEvent]) -> list[GenericStored]:
        return self.submit_generic(events).result()

    async def append(self, events: Sequence[Event]) -> list[bool]:
        """Resolve once the events are durable: True for each newly stored event."""
        return await self._wait(events, False)

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
            # The group is gathered once the store lets this process write: what was sent while
            # another process's writer committed goes into this commit, not the one after.
            with self.store.write_turn():
                group, stop = self._gather(first)
                self._commit(group)
            if stop:
                return

    def _gather(self, first: _Pending) -> tuple[list[_Pending], bool]:
        """The requests waiting behind `first`, up to `max_events` events; and whether `close`
        was asked meanwhile."""
        group = [first]
        size = len(first.events)
        while size < self.max_events:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                return group, True
            group.append(item)
            size += len(item.events)
        return group, False

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
        _answer(group, [failure] * len(group))

    def _try_commit(self, group: list[_Pending]) -> HeadwaterError | None:
        events = [event for pending in group for event in pending.events]
        append: Callable[[Any, str], list[Any]] = self.store.append
        try:
            if group[0].generic:
                append = generic_store(self.store).append_generic
            with collector_paused():  # thousands of short-lived rows, all freed by reference counts
                stored = append(events, format_ticks(now_ticks()))
        except HeadwaterError as exc:
            log.error("group commit of %d events failed: %s", len(events), exc.message)
            return exc
        except Exception as exc:
            log.exception("group commit of %d events failed", len(events))
            return StoreRefused(f"the store refused to keep these events: {exc}")
        self.commits += 1
        self.events_committed += len(events)
        answers: list[list[Any] | BaseException] = []
        start = 0
        for pending in group:
            end = start + len(pending.events)
            answers.append(stored[start:end])
            start = end
        _answer(group, answers)
        return None
