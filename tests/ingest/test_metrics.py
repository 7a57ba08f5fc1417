"""The Prometheus registry of a process (`headwater.ingest.metrics`): what each kind of metric
renders, and the labels it takes."""

from __future__ import annotations

import pytest

from headwater.ingest.metrics import Counter, Gauge, Histogram, Metric, Registry, parse_samples


def _rendered(*metrics: Metric) -> str:
    registry = Registry()
    for metric in metrics:
        registry.add(metric)
    return registry.render()


def test_a_histogram_counts_a_value_in_the_first_bucket_whose_bound_it_does_not_exceed() -> None:
    latency = Histogram("latency_seconds", "latency", buckets=(0.001, 0.01, 1.0))
    for value in (0.0005, 0.001, 0.0011, 0.01, 0.5, 1.0, 7.0, 8.0):
        latency.observe(value)
    samples = {(name, labels.get("le")): value for name, labels, value in parse_samples(_rendered(latency))}
    assert samples == {
        ("latency_seconds_bucket", "0.001"): 2,  # 0.0005 and 0.001 itself (le: less or equal)
        ("latency_seconds_bucket", "0.01"): 4,
        ("latency_seconds_bucket", "1"): 6,
        ("latency_seconds_bucket", "+Inf"): 8,
        ("latency_seconds_sum", None): pytest.approx(16.5126),
        ("latency_seconds_count", None): 8,
    }


def test_labels_are_checked_and_rendered_in_their_declared_order() -> None:
    requests = Counter("requests_total", "requests", ("route", "status"))
    requests.inc(2, status=201, route="/a")
    requests.inc(status="201", route="/a")
    with pytest.raises(ValueError, match=r"takes labels \('route', 'status'\), got \('route',\)"):
        requests.inc(route="/a")
    with pytest.raises(ValueError, match="takes labels"):
        requests.inc(route="/a", code=201)
    with pytest.raises(ValueError, match="only goes up"):
        requests.inc(-1, route="/a", status=201)
    lag = Gauge("lag", "lag", ("partition",))
    lag.set(5, partition=0)
    lag.set(3, partition=0)
    text = _rendered(requests, lag)
    assert 'requests_total{route="/a",status="201"} 3\n' in text
    assert 'lag{partition="0"} 3\n' in text
    assert "# TYPE requests_total counter\n" in text and "# TYPE lag gauge\n" in text
