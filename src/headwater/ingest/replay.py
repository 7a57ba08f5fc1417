"""Replaying event files (JSON, NDJSON, gzipped) into the store through the same validation as HTTP
(OpenLineage events here; generic events through `headwater.ingest.generic`)."""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from headwater.errors import HeadwaterError
from headwater.events.decode import Document, documents_from_json, documents_from_ndjson
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest.service import (
    DUPLICATE,
    REJECTED,
    Outcome,
    collector_paused,
    record_stored,
    validate_documents,
)
from headwater.store.base import EventStore


@dataclass
class ReplaySummary:
    files: int = 0
    stored: int = 0
    duplicates: int = 0
    rejected: int = 0
    warnings: int = 0
    rejections: list[str] = field(default_factory=list)


def _documents(path: Path, lazy: bool) -> Iterator[Document]:
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rb") as handle:
        data = handle.read()
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".ndjson", ".jsonl")):
        yield from documents_from_ndjson(data, lazy=lazy)
    else:
        yield from documents_from_json(data, lazy=lazy)[0]


def replay_files(
    store: EventStore, files: list[Path], *, batch_size: int = 1000, progress: bool = True
) -> ReplaySummary:
    """OpenLineage events from files into the store."""

    def store_batch(documents: Sequence[Document]) -> Sequence[Outcome]:
        validated = validate_documents(documents)
        stored = store.append(validated.events, format_ticks(now_ticks()))
        return record_stored(validated, stored)

    return replay_documents(files, store_batch, batch_size=batch_size, progress=progress, lazy=True)


def replay_documents(
    files: list[Path],
    store_batch: Callable[[Sequence[Document]], Sequence[Outcome]],
    *,
    batch_size: int = 1000,
    progress: bool = True,
    lazy: bool = False,
) -> ReplaySummary:
    """The documents of the files, `batch_size` at a time through `store_batch` (which validates
    and stores them), summed up; `lazy` leaves well-formed events unparsed for the lean path."""
    summary = ReplaySummary()
    total_bytes = sum(path.stat().st_size for path in files)
    with tqdm(total=total_bytes, unit="B", unit_scale=True, disable=not progress, desc="ingest") as bar:
        for path in files:
            summary.files += 1
            try:
                with collector_paused():
                    documents = list(_documents(path, lazy))
            except (OSError, HeadwaterError) as exc:
                message = exc.message if isinstance(exc, HeadwaterError) else str(exc)
                summary.rejected += 1
                summary.rejections.append(f"{path}: {message}")
                bar.update(path.stat().st_size)
                continue
            for start in range(0, len(documents), batch_size):
                with collector_paused():
                    outcomes = store_batch(documents[start : start + batch_size])
                for outcome in outcomes:
                    if outcome.status == REJECTED:
                        summary.rejected += 1
                        summary.rejections.append(f"{path}#{outcome.index}: {'; '.join(outcome.errors)}")
                    elif outcome.status == DUPLICATE:
                        summary.duplicates += 1
                    else:
                        summary.stored += 1
                    summary.warnings += bool(outcome.warnings)
            bar.update(path.stat().st_size)
    return summary
