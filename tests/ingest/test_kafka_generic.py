"""Generic events from their own Kafka topic, on the real broker (tansu), beside OpenLineage events:
stored once with their browse rows, bad ones dead-lettered, offsets committed past all of them."""

from __future__ import annotations

from collections.abc import Callable

import orjson

from headwater.config import Settings
from headwater.ingest.kafka import KafkaIngester, group_lag
from headwater.store.base import EventStore
from headwater.store.generic import generic_store
from tests.api.test_generic import MANUAL_EVENTS
from tests.factories import run_event
from tests.ingest.conftest import Broker
from tests.ingest.kafka_helpers import wait_for


def test_generic_topic_beside_an_openlineage_topic(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: Callable[..., Settings],
    store: EventStore,
) -> None:
    lineage_topic = new_topic(1)
    generic_topic = new_topic(2, name=f"lineage.generic.{lineage_topic.rsplit('.', 1)[1]}")
    producer = broker.producer()
    producer.produce(lineage_topic, value=orjson.dumps(run_event()))
    values = [
        orjson.dumps({**MANUAL_EVENTS[0], "id": "mm-1"}),
        orjson.dumps({**MANUAL_EVENTS[0], "id": "mm-1"}),  # redelivered by its producer: kept once
        orjson.dumps(MANUAL_EVENTS[2]),
        orjson.dumps({"type": "put model", "elements": [{"type": "model"}]}),
        b'{"description": "x",}',
        orjson.dumps(run_event()),  # an OpenLineage event on the generic topic is not a generic event
    ]
    for value in values:
        producer.produce(generic_topic, key=b"model1", value=value)  # one key: one partition, in order
    assert producer.flush(10) == 0

    settings = kafka_settings(lineage_topic, kafka_generic_topics=(generic_topic,))
    ingester = KafkaIngester(settings, store)
    ingester.start()
    try:
        wait_for(lambda: ingester.totals.consumed == 7, 30, "7 messages consumed")
    finally:
        ingester.stop()
    assert (ingester.totals.stored, ingester.totals.duplicates, ingester.totals.dead_letters) == (3, 1, 3)
    assert sum(lag.committed or 0 for lag in group_lag(settings, timeout=10)) == 7

    kinds = [
        e.kind
        for e in store.list_events(after_time=None, before_time=None, descending=False, limit=10, offset=0)
    ]
    assert sorted(kinds) == ["generic", "generic", "run"]
    browse = generic_store(store)
    model = browse.list_elements(element_type="model", limit=10, offset=0)
    assert [e.description for e in model] == ["model1"]
    assert [(t.key, t.value) for t in browse.element_latest_tags(model[0].id)] == [("model-hash", "ef567890")]

    letters = sorted(
        store.dead_letters(topic=generic_topic, limit=10, before_id=None), key=lambda d: d.offset
    )
    assert len(letters) == 3
    errors = " | ".join(d.error for d in letters)
    assert "description: missing" in errors and "elements[0].description: missing" in errors
    assert "trailing comma is not allowed" in errors
