"""What the OpenAPI document states about answers, statuses and parameters, and the 405 and 404
answers of the routes (schemathesis checks the rest: tests/api/test_openapi_schemathesis.py)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _operation(document: dict[str, Any], path: str, method: str = "get") -> dict[str, Any]:
    operation: dict[str, Any] = document["paths"][path][method]
    return operation


def test_answers_have_their_models_and_every_error_its_envelope(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    assert "HTTPValidationError" not in schemas  # bad parameters are 400s in the error envelope
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            assert "HTTPValidationError" not in str(operation["responses"]), (path, method)
            if operation.get("parameters") or "requestBody" in operation:
                assert "400" in operation["responses"], (path, method)
    namespaces = _operation(document, "/api/v1/namespaces")
    assert namespaces["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Namespaces"
    }
    assert namespaces["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }
    dataset = _operation(document, "/api/v1/namespaces/{namespace}/datasets/{dataset}")
    assert {p["name"] for p in dataset["parameters"]} == {"namespace", "dataset"}  # no ignored ones
    assert "404" in dataset["responses"]
    limit = next(p for p in namespaces["parameters"] if p["name"] == "limit")
    assert (limit["schema"]["type"], limit["schema"]["minimum"], limit["schema"]["maximum"]) == (
        "integer",
        0,
        10_000,
    )
    run = schemas["Run"]["properties"]
    assert run["state"]["enum"] == ["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]
    assert "format" not in _operation(document, "/api/v1/jobs/runs/{runId}")["parameters"][0]["schema"]
    metrics = _operation(document, "/metrics")["responses"]["200"]["content"]
    assert list(metrics) == ["text/plain; version=0.0.4; charset=utf-8"]


def test_a_method_a_path_does_not_take_is_405_naming_those_it_does(client: TestClient) -> None:
    """`Allow` names the methods the document gives the path (a name keeping unencoded slashes,
    `…/jobs/etl/daily`, is the job's path, `…/jobs/j/tags/t` the tag routes')."""
    paths = client.get("/openapi.json").json()["paths"]
    for method, path, template in [
        ("TRACE", "/api/v1/namespaces", "/api/v1/namespaces"),
        (
            "PUT",
            "/api/v1/namespaces/ns/jobs/job/tags/pii",
            "/api/v1/namespaces/{namespace}/jobs/{job}/tags/{tag}",
        ),
        ("POST", "/api/v1/namespaces/ns/jobs/etl/daily", "/api/v1/namespaces/{namespace}/jobs/{job}"),
        ("PUT", "/api/v1/namespaces/ns/jobs/j/runs", "/api/v1/namespaces/{namespace}/jobs/{job}/runs"),
        ("DELETE", "/api/v1/lineage", "/api/v1/lineage"),
        ("POST", "/metrics", "/metrics"),
    ]:
        allowed = ", ".join(sorted(m.upper() for m in paths[template]))
        assert method.lower() not in paths[template]
        response = client.request(method, path)
        assert response.status_code == 405, (method, path)
        assert response.headers["allow"] == allowed, (method, path)
        assert response.json()["message"] == f"{method} is not allowed on {path}: use {allowed}"


def test_a_path_no_route_answers_is_404_naming_it(client: TestClient) -> None:
    response = client.get("/api/v1/namespaces/ns/other")
    assert response.status_code == 404
    assert response.json() == {"code": 404, "message": "no route for GET /api/v1/namespaces/ns/other"}


def test_a_parameter_of_one_value_given_twice_is_400(client: TestClient) -> None:
    response = client.get("/api/v1/namespaces", params=[("limit", "1"), ("limit", "")])
    assert response.status_code == 400
    assert response.json()["message"] == "limit: given more than once; it takes one value"
    repeatable = client.get("/api/v1/jobs", params=[("lastRunStates", "FAILED"), ("lastRunStates", "NEW")])
    assert repeatable.status_code == 200
