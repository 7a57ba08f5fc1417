"""Replaying event files (JSON, NDJSON, gzipped) into the store through the same validation as HTTP."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from headwater.errors import HeadwaterError
from headwater.events.decode import Document, documents_from_json, documents_from_ndjson
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest.service import (
    DUPLICATE,
    REJECTED,
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


def _documents(path: Path) -> Iterator[Document]:
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rb") as handle:
        data = handle.read()
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".ndjson", ".jsonl")):
        yield from documents_from_ndjson(data)
    else:
        yield from documents_from_json(data)[0]


def replay_files(
    store: EventStore, files: list[Path], *, batch_size: int = 1000, progress: bool = True
) -> ReplaySummary:
    summary = ReplaySummary()
    total_bytes = sum(path.stat().st_size for path in files)
    with tqdm(total=total_bytes, unit="B", unit_scale=True, disable=not progress, desc="ingest") as bar:
        for path in files:
            summary.files += 1
            try:
                with collector_paused():
                    documents = list(_documents(path))
            except (OSError, HeadwaterError) as exc:
                message = exc.message if isinstance(exc, HeadwaterError) else str(exc)
                summary.rejected += 1
                summary.rejections.append(f"{path}: {message}")
                bar.update(path.stat().st_size)
                continue
            for start in range(0, len(documents), batch_size):
                with collector_paused():
                    validated = validate_documents(documents[start : start + batch_size])
                stored = store.append(validated.events, format_ticks(now_ticks()))
                for outcome in record_stored(validated, stored):
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
