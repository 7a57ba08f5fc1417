"""The real openlineage-python client (HTTP transport) against `headwater serve`, read back through
the Atlas run-events API page by page: plain, with API keys, and gzip-compressed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
from openlineage.client import OpenLineageClient
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
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    datasource_dataset,
    job_type_job,
    ownership_dataset,
    ownership_job,
    parent_run,
    schema_dataset,
    sql_job,
)
from openlineage.client.serde import Serde
from openlineage.client.transport.http import (
    ApiKeyTokenProvider,
    HttpCompression,
    HttpConfig,
    HttpTransport,
    TokenProvider,
)
from openlineage.client.uuid import generate_new_uuid

from tests.conftest import LiveServer

RUNS = "/api/atlas/v2/openlineage/runs"
PRODUCER = "https://github.com/example/headwater-tests/openlineage-client"
NAMESPACE = "airflow://prod"
WRITE_KEY = "write-key-K"
READ_KEY = "read-key-R"


@dataclass
class Sent:
    """One event as the client serialized it, and what the server answered."""

    event: Any
    payload: dict[str, Any]
    status: int
    answer: dict[str, Any]
    instant: datetime


class RecordingTransport(HttpTransport):
    """The client's own HTTP transport, keeping what it sent: the client adds facets (tags) in emit,
    so the payload to compare with is the one reaching the transport."""

    def __init__(self, config: HttpConfig) -> None:
        super().__init__(config)
        self.sent: list[Sent] = []

    def emit(self, event: Any) -> requests.Response:
        response = super().emit(event)
        instant = datetime.fromisoformat(event.eventTime)
        self.sent.append(Sent(event, Serde.to_dict(event), response.status_code, response.json(), instant))
        return response


@pytest.fixture(autouse=True)
def _hermetic_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No OpenLineage settings from the environment, no openlineage.yml, no git repo around (the
    client would add a sourceCodeLocation facet from it)."""
    for name in list(os.environ):
        if name.startswith("OPENLINEAGE"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)


def make_client(url: str, *, api_key: str | None = None, gzip: bool = False) -> OpenLineageClient:
    auth = ApiKeyTokenProvider({"apiKey": api_key}) if api_key else TokenProvider({})
    config = HttpConfig(
        url=url,
        auth=auth,
        compression=HttpCompression.GZIP if gzip else None,
        timeout=10.0,
        retry={"total": 0},
    )
    return OpenLineageClient(transport=RecordingTransport(config))


def transport_of(client: OpenLineageClient) -> RecordingTransport:
    assert isinstance(client.transport, RecordingTransport)
    return client.transport


# -- events built with the client's own classes ----------------------------------------------------


def _schema(*names: str) -> schema_dataset.SchemaDatasetFacet:
    return schema_dataset.SchemaDatasetFacet(
        fields=[
            *(schema_dataset.SchemaDatasetFacetFields(name=n, type="VARCHAR") for n in names),
            schema_dataset.SchemaDatasetFacetFields(
                name="address",
                type="STRUCT",
                fields=[schema_dataset.SchemaDatasetFacetFields(name="city", type="VARCHAR")],
            ),
        ]
    )


def _inputs() -> list[InputDataset]:
    return [
        InputDataset(
            namespace="postgres://db.example.com:5432",
            name="shop.public.orders",
            facets={
                "schema": _schema("id", "customer", "amount"),
                "dataSource": datasource_dataset.DatasourceDatasetFacet(
                    name="postgres://db.example.com:5432", uri="postgres://db.example.com:5432/shop"
                ),
                "ownership": ownership_dataset.OwnershipDatasetFacet(
                    owners=[ownership_dataset.Owner(name="team:sales", type="TEAM")]
                ),
            },
        )
    ]


def _outputs() -> list[OutputDataset]:
    source = column_lineage_dataset.InputField(
        namespace="postgres://db.example.com:5432",
        name="shop.public.orders",
        field="amount",
        transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype="AGGREGATION")],
    )
    filtered = column_lineage_dataset.InputField(
        namespace="postgres://db.example.com:5432",
        name="shop.public.orders",
        field="customer",
        transformations=[column_lineage_dataset.Transformation(type="INDIRECT", subtype="FILTER")],
    )
    return [
        OutputDataset(
            namespace="s3://lake",
            name="marts/orders_daily",
            facets={
                "schema": _schema("customer", "total"),
                "dataSource": datasource_dataset.DatasourceDatasetFacet(name="s3://lake", uri="s3://lake"),
                "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
                    fields={
                        "total": column_lineage_dataset.Fields(
                            inputFields=[source], transformationDescription="sum(amount)"
                        )
                    },
                    dataset=[filtered],
                ),
            },
        )
    ]


def _job(name: str = "orders.daily_rollup") -> Job:
    return Job(
        namespace=NAMESPACE,
        name=name,
        facets={
            "sql": sql_job.SQLJobFacet(query="SELECT customer, sum(amount) FROM orders", dialect="postgres"),
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="BATCH", integration="AIRFLOW", jobType="TASK"
            ),
            "ownership": ownership_job.OwnershipJobFacet(
                owners=[ownership_job.Owner(name="team:data", type="TEAM")]
            ),
        },
    )


def _parent(parent_id: str, root_id: str) -> parent_run.ParentRunFacet:
    return parent_run.ParentRunFacet(
        run=parent_run.Run(runId=parent_id),
        job=parent_run.Job(namespace=NAMESPACE, name="orders_dag"),
        root=parent_run.Root(
            run=parent_run.RootRun(runId=root_id),
            job=parent_run.RootJob(namespace=NAMESPACE, name="nightly"),
        ),
    )


@dataclass
class Scenario:
    run_id: str
    parent_id: str
    root_id: str
    run_events: list[Sent]
    dataset_event: Sent
    job_event: Sent


def _times() -> Iterator[str]:
    """Event times a few seconds apart, in various offsets; the fourth repeats the third's instant."""
    base = datetime.now(UTC).replace(microsecond=123456) - timedelta(minutes=5)
    plus_two = timezone(timedelta(hours=2))
    yield base.isoformat()
    yield (base + timedelta(seconds=1)).astimezone(plus_two).isoformat()
    yield (base + timedelta(seconds=2)).isoformat().replace("+00:00", "Z")
    yield (base + timedelta(seconds=2)).isoformat()  # same instant: ordered by eventId
    yield (base + timedelta(seconds=3, milliseconds=1)).astimezone(timezone(timedelta(hours=-5))).isoformat()


def emit_scenario(client: OpenLineageClient) -> Scenario:
    transport = transport_of(client)
    run_id, parent_id, root_id = (str(generate_new_uuid()) for _ in range(3))
    times = _times()

    def run_event(state: RunState, *, with_datasets: bool, note: str | None = None) -> RunEvent:
        facets: dict[str, Any] = {"parent": _parent(parent_id, root_id)}
        job = _job()
        if note is not None:  # a distinct payload for two events at the same instant
            job.facets["sql"] = sql_job.SQLJobFacet(query=f"SELECT 1 -- {note}", dialect="postgres")
        return RunEvent(
            eventType=state,
            eventTime=next(times),
            run=Run(runId=run_id, facets=facets),
            job=job,
            inputs=_inputs() if with_datasets else [],
            outputs=_outputs() if with_datasets else [],
            producer=PRODUCER,
        )

    client.emit(run_event(RunState.START, with_datasets=True))
    client.emit(run_event(RunState.RUNNING, with_datasets=False))
    client.emit(run_event(RunState.RUNNING, with_datasets=True, note="first"))
    client.emit(run_event(RunState.RUNNING, with_datasets=False, note="second"))
    client.emit(run_event(RunState.COMPLETE, with_datasets=True))
    run_events = list(transport.sent)

    client.emit(
        DatasetEvent(
            eventTime=datetime.now(UTC).isoformat(),
            dataset=StaticDataset(
                namespace="s3://lake",
                name="marts/orders_daily",
                facets={"schema": _schema("customer", "total")},
            ),
            producer=PRODUCER,
        )
    )
    client.emit(
        JobEvent(
            eventTime=datetime.now(UTC).isoformat(),
            job=_job("orders.static_definition"),
            inputs=_inputs(),
            outputs=_outputs(),
            producer=PRODUCER,
        )
    )
    dataset_event, job_event = transport.sent[-2:]
    return Scenario(run_id, parent_id, root_id, run_events, dataset_event, job_event)


# -- reading back ----------------------------------------------------------------------------------


def read_all_pages(
    base_url: str, run_id: str, *, key: str | None = None, page_size: int = 2, include_children: bool = False
) -> tuple[list[dict[str, Any]], int]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    events: list[dict[str, Any]] = []
    state: str | None = None
    pages = 0
    with httpx.Client(base_url=base_url, headers=headers, timeout=10) as http:
        while True:
            params: dict[str, Any] = {"pageSize": page_size}
            if include_children:
                params["includeChildren"] = "true"
            if state is not None:
                params["pagingState"] = state
            response = http.get(f"{RUNS}/{run_id}", params=params)
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["success"] is True
            assert body["pageSize"] == page_size
            assert body["eventCount"] == len(body["events"]) <= page_size
            pages += 1
            events += body["events"]
            state = body["nextPagingState"]
            if state is None:
                return events, pages
            assert pages < 100, "paging does not end"


def assert_stored_without_warnings(sent: list[Sent]) -> None:
    for item in sent:
        assert item.status == 201, item.answer
        assert item.answer["status"] == 201
        assert "warnings" not in item.answer, item.answer["warnings"]


def assert_run_read_back(base_url: str, scenario: Scenario, key: str | None = None) -> None:
    events, pages = read_all_pages(base_url, scenario.run_id, key=key)
    emitted = scenario.run_events
    assert pages == (len(emitted) + 1) // 2
    ids = [e["eventId"] for e in events]
    assert len(ids) == len(set(ids)), "an event came back twice"
    expected = sorted(emitted, key=lambda s: (s.instant, s.answer["eventId"]), reverse=True)
    assert ids == [s.answer["eventId"] for s in expected], "not every event exactly once, newest first"
    for got, sent in zip(events, expected, strict=True):
        assert got["event"] == sent.payload  # facets intact, byte for byte the client's JSON
        assert got["runId"] == scenario.run_id
        assert got["status"] == sent.payload["eventType"]
        assert got["jobName"] == "orders.daily_rollup"
        assert got["source"] == PRODUCER
        shown = datetime.fromisoformat(got["eventTime"].replace("Z", "+00:00"))
        assert shown == sent.instant

    # The run is a child of parent_id (and of root_id): its events come back under both.
    for ancestor in (scenario.parent_id, scenario.root_id):
        tree, _ = read_all_pages(base_url, ancestor, key=key, page_size=3, include_children=True)
        assert [e["eventId"] for e in tree] == ids
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    alone = httpx.get(f"{base_url}{RUNS}/{scenario.parent_id}", headers=headers, timeout=10)
    assert alone.status_code == 404


def assert_static_events_stored(base_url: str, scenario: Scenario, key: str | None = None) -> None:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = httpx.get(f"{base_url}/api/v1/events/lineage", params={"limit": 100}, headers=headers)
    assert response.status_code == 200, response.text
    stored = response.json()["events"]
    assert scenario.dataset_event.payload in stored
    assert scenario.job_event.payload in stored


def check_client_payloads(scenario: Scenario) -> None:
    """What the test relies on the client doing: UUIDv7 ids, a tags run facet, empty objects kept."""
    first = scenario.run_events[0].payload
    assert first["run"]["runId"][14] == "7"  # UUIDv7
    tags = first["run"]["facets"]["tags"]
    assert any(tag["key"] == "openlineage_client_version" for tag in tags["tags"])
    assert first["run"]["facets"]["parent"]["job"]["facets"] == {}
    assert scenario.dataset_event.payload["schemaURL"].endswith("#/$defs/DatasetEvent")
    assert scenario.job_event.payload["schemaURL"].endswith("#/$defs/JobEvent")
    assert scenario.job_event.payload["job"]["facets"]["sql"]["_schemaURL"].startswith(
        "https://openlineage.io/spec/facets/"
    )


# -- tests ------------------------------------------------------------------------------------------


def test_client_events_round_trip(live_server: LiveServer) -> None:
    client = make_client(live_server.url)
    scenario = emit_scenario(client)
    check_client_payloads(scenario)
    assert_stored_without_warnings([*scenario.run_events, scenario.dataset_event, scenario.job_event])
    assert_run_read_back(live_server.url, scenario)
    assert_static_events_stored(live_server.url, scenario)

    # The client re-sending the same event is acknowledged as a duplicate, not stored twice.
    again = make_client(live_server.url)
    again.emit(scenario.run_events[0].event)
    assert transport_of(again).sent[0].payload == scenario.run_events[0].payload
    assert transport_of(again).sent[0].status == 200
    assert transport_of(again).sent[0].answer["duplicate"] is True
    events, _ = read_all_pages(live_server.url, scenario.run_id)
    assert len(events) == len(scenario.run_events)


def test_client_gzip(live_server: LiveServer) -> None:
    client = make_client(live_server.url, gzip=True)
    scenario = emit_scenario(client)
    assert_stored_without_warnings([*scenario.run_events, scenario.dataset_event, scenario.job_event])
    assert_run_read_back(live_server.url, scenario)
    assert_static_events_stored(live_server.url, scenario)


@pytest.fixture
def keyed_server(database_url: str) -> Iterator[LiveServer]:
    server = LiveServer(database_url, "--write-key", WRITE_KEY, "--read-key", READ_KEY)
    yield server
    server.stop()


@pytest.mark.parametrize("gzip", [False, True], ids=["plain", "gzip"])
def test_client_api_key(keyed_server: LiveServer, gzip: bool) -> None:
    url = keyed_server.url
    client = make_client(url, api_key=WRITE_KEY, gzip=gzip)
    scenario = emit_scenario(client)
    assert_stored_without_warnings([*scenario.run_events, scenario.dataset_event, scenario.job_event])
    assert_run_read_back(url, scenario, key=READ_KEY)
    assert_static_events_stored(url, scenario, key=READ_KEY)

    # Without a key, with an unknown key, or with the read key, the client's emit fails.
    probe = RunEvent(
        eventType=RunState.START,
        eventTime=datetime.now(UTC).isoformat(),
        run=Run(runId=str(generate_new_uuid())),
        job=_job(),
        producer=PRODUCER,
    )
    for key, status in ((None, 401), ("not-a-key", 401), (READ_KEY, 403)):
        with pytest.raises(requests.HTTPError) as failure:
            make_client(url, api_key=key, gzip=gzip).emit(probe)
        assert failure.value.response is not None
        assert failure.value.response.status_code == status
    assert (
        httpx.get(
            f"{url}{RUNS}/{probe.run.runId}", headers={"Authorization": f"Bearer {READ_KEY}"}
        ).status_code
        == 404
    )

    # Reads need the read key: none → 401, unknown → 401, the write key → 403.
    path = f"{url}{RUNS}/{scenario.run_id}"
    assert httpx.get(path).status_code == 401
    assert httpx.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert httpx.get(path, headers={"Authorization": f"Bearer {WRITE_KEY}"}).status_code == 403
    assert httpx.get(f"{url}/api/v1/events/lineage").status_code == 401
    assert httpx.get(path, headers={"Authorization": f"Bearer {READ_KEY}"}).status_code == 200
    # Health stays open for probes.
    assert httpx.get(f"{url}/api/atlas/v2/openlineage/health").status_code == 200
