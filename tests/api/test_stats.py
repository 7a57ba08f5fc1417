"""Marquez' dashboard statistics (`/api/v1/stats/…`) on both backends: the shapes of Marquez' API
(api/src/main/java/marquez/api/StatsResource.java and the LineageMetric and IntervalMetric models
of MarquezProject/marquez), and counts checked against the events ingested and the model one
pipeline pass publishes from them."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient
from pyspark.sql import SparkSession

from headwater.pipeline.runner import Pipeline
from headwater.query.stats import lineage_metrics
from headwater.store.base import EventStore
from headwater.store.stats_sql import event_counts_query
from tests.factories import facet, run_event
from tests.pipeline.conftest import spark

__all__ = ["spark"]

STATS = "/api/v1/stats"
# The fields of Marquez' models, as its web UI reads them (web/src/store/requests/*Metrics.ts).
LINEAGE_METRIC = {"startInterval", "endInterval", "fail", "start", "complete", "abort"}
INTERVAL_METRIC = {"startInterval", "endInterval", "count"}
INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00Z")
COUNTED = {"FAIL": "fail", "START": "start", "COMPLETE": "complete", "ABORT": "abort"}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def get(client: TestClient, path: str, status: int = 200, **params: str) -> Any:
    response = client.get(f"{STATS}/{path}", params=params)
    assert response.status_code == status, response.text
    return response.json()


def post(client: TestClient, event: dict[str, Any]) -> None:
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 201, response.text


def in_day_interval(moment: datetime, entry: dict[str, Any]) -> bool:
    return instant(entry["startInterval"]) <= moment < instant(entry["endInterval"])


def in_week_interval(moment: datetime, entry: dict[str, Any], zone: ZoneInfo) -> bool:
    return moment.astimezone(zone).date() == date.fromisoformat(entry["startInterval"][:10])


# -- shapes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["lineage-events", "jobs", "datasets", "sources"])
def test_each_answer_has_the_shape_marquez_answers(client: TestClient, path: str) -> None:
    fields = LINEAGE_METRIC if path == "lineage-events" else INTERVAL_METRIC
    before = datetime.now(UTC)
    day = get(client, path, period="DAY", timezone="Europe/Paris")
    after = datetime.now(UTC)
    assert len(day) == 24 and all(set(entry) == fields for entry in day)
    starts = [instant(entry["startInterval"]) for entry in day]
    assert all(INSTANT.fullmatch(entry["startInterval"]) for entry in day)
    assert [instant(entry["endInterval"]) for entry in day] == [s + timedelta(hours=1) for s in starts]
    assert starts == [starts[0] + timedelta(hours=n) for n in range(24)]
    assert starts[-1] <= after and before < starts[-1] + timedelta(hours=1)  # the last one holds now
    assert all(s.minute == 0 for s in starts)  # Paris' hours are UTC's
    assert all(
        isinstance(entry[key], int) for entry in day for key in fields - {"startInterval", "endInterval"}
    )

    zone = ZoneInfo("Pacific/Kiritimati")  # UTC+14: its today is often not UTC's
    before_day = datetime.now(zone).date()
    week = get(client, path, period="WEEK", timezone="Pacific/Kiritimati")
    today = datetime.now(zone).date()
    if today != before_day:  # midnight passed during the request
        today = date.fromisoformat(week[-1]["startInterval"][:10])
        assert today in (before_day, before_day + timedelta(days=1))
    assert len(week) == 7 and all(set(entry) == fields for entry in week)
    days = [today - timedelta(days=n) for n in range(6, -1, -1)]
    assert [entry["startInterval"] for entry in week] == [f"{d}T00:00:00Z" for d in days]
    assert [entry["endInterval"] for entry in week] == [f"{d + timedelta(days=1)}T00:00:00Z" for d in days]


def test_an_empty_store_counts_nothing(client: TestClient) -> None:
    for path in ("lineage-events", "jobs", "datasets", "sources"):
        for period in ("DAY", "WEEK"):
            answer = get(client, path, period=period)  # timezone defaults to UTC
            assert {value for entry in answer for key, value in entry.items() if "Interval" not in key} == {0}


def test_the_openapi_document_declares_the_shapes(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert set(schemas["LineageMetric"]["properties"]) == LINEAGE_METRIC
    assert set(schemas["IntervalMetric"]["properties"]) == INTERVAL_METRIC
    for path, model in (("lineage-events", "LineageMetric"), ("jobs", "IntervalMetric")):
        answer = document["paths"][f"{STATS}/{path}"]["get"]["responses"]["200"]["content"]
        assert answer["application/json"]["schema"]["items"]["$ref"].endswith(f"/{model}")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "period: required"),
        ({"period": "MONTH"}, "period: 'MONTH' is neither DAY nor WEEK"),
        ({"period": ""}, "period: '' is neither DAY nor WEEK"),
        ({"period": "DAY", "timezone": "Mars/Olympus_Mons"}, "timezone: 'Mars/Olympus_Mons' is not an IANA"),
        ({"period": "DAY", "timezone": ""}, "timezone: '' is not an IANA"),
        ({"period": "DAY", "timezone": "localtime"}, "timezone: 'localtime' is not an IANA"),
        ({"period": "WEEK", "timezone": "../../etc/passwd"}, "timezone: '../../etc/passwd' is not an IANA"),
        ({"period": "WEEK", "timezone": "/usr/share/zoneinfo/UTC"}, "timezone: '/usr/share/zoneinfo/UTC'"),
        ({"period": "WEEK", "timezone": "+02:00"}, "timezone: '+02:00' is not an IANA"),
    ],
)
@pytest.mark.parametrize("path", ["lineage-events", "jobs", "datasets", "sources"])
def test_a_bad_period_or_time_zone_is_400_naming_it(
    client: TestClient, path: str, params: dict[str, str], message: str
) -> None:
    assert get(client, path, 400, **params)["message"].startswith(message)


# -- lineage events -------------------------------------------------------------------------------
def send_events(client: TestClient, now: datetime) -> list[tuple[datetime, str]]:
    """Run events at chosen ages, of every type: (eventTime, eventType) of each."""
    ages = [
        (timedelta(seconds=10), "COMPLETE"),
        *[(timedelta(hours=1), t) for t in ("COMPLETE", "COMPLETE", "COMPLETE", "COMPLETE", "START", "FAIL")],
        (timedelta(hours=1, minutes=30), "ABORT"),
        (timedelta(hours=5), "RUNNING"),  # not counted, as in Marquez
        (timedelta(hours=5), "OTHER"),
        (timedelta(hours=22), "START"),
        (timedelta(hours=25), "FAIL"),  # out of the day, in the week
        (timedelta(days=2), "COMPLETE"),
        (timedelta(days=2, hours=3), "COMPLETE"),
        (timedelta(days=5, hours=12), "START"),
        (timedelta(days=9), "COMPLETE"),  # out of the week
        (timedelta(days=30), "COMPLETE"),
        (-timedelta(days=3), "COMPLETE"),  # a producer's clock ahead: in no interval
    ]
    sent = []
    for n, (age, event_type) in enumerate(ages):
        moment = now - age
        post(client, run_event(event_type=event_type, event_time=iso(moment), job=f"job_{n % 3}"))
        sent.append((moment, event_type))
    return sent


def expected_counts(
    answer: list[dict[str, Any]], sent: Iterable[tuple[datetime, str]], holds: Callable[..., bool]
) -> list[dict[str, Any]]:
    out = []
    for entry in answer:
        counts = dict.fromkeys(COUNTED.values(), 0)
        for moment, event_type in sent:
            if event_type in COUNTED and holds(moment, entry):
                counts[COUNTED[event_type]] += 1
        out.append({"startInterval": entry["startInterval"], "endInterval": entry["endInterval"], **counts})
    return out


@pytest.mark.parametrize("zone_name", ["UTC", "Asia/Kolkata", "America/Los_Angeles"])
def test_lineage_events_by_type_per_hour_and_per_day(client: TestClient, zone_name: str) -> None:
    zone = ZoneInfo(zone_name)
    sent = send_events(client, datetime.now(UTC))
    day = get(client, "lineage-events", period="DAY", timezone=zone_name)
    assert day == expected_counts(day, sent, in_day_interval)
    totals = {key: sum(entry[key] for entry in day) for key in COUNTED.values()}
    assert totals == {"complete": 5, "start": 2, "fail": 1, "abort": 1}  # the last 24 hours, whole
    if zone_name == "Asia/Kolkata":  # hours begin at its whole hours, half past UTC's
        assert {instant(entry["startInterval"]).minute for entry in day} == {30}
    week = get(client, "lineage-events", period="WEEK", timezone=zone_name)
    assert week == expected_counts(week, sent, lambda moment, entry: in_week_interval(moment, entry, zone))
    totals = {key: sum(entry[key] for entry in week) for key in COUNTED.values()}
    assert totals == {"complete": 7, "start": 3, "fail": 2, "abort": 1}  # 9 and 30 days ago are out


# A fixed "now" (the query functions take one): days of the time zone, not of UTC.
NOW = datetime(2024, 11, 5, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone_name", "moment", "day"),
    [
        ("UTC", "2024-11-04T23:59:59Z", "2024-11-04"),
        ("Asia/Kolkata", "2024-11-04T18:40:00Z", "2024-11-05"),  # 00:10 on the 5th in India
        ("Asia/Kolkata", "2024-11-04T18:20:00Z", "2024-11-04"),
        ("America/New_York", "2024-11-04T04:30:00Z", "2024-11-03"),  # 23:30 EST: Nov 3 had 25 hours
        ("America/New_York", "2024-11-03T04:30:00Z", "2024-11-03"),  # 00:30 EDT
        ("America/New_York", "2024-11-03T03:30:00Z", "2024-11-02"),
    ],
)
def test_a_week_counts_the_days_of_the_time_zone(
    client: TestClient, store: EventStore, zone_name: str, moment: str, day: str
) -> None:
    post(client, run_event(event_type="COMPLETE", event_time=moment))
    week = [m.model_dump() for m in lineage_metrics(store, "WEEK", zone_name, now=NOW)]
    assert [entry["startInterval"][:10] for entry in week] == [f"2024-10-{d}" for d in (30, 31)] + [
        f"2024-11-0{d}" for d in range(1, 6)
    ]
    assert [entry["startInterval"][:10] for entry in week if entry["complete"]] == [day]
    assert sum(entry["complete"] for entry in week) == 1


def test_a_day_counts_each_event_in_its_hour(client: TestClient, store: EventStore) -> None:
    for moment in ("2024-11-05T11:59:59.9999999Z", "2024-11-05T11:00:00Z", "2024-11-04T13:00:00Z"):
        post(client, run_event(event_type="START", event_time=moment))
    post(client, run_event(event_type="START", event_time="2024-11-04T12:59:59Z"))  # a day and a second ago
    day = [m.model_dump() for m in lineage_metrics(store, "day", None, now=NOW)]
    assert (day[0]["startInterval"], day[-1]["endInterval"]) == (
        "2024-11-04T13:00:00Z",
        "2024-11-05T13:00:00Z",
    )
    assert [entry["start"] for entry in day] == [1] + [0] * 21 + [2, 0]


def test_the_counts_read_the_index_alone(store: EventStore) -> None:
    """The week's events are counted from the partial index of migration 0010, not read row by row
    (PostgreSQL is told to avoid other plans: on an empty table it would scan the table)."""
    query = store.sql(event_counts_query(7))
    params = [f"2024-11-0{d}T00:00:00.0000000Z" for d in range(2, 9)] + ["2024-11-01T00:00:00.0000000Z"]
    params.append("2024-11-08T00:00:00.0000000Z")
    with store.transaction() as cur:
        if store.backend == "sqlite":
            cur.execute(f"EXPLAIN QUERY PLAN {query}", params)
            plan = " ".join(str(row[-1]) for row in cur.fetchall())
            assert "COVERING INDEX events_by_time_counted" in plan, plan
        else:
            cur.execute("SET LOCAL enable_seqscan = off")
            cur.execute("SET LOCAL enable_bitmapscan = off")
            cur.execute(f"EXPLAIN {query}", params)
            plan = " ".join(str(row[0]) for row in cur.fetchall())
            assert "Index Only Scan using events_by_time_counted" in plan, plan


# -- jobs, datasets and sources of the model --------------------------------------------------------
def test_jobs_datasets_and_sources_over_time(
    client: TestClient, store: EventStore, spark: SparkSession
) -> None:
    """Each job, dataset and source is created by the eventTime of the first event naming it; the
    count of an interval is how many existed at its end."""
    now = datetime.now(UTC)
    created: dict[str, dict[str, datetime]] = {"jobs": {}, "datasets": {}, "sources": {}}
    plan = [  # (age, job, output dataset, source of the output)
        (timedelta(days=40), "old_job", "old_table", "warehouse"),
        (timedelta(days=3, hours=2), "daily_load", "orders", "warehouse"),
        (timedelta(hours=30), "daily_load", "orders", "warehouse"),  # nothing new
        (timedelta(hours=6), "report", "report_table", "lake"),
        (timedelta(minutes=20), "export", "export_file", "sftp"),
    ]
    for age, job, dataset, source in plan:
        moment = now - age
        output = {
            "namespace": "shop",
            "name": dataset,
            "facets": {
                "dataSource": {**facet("DatasourceDatasetFacet"), "name": source, "uri": f"{source}://h"}
            },
        }
        post(
            client,
            run_event(event_type="COMPLETE", event_time=iso(moment), job=job, inputs=[], outputs=[output]),
        )
        for kind, name in (("jobs", job), ("datasets", dataset), ("sources", source)):
            created[kind].setdefault(name, moment)
    Pipeline(spark, store, dogfood=False, partitions=2).run_once()

    for kind, names in created.items():
        for period, zone_name in (("DAY", "UTC"), ("WEEK", "Australia/Sydney")):
            answer = get(client, kind, period=period, timezone=zone_name)
            ends = [instant(entry["endInterval"]) for entry in answer]
            if period == "WEEK":  # the end of a local day
                zone = ZoneInfo(zone_name)
                ends = [datetime.fromisoformat(e["endInterval"][:10]).replace(tzinfo=zone) for e in answer]
            assert [entry["count"] for entry in answer] == [
                sum(moment < end for moment in names.values()) for end in ends
            ], (kind, period)
            assert answer[-1]["count"] == len(names)  # every one of them exists by now
            assert answer[0]["count"] >= 1  # the 40-day-old ones count in every interval
