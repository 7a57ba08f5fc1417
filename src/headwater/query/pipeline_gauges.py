"""The pipeline's progress as Prometheus gauges: what the server's `/metrics` and `headwater consume
--metrics-port` add to the ingest metrics, read from the store at each scrape."""

from __future__ import annotations

import logging

from headwater.errors import HeadwaterError
from headwater.events.times import TICKS_PER_SECOND, parse_event_time
from headwater.query.overview import WAITING_COUNTED
from headwater.store.base import EventStore

log = logging.getLogger(__name__)


def pipeline_metrics(store: EventStore) -> str:
    """The store's pipeline gauges in the Prometheus text format (the same for every process that
    serves them: read at each scrape, never summed); empty while the store does not answer."""
    try:
        progress = store.pipeline_progress(count_up_to=WAITING_COUNTED)
    except HeadwaterError as exc:
        log.warning("/metrics without the pipeline's progress: %s", exc.message)
        return ""
    gauges: list[tuple[str, str, float]] = [
        (
            "events_waiting",
            f"Events stored and not yet published by the pipeline (counted up to {WAITING_COUNTED}).",
            progress.waiting,
        ),
        ("stored_seq", "Seq of the last event stored.", progress.stored_through),
        (
            "published_seq",
            "The pipeline's checkpoint: every event up to this seq is in the model.",
            progress.published_through,
        ),
        ("graph_seq", "The lineage graph reflects every event up to this seq.", progress.graph_through),
    ]
    if progress.published_at is not None:
        seconds = parse_event_time(progress.published_at) / TICKS_PER_SECOND
        gauges.append(
            ("last_published_timestamp_seconds", "When the pipeline last published (Unix time).", seconds)
        )
    lines: list[str] = []
    for name, text, value in gauges:
        lines += [f"# HELP headwater_pipeline_{name} {text}", f"# TYPE headwater_pipeline_{name} gauge"]
        lines.append(f"headwater_pipeline_{name} {value}")
    return "\n".join(lines) + "\n"
