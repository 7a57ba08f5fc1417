"""The pipeline reports its own passes as OpenLineage events, so Headwater's lineage shows
Headwater: job `headwater.pipeline` (namespace `headwater`) reads the event store and writes the
model tables. The events go through the same validation and durable append as any producer's.
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import orjson

from headwater import __version__
from headwater.events.validate import validate_event
from headwater.store.base import EventStore
from headwater.store.factory import store_namespace
from headwater.store.model_rows import PIPELINE_REPORT_JOB

if TYPE_CHECKING:
    from headwater.pipeline.runner import PassResult

log = logging.getLogger(__name__)
NAMESPACE, JOB = PIPELINE_REPORT_JOB
PRODUCER = f"https://github.com/headwater-lineage/headwater/tree/{__version__}"
_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_OUTPUTS = ("namespaces", "sources", "datasets", "jobs", "runs", "lineage_edges", "ultimate_nodes")


class Reporter:
    """Appends a START and a COMPLETE event for every pass that published something."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._own: tuple[int, int] | None = None  # seq range of our last report

    def is_own_range(self, checkpoint: int, high: int) -> bool:
        """True when the new events are only our previous report (do not report that pass)."""
        return self._own is not None and self._own[0] >= checkpoint and self._own[1] == high

    def _event(self, event_type: str, when: datetime, run_id: str, facets: dict[str, Any]) -> dict[str, Any]:
        namespace = store_namespace(self.store)
        return {
            "eventType": event_type,
            "eventTime": when.isoformat().replace("+00:00", "Z"),
            "run": {"runId": run_id, "facets": facets},
            "job": {"namespace": NAMESPACE, "name": JOB, "facets": {}},
            "inputs": [{"namespace": namespace, "name": "events"}],
            "outputs": [{"namespace": namespace, "name": name} for name in _OUTPUTS],
            "producer": PRODUCER,
            "schemaURL": _SCHEMA,
        }

    def report(self, result: PassResult) -> None:
        end = datetime.now(UTC)
        start = end - timedelta(seconds=result.seconds)
        run_id = str(uuid.uuid4())
        stats = {
            "processing_engine": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/ProcessingEngineRunFacet.json"
                "#/$defs/ProcessingEngineRunFacet",
                "version": __version__,
                "name": "headwater-pipeline",
            }
        }
        events = []
        for doc in (self._event("START", start, run_id, stats), self._event("COMPLETE", end, run_id, {})):
            raw = orjson.dumps(doc)
            events.append(validate_event(doc, raw))
        try:
            before = self.store.last_seq()
            self.store.append(events, end.isoformat().replace("+00:00", "Z"))
            self._own = (before, self.store.last_seq())
        except Exception as exc:  # the report must never fail the pipeline
            log.warning("could not record the pipeline's own run: %s", exc)
