"""The demo lineage generator: valid events, deterministic output, the graph features and delivery
faults it promises (headwater.demo.lineage docstring), and a lazy, exactly sized stream."""

from __future__ import annotations

import functools
import gc
import itertools
import json
import re
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from headwater.demo.lineage import (
    DATASET_EVENT_SCHEMA,
    JOB_EVENT_SCHEMA,
    RUN_EVENT_SCHEMA,
    DemoFacts,
    DemoShape,
    demo_events,
    demo_facts,
    stream_events,
    stream_shape,
)
from headwater.events.validate import validate_event
from tests.events.oracle import HAVE_SPEC, NO_SPEC, SPEC_DIR, expected

needs_spec = pytest.mark.skipif(not HAVE_SPEC, reason=NO_SPEC)

Ref = tuple[str, str]
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_FACET_URL = re.compile(r"https://openlineage\.io/spec/facets/(\d+-\d+-\d+)/(\w+)\.json#/\$defs/(\w+)")
DEFAULT = DemoShape()
WIDE = DemoShape(namespaces=6, jobs=45, runs_per_job=4, seed=11)
FIRST_DAY = date(2025, 3, 3)


@functools.cache
def events(shape: DemoShape = DEFAULT) -> tuple[dict[str, Any], ...]:
    return tuple(demo_events(shape))


@functools.cache
def facts(shape: DemoShape = DEFAULT) -> DemoFacts:
    return demo_facts(shape)


def kind(event: dict[str, Any]) -> str:
    return str(event["schemaURL"].rsplit("/", 1)[-1])


def run_events(evs: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in evs if kind(e) == "RunEvent"]


def ref(item: dict[str, Any]) -> Ref:
    return (item["namespace"], item["name"])


def day_of(event: dict[str, Any]) -> int:
    """The scheduled day (0 = the first) an event belongs to."""
    return (date.fromisoformat(event["eventTime"][:10]) - FIRST_DAY).days


def containers(event: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, facets container) of every facets container of an event."""
    if "run" in event:
        yield "run.facets", event["run"].get("facets", {})
    for key in ("job", "dataset"):
        if key in event:
            yield f"{key}.facets", event[key].get("facets", {})
    for key, extra in (("inputs", "inputFacets"), ("outputs", "outputFacets")):
        for i, item in enumerate(event.get(key, [])):
            yield f"{key}[{i}].facets", item.get("facets", {})
            yield f"{key}[{i}].{extra}", item.get(extra, {})


def lineage_facets(evs: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(event, output dataset) of every output carrying a columnLineage facet."""
    for e in run_events(evs):
        for out in e.get("outputs", []):
            if "columnLineage" in out.get("facets", {}):
                yield e, out


# ------------------------------------------------------------------------------------------------
# Validity
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [DemoShape(), WIDE], ids=["default", "wide"])
def test_every_event_validates_without_warnings(shape: DemoShape) -> None:
    evs = events(shape)
    assert evs
    for i, doc in enumerate(evs):
        event = validate_event(doc)
        assert event.warnings == (), (i, event.warnings)
        assert event.untrusted_facets == (), (i, event.untrusted_facets)
        assert event.kind == {"RunEvent": "run", "JobEvent": "job", "DatasetEvent": "dataset"}[kind(doc)]


@needs_spec
def test_events_conform_to_the_official_schemas() -> None:
    """The jsonschema oracle of tests/events agrees: accepted, no facet breaking its schema."""
    for i, doc in enumerate(events()):
        verdict = expected(doc)
        assert verdict.accepted, (i, verdict.notes)
        assert not verdict.untrusted, (i, sorted(verdict.untrusted))


@needs_spec
def test_facets_name_the_newest_schema_versions_and_their_own_key() -> None:
    newest = {}
    keys = {}
    for file in (SPEC_DIR / "facets").glob("*.json"):
        schema = json.loads(file.read_text(encoding="utf-8"))
        newest[file.stem] = schema["$id"].split("/")[-2]
        keys[file.stem] = set(schema.get("properties", {}))
    seen = set()
    for doc in events():
        for path, container in containers(doc):
            for key, facet in container.items():
                m = _FACET_URL.fullmatch(facet["_schemaURL"])
                assert m is not None, (path, key, facet["_schemaURL"])
                version, name, definition = m.groups()
                assert definition == name
                assert version == newest[name], (name, version, newest[name])
                assert key in keys[name], (path, key, name)
                assert isinstance(facet["_producer"], str) and facet["_producer"].startswith("https://")
                seen.add(name)
    promised = {
        "SchemaDatasetFacet",
        "SymlinksDatasetFacet",
        "ColumnLineageDatasetFacet",
        "DatasourceDatasetFacet",
        "SourceCodeLocationJobFacet",
        "SQLJobFacet",
        "ParentRunFacet",
        "NominalTimeRunFacet",
        "DatasetVersionDatasetFacet",
        "LifecycleStateChangeDatasetFacet",
        "JobTypeJobFacet",
        "DocumentationJobFacet",
        "DocumentationDatasetFacet",
        "OwnershipJobFacet",
        "OwnershipDatasetFacet",
        "OutputStatisticsOutputDatasetFacet",
        "DataQualityMetricsInputDatasetFacet",
        "ErrorMessageRunFacet",
    }
    assert promised <= seen, promised - seen


def test_facet_producers_match_the_event_producer() -> None:
    for doc in run_events(events()):
        for path, container in containers(doc):
            for key, facet in container.items():
                assert facet["_producer"] == doc["producer"], (path, key)


def test_run_ids_and_event_times() -> None:
    for doc in events():
        assert _TIME.fullmatch(doc["eventTime"]), doc["eventTime"]
        if kind(doc) == "RunEvent":
            assert _UUID4.fullmatch(doc["run"]["runId"])
            parent = doc["run"]["facets"].get("parent")
            if parent:
                assert _UUID4.fullmatch(parent["run"]["runId"])
                assert _UUID4.fullmatch(parent["root"]["run"]["runId"])


# ------------------------------------------------------------------------------------------------
# Determinism
# ------------------------------------------------------------------------------------------------


def test_output_is_deterministic_for_a_seed() -> None:
    assert demo_events() == demo_events()
    assert demo_events(WIDE) == list(events(WIDE))
    assert demo_events(DemoShape(seed=8)) != demo_events()
    assert list(stream_events(3_000, seed=5)) == list(stream_events(3_000, seed=5))
    assert list(stream_events(500, seed=5)) != list(stream_events(500, seed=6))
    assert demo_facts() == demo_facts()


def test_demo_events_are_independent_objects() -> None:
    evs = demo_events()
    ids = Counter(id(x) for e in evs for c in containers(e) for x in c[1].values())
    assert max(ids.values()) == 1


# ------------------------------------------------------------------------------------------------
# Runs, namespaces, parents
# ------------------------------------------------------------------------------------------------


def runs_of(evs: Any) -> dict[str, list[dict[str, Any]]]:
    """The events of every run, duplicates left out."""
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    seen = set()
    for e in run_events(evs):
        key = json.dumps(e, sort_keys=True)
        if key not in seen:
            seen.add(key)
            runs[e["run"]["runId"]].append(e)
    return runs


@pytest.mark.parametrize("shape", [DemoShape(), WIDE], ids=["default", "wide"])
def test_every_run_starts_and_ends(shape: DemoShape) -> None:
    orchestrators = set(facts(shape).orchestrators)
    runs = runs_of(events(shape))
    ends: Counter[str] = Counter()  # of task runs
    for run_id, evs in runs.items():
        ordered = sorted(evs, key=lambda e: e["eventTime"])
        types = [e["eventType"] for e in ordered]
        assert types[0] == "START", (run_id, types)
        assert types[-1] in ("COMPLETE", "FAIL", "ABORT"), (run_id, types)
        assert set(types[1:-1]) <= {"RUNNING"}, (run_id, types)
        assert ordered[0]["eventTime"] < ordered[-1]["eventTime"]
        assert len({ref(e["job"]) for e in evs}) == 1
        if ref(evs[0]["job"]) not in orchestrators:
            ends[types[-1]] += 1
    total = sum(ends.values())
    assert 0.02 <= ends["FAIL"] / total <= 0.12, ends  # about 5%, their retries included
    assert ends["ABORT"] >= 1, ends
    running = sum(1 for evs in runs.values() for e in evs if e["eventType"] == "RUNNING")
    assert 1 <= running <= total * 0.15


def test_namespaces_and_jobs() -> None:
    f = facts()
    evs = run_events(events())
    job_namespaces = {e["job"]["namespace"] for e in evs}
    assert len(job_namespaces) >= 3
    assert job_namespaces == set(f.job_namespaces) == {"spark-lake", "dbt-analytics", "airflow-prod"}
    jobs = {ref(e["job"]) for e in evs}
    assert jobs == set(f.tasks) | set(f.orchestrators)
    assert len(f.tasks) >= 20
    dataset_namespaces = {d["namespace"] for e in evs for key in ("inputs", "outputs") for d in e[key]}
    assert {
        "postgres://warehouse:5432",
        "s3://lake",
        "bigquery",
        "hive://metastore:9083",
    } <= dataset_namespaces
    assert dataset_namespaces == set(f.dataset_namespaces)
    datasets = {ref(d) for e in evs for key in ("inputs", "outputs") for d in e[key]}
    assert datasets == set(f.datasets)
    wide = facts(WIDE)
    assert len(wide.job_namespaces) == 6 and len(wide.orchestrators) == 6 and len(wide.tasks) == 45


@pytest.mark.parametrize("shape", [DemoShape(), WIDE], ids=["default", "wide"])
def test_parent_runs(shape: DemoShape) -> None:
    f = facts(shape)
    runs = runs_of(events(shape))
    job_of = {run_id: ref(evs[0]["job"]) for run_id, evs in runs.items()}
    start_of = {
        run_id: min(e["eventTime"] for e in evs if e["eventType"] == "START") for run_id, evs in runs.items()
    }
    orchestrator_runs = {run_id for run_id, job in job_of.items() if job in f.orchestrators}
    # One run of every orchestrator a day, each with a START and its own end.
    per_orchestrator = Counter(job_of[r] for r in orchestrator_runs)
    assert per_orchestrator == dict.fromkeys(f.orchestrators, shape.runs_per_job)
    children: dict[str, int] = Counter()
    for run_id, evs in runs.items():
        parents = {json.dumps(e["run"]["facets"].get("parent"), sort_keys=True) for e in evs}
        assert len(parents) == 1, run_id  # every event of a run names the same parent
        parent = evs[0]["run"]["facets"].get("parent")
        if job_of[run_id] == f.root_job:
            assert parent is None
            continue
        assert parent is not None, job_of[run_id]
        parent_run = parent["run"]["runId"]
        assert parent_run in orchestrator_runs
        assert job_of[parent_run] == ref(parent["job"])
        root_run = parent["root"]["run"]["runId"]
        assert job_of[root_run] == f.root_job == ref(parent["root"]["job"])
        assert start_of[parent_run] < start_of[run_id]
        if job_of[run_id] in f.orchestrators:
            assert parent_run == root_run
        else:
            assert job_of[parent_run][0] == job_of[run_id][0]  # the orchestrator of its own namespace
            children[parent_run] += 1
    assert set(children) == orchestrator_runs


def test_nominal_time_on_some_runs() -> None:
    evs = run_events(events())
    with_nominal = {e["job"]["namespace"] for e in evs if "nominalTime" in e["run"]["facets"]}
    assert with_nominal == {"airflow-prod"}
    for e in evs:
        nominal = e["run"]["facets"].get("nominalTime")
        if nominal:
            assert nominal["nominalStartTime"] <= e["eventTime"] < nominal["nominalEndTime"]


def test_failed_tasks_carry_an_error_message_and_are_retried() -> None:
    f = facts()
    runs_by_job_day: dict[tuple[Ref, int], list[list[dict[str, Any]]]] = defaultdict(list)
    for evs in runs_of(events()).values():
        runs_by_job_day[ref(evs[0]["job"]), day_of(evs[0])].append(sorted(evs, key=lambda e: e["eventTime"]))
    retried = 0
    for (job, _), runs in runs_by_job_day.items():
        runs.sort(key=lambda evs: evs[0]["eventTime"])
        ends = [evs[-1] for evs in runs]
        if job in f.orchestrators:
            assert len(runs) == 1
            continue
        assert len(runs) <= 2, job
        if ends[0]["eventType"] == "FAIL":
            assert ends[0]["run"]["facets"]["errorMessage"]["message"]
            assert len(runs) == 2, job  # retried the same day, after the failure
            assert runs[1][0]["eventTime"] > ends[0]["eventTime"]
            retried += 1
        else:
            assert len(runs) == 1, job
    assert retried >= 2


# ------------------------------------------------------------------------------------------------
# The dataset graph
# ------------------------------------------------------------------------------------------------


def edges(evs: Any, *, merge: dict[Ref, Ref] | None = None) -> dict[Ref, dict[Ref, set[Ref]]]:
    """job → {input dataset → {output datasets}} from run events; names merged through `merge`."""
    alias = merge or {}
    graph: dict[Ref, dict[Ref, set[Ref]]] = defaultdict(lambda: defaultdict(set))
    for e in run_events(evs):
        for i in e["inputs"]:
            for o in e["outputs"]:
                graph[ref(e["job"])][alias.get(ref(i), ref(i))].add(alias.get(ref(o), ref(o)))
    return graph


def dataset_edges(
    graph: dict[Ref, dict[Ref, set[Ref]]], skip: frozenset[Ref] = frozenset()
) -> dict[Ref, set[Ref]]:
    out: dict[Ref, set[Ref]] = defaultdict(set)
    for job, io in graph.items():
        if job not in skip:
            for source, targets in io.items():
                out[source] |= targets
    return out


def longest_path(adj: dict[Ref, set[Ref]]) -> int:
    """Datasets on the longest path of an acyclic graph (raises on a cycle)."""
    memo: dict[Ref, int] = {}
    visiting: set[Ref] = set()

    def depth(node: Ref) -> int:
        if node in memo:
            return memo[node]
        if node in visiting:
            raise ValueError(f"cycle through {node}")
        visiting.add(node)
        memo[node] = 1 + max((depth(n) for n in adj.get(node, ())), default=0)
        visiting.discard(node)
        return memo[node]

    return max(depth(n) for n in list(adj))


@pytest.mark.parametrize("shape", [DemoShape(), WIDE], ids=["default", "wide"])
def test_layered_dag_with_one_cycle(shape: DemoShape) -> None:
    f = facts(shape)
    evs = events(shape)
    merge = {table: storage for storage, table in f.symlinks}
    graph = edges(evs, merge=merge)
    acyclic = dataset_edges(graph, skip=frozenset({f.cycle_job}))
    assert longest_path(acyclic) >= 5  # datasets: source → raw → staging → mart → report
    assert (
        longest_path(dataset_edges(edges(evs), skip=frozenset({f.cycle_job}))) >= 5
    )  # even before merging names
    for a, b in itertools.pairwise(f.deepest_path):
        assert b in acyclic[a], (a, b)
    with pytest.raises(ValueError, match="cycle"):
        longest_path(dataset_edges(graph))
    # The cycle job reads a mart and writes a dataset upstream of it.
    read, written = f.cycle
    assert set(graph[f.cycle_job]) == {read} and graph[f.cycle_job][read] == {written}
    reachable: set[Ref] = set()
    todo = [written]
    while todo:
        node = todo.pop()
        for nxt in acyclic.get(node, ()):
            if nxt not in reachable:
                reachable.add(nxt)
                todo.append(nxt)
    assert read in reachable
    # Fan-in: jobs joining several inputs; fan-out: datasets read by several jobs.
    assert sum(1 for io in graph.values() if len(io) >= 2) >= 3
    readers: Counter[Ref] = Counter(ds for io in graph.values() for ds in io)
    assert sum(1 for n in readers.values() if n >= 2) >= 3
    assert any(len(targets) >= 2 for io in graph.values() for targets in io.values())  # a job with 2 outputs


def test_symlinks_arrive_after_both_names_were_used() -> None:
    f = facts()
    evs = events()
    assert len(f.symlinks) >= 2
    for storage, table in f.symlinks:
        assert storage[0] == "s3://lake" and table[0] == "hive://metastore:9083"
        first_link = None
        used: dict[Ref, int | None] = {storage: None, table: None}
        for n, e in enumerate(run_events(evs)):
            for d in e["inputs"] + e["outputs"]:
                if ref(d) in used and used[ref(d)] is None:
                    used[ref(d)] = n
                links = d.get("facets", {}).get("symlinks")
                if links is not None:
                    assert ref(d) != table  # only the storage name declares the link
                    if ref(d) == storage:
                        assert links["identifiers"] == [
                            {"namespace": table[0], "name": table[1], "type": "TABLE"}
                        ]
                        first_link = n if first_link is None else first_link
        assert first_link is not None, storage
        storage_seen, table_seen = used[storage], used[table]
        assert storage_seen is not None and table_seen is not None
        assert storage_seen < first_link and table_seen < first_link
        linked_days = {
            day_of(e) for e in run_events(evs) for d in e["outputs"] if "symlinks" in d.get("facets", {})
        }
        assert min(linked_days) == f.change_day


def test_column_lineage_in_both_forms() -> None:
    f = facts()
    evs = events()
    new_form = deprecated = dataset_level = 0
    types: set[str] = set()
    subtypes: set[str] = set()
    masking = False
    for e, out in lineage_facets(evs):
        facet = out["facets"]["columnLineage"]
        schemas = {ref(i): {x["name"] for x in i["facets"]["schema"]["fields"]} for i in e["inputs"]}
        output_fields = {x["name"] for x in out["facets"]["schema"]["fields"]}
        old = (ref(e["job"]), ref(out)) in f.deprecated_lineage
        for name, entry in facet["fields"].items():
            assert name in output_fields, (ref(out), name)
            assert entry["inputFields"]
            for item in entry["inputFields"]:
                assert item["field"] in schemas[ref(item)], (ref(out), name, item)  # a real input column
                if old:
                    assert "transformations" not in item
                else:
                    for step in item["transformations"]:
                        types.add(step["type"])
                        subtypes.add(step["subtype"])
                        assert step["description"]
                        masking |= step["masking"]
            if old:
                assert entry["transformationType"] in ("IDENTITY", "MASKED")
                assert entry["transformationDescription"]
                deprecated += 1
            else:
                assert "transformationType" not in entry
                new_form += 1
        if "dataset" in facet:
            dataset_level += 1
            for item in facet["dataset"]:
                assert item["field"] in schemas[ref(item)]
                assert {s["type"] for s in item["transformations"]} == {"INDIRECT"}
                subtypes |= {s["subtype"] for s in item["transformations"]}
    assert new_form and deprecated and dataset_level
    assert types == {"DIRECT", "INDIRECT"}
    assert {"IDENTITY", "TRANSFORMATION", "AGGREGATION", "JOIN", "FILTER", "GROUP_BY"} <= subtypes
    assert masking
    assert f.deprecated_lineage


def test_output_facets() -> None:
    evs = run_events(events())
    completes = [e for e in evs if e["eventType"] == "COMPLETE" and e["outputs"]]
    nested = versions = 0
    lifecycle: Counter[str] = Counter()
    for e in completes:
        for out in e["outputs"]:
            facets = out["facets"]
            assert {"schema", "dataSource"} <= set(facets)
            stats = out["outputFacets"]["outputStatistics"]
            assert stats["rowCount"] >= 1 and stats["size"] >= stats["rowCount"]
            nested += any("fields" in x for x in facets["schema"]["fields"])
            versions += "version" in facets
            if "lifecycleStateChange" in facets:
                lifecycle[facets["lifecycleStateChange"]["lifecycleStateChange"]] += 1
    assert nested and versions
    assert {"CREATE", "OVERWRITE", "ALTER"} <= set(lifecycle)
    assert sum(1 for e in completes for i in e["inputs"] if "dataQualityMetrics" in i.get("inputFacets", {}))


def test_job_facets() -> None:
    evs = run_events(events())
    by_job: dict[Ref, set[str]] = defaultdict(set)
    for e in evs:
        by_job[ref(e["job"])] |= set(e["job"].get("facets", {}))
    assert all({"jobType", "sourceCodeLocation"} <= names for names in by_job.values())
    dbt = {job for job in by_job if job[0] == "dbt-analytics" and job[1].startswith("analytics.")}
    assert dbt and all("sql" in by_job[job] for job in dbt)
    assert any("documentation" in names for names in by_job.values())
    assert any("ownership" in names for names in by_job.values())


def test_schema_and_code_change_mid_history() -> None:
    f = facts()
    evs = run_events(events())
    assert f.change_day == DEFAULT.runs_per_job // 2 and f.schema_changes and f.code_changes
    for ds in f.schema_changes:
        schemas: dict[bool, set[str]] = defaultdict(set)
        for e in evs:
            for d in e["outputs"]:
                if ref(d) == ds and "facets" in d:
                    fields = json.dumps(d["facets"]["schema"]["fields"], sort_keys=True)
                    schemas[day_of(e) >= f.change_day].add(fields)
        assert len(schemas[False]) == 1 and len(schemas[True]) == 1, ds
        assert schemas[False] != schemas[True], ds
    for job in f.code_changes:
        versions: dict[bool, set[str]] = defaultdict(set)
        for e in evs:
            if ref(e["job"]) == job and "facets" in e["job"]:
                versions[day_of(e) >= f.change_day].add(e["job"]["facets"]["sourceCodeLocation"]["version"])
        assert len(versions[False]) == len(versions[True]) == 1 and versions[False] != versions[True], job
    unchanged = next(job for job in f.tasks if job not in f.code_changes)
    shas = {
        e["job"]["facets"]["sourceCodeLocation"]["version"]
        for e in evs
        if ref(e["job"]) == unchanged and "facets" in e["job"]
    }
    assert len(shas) == 1


# ------------------------------------------------------------------------------------------------
# Static metadata
# ------------------------------------------------------------------------------------------------


def test_dataset_and_job_events() -> None:
    f = facts()
    evs = events()
    dataset_events = [e for e in evs if kind(e) == "DatasetEvent"]
    job_events = [e for e in evs if kind(e) == "JobEvent"]
    assert len(dataset_events) >= 3 and len(job_events) >= 2
    for e in dataset_events:
        assert e["schemaURL"] == DATASET_EVENT_SCHEMA
        assert set(e) == {"eventTime", "producer", "schemaURL", "dataset"}
        assert e["dataset"]["facets"]
    for e in job_events:
        assert e["schemaURL"] == JOB_EVENT_SCHEMA
        assert set(e) == {"eventTime", "producer", "schemaURL", "job", "inputs", "outputs"}
        assert e["job"]["facets"] and e["inputs"] and e["outputs"]
    assert all(e["schemaURL"] == RUN_EVENT_SCHEMA for e in run_events(evs))
    static_only = {ref(e["job"]) for e in job_events} - {ref(e["job"]) for e in run_events(evs)}
    assert static_only == set(f.static_jobs)
    # The facet deleted on the change day was set by an earlier event.
    dataset, facet = f.deleted_facet
    history = [
        e["dataset"]["facets"][facet]
        for e in dataset_events
        if ref(e["dataset"]) == dataset and facet in e["dataset"]["facets"]
    ]
    assert history[0].get("owners") and "_deleted" not in history[0]
    assert history[-1]["_deleted"] is True and "owners" not in history[-1]


# ------------------------------------------------------------------------------------------------
# Delivery
# ------------------------------------------------------------------------------------------------


def delivery_faults(evs: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> dict[str, int]:
    keys = [json.dumps(e, sort_keys=True) for e in evs]
    seen_max = ""
    late = 0
    for e in evs:
        if e["eventTime"] < seen_max:
            late += 1
        seen_max = max(seen_max, e["eventTime"])
    complete_first = running_after = 0
    arrived: dict[str, list[str]] = defaultdict(list)
    for e in run_events(evs):
        arrived[e["run"]["runId"]].append(e["eventType"])
    for types in arrived.values():
        ends = [i for i, t in enumerate(types) if t in ("COMPLETE", "FAIL", "ABORT")]
        if ends and "START" in types and types.index("START") > ends[0]:
            complete_first += 1
        if ends and "RUNNING" in types and max(i for i, t in enumerate(types) if t == "RUNNING") > ends[0]:
            running_after += 1
    return {
        "events": len(evs),
        "duplicates": len(keys) - len(set(keys)),
        "late": late,
        "complete_first": complete_first,
        "running_after": running_after,
    }


@pytest.mark.parametrize("shape", [DemoShape(), WIDE], ids=["default", "wide"])
def test_arrival_order_has_late_events_and_duplicates(shape: DemoShape) -> None:
    faults = delivery_faults(events(shape))
    n = faults["events"]
    assert 1 <= faults["duplicates"] <= max(2, 0.03 * n), faults
    assert 0.01 * n <= faults["late"] <= 0.08 * n, faults
    assert faults["complete_first"] >= 1 and faults["running_after"] >= 1, faults


def test_duplicates_are_exact_copies_of_a_nearby_event() -> None:
    evs = events()
    positions: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(evs):
        positions[json.dumps(e, sort_keys=True)].append(i)
    twice = [p for p in positions.values() if len(p) > 1]
    assert twice and all(len(p) == 2 and p[1] - p[0] <= 5 for p in twice)


# ------------------------------------------------------------------------------------------------
# The stream
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 137, 5_000])
def test_stream_yields_exactly_n_events(n: int) -> None:
    stream = stream_events(n, seed=3)
    assert iter(stream) is stream and not isinstance(stream, list | tuple)
    assert sum(1 for _ in stream) == n


def test_stream_is_lazy_and_fast() -> None:
    began = time.perf_counter()
    endless = stream_events(10**12, seed=2, jobs=20)  # a list of them would never be finished
    first = next(endless)
    assert first["eventTime"].startswith("2025-03-03")
    assert time.perf_counter() - began < 5
    began = time.perf_counter()
    count = sum(1 for _ in itertools.islice(stream_events(50_000), 50_000))
    assert count == 50_000
    assert time.perf_counter() - began < 20


def peak_memory(n: int) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        for _ in stream_events(n, seed=4, jobs=20):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_stream_memory_does_not_grow_with_n() -> None:
    small, large = peak_memory(5_000), peak_memory(40_000)
    assert large < 1.5 * small + 2_000_000, (small, large)


def test_stream_shape_grows_with_n() -> None:
    assert stream_shape(0).jobs == 20 and stream_shape(10_000).jobs == 20
    big = stream_shape(1_000_000)
    assert big.jobs == 500 and big.namespaces > 3
    assert stream_shape(10**12).namespaces == 12
    assert stream_shape(1_000, jobs=33).jobs == 33
    assert stream_shape(1_000, seed=9).seed == 9
    with pytest.raises(ValueError):
        stream_events(-1)


def test_stream_events_validate_and_show_every_feature() -> None:
    n = 6_000
    shape = stream_shape(n, seed=12, jobs=40)
    f = demo_facts(shape)
    evs = list(stream_events(n, seed=12, jobs=40))
    assert len(evs) == n
    kinds: Counter[str] = Counter()
    for doc in evs:
        event = validate_event(doc)
        assert event.warnings == () and event.untrusted_facets == ()
        kinds[kind(doc)] += 1
    assert kinds["DatasetEvent"] and kinds["JobEvent"]
    assert {ref(e["job"]) for e in run_events(evs)} == set(f.tasks) | set(f.orchestrators)
    faults = delivery_faults(evs)
    assert faults["duplicates"] >= 0.005 * n and faults["late"] >= 0.01 * n, faults
    assert faults["complete_first"] and faults["running_after"]
    linked = [
        i for i, e in enumerate(run_events(evs)) for d in e["outputs"] if "symlinks" in d.get("facets", {})
    ]
    assert linked and f.symlinks
    assert any(d.get("facets", {}).get("columnLineage") for e in evs for d in e.get("outputs", []))


def test_stream_and_demo_share_the_graph() -> None:
    shape = stream_shape(2_000, seed=7)
    stream_jobs = {ref(e["job"]) for e in run_events(list(stream_events(2_000, seed=7)))}
    assert stream_jobs == set(demo_facts(shape).tasks) | set(demo_facts(shape).orchestrators)


# ------------------------------------------------------------------------------------------------
# Shapes
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [{"namespaces": 2}, {"jobs": 5}, {"runs_per_job": 1}],
)
def test_shape_limits(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        DemoShape(**kwargs)


def test_too_many_namespaces_for_the_jobs() -> None:
    with pytest.raises(ValueError, match="without tasks"):
        demo_events(DemoShape(namespaces=12, jobs=10))
