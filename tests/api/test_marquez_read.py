"""Marquez' read API over a hand-written lineage model, on both backends."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.store.base import EventStore
from tests.api.model_fixture import R1, R2, R3, fill_model

API = "/api/v1"
LAKE = "s3%3A%2F%2Flake"  # the namespace s3://lake, encoded


@pytest.fixture
def model(store: EventStore) -> None:
    fill_model(store)


def get(client: TestClient, path: str, **params: Any) -> Any:
    response = client.get(f"{API}{path}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def error(client: TestClient, path: str, status: int, **params: Any) -> str:
    response = client.get(f"{API}{path}", params=params)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status
    return str(body["message"])


RUN_2 = {
    "id": R2,
    "createdAt": "2024-01-02T01:00:00Z",
    "updatedAt": "2024-01-02T01:05:00.500Z",
    "nominalStartTime": None,
    "nominalEndTime": None,
    "state": "COMPLETED",
    "startedAt": "2024-01-02T01:00:00Z",
    "endedAt": "2024-01-02T01:05:00.500Z",
    "durationMs": 300500,
    "args": {},
    "jobVersion": {"namespace": "warehouse", "name": "etl.clean_orders", "version": "jv-clean-2"},
    "facets": {"processing_engine": {"name": "spark", "version": "3.5.1"}},
}
RUN_1 = {
    "id": R1,
    "createdAt": "2024-01-01T01:00:00Z",
    "updatedAt": "2024-01-01T01:10:00Z",
    "nominalStartTime": "2024-01-01T01:00:00Z",
    "nominalEndTime": None,
    "state": "COMPLETED",
    "startedAt": "2024-01-01T01:00:00Z",
    "endedAt": "2024-01-01T01:10:00Z",
    "durationMs": 600000,
    "args": {},
    "jobVersion": {"namespace": "warehouse", "name": "etl.clean_orders", "version": "jv-clean-1"},
    "facets": {"nominalTime": {"nominalStartTime": "2024-01-01T01:00:00Z"}},
}
RUN_3 = {
    "id": R3,
    "createdAt": "2024-01-02T02:00:00Z",
    "updatedAt": "2024-01-02T02:00:30Z",
    "nominalStartTime": None,
    "nominalEndTime": None,
    "state": "FAILED",
    "startedAt": "2024-01-02T02:00:00Z",
    "endedAt": "2024-01-02T02:00:30Z",
    "durationMs": 30000,
    "args": {},
    "jobVersion": {"namespace": "warehouse", "name": "etl.clean_orders.report", "version": "jv-report-1"},
    "facets": {"errorMessage": {"message": "boom", "programmingLanguage": "python"}},
}
ETL_JOB = {
    "id": {"namespace": "warehouse", "name": "etl.clean_orders"},
    "type": "BATCH",
    "name": "etl.clean_orders",
    "simpleName": "etl.clean_orders",
    "parentJobName": None,
    "createdAt": "2024-01-01T00:30:00Z",
    "updatedAt": "2024-01-02T01:05:00.500Z",
    "namespace": "warehouse",
    "inputs": [{"namespace": "s3://lake", "name": "raw/orders"}],
    "outputs": [{"namespace": "warehouse", "name": "public.orders_clean"}],
    "location": "https://git.example/etl/clean_orders.py",
    "description": "cleans the orders",
    "latestRun": RUN_2,
    "latestRuns": [RUN_2, RUN_1],
    "facets": {
        "documentation": {"description": "cleans the orders"},
        "jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "JOB"},
        "sourceCodeLocation": {"type": "git", "url": "https://git.example/etl/clean_orders.py"},
        "sql": {"query": "SELECT 2"},
    },
    "currentVersion": "jv-clean-2",
    "tags": [],
}
REPORT_JOB = {
    "id": {"namespace": "warehouse", "name": "etl.clean_orders.report"},
    "type": "STREAM",
    "name": "etl.clean_orders.report",
    "simpleName": "report",
    "parentJobName": "etl.clean_orders",
    "createdAt": "2024-01-02T02:00:00Z",
    "updatedAt": "2024-01-02T02:00:30Z",
    "namespace": "warehouse",
    "inputs": [{"namespace": "warehouse", "name": "public.orders_clean"}],
    "outputs": [{"namespace": "warehouse", "name": "public.report"}],
    "location": None,
    "description": None,
    "latestRun": RUN_3,
    "latestRuns": [RUN_3],
    "facets": {"jobType": {"processingType": "STREAMING", "integration": "FLINK", "jobType": "JOB"}},
    "currentVersion": "jv-report-1",
    "tags": [],
}
ORDERS_DATASET = {
    "id": {"namespace": "s3://lake", "name": "raw/orders"},
    "type": "DB_TABLE",
    "name": "raw/orders",
    "physicalName": "raw/orders",
    "createdAt": "2024-01-01T00:00:00Z",
    "updatedAt": "2024-01-02T00:00:00Z",
    "namespace": "s3://lake",
    "sourceName": "lake",
    "fields": [
        {"name": "id", "type": "INTEGER", "tags": [], "description": None},
        {"name": "customer", "type": "STRUCT", "tags": [], "description": None},
        {"name": "customer.name", "type": "STRING", "tags": [], "description": "customer name"},
        {"name": "customer.address", "type": "STRUCT", "tags": [], "description": None},
        {"name": "customer.address.city", "type": "STRING", "tags": [], "description": None},
    ],
    "tags": [],
    "lastModifiedAt": None,
    "lastLifecycleState": None,
    "description": "raw orders",
    "facets": {
        "documentation": {"description": "raw orders"},
        "schema": {
            "fields": [
                {"name": "id", "type": "INTEGER"},
                {
                    "name": "customer",
                    "type": "STRUCT",
                    "fields": [
                        {"name": "name", "type": "STRING", "description": "customer name"},
                        {"name": "address", "type": "STRUCT", "fields": [{"name": "city", "type": "STRING"}]},
                    ],
                },
            ]
        },
    },
    "currentVersion": "dv-orders-1",
    "deleted": False,
}
CLEAN_DATASET = {
    "id": {"namespace": "warehouse", "name": "public.orders_clean"},
    "type": "DB_TABLE",
    "name": "public.orders_clean",
    "physicalName": "public.orders_clean",
    "createdAt": "2024-01-01T01:00:00Z",
    "updatedAt": "2024-01-02T01:05:00.500Z",
    "namespace": "warehouse",
    "sourceName": None,
    "fields": [
        {"name": "id", "type": "INTEGER", "tags": [], "description": None},
        {"name": "total", "type": "DECIMAL", "tags": [], "description": None},
    ],
    "tags": [],
    "lastModifiedAt": "2024-01-02T01:05:00.500Z",
    "lastLifecycleState": "OVERWRITE",
    "description": None,
    "facets": {
        "schema": {"fields": [{"name": "id", "type": "INTEGER"}, {"name": "total", "type": "DECIMAL"}]}
    },
    "currentVersion": "dv-clean-1",
    "deleted": False,
}


def test_namespaces(client: TestClient, model: None) -> None:
    lake = {
        "name": "s3://lake",
        "createdAt": "2024-01-01T00:00:00Z",
        "updatedAt": "2024-01-02T00:00:00Z",
        "ownerName": "anonymous",
        "description": None,
        "isHidden": False,
    }
    warehouse = {
        "name": "warehouse",
        "createdAt": "2024-01-01T00:30:00Z",
        "updatedAt": "2024-01-02T02:00:30Z",
        "ownerName": "anonymous",
        "description": None,
        "isHidden": False,
    }
    assert get(client, "/namespaces") == {"namespaces": [lake, warehouse]}
    assert get(client, "/namespaces", limit=1, offset=1) == {"namespaces": [warehouse]}
    assert get(client, f"/namespaces/{LAKE}") == lake
    assert get(client, "/namespaces/warehouse") == warehouse


def test_a_dataset_with_slashes_in_its_names(client: TestClient, model: None) -> None:
    # current facets only: the old documentation is replaced, the ownership facet deleted
    assert get(client, f"/namespaces/{LAKE}/datasets/raw%2Forders") == ORDERS_DATASET
    # a slash the client did not encode still finds it when the dataset name ends the path
    assert get(client, f"/namespaces/{LAKE}/datasets/raw/orders") == ORDERS_DATASET
    assert get(client, f"/namespaces/{LAKE}/datasets") == {"totalCount": 1, "datasets": [ORDERS_DATASET]}


def test_dataset_fields_last_modified_and_a_version_without_schema(client: TestClient, model: None) -> None:
    assert get(client, "/namespaces/warehouse/datasets/public.orders_clean") == CLEAN_DATASET
    report = get(client, "/namespaces/warehouse/datasets/public.report")
    assert report["fields"] == [] and report["facets"] == {}
    assert report["lastModifiedAt"] is None  # only a FAILED run wrote it
    assert report["currentVersion"] == "dv-report-1" and report["sourceName"] is None


def test_dataset_paging(client: TestClient, model: None) -> None:
    first = get(client, "/namespaces/warehouse/datasets", limit=1)
    assert first == {"totalCount": 2, "datasets": [CLEAN_DATASET]}
    second = get(client, "/namespaces/warehouse/datasets", limit=1, offset=1)
    assert second["totalCount"] == 2
    assert [d["name"] for d in second["datasets"]] == ["public.report"]
    assert get(client, "/namespaces/warehouse/datasets", offset=2) == {"totalCount": 2, "datasets": []}


def test_jobs(client: TestClient, model: None) -> None:
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders") == ETL_JOB
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders.report") == REPORT_JOB
    # latest update first
    assert get(client, "/namespaces/warehouse/jobs") == {"totalCount": 2, "jobs": [REPORT_JOB, ETL_JOB]}
    assert get(client, "/namespaces/warehouse/jobs", limit=1, offset=1) == {
        "totalCount": 2,
        "jobs": [ETL_JOB],
    }
    assert get(client, f"/namespaces/{LAKE}/jobs") == {"totalCount": 0, "jobs": []}


def test_jobs_across_namespaces_by_latest_run_state(client: TestClient, model: None) -> None:
    assert get(client, "/jobs") == {"totalCount": 2, "jobs": [REPORT_JOB, ETL_JOB]}
    assert get(client, "/jobs", lastRunStates="FAILED") == {"totalCount": 1, "jobs": [REPORT_JOB]}
    assert get(client, "/jobs", lastRunStates="COMPLETED") == {"totalCount": 1, "jobs": [ETL_JOB]}
    both = client.get(f"{API}/jobs", params=[("lastRunStates", "COMPLETED"), ("lastRunStates", "failed")])
    assert both.status_code == 200 and both.json()["totalCount"] == 2
    assert get(client, "/jobs", lastRunStates="RUNNING") == {"totalCount": 0, "jobs": []}


def test_runs(client: TestClient, model: None) -> None:
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders/runs") == {
        "totalCount": 2,
        "runs": [RUN_2, RUN_1],
    }
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders/runs", limit=1, offset=1) == {
        "totalCount": 2,
        "runs": [RUN_1],
    }
    assert get(client, f"/jobs/runs/{R3}") == RUN_3
    assert get(client, f"/jobs/runs/{R1.upper()}") == RUN_1


def test_run_facets(client: TestClient, model: None) -> None:
    assert get(client, f"/jobs/runs/{R1}/facets", type="run") == {
        "runId": R1,
        "facets": {"nominalTime": {"nominalStartTime": "2024-01-01T01:00:00Z"}},
    }
    # the job's facets as they stood when the run ended: sql changed between R1 and R2
    job_facets = {
        "documentation": {"description": "cleans the orders"},
        "jobType": {"processingType": "BATCH", "integration": "SPARK", "jobType": "JOB"},
        "sourceCodeLocation": {"type": "git", "url": "https://git.example/etl/clean_orders.py"},
    }
    assert get(client, f"/jobs/runs/{R1}/facets", type="job") == {
        "runId": R1,
        "facets": {**job_facets, "sql": {"query": "SELECT 1"}},
    }
    assert get(client, f"/jobs/runs/{R2}/facets", type="JOB") == {
        "runId": R2,
        "facets": {**job_facets, "sql": {"query": "SELECT 2"}},
    }


def test_unknown_names_are_404_naming_them(client: TestClient, model: None) -> None:
    assert "namespace 'nowhere' not found" in error(client, "/namespaces/nowhere", 404)
    assert "namespace 'nowhere' not found" in error(client, "/namespaces/nowhere/datasets", 404)
    assert "namespace 'nowhere' not found" in error(client, "/namespaces/nowhere/jobs/x", 404)
    message = error(client, f"/namespaces/{LAKE}/datasets/raw%2Fmissing", 404)
    assert message == "dataset 'raw/missing' not found in namespace 's3://lake'"
    assert "job 'nope' not found in namespace 'warehouse'" in error(
        client, "/namespaces/warehouse/jobs/nope", 404
    )
    assert "job 'nope'" in error(client, "/namespaces/warehouse/jobs/nope/runs", 404)
    missing = "44444444-4444-4444-8444-444444444444"
    assert f"run '{missing}' not found" in error(client, f"/jobs/runs/{missing}", 404)
    assert f"run '{missing}' not found" in error(client, f"/jobs/runs/{missing}/facets", 404, type="run")
    assert "no route" in error(client, "/namespaces/warehouse/other", 404)


@pytest.mark.parametrize(
    ("path", "params", "message"),
    [
        ("/namespaces", {"limit": "-1"}, "limit: -1 is outside"),
        ("/namespaces", {"offset": "x"}, "offset: 'x' is not a whole number"),
        ("/namespaces/warehouse/datasets", {"limit": "ten"}, "limit: 'ten' is not a whole number"),
        ("/namespaces/warehouse/datasets", {"offset": "-5"}, "offset: -5 is outside"),
        ("/namespaces/warehouse/jobs", {"limit": "100000"}, "limit: 100000 is outside"),
        ("/namespaces/warehouse/jobs/etl.clean_orders/runs", {"limit": "1.5"}, "limit: '1.5'"),
        ("/jobs", {"lastRunStates": "DONE"}, "lastRunStates: 'DONE' is none of"),
        ("/jobs", {"offset": "9" * 30}, "offset:"),
        (f"/jobs/runs/{R1}/facets", {}, "type: required"),
        (f"/jobs/runs/{R1}/facets", {"type": "dataset"}, "type: 'dataset' is neither"),
        ("/jobs/runs/a%00b", {}, "runId: 'a\\x00b' holds a NUL character"),
        ("/namespaces/a%00b/jobs", {}, "namespace: 'a\\x00b' holds a NUL character"),
    ],
)
def test_bad_parameters_are_400(
    client: TestClient, model: None, path: str, params: dict[str, str], message: str
) -> None:
    assert message in error(client, path, 400, **params)


def test_an_empty_model(client: TestClient) -> None:
    assert get(client, "/namespaces") == {"namespaces": []}
    assert get(client, "/jobs") == {"totalCount": 0, "jobs": []}
    assert error(client, "/namespaces/warehouse/datasets", 404) == "namespace 'warehouse' not found"
