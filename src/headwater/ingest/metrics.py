"""Ingest counters, gauges and latency histograms of this process, in the Prometheus text format.

Every entry point (HTTP, Kafka) counts here; `GET /metrics` and `headwater consume --metrics-port`
render the same registry. Updates happen per request or per batch, never per event, so one lock per
metric costs nothing worth measuring.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator, Sequence

from headwater.ingest.service import DUPLICATE, REJECTED, Outcome

LabelValues = tuple[str, ...]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Metric:
    """A named family of samples, one per combination of label values."""

    kind = "untyped"

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help
        self.labels = tuple(labels)
        self._lock = threading.Lock()
        self._values: dict[LabelValues, float] = {}

    def _key(self, labels: dict[str, object]) -> LabelValues:
        if set(labels) != set(self.labels):
            raise ValueError(f"{self.name} takes labels {self.labels}, got {tuple(labels)}")
        return tuple(str(labels[name]) for name in self.labels)

    def _label_text(self, values: LabelValues, extra: str = "") -> str:
        parts = [f'{name}="{_escape(value)}"' for name, value in zip(self.labels, values, strict=True)]
        if extra:
            parts.append(extra)
        return "{" + ",".join(parts) + "}" if parts else ""

    def value(self, **labels: object) -> float:
        with self._lock:
            return self._values.get(self._key(labels), 0.0)

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = sorted(self._values.items())
        for values, number in items:
            yield f"{self.name}{self._label_text(values)} {_number(number)}"

    def render(self) -> str:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}", *self.samples()]
        return "\n".join(lines) + "\n"


class Counter(Metric):
    kind = "counter"

    def inc(self, amount: float = 1, **labels: object) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount


class Gauge(Metric):
    kind = "gauge"

    def set(self, value: float, **labels: object) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = value

    def remove(self, **labels: object) -> None:
        key = self._key(labels)
        with self._lock:
            self._values.pop(key, None)


class Histogram(Metric):
    kind = "histogram"

    def __init__(
        self, name: str, help: str, labels: Sequence[str] = (), buckets: Iterable[float] = _LATENCY_BUCKETS
    ) -> None:
        super().__init__(name, help, labels)
        self.buckets = tuple(sorted(buckets))
        self._counts: dict[LabelValues, list[int]] = {}

    def observe(self, value: float, **labels: object) -> None:
        key = self._key(labels)
        with self._lock:
            counts = self._counts.setdefault(key, [0] * (len(self.buckets) + 1))
            for i, bound in enumerate(self.buckets):
                if value <= bound:
                    counts[i] += 1
                    break
            else:
                counts[-1] += 1
            self._values[key] = self._values.get(key, 0.0) + value

    def count(self, **labels: object) -> int:
        with self._lock:
            return sum(self._counts.get(self._key(labels), ()))

    def samples(self) -> Iterator[str]:
        with self._lock:
            items = sorted((key, list(counts), self._values[key]) for key, counts in self._counts.items())
        for values, counts, total in items:
            cumulative = 0
            for bound, count in zip((*self.buckets, math.inf), counts, strict=True):
                cumulative += count
                label = self._label_text(values, f'le="{_number(bound)}"')
                yield f"{self.name}_bucket{label} {cumulative}"
            yield f"{self.name}_sum{self._label_text(values)} {_number(total)}"
            yield f"{self.name}_count{self._label_text(values)} {cumulative}"


class Registry:
    def __init__(self) -> None:
        self.metrics: list[Metric] = []

    def add(self, metric: Metric) -> Metric:
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        """Every metric in the Prometheus text exposition format (version 0.0.4)."""
        return "".join(metric.render() for metric in self.metrics)


REGISTRY = Registry()
EVENTS = Counter(
    "headwater_ingest_events_total",
    "Candidate events by entry point (http, kafka) and outcome (stored, duplicate, rejected).",
    ("source", "outcome"),
)
HTTP_REQUESTS = Counter(
    "headwater_http_ingest_requests_total", "HTTP ingest requests by response status.", ("status",)
)
HTTP_SECONDS = Histogram(
    "headwater_http_ingest_seconds", "HTTP ingest request latency, until the durable answer is sent."
)
KAFKA_CONSUMED = Counter(
    "headwater_kafka_messages_consumed_total", "Kafka messages consumed, by topic.", ("topic",)
)
KAFKA_DEAD_LETTERS = Counter(
    "headwater_kafka_dead_letters_total",
    "Kafka messages dead-lettered (not JSON, invalid, too large), by topic.",
    ("topic",),
)
KAFKA_LAG = Gauge(
    "headwater_kafka_consumer_lag",
    "Messages of a partition assigned to this consumer not yet committed (high watermark - committed).",
    ("topic", "partition"),
)
KAFKA_COMMITTED = Gauge(
    "headwater_kafka_committed_offset",
    "Next offset of a partition committed by this consumer (its events are durable).",
    ("topic", "partition"),
)
KAFKA_BATCH_SECONDS = Histogram(
    "headwater_kafka_batch_seconds", "Time to decode, validate, durably store and commit one Kafka batch."
)
for _metric in (
    EVENTS,
    HTTP_REQUESTS,
    HTTP_SECONDS,
    KAFKA_CONSUMED,
    KAFKA_DEAD_LETTERS,
    KAFKA_LAG,
    KAFKA_COMMITTED,
    KAFKA_BATCH_SECONDS,
):
    REGISTRY.add(_metric)


def count_outcomes(source: str, outcomes: Iterable[Outcome]) -> None:
    """Add a request's or batch's outcomes to headwater_ingest_events_total."""
    stored = duplicate = rejected = 0
    for outcome in outcomes:
        if outcome.status == REJECTED:
            rejected += 1
        elif outcome.status == DUPLICATE:
            duplicate += 1
        else:
            stored += 1
    for name, amount in (("stored", stored), ("duplicate", duplicate), ("rejected", rejected)):
        if amount:
            EVENTS.inc(amount, source=source, outcome=name)


def parse_samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """The samples of a Prometheus text exposition (as `render` writes it): (name, labels, value)."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, number = line.rpartition(" ")
        name, _, label_text = head.partition("{")
        labels = {}
        for part in label_text.rstrip("}").split('",') if label_text else ():
            key, _, value = part.partition('="')
            labels[key] = value.rstrip('"').replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        samples.append((name, labels, float(number)))
    return samples
