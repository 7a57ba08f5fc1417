"""Lineage queries over the hand-written lineage of tests/query/lineage_graph.py, built by the real
pipeline on both backends; every expected answer is worked out by hand from its drawing."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator

import orjson
import pytest
from fastapi.testclient import TestClient

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.errors import BadRequest, NotFound
from headwater.pipeline import driver_graph
from headwater.query.lineage import LineageQuery, column_lineage, lineage, namespace_lineage, ultimate
from headwater.query.run_lineage import upstream_runs
from headwater.query.vertical import vertical
from headwater.store import EventStore
from headwater.store.graph import PAST_CAP
from headwater.store.model import graph_inputs, read_state, replace_graph_rows
from tests.query.lineage_graph import DAY1, DAY2, RUNS, ds, field, job

DAY1_NOON = f"{DAY1}T12:00:00.0000000Z"


def edges(result: object) -> set[tuple[str, str]]:
    return {(e.src, e.dst) for e in result.edges}  # type: ignore[attr-defined]


UPSTREAM_OF_D = {
    (ds("b"), job("transform")),
    (ds("c"), job("transform")),
    (job("transform"), ds("d")),
    (ds("a"), job("extract")),
    (job("extract"), ds("b")),
    (job("load"), ds("a")),  # load wrote warehouse:public.a, merged into ns:a by the symlink
    (ds("s"), job("load")),
}
DOWNSTREAM_OF_D = {
    (ds("d"), job("report")),
    (job("report"), ds("e")),
    (ds("e"), job("enrich")),
    (job("enrich"), ds("g")),
    (ds("g"), job("fix_e")),
    (job("fix_e"), ds("e")),
    (ds("g"), job("publish")),
    (job("publish"), ds("h")),
}


def test_upstream_is_directed_and_follows_symlinks(model: EventStore) -> None:
    result = lineage(model, LineageQuery(ds("d"), "upstream"))
    assert edges(result) == UPSTREAM_OF_D
    assert set(result.nodes) == {n for pair in UPSTREAM_OF_D for n in pair}
    assert job("audit") not in result.nodes and ds("f") not in result.nodes  # siblings through b
    assert not result.truncated and result.expandable == []


def test_downstream_goes_round_the_cycle_once(model: EventStore) -> None:
    result = lineage(model, LineageQuery(ds("d"), "downstream"))
    assert edges(result) == DOWNSTREAM_OF_D
    assert len(result.edges) == len(DOWNSTREAM_OF_D)  # each edge once


def test_both_directions_and_a_symlinked_name(model: EventStore) -> None:
    result = lineage(model, LineageQuery(ds("d"), "both"))
    assert edges(result) == UPSTREAM_OF_D | DOWNSTREAM_OF_D
    alias = lineage(model, LineageQuery("dataset:warehouse:public.a", "upstream"))
    assert alias.root == ds("a")
    assert edges(alias) == {(job("load"), ds("a")), (ds("s"), job("load"))}


def test_depth_counts_jobs_and_marks_what_goes_on(model: EventStore) -> None:
    result = lineage(model, LineageQuery(ds("d"), "upstream", depth=1))
    assert set(result.nodes) == {ds("d"), job("transform"), ds("b"), ds("c")}
    assert result.expandable == [ds("b")]  # c has nothing upstream
    assert not result.truncated
    from_job = lineage(model, LineageQuery(job("transform"), "downstream", depth=1))
    assert set(from_job.nodes) == {job("transform"), ds("d"), job("report"), ds("e")}
    assert from_job.expandable == [ds("e")]


def test_limit_truncates_and_says_where_to_expand(model: EventStore) -> None:
    result = lineage(model, LineageQuery(ds("d"), "both", limit=4))
    assert len(result.nodes) == 4 and result.truncated
    assert result.expandable
    again = lineage(model, LineageQuery(result.expandable[0], "both", limit=500))
    assert len(again.nodes) > 1


def test_condensed_view_drops_jobs(model: EventStore) -> None:
    result = lineage(model, LineageQuery(ds("d"), "upstream", include_processes=False))
    assert edges(result) == {(ds("b"), ds("d")), (ds("c"), ds("d")), (ds("a"), ds("b")), (ds("s"), ds("a"))}
    assert {e.job for e in result.edges} == {job("transform"), job("extract"), job("load")}
    one = lineage(model, LineageQuery(ds("d"), "downstream", depth=1, include_processes=False))
    assert edges(one) == {(ds("d"), ds("e"))}
    both = lineage(model, LineageQuery(ds("d"), "both", include_processes=False))
    downstream = {(ds("d"), ds("e")), (ds("e"), ds("g")), (ds("g"), ds("e")), (ds("g"), ds("h"))}
    assert edges(both) == edges(result) | downstream
    from_job = lineage(model, LineageQuery(job("transform"), "both", depth=1, include_processes=False))
    assert edges(from_job) == {
        (ds("b"), job("transform")),
        (ds("c"), job("transform")),
        (job("transform"), ds("d")),
        (ds("a"), ds("b")),  # depth 1 from a job: one dataset step beyond its own datasets
        (ds("d"), ds("e")),
    }


def test_as_of_answers_from_the_job_versions_then(model: EventStore) -> None:
    then = lineage(model, LineageQuery(ds("d"), "both", as_of=DAY1_NOON))
    # transform read only b in version 1; report had not run yet
    assert edges(then) == UPSTREAM_OF_D - {(ds("c"), job("transform"))}
    assert then.as_of == DAY1_NOON
    with pytest.raises(NotFound, match="did not exist yet"):
        lineage(model, LineageQuery(ds("d"), as_of=f"{DAY1}T01:00:00.0000000Z"))
    condensed = lineage(model, LineageQuery(ds("d"), "upstream", as_of=DAY1_NOON, include_processes=False))
    assert edges(condensed) == {(ds("b"), ds("d")), (ds("a"), ds("b")), (ds("s"), ds("a"))}


def test_ultimate_sources_and_destinations(model: EventStore) -> None:
    sources = ultimate(model, ds("d"), "source")
    assert {n: node.distance for n, node in sources.nodes.items() if n != ds("d")} == {ds("s"): 3, ds("c"): 1}
    assert edges(sources) == {(ds("s"), ds("d")), (ds("c"), ds("d"))}
    destinations = ultimate(model, ds("d"), "destination")
    assert {n: node.distance for n, node in destinations.nodes.items() if n != ds("d")} == {ds("h"): 3}
    # the precomputed answer and a walk to the ends agree
    walked = ultimate(model, ds("d"), "source", as_of=f"{DAY2}T23:00:00.0000000Z")
    assert {n: x.distance for n, x in walked.nodes.items()} == {
        n: x.distance for n, x in sources.nodes.items()
    }
    # a dataset with nothing upstream is its own source; a job answers for its inputs
    assert {n: x.distance for n, x in ultimate(model, ds("s"), "source").nodes.items()} == {ds("s"): 0}
    by_job = ultimate(model, job("transform"), "source")
    assert {n: x.distance for n, x in by_job.nodes.items() if n != job("transform")} == {
        ds("s"): 3,
        ds("c"): 1,
    }
    # as of day 1, c was not read yet
    then = ultimate(model, ds("d"), "source", as_of=DAY1_NOON)
    assert {n: x.distance for n, x in then.nodes.items() if n != ds("d")} == {ds("s"): 3}


def test_a_dataset_with_more_ends_than_the_model_keeps_is_answered_by_a_walk(model: EventStore) -> None:
    asked = [(ds("d"), "source"), (ds("d"), "destination"), (job("transform"), "source"), (ds("s"), "source")]

    def answers() -> list[dict[str, int | None]]:
        return [{n: x.distance for n, x in ultimate(model, node, kind).nodes.items()} for node, kind in asked]  # type: ignore[arg-type]

    precomputed = answers()
    inputs = graph_inputs.small_graph_inputs(model, None)
    assert inputs is not None
    graph_checkpoint = read_state(model)[1]
    try:  # the graph as the pipeline publishes it when the model keeps one end of a kind at most
        capped = driver_graph.graph_tables(*dataclasses.astuple(inputs), cap=1)
        replace_graph_rows(model, capped.by_table(), graph_checkpoint)
        assert (ds("d"), "source", PAST_CAP, -1) in capped.ultimate_nodes
        assert answers() == precomputed
    finally:
        whole = driver_graph.graph_tables(*dataclasses.astuple(inputs))
        replace_graph_rows(model, whole.by_table(), graph_checkpoint)


def test_column_lineage_with_dataset_level_dependencies(model: EventStore) -> None:
    result = column_lineage(model, LineageQuery(field("d", "y"), "upstream"))
    assert result.root == field("d", "y")
    assert {(e.src, e.dst, e.transformation) for e in result.edges} == {
        (field("c", "y"), field("d", "y"), "DIRECT/TRANSFORMATION"),
        (field("b", "flag"), field("d", "y"), "INDIRECT/FILTER"),
    }
    whole = column_lineage(model, LineageQuery(ds("d"), "upstream"))
    assert edges(whole) == {
        (field("b", "x"), field("d", "x")),
        (field("b", "flag"), field("d", "x")),
        (field("c", "y"), field("d", "y")),
        (field("b", "flag"), field("d", "y")),
    }
    down = column_lineage(model, LineageQuery(field("b", "flag"), "downstream"))
    assert edges(down) == {(field("b", "flag"), field("d", "x")), (field("b", "flag"), field("d", "y"))}
    assert result.nodes[field("d", "y")].field_type == "STRING"


def test_column_lineage_as_of_the_facet_then(model: EventStore) -> None:
    then = column_lineage(model, LineageQuery(ds("d"), "upstream", as_of=DAY1_NOON))
    assert edges(then) == {(field("b", "x"), field("d", "x"))}
    assert field("d", "y") in then.nodes  # the field existed, computed from nothing declared


def test_ultimate_source_of_a_field(model: EventStore) -> None:
    result = ultimate(model, field("d", "x"), "source")
    assert {n: x.distance for n, x in result.nodes.items() if n != field("d", "x")} == {
        field("b", "x"): 1,
        field("b", "flag"): 1,
    }


def test_bad_and_unknown_nodes(model: EventStore) -> None:
    with pytest.raises(NotFound, match="dataset:ns:nope"):
        lineage(model, LineageQuery(ds("nope")))
    with pytest.raises(NotFound, match="field 'zz'"):
        column_lineage(model, LineageQuery(field("d", "zz")))
    for bad in ("d", "table:ns:d", "dataset:ns", "dataset::d", "datasetField:ns:d", ""):
        with pytest.raises(BadRequest, match="nodeId"):
            lineage(model, LineageQuery(bad))


def test_upstream_runs_through_a_symlink(model: EventStore) -> None:
    runs, truncated = upstream_runs(model, RUNS["report"], depth=20, limit=500)
    assert [r.run_id for r in runs] == [RUNS["report"], RUNS["transform_v2"], RUNS["extract"], RUNS["load"]]
    assert not truncated
    report = runs[0]
    assert [(i.name, i.produced_by_run) for i in report.inputs] == [("d", RUNS["transform_v2"])]
    shallow, _ = upstream_runs(model, RUNS["report"], depth=1, limit=500)
    assert [r.run_id for r in shallow] == [RUNS["report"], RUNS["transform_v2"]]


@pytest.fixture(scope="module")
def api(model: EventStore) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url=model.url), model)) as client:
        yield client


def test_marquez_lineage_answer(api: TestClient) -> None:
    answer = api.get("/api/v1/lineage", params={"nodeId": ds("d"), "depth": 1, "direction": "upstream"})
    assert answer.status_code == 200
    graph = {node["id"]: node for node in answer.json()["graph"]}
    assert set(graph) == {ds("d"), job("transform"), ds("b"), ds("c")}
    transform = graph[job("transform")]
    assert transform["type"] == "JOB"
    assert {e["origin"] for e in transform["inEdges"]} == {ds("b"), ds("c")}
    assert transform["outEdges"] == [{"origin": job("transform"), "destination": ds("d")}]
    assert transform["data"]["latestRun"]["state"] == "COMPLETED"
    assert [f["name"] for f in graph[ds("b")]["data"]["fields"]] == ["x", "y", "flag"]
    assert answer.json()["expandable"] == [ds("b")]
    assert api.get("/api/v1/lineage", params={"nodeId": ds("d"), "depth": "x"}).status_code == 400
    assert api.get("/api/v1/lineage", params={"nodeId": "dataset:ns:nope"}).status_code == 404
    assert api.get("/api/v1/lineage").status_code == 400


def test_marquez_column_lineage_answer(api: TestClient) -> None:
    answer = api.get("/api/v1/column-lineage", params={"nodeId": field("d", "y")})
    assert answer.status_code == 200
    graph = {node["id"]: node for node in answer.json()["graph"]}
    inputs = {
        (i["dataset"], i["field"], i["transformationType"])
        for i in graph[field("d", "y")]["data"]["inputFields"]
    }
    assert inputs == {("c", "y", "DIRECT"), ("b", "flag", "INDIRECT")}
    with_down = api.get(
        "/api/v1/column-lineage", params={"nodeId": field("b", "x"), "withDownstream": "true"}
    )
    assert {n["id"] for n in with_down.json()["graph"]} == {field("b", "x"), field("d", "x")}
    without = api.get("/api/v1/column-lineage", params={"nodeId": field("b", "x")})
    assert {n["id"] for n in without.json()["graph"]} == {field("b", "x")}


def test_warehouse_scopes(api: TestClient) -> None:
    def ask(scope: str, **params: object) -> dict[str, object]:
        answer = api.get(f"/api/warehouse/v1/lineage/{scope}", params={"nodeId": ds("d"), **params})
        assert answer.status_code == 200, answer.text
        body: dict[str, object] = answer.json()
        return body

    up = ask("upstream", includeProcesses="false")
    assert {v["nodeID"] for v in up["vertices"]} == {ds(n) for n in "dbcas"}  # type: ignore[index,union-attr]
    assert {e["edgeType"] for e in up["edges"]} == {"condensed"}  # type: ignore[index,union-attr]
    source = ask("ultimate-source")
    assert {(e["sourceNodeID"], e["edgeType"]) for e in source["edges"]} == {  # type: ignore[index,union-attr]
        (ds("s"), "ultimate-source"),
        (ds("c"), "ultimate-source"),
    }
    end_to_end = ask("end-to-end", asOf=f"{DAY1}T12:00:00Z")
    assert job("report") not in {v["nodeID"] for v in end_to_end["vertices"]}  # type: ignore[index,union-attr]
    assert api.get("/api/warehouse/v1/lineage/sideways", params={"nodeId": ds("d")}).status_code == 404
    assert (
        api.get(
            "/api/warehouse/v1/lineage/upstream", params={"nodeId": ds("d"), "includeProcesses": "maybe"}
        ).status_code
        == 400
    )


def test_run_lineage_answer(api: TestClient) -> None:
    answer = api.get("/api/v1/runlineage/upstream", params={"runId": RUNS["transform_v2"]})
    assert answer.status_code == 200
    runs = answer.json()["runs"]
    assert [r["run"]["id"] for r in runs] == [RUNS["transform_v2"], RUNS["extract"], RUNS["load"]]
    assert runs[0]["job"] == {"namespace": "ns", "name": "transform", "version": runs[0]["job"]["version"]}
    assert {(i["name"], i["producedByRunId"]) for i in runs[0]["inputs"]} == {
        ("b", RUNS["extract"]),
        ("c", None),
    }
    assert api.get("/api/v1/runlineage/upstream", params={"runId": "nope"}).status_code == 404
    assert api.get("/api/v1/runlineage/upstream").status_code == 400  # no runId
    missing = str(uuid.UUID(int=7))
    assert api.get("/api/v1/runlineage/upstream", params={"runId": missing}).status_code == 404


def test_cli_table_json_and_dot(model: EventStore) -> None:
    from click.testing import CliRunner

    from headwater.cli import main

    runner = CliRunner()

    def run(*args: str) -> tuple[int, str]:
        outcome = runner.invoke(main, ["lineage", *args, "--database-url", model.url])
        return outcome.exit_code, outcome.output

    code, table = run(ds("d"), "--direction", "up", "--depth", "1")
    assert code == 0, table
    rows = [line.split() for line in table.splitlines()[1:-1]]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("-2", "dataset", ds("b")),
        ("-2", "dataset", ds("c")),
        ("-1", "job", job("transform")),
        ("0", "dataset", ds("d")),
    ]
    assert "more beyond" in table.splitlines()[1]  # b has lineage beyond depth 1
    code, text = run(ds("d"), "--as-of", f"{DAY1}T12:00:00Z", "--format", "json", "--no-jobs")
    assert code == 0, text
    body = orjson.loads(text)
    assert {v["nodeID"] for v in body["vertices"]} == {ds(n) for n in "dbas"}  # no c on day 1
    code, dot = run(field("d", "y"), "--direction", "up", "--format", "dot")
    assert code == 0 and dot.startswith("digraph lineage {")
    assert f'"{field("c", "y")}" -> "{field("d", "y")}" [label="DIRECT/TRANSFORMATION"];' in dot
    code, text = run(ds("nope"))
    assert code == 1 and "dataset:ns:nope" in text
    code, text = run("nope")
    assert code == 1 and "nodeId" in text


def test_search_finds_what_the_pipeline_published(api: TestClient) -> None:
    found = api.get("/api/v1/search", params={"q": "TRANS"}).json()
    assert [(r["type"], r["nodeId"]) for r in found["results"]] == [("JOB", job("transform"))]
    public = api.get("/api/v1/search", params={"q": "public", "filter": "DATASET"}).json()
    assert [r["nodeId"] for r in public["results"]] == ["dataset:warehouse:public.a"]


def vertical_edges(node_id: str, model: EventStore, as_of: str | None = None) -> set[tuple[str, str, str]]:
    result = vertical(model, node_id, as_of=as_of, limit=500)
    assert all(e.src in result.nodes and e.dst in result.nodes for e in result.edges)
    return {(e.src, e.dst, e.kind) for e in result.edges}


def test_vertical_lineage_of_a_dataset_now_and_then(model: EventStore) -> None:
    assert vertical_edges(ds("d"), model) == {
        ("namespace:ns", ds("d"), "contains"),
        (ds("d"), field("d", "x"), "has-field"),
        (ds("d"), field("d", "y"), "has-field"),
        (field("b", "x"), field("d", "x"), "column"),
        (field("b", "flag"), field("d", "x"), "column"),
        (field("c", "y"), field("d", "y"), "column"),
        (field("b", "flag"), field("d", "y"), "column"),
        (ds("d"), "owner:team:analytics", "owned-by"),
    }
    assert vertical_edges(ds("d"), model, DAY1_NOON) == {
        ("namespace:ns", ds("d"), "contains"),
        (ds("d"), field("d", "x"), "has-field"),
        (ds("d"), field("d", "y"), "has-field"),
        (field("b", "x"), field("d", "x"), "column"),
        (ds("d"), "owner:team:ingest", "owned-by"),
    }


def test_vertical_lineage_shows_symlinks_sources_and_fields(model: EventStore) -> None:
    assert vertical_edges("dataset:warehouse:public.a", model) == {
        ("namespace:ns", ds("a"), "contains"),
        ("dataset:warehouse:public.a", ds("a"), "symlink"),
        (ds("a"), field("a", "x"), "has-field"),  # the schema came with the other name
    }
    assert ("source:lake", ds("s"), "source-of") in vertical_edges(ds("s"), model)
    assert vertical_edges(field("d", "y"), model) == {
        (ds("d"), field("d", "y"), "has-field"),
        ("namespace:ns", ds("d"), "contains"),
        (field("c", "y"), field("d", "y"), "column"),
        (field("b", "flag"), field("d", "y"), "column"),
    }


def test_vertical_lineage_of_jobs_and_runs(model: EventStore) -> None:
    extract_run, orchestrator_run = f"run:{RUNS['extract']}", f"run:{RUNS['orchestrator']}"
    assert vertical_edges(job("extract"), model) == {
        ("namespace:ns", job("extract"), "contains"),
        (job("orchestrator"), job("extract"), "parent"),
        (job("extract"), extract_run, "ran"),
    }
    assert (job("orchestrator"), job("extract"), "parent") in vertical_edges(job("orchestrator"), model)
    assert vertical_edges(extract_run, model) == {
        (job("extract"), extract_run, "ran"),
        (orchestrator_run, extract_run, "parent"),
    }
    assert (orchestrator_run, extract_run, "parent") in vertical_edges(orchestrator_run, model)
    transform_runs = vertical(model, job("transform"), as_of=DAY1_NOON, limit=500)
    assert {n for n in transform_runs.nodes if n.startswith("run:")} == {f"run:{RUNS['transform_v1']}"}
    with pytest.raises(NotFound):
        vertical(model, f"run:{uuid.UUID(int=9)}", as_of=None, limit=500)
    with pytest.raises(NotFound):
        vertical(model, ds("nope"), as_of=None, limit=500)
    assert vertical(model, ds("d"), as_of=None, limit=3).truncated


def test_warehouse_vertical_nodes_and_types(api: TestClient) -> None:
    answer = api.get("/api/warehouse/v1/lineage/vertical", params={"nodeId": ds("d")})
    assert answer.status_code == 200
    owners = [v for v in answer.json()["vertices"] if v["nodeType"] == "owner"]
    assert owners == [
        {
            "nodeID": "owner:team:analytics",
            "nodeType": "owner",
            "displayName": "team:analytics",
            "qualifiedName": "team:analytics",
            "properties": {"namespace": "", "name": "team:analytics", "type": "TEAM"},
        }
    ]
    nodes = api.get("/api/warehouse/v1/nodes", params={"name": "TRANS", "type": "job"}).json()
    assert nodes["truncated"] is False
    assert [{k: v for k, v in n.items() if k != "properties"} for n in nodes["nodes"]] == [
        {
            "nodeID": job("transform"),
            "nodeType": "job",
            "displayName": "transform",
            "qualifiedName": "ns:transform",
        }
    ]
    assert nodes["nodes"][0]["properties"]["namespace"] == "ns"
    fields = api.get("/api/warehouse/v1/nodes", params={"name": "fla", "type": "datasetField"}).json()[
        "nodes"
    ]
    assert [n["nodeID"] for n in fields] == [field("b", "flag")]
    some = api.get("/api/warehouse/v1/nodes", params={"name": "", "limit": 2}).json()
    assert len(some["nodes"]) == 2 and some["truncated"]
    assert api.get("/api/warehouse/v1/nodes", params={"type": "table"}).status_code == 400
    kinds = api.get("/api/warehouse/v1/types").json()
    answered = {v["nodeType"] for v in answer.json()["vertices"]} | {
        e["edgeType"] for e in answer.json()["edges"]
    }
    assert answered <= {t["name"] for t in kinds["nodeTypes"]} | {t["name"] for t in kinds["edgeTypes"]}


# -- a whole namespace as one graph (nodeId=namespace:{name}) -----------------------------------
NS_JOBS = {
    job(name) for name in ("load", "extract", "audit", "transform", "report", "enrich", "fix_e", "publish")
}
NS_DATASETS = {ds(name) for name in "abcdefghs"}


def test_every_node_of_the_namespace_and_the_edges_between_them(model: EventStore) -> None:
    result = namespace_lineage(model, "ns", LineageQuery("namespace:ns", depth=1))
    assert result.root == "namespace:ns"
    assert set(result.nodes) >= NS_DATASETS | NS_JOBS
    assert edges(result) >= UPSTREAM_OF_D | DOWNSTREAM_OF_D
    assert (ds("b"), job("audit")) in edges(result)
    assert not result.truncated


def test_a_namespace_of_one_symlinked_name_reaches_its_neighbours(model: EventStore) -> None:
    result = namespace_lineage(model, "warehouse", LineageQuery("namespace:warehouse", depth=1))
    assert ds("a") in result.nodes  # warehouse:public.a is merged into ns:a
    assert {(job("load"), ds("a")), (ds("a"), job("extract"))} <= edges(result)


def test_condensed_as_of_and_limit(model: EventStore) -> None:
    condensed = namespace_lineage(model, "ns", LineageQuery("namespace:ns", depth=1, include_processes=False))
    assert {n.kind for n in condensed.nodes.values()} == {"dataset"}
    assert (ds("b"), ds("d")) in edges(condensed)
    day1 = namespace_lineage(
        model, "ns", LineageQuery("namespace:ns", depth=1, as_of=f"{DAY1}T23:00:00.0000000Z")
    )
    assert ds("c") not in day1.nodes and job("report") not in day1.nodes
    assert ds("b") in day1.nodes
    capped = namespace_lineage(model, "ns", LineageQuery("namespace:ns", depth=1, limit=3))
    assert len(capped.nodes) <= 3 and capped.truncated


def test_unknown_namespace(model: EventStore) -> None:
    with pytest.raises(NotFound):
        namespace_lineage(model, "nowhere", LineageQuery("namespace:nowhere"))


def test_over_http(model: EventStore) -> None:
    with TestClient(create_app(Settings(database_url=model.url), model)) as client:
        answer = client.get(
            "/api/warehouse/v1/lineage/downstream", params={"nodeId": "namespace:ns", "depth": 1}
        )
        assert answer.status_code == 200
        assert answer.json()["nodeID"] == "namespace:ns"
        assert {v["nodeID"] for v in answer.json()["vertices"]} >= NS_DATASETS
        missing = client.get("/api/warehouse/v1/lineage/end-to-end", params={"nodeId": "namespace:nowhere"})
        assert missing.status_code == 404
