"""Sending OpenLineage events the way producers do (the openlineage-python Kafka transport) and
waiting for the store to hold them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.facet_v2 import parent_run, schema_dataset
from openlineage.client.serde import Serde
from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

from headwater.events.validate import validate_event
from headwater.store.base import EventStore

PRODUCER = "https://github.com/example/headwater-tests/kafka"
NAMESPACE = "airflow://prod"


class RecordingKafkaTransport(KafkaTransport):
    """The client's own Kafka transport, keeping the JSON it sent (the client may add facets in
    emit, so the payload to compare with is the one reaching the transport)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        config = {"bootstrap.servers": bootstrap, "linger.ms": "5", "queue.buffering.max.messages": "1000000"}
        super().__init__(KafkaConfig(config=config, topic=topic, flush=False))
        self.sent: list[str] = []

    def emit(self, event: Any) -> None:
        super().emit(event)
        self.sent.append(Serde.to_json(event))
        if len(self.sent) % 1000 == 0 and self.producer is not None:
            self.producer.poll(0)  # serve delivery callbacks, so the local queue drains


def expected_ids(sent: list[str]) -> set[str]:
    """The eventIds Headwater gives the JSON documents sent."""
    return {validate_event(orjson.loads(text), text.encode()).event_id for text in sent}


def run_events(
    count: int, *, jobs: int = 7, start: datetime | None = None, parent_every: int = 5
) -> list[RunEvent]:
    """Runs of three events (START, RUNNING, COMPLETE) spread over a few jobs; some runs have a
    parent, so the transport keys them by the parent's job."""
    moment = start or datetime(2024, 5, 1, 10, tzinfo=UTC)
    events: list[RunEvent] = []
    fields = [schema_dataset.SchemaDatasetFacetFields(name=n, type="VARCHAR") for n in ("id", "amount")]
    while len(events) < count:
        index = len(events) // 3
        job = Job(namespace=NAMESPACE, name=f"etl.job_{index % jobs}")
        facets: dict[str, Any] = {}
        if index % parent_every == 0:
            facets["parent"] = parent_run.ParentRunFacet(
                run=parent_run.Run(runId=str(uuid.uuid4())),
                job=parent_run.Job(namespace=NAMESPACE, name="dag.parent"),
            )
        run = Run(runId=str(uuid.uuid4()), facets=facets)
        for step, state in enumerate((RunState.START, RunState.RUNNING, RunState.COMPLETE)):
            events.append(
                RunEvent(
                    eventType=state,
                    eventTime=(moment + timedelta(seconds=index, milliseconds=step)).isoformat(),
                    run=run,
                    job=job,
                    producer=PRODUCER,
                    inputs=[InputDataset(namespace="postgres://db:5432", name=f"shop.t{index % 11}")],
                    outputs=[
                        OutputDataset(
                            namespace="s3://lake",
                            name=f"out_{index % jobs}",
                            facets={"schema": schema_dataset.SchemaDatasetFacet(fields=fields)},
                        )
                    ],
                )
            )
    return events[:count]


def job_and_dataset_events() -> list[Any]:
    moment = datetime(2024, 5, 2, tzinfo=UTC).isoformat()
    return [
        JobEvent(
            eventTime=moment,
            job=Job(namespace=NAMESPACE, name="etl.static"),
            producer=PRODUCER,
            inputs=[InputDataset(namespace="postgres://db:5432", name="shop.orders")],
            outputs=[],
        ),
        DatasetEvent(
            eventTime=moment,
            dataset=StaticDataset(namespace="s3://lake", name="reference/countries"),
            producer=PRODUCER,
        ),
    ]


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def stored_count(store: EventStore) -> int:
    return store.count_events(after_time=None, before_time=None)
