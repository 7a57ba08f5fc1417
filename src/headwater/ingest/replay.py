"""Replaying event files (JSON, NDJSON, gzipped) into the store through the same validation as HTTP
(OpenLineage events here; generic events through `headwater.ingest.generic`).

An NDJSON file is read a block at a time and cut into batches of whole lines, so a file of any
size replays in bounded memory and its progress shows as it goes; a JSON file (one event or an
array) is read whole. With `workers`, batches are validated in other processes while this one
appends the batches validated before, in order: validation is most of the CPU an event costs, and a
thread would not help (the two would take turns on the GIL). `headwater ingest` asks for them when
the files are large (`auto_workers`); a program calling these functions must then guard its main
module (`if __name__ == "__main__":`), as for any spawned process.
"""

from __future__ import annotations

import gzip
import multiprocessing
import os
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from tqdm import tqdm

from headwater.errors import HeadwaterError
from headwater.events.decode import Document, documents_from_json, documents_from_ndjson
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest.service import (
    DUPLICATE,
    REJECTED,
    Outcome,
    Validated,
    collector_paused,
    record_stored,
    validate_documents,
)
from headwater.store.base import EventStore

BLOCK_BYTES = 8 * 1024 * 1024  # an NDJSON file is read this much at a time
PARALLEL_BYTES = (
    32 * 1024 * 1024
)  # `auto_workers`: from this many bytes of files on, other processes validate
# what reading a file may raise: gone since, not gzip after all or cut short, not JSON
_UNREADABLE = (OSError, EOFError, zlib.error, HeadwaterError)
PARENT_CHECK_SECONDS = 0.5  # how often a validating process checks that the command still runs
_V = TypeVar("_V")


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@dataclass
class ReplaySummary:
    files: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    warnings: int = 0
    rejections: list[str] = field(default_factory=list)

    def count(self, path: Path, outcomes: Sequence[Outcome], first_index: int) -> None:
        """Add the outcomes of a batch whose documents are numbered from `first_index` in `path`."""
        for outcome in outcomes:
            if outcome.status == REJECTED:
                self.rejected += 1
                self.rejections.append(f"{path}#{first_index + outcome.index}: {'; '.join(outcome.errors)}")
            elif outcome.status == DUPLICATE:
                self.duplicates += 1
            else:
                self.stored += 1
            self.warnings += bool(outcome.warnings)


def replay_files(
    store: EventStore,
    files: list[Path],
    *,
    batch_size: int = 1000,
    progress: bool = True,
    block_bytes: int = BLOCK_BYTES,
    workers: int = 0,
) -> ReplaySummary:
    """OpenLineage events from files into the store (`replay_documents`)."""

    def append(validated: Validated) -> Sequence[Outcome]:
        return record_stored(validated, store.append(validated.events, format_ticks(now_ticks())))

    return replay_documents(
        files,
        _validated_for_replay,
        append,
        batch_size=batch_size,
        progress=progress,
        lazy=True,
        block_bytes=block_bytes,
        workers=workers,
    )


def _validated_for_replay(documents: Sequence[Document]) -> Validated:
    """`validate_documents`, the events' payloads left out where the store keeps their cores
    instead: half the bytes a validating process hands back."""
    validated = validate_documents(documents)
    for event in validated.events:
        if event.core is not None:
            event.payload = None
    return validated


@dataclass
class _Batch:
    """A batch of one file on its way: validated here or in another process, then appended."""

    path: Path
    file: int  # which of the files it is (a file may be named twice)
    validated: Future[object]
    read: int  # the file's bytes read once it was (compressed ones, for a .gz file)
    numbered: bool  # its documents carry their numbers in the file; else they count from 0


def replay_documents(
    files: list[Path],
    validate: Callable[[Sequence[Document]], _V],
    append: Callable[[_V], Sequence[Outcome]],
    *,
    batch_size: int = 1000,
    progress: bool = True,
    lazy: bool = False,
    block_bytes: int = BLOCK_BYTES,
    workers: int = 0,
) -> ReplaySummary:
    """The documents of the files, `batch_size` at a time: each batch validated (`validate`, a
    module-level function), here or by one of `workers` spawned processes, then appended in order
    (`append`, which returns the documents' outcomes), and the outcomes summed up. `lazy` leaves
    well-formed events unparsed for the lean path. A file that cannot be read, or stops being
    readable, counts as one rejection (the batches read before it stopped are stored)."""
    summary = ReplaySummary()
    sizes = [path.stat().st_size for path in files]
    with (
        tqdm(total=sum(sizes), unit="B", unit_scale=True, disable=not progress, desc="ingest") as bar,
        _validators(workers) as pool,
    ):
        waiting: deque[_Batch] = deque()
        next_index = [0] * len(files)  # the number of each file's next document

        def settle_one() -> None:  # append the oldest batch, once validated, and count it
            batch = waiting.popleft()
            validated: _V = batch.validated.result()  # type: ignore[assignment]
            with collector_paused():
                outcomes = append(validated)
            first = next_index[batch.file]
            next_index[batch.file] += len(outcomes)
            summary.count(batch.path, outcomes, 0 if batch.numbered else first)
            bar.update(batch.read)

        for number, path in enumerate(files):
            summary.files += 1
            done = 0
            chunks = _chunks(path, batch_size, lazy, block_bytes)
            while True:
                try:  # only reading rejects the file; the store's errors stop the replay
                    with collector_paused():
                        chunk = next(chunks, None)
                except _UNREADABLE as exc:
                    while waiting:
                        settle_one()
                    message = exc.message if isinstance(exc, HeadwaterError) else str(exc) or repr(exc)
                    summary.rejected += 1
                    summary.rejections.append(f"{path}: {message}")
                    break
                if chunk is None:
                    break
                work, first_line, read = chunk
                if pool is None or isinstance(work, list):  # a JSON file's documents hold all of it
                    validated: Future[object] = Future()
                    validated.set_result(_validated(validate, work, first_line, lazy))
                else:
                    validated = pool.submit(_validated, validate, work, first_line, lazy)
                waiting.append(_Batch(path, number, validated, read - done, numbered=isinstance(work, list)))
                done = read
                while len(waiting) > 2 * workers:  # each validator has the next batch in hand
                    settle_one()
            while waiting:
                settle_one()
            bar.update(max(0, sizes[number] - done))
    return summary


def auto_workers(files: Sequence[Path]) -> int:
    """The validating processes worth starting for these files: none below PARALLEL_BYTES (starting
    one takes about a second), else one per core but the one this process appends on, up to 4."""
    if sum(path.stat().st_size for path in files) < PARALLEL_BYTES:
        return 0
    return max(0, min(4, (os.cpu_count() or 1) - 1))


def _validators(workers: int) -> AbstractContextManager[Executor | None]:
    if workers < 1:
        return nullcontext()
    # spawned: this process has threads (SQLite's checkpointer) and open connections to leave behind
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_leave_with,
        initargs=(os.getpid(),),
    )


def _leave_with(parent: int) -> None:
    """In a validating process: exit once `parent` has gone (killed, it could not say so; the
    process would wait for work forever, as it holds both ends of its work queue's pipe)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="headwater-parent-watch", daemon=True).start()


def _validated(
    validate: Callable[[Sequence[Document]], _V], work: bytes | list[Document], first_line: int, lazy: bool
) -> _V:
    """`validate` of a batch: its documents, or the whole NDJSON lines they are on, the first of
    them line `first_line` of its file (the documents are numbered from 0: the summary numbers
    them in the file)."""
    with collector_paused():
        if isinstance(work, bytes):
            work = documents_from_ndjson(work, lazy=lazy, first_line=first_line)
        return validate(work)


def _chunks(
    path: Path, batch_size: int, lazy: bool, block_bytes: int
) -> Iterator[tuple[bytes | list[Document], int, int]]:
    """The file's batches: of an NDJSON file, `batch_size` whole lines at a time (as bytes; the
    last batch may hold fewer), with the number of their first line; of a JSON file, its
    documents `batch_size` at a time; each with how many of the file's bytes (compressed, for a
    .gz file) have been read by then."""
    name = path.name.lower().removesuffix(".gz")
    with path.open("rb") as file:
        handle: _Readable = gzip.GzipFile(fileobj=file) if path.suffix.lower() == ".gz" else file
        if not name.endswith((".ndjson", ".jsonl")):
            documents = documents_from_json(handle.read(), lazy=lazy)[0]
            for start in range(0, len(documents), batch_size):
                yield documents[start : start + batch_size], 1, file.tell()
            return
        carry = b""
        line = 1
        for block in _whole_lines(handle, block_bytes):
            data = carry + block if carry else block
            start = 0
            while (end := _after_lines(data, start, batch_size)) is not None:
                yield data[start:end], line, file.tell()
                line += batch_size
                start = end
            carry = data[start:]
        if carry:
            yield carry, line, file.tell()


def _after_lines(data: bytes, start: int, lines: int) -> int | None:
    """Where the `lines`-th line from `start` ends (after its newline), or None when fewer end."""
    end = start
    for _ in range(lines):
        end = data.find(b"\n", end) + 1
        if end == 0:
            return None
    return end


def _whole_lines(handle: _Readable, block_bytes: int) -> Iterator[bytes]:
    """The stream's bytes about `block_bytes` at a time, each piece ending at a line's end (the
    last one where the stream ends); a line longer than a block comes whole, in one piece."""
    rest = b""
    while block := handle.read(block_bytes):
        data = rest + block if rest else block
        end = data.rfind(b"\n") + 1
        if end == 0:  # no line ends in it yet
            rest = data
            continue
        rest = data[end:]
        yield data[:end]
    if rest:
        yield rest
