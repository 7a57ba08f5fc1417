"""Tests of headwater.events.facets: the rules one by one, then agreement with the official schemas.

The agreement tests compare check_facets with the ``jsonschema`` library validating the same facet
against the published OpenLineage schemas, through the shared oracle in ``tests/events/oracle.py``.
They need the spec folder: ``$HEADWATER_SPEC_DIR`` or ``../shared/openlineage-spec``
next to the repository; without it they are skipped with that reason.

The oracle verdict for a facet found in a container of kind K is: valid against core 2-0-2's
``<K>Facet`` definition AND, when its ``_schemaURL`` names a published facet schema, valid against
that definition (resolved as check_facets documents: the fragment's ``$defs`` entry, else the
definition named like the file, else the file's single top-level property).  Format assertion is
limited to ``uuid`` and ``date-time`` (``uri`` stays an annotation, as in check_facets).

Deliberate differences from jsonschema, kept out of the differential inputs:
  * date-time: rfc3339-validator (jsonschema's checker) matches with ``$``, so it accepts one trailing
    newline ("2020-01-01T00:00:00Z\\n"); check_facets rejects it (see test_date_time_format).
  * check_facets stops after MAX_ISSUES_PER_FACET issues per facet; only verdicts are compared.
  * a ``_schemaURL`` naming a published file with an unknown ``#/$defs/<X>`` fragment gets the base
    checks only, where a jsonschema ``$ref`` to it would fail to resolve.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwater.events.facets import MAX_ISSUES_PER_FACET, FacetIssue, FacetKind, check_facets
from headwater.events.validate import validate_event
from tests.events.oracle import (
    CORE,
    FACET_KIND_DEF,
    FACETS,
    HAVE_SPEC,
    NO_SPEC,
    REPO,
    SPEC_DIR,
    documents,
    target_ref,
    validator,
)
from tests.factories import run_event

needs_spec = pytest.mark.skipif(not HAVE_SPEC, reason=NO_SPEC)

BUNDLE = REPO / "src" / "headwater" / "events" / "facet_schemas.json"
PRODUCER = "https://github.com/acme/producer/v1"
RUN_ID = "f99310b4-3c3c-1a1a-2b2b-c1b95c24ff11"


def facet(url: str, **fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": url, **fields}


def reasons(value: Any, kind: FacetKind = "dataset", name: str = "f") -> list[str]:
    return [i.reason for i in check_facets({name: value}, "c", kind)]


# ------------------------------------------------------------------------------------------------
# Base rules
# ------------------------------------------------------------------------------------------------


def test_empty_container_has_no_issues() -> None:
    assert check_facets({}, "run.facets", "run") == []


@pytest.mark.parametrize("value", [[], "x", None, 1, True, [{"_producer": "p"}]])
def test_facet_that_is_not_an_object(value: Any) -> None:
    assert check_facets({"sql": value}, "job.facets", "job") == [
        FacetIssue("job.facets.sql", "facet is not an object")
    ]


def test_missing_and_mistyped_base_fields() -> None:
    assert reasons({}) == ["missing _producer", "missing _schemaURL"]
    assert reasons({"_producer": PRODUCER}) == ["missing _schemaURL"]
    assert reasons({"_schemaURL": "https://x/custom.json"}) == ["missing _producer"]
    assert reasons({"_producer": None, "_schemaURL": 3}) == [
        "_producer is not a string",
        "_schemaURL is not a string",
    ]
    assert reasons(facet("https://x/custom.json")) == []


@pytest.mark.parametrize("kind", ["job", "dataset"])
def test_deleted_must_be_boolean_on_job_and_dataset_facets(kind: FacetKind) -> None:
    assert reasons(facet("https://x/custom.json", _deleted="yes"), kind) == ["_deleted is not a boolean"]
    assert reasons(facet("https://x/custom.json", _deleted=1), kind) == ["_deleted is not a boolean"]
    assert reasons(facet("https://x/custom.json", _deleted=True), kind) == []
    assert reasons({"_deleted": True}, kind) == ["missing _producer", "missing _schemaURL"]


@pytest.mark.parametrize("kind", ["run", "input", "output"])
def test_deleted_is_ignored_on_other_kinds(kind: FacetKind) -> None:
    assert reasons(facet("https://x/custom.json", _deleted="yes"), kind) == []


def test_deleted_declared_by_the_facet_schema_is_checked_on_any_kind() -> None:
    # SchemaDatasetFacet 1-1-1 builds on core 2-0-2 DatasetFacet, which declares _deleted: boolean.
    url = FACETS + "1-1-1/SchemaDatasetFacet.json"
    assert reasons(facet(url, _deleted="x"), "input") == ["_deleted is not a boolean"]
    assert reasons(facet(url, _deleted="x"), "dataset") == ["_deleted is not a boolean"]  # reported once


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/schemas/MyFacet.json",
        "https://openlineage.io/spec/1-0-2/OpenLineage.json#/$defs/SQLJobFacet",
        "https://raw.githubusercontent.com/OpenLineage/OpenLineage/main/spec/OpenLineage.json"
        "#/definitions/NominalTimeRunFacet",
        FACETS + "9-9-9/SQLJobFacet.json",
        FACETS + "1-0-0/NoSuchFacet.json",
        FACETS + "1-0-0/SQLJobFacet.json#/$defs/NoSuchDef",
        FACETS + "1-0-0/SQLJobFacet.json#/definitions/SQLJobFacet",
        "",
    ],
)
def test_unpublished_schema_urls_get_base_checks_only(url: str) -> None:
    # SQLJobFacet requires "query"; none of these URLs selects it.
    assert reasons(facet(url, query=17, anything={"goes": [1]})) == []
    assert reasons({"_schemaURL": url}) == ["missing _producer"]


def test_facet_issue_str_and_container_order() -> None:
    issues = check_facets({"a": 1, "b": facet("u"), "c": {}}, "inputs[0].inputFacets", "input")
    assert [str(i) for i in issues] == [
        "inputs[0].inputFacets.a: facet is not an object",
        "inputs[0].inputFacets.c: missing _producer",
        "inputs[0].inputFacets.c: missing _schemaURL",
    ]


def test_facet_names_that_are_not_identifiers_are_quoted_in_paths() -> None:
    issues = check_facets({"spark.logicalPlan": 1, "my facet": 2, "ok_1": 3}, "run.facets", "run")
    assert [i.path for i in issues] == [
        'run.facets["spark.logicalPlan"]',
        'run.facets["my facet"]',
        "run.facets.ok_1",
    ]


def test_any_mapping_is_accepted_as_container() -> None:
    container = types.MappingProxyType({"sql": facet(FACETS + "1-0-0/SQLJobFacet.json")})
    assert [str(i) for i in check_facets(container, "job.facets", "job")] == ["job.facets.sql: missing query"]


# ------------------------------------------------------------------------------------------------
# Published schemas
# ------------------------------------------------------------------------------------------------

SCHEMA_1_1_1 = FACETS + "1-1-1/SchemaDatasetFacet.json"


def test_schema_facet_violations_have_readable_inner_paths() -> None:
    assert reasons(facet(SCHEMA_1_1_1, fields={"a": 1})) == ["fields is not an array"]
    fields: list[Any] = [{"name": "a"}, {"name": "b", "type": "INT"}, {"type": "STRING"}]
    assert reasons(facet(SCHEMA_1_1_1, fields=fields)) == ["fields[2].name is missing"]
    nested = [{"name": "s", "fields": [{"name": "x"}, {"name": "y", "type": 5, "description": None}]}]
    assert sorted(reasons(facet(SCHEMA_1_1_1, fields=nested))) == [
        "fields[0].fields[1].description is not a string",
        "fields[0].fields[1].type is not a string",
    ]
    # A property literally called "description" survived the bundle's annotation stripping.
    assert reasons(facet(SCHEMA_1_1_1, fields=[{"name": "a", "description": "text"}])) == []


def test_recursive_definitions_nest_deeply() -> None:
    field: dict[str, Any] = {"name": "leaf"}
    for depth in range(60):
        field = {"name": f"n{depth}", "fields": [field]}
    assert reasons(facet(SCHEMA_1_1_1, fields=[field])) == []
    field["fields"][0]["fields"][0]["name"] = 0
    assert reasons(facet(SCHEMA_1_1_1, fields=[field])) == [
        "fields[0].fields[0].fields[0].name is not a string"
    ]


def test_at_most_three_issues_per_facet() -> None:
    bad = facet(SCHEMA_1_1_1, fields=[{"type": i} for i in range(50)])
    del bad["_producer"]
    got = reasons(bad)
    assert len(got) == MAX_ISSUES_PER_FACET == 3
    assert got[0] == "missing _producer"
    many = check_facets({"a": bad, "b": bad}, "p", "dataset")
    assert [i.path for i in many] == ["p.a"] * 3 + ["p.b"] * 3


def test_base_fields_of_a_published_facet_are_reported_once() -> None:
    url = FACETS + "1-0-0/SQLJobFacet.json"
    assert reasons({"_schemaURL": url, "query": "select 1"}, "job") == ["missing _producer"]
    assert reasons({"_schemaURL": url, "_producer": 7}, "job") == [
        "_producer is not a string",
        "missing query",
    ]


def test_required_at_facet_root() -> None:
    assert reasons(facet(FACETS + "1-0-0/SQLJobFacet.json"), "job") == ["missing query"]


PARENT_1_2_0 = FACETS + "1-2-0/ParentRunFacet.json"


def parent(run_id: Any, **run: Any) -> dict[str, Any]:
    return facet(PARENT_1_2_0, run={"runId": run_id, **run}, job={"namespace": "n", "name": "j"})


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (RUN_ID, True),
        (RUN_ID.upper(), True),
        ("0" * 8 + "-0000-0000-0000-" + "0" * 12, True),
        (RUN_ID + "-", True),  # jsonschema's rule: uuid.UUID parses it, dashes sit at 8/13/18/23
        (RUN_ID.replace("-", ""), False),
        ("{" + RUN_ID + "}", False),
        ("urn:uuid:" + RUN_ID, False),
        (RUN_ID[:-1], False),
        (RUN_ID[:-1] + "g", False),
        ("not-a-uuid", False),
        ("", False),
    ],
)
def test_uuid_format(value: str, ok: bool) -> None:
    assert reasons(parent(value), "run") == ([] if ok else ["run.runId is not a valid uuid"])


def test_uuid_format_applies_only_to_strings() -> None:
    assert reasons(parent(5), "run") == ["run.runId is not a string"]


NOMINAL = FACETS + "1-0-1/NominalTimeRunFacet.json"


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2020-01-01T04:00:00.001Z", True),
        ("2020-01-01T04:00:00Z", True),
        ("2020-01-01t04:00:00z", True),
        ("2020-01-01T04:00:00.123456789+05:30", True),
        ("2020-01-01T04:00:00-00:00", True),
        ("2016-12-31T23:59:60Z", False),  # as jsonschema: no leap seconds
        ("0000-01-01T00:00:00Z", False),  # as jsonschema: no year 0
        ("2024-02-29T00:00:00Z", True),
        ("2000-02-29T00:00:00Z", True),
        ("2020-01-01T04:00:00", False),  # the offset is required
        ("2020-01-01 04:00:00Z", False),
        ("2020-01-01T04:00Z", False),
        ("2020-01-01T04:00:00.Z", False),
        ("2020-01-01T04:00:00+0530", False),
        ("2020-01-01T24:00:00Z", False),
        ("2020-01-01T04:00:00+24:00", False),
        ("2020-02-30T00:00:00Z", False),
        ("2023-02-29T00:00:00Z", False),
        ("1900-02-29T00:00:00Z", False),
        ("2020-13-01T00:00:00Z", False),
        ("2020-01-00T00:00:00Z", False),
        ("2020-01-01", False),
        ("2020-01-01T04:00:00Z\n", False),  # deliberate: rfc3339-validator accepts this one
        ("\uff12\uff10\uff12\uff10-01-01T04:00:00Z", False),  # fullwidth (non-ASCII) digits
    ],
)
def test_date_time_format(value: str, ok: bool) -> None:
    got = reasons(facet(NOMINAL, nominalStartTime=value), "run")
    assert got == ([] if ok else ["nominalStartTime is not a valid RFC 3339 date-time"])


def test_uri_format_is_lenient() -> None:
    url = FACETS + "1-0-0/DatasourceDatasetFacet.json"
    assert reasons(facet(url, name="ds", uri="not a uri at all")) == []
    assert reasons({"_producer": "not a uri", "_schemaURL": url}) == []
    assert reasons(facet(url, uri=3)) == ["uri is not a string"]


def test_enum() -> None:
    url = FACETS + "1-0-1/LifecycleStateChangeDatasetFacet.json"
    assert reasons(facet(url, lifecycleStateChange="DROP")) == []
    assert reasons(facet(url, lifecycleStateChange="EXPLODE")) == [
        "lifecycleStateChange is not one of 'ALTER', 'CREATE', 'DROP', 'OVERWRITE', 'RENAME', 'TRUNCATE'"
    ]
    assert reasons(facet(url, lifecycleStateChange="DROP", previousIdentifier={"name": "a"})) == [
        "previousIdentifier.namespace is missing"
    ]


def test_additional_properties_false() -> None:
    url = FACETS + "1-0-0/ExecutionParametersRunFacet.json"
    ok = {"key": "k", "name": "n", "description": "d", "value": "v"}
    assert reasons(facet(url, parameters=[ok]), "run") == []
    assert reasons(facet(url, parameters=[ok, {"key": "k", "bogus": 1, "other key": 2}]), "run") == [
        "parameters[1].bogus is not an allowed property",
        'parameters[1]["other key"] is not an allowed property',
    ]


def test_integer_number_and_minimum() -> None:
    url = FACETS + "2-0-4/JobTypeJobFacet.json"

    def job_type(window: Any) -> list[str]:
        pattern = {"eventTrigger": "PERIODIC", "eventContentMode": "DELTA", "windowDuration": window}
        return reasons(
            facet(url, processingType="STREAMING", integration="FLINK", emissionPattern=pattern), "job"
        )

    assert job_type(300) == []
    assert job_type(300.0) == []  # an integral float is an integer in JSON Schema
    assert job_type(0) == ["emissionPattern.windowDuration is less than 1"]
    assert job_type(1.5) == ["emissionPattern.windowDuration is not an integer"]
    assert job_type(True) == ["emissionPattern.windowDuration is not an integer"]
    assert job_type("300") == ["emissionPattern.windowDuration is not an integer"]
    metrics = FACETS + "1-0-0/DataQualityMetricsDatasetFacet.json"
    assert reasons(facet(metrics, columnMetrics={"c": {"sum": 1.5, "count": 2}})) == []
    assert reasons(facet(metrics, columnMetrics={"c": {"sum": True}})) == [
        "columnMetrics.c.sum is not a number"
    ]
    assert reasons(facet(metrics, columnMetrics={"my col": {"nullCount": "0"}})) == [
        'columnMetrics["my col"].nullCount is not an integer'
    ]


LINEAGE = FACETS + "1-0-0/LineageFacet.json"


def test_dependent_required() -> None:
    url = LINEAGE + "#/$defs/LineageJobFacet"
    assert reasons(facet(url, entries=[{"type": "JOB"}]), "job") == []
    assert reasons(facet(url, entries=[{"type": "JOB", "namespace": "n"}]), "job") == [
        "entries[0].name is missing (required when namespace is present)"
    ]


def test_one_of_with_a_discriminator_reports_the_chosen_branch() -> None:
    url = FACETS + "1-0-0/BaseSubsetDatasetFacet.json#/$defs/InputSubsetInputDatasetFacet"
    field = {"type": "field", "field": "a"}
    compare = {
        "type": "compare",
        "left": field,
        "right": {"type": "literal", "value": "x"},
        "comparison": "EQ",
    }
    assert reasons(facet(url, inputCondition=compare), "input") == []
    binary = {"type": "binary", "left": compare, "right": {"type": "location"}, "operator": "AND"}
    assert reasons(facet(url, inputCondition=binary), "input") == [
        "inputCondition.right.locations is missing"
    ]
    assert reasons(facet(url, inputCondition={**compare, "left": {"type": "field"}}), "input") == [
        "inputCondition.left.field is missing"
    ]
    assert reasons(facet(url, inputCondition={"type": "range"}), "input") == [
        "inputCondition.type is not one of 'location', 'partition', 'binary', 'compare'"
    ]


def test_one_of_without_discriminator() -> None:
    url = FACETS + "1-0-0/BaseSubsetDatasetFacet.json"  # oneOf input-subset / output-subset
    condition = {"type": "location", "locations": ["s3://b/k"]}
    assert reasons(facet(url, inputCondition=condition), "input") == []
    assert reasons(facet(url, outputCondition=condition), "output") == []
    assert reasons(facet(url, inputCondition=condition, outputCondition=condition), "input") == [
        "facet matches more than one allowed shape"
    ]
    assert reasons(facet(url), "input") == [
        "facet matches none of the allowed shapes (closest: missing inputCondition)"
    ]


def test_schema_url_without_fragment_uses_the_file_level_property() -> None:
    # LineageFacet.json has no "LineageFacet" definition; its "lineage" property is anyOf dataset/job.
    assert reasons(facet(LINEAGE, inputs=[{"namespace": "n", "name": "t", "type": "DATASET"}])) == []
    assert reasons(facet(LINEAGE, entries=[{"type": "JOB"}]), "job") == []
    assert reasons(facet(LINEAGE, entries="x"), "job") == []  # a valid LineageDatasetFacet
    assert reasons(facet(LINEAGE, inputs="x"), "job") == [
        "facet matches none of the allowed shapes (closest: inputs is not an array)"
    ]


@pytest.mark.parametrize(
    "url",
    [
        FACETS + "1-0-0/SQLJobFacet.json",
        FACETS + "1-0-0/SQLJobFacet.json#",
        FACETS + "1-0-0/SQLJobFacet.json#/",
        FACETS + "1-0-0/SQLJobFacet.json#/$defs/SQLJobFacet",
        "http://openlineage.io/spec/facets/1-0-0/SQLJobFacet.json",
        " " + FACETS + "1-0-0/SQLJobFacet.json\n",
    ],
)
def test_schema_url_spellings(url: str) -> None:
    assert reasons(facet(url, query="select 1"), "job") == []
    assert reasons(facet(url), "job") == ["missing query"]


def test_nested_facets_are_checked_against_the_core_facet_definition() -> None:
    bad = parent(RUN_ID, facets={"engine": {"_producer": PRODUCER}, "ok": facet("custom")})
    assert reasons(bad, "run") == ["run.facets.engine._schemaURL is missing"]


def test_bundle_keeps_only_structural_keywords() -> None:
    text = BUNDLE.read_text(encoding="utf-8")
    bundle = json.loads(text)
    assert CORE in bundle
    assert all(url.startswith(FACETS) or url.endswith("/OpenLineage.json") for url in bundle)
    assert '"example"' not in text and '"title"' not in text and "$comment" not in text
    fields = bundle[SCHEMA_1_1_1]["$defs"]["SchemaDatasetFacetFields"]
    assert set(fields) == {"properties", "required", "type"}
    assert fields["properties"]["description"] == {"type": "string"}
    assert len(text) < 100_000


# ------------------------------------------------------------------------------------------------
# The oracle: jsonschema over the published files
# ------------------------------------------------------------------------------------------------


def _oracle_refs(value: Any, kind: FacetKind) -> list[str]:
    refs = [f"{CORE}#/$defs/{FACET_KIND_DEF[kind]}"]
    target = target_ref(value.get("_schemaURL") if isinstance(value, dict) else None)
    return refs if target is None else [*refs, target]


def oracle_errors(value: Any, kind: FacetKind) -> list[str]:
    """jsonschema's errors for a facet of ``kind`` (empty: valid)."""
    refs = _oracle_refs(value, kind)
    return [f"{e.json_path}: {e.message}" for ref in refs for e in validator(ref).iter_errors(value)]


def oracle_valid(value: Any, kind: FacetKind) -> bool:
    return all(validator(ref).is_valid(value) for ref in _oracle_refs(value, kind))


def kind_of(name: str) -> FacetKind:
    for suffix, kind in (
        ("InputDatasetFacet", "input"),
        ("OutputDatasetFacet", "output"),
        ("DatasetFacet", "dataset"),
        ("JobFacet", "job"),
        ("RunFacet", "run"),
    ):
        if name.endswith(suffix):
            return kind  # type: ignore[return-value]
    return "dataset"


def _example_files() -> list[Any]:
    if not HAVE_SPEC:
        return [pytest.param(None, marks=pytest.mark.skip(reason=NO_SPEC))]
    files = sorted(p for p in (SPEC_DIR / "tests").glob("*/*.json"))
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in files]


@pytest.mark.parametrize("path", _example_files())
def test_spec_examples_get_the_official_verdict(path: Path) -> None:
    container = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(container, dict) and container
    for name, value in container.items():
        url = value.get("_schemaURL", "") if isinstance(value, dict) else ""
        kind = kind_of(url.rpartition("/")[2] if "#/$defs/" in url else path.parent.name)
        issues = check_facets({name: value}, "facets", kind)
        expected = oracle_errors(value, kind)
        assert bool(issues) == bool(expected), (issues, expected)


@needs_spec
def test_spec_example_verdicts_are_mostly_valid() -> None:
    # Guards the test above against an oracle that rejects (or accepts) everything.
    verdicts = []
    for path in sorted((SPEC_DIR / "tests").glob("*/*.json")):
        for value in json.loads(path.read_text(encoding="utf-8")).values():
            verdicts.append(not check_facets({"f": value}, "facets", kind_of(path.parent.name)))
    assert len(verdicts) >= 40 and 0 < verdicts.count(False) < len(verdicts) // 4


@needs_spec
def test_full_event_example_facets() -> None:
    event = json.loads((SPEC_DIR / "tests" / "example_full_event.json").read_text(encoding="utf-8"))
    assert check_facets(event["job"]["facets"], "job.facets", "job") == []
    assert check_facets(event["run"]["facets"], "run.facets", "run") == []


# ------------------------------------------------------------------------------------------------
# Differential test: generated and mutated instances of every published facet definition
# ------------------------------------------------------------------------------------------------

SAMPLE_UUIDS = [RUN_ID, RUN_ID.upper(), RUN_ID + "-", RUN_ID.replace("-", ""), "{" + RUN_ID + "}", "x" * 36]
SAMPLE_TIMES = [
    "2020-01-01T04:00:00.001Z",
    "2020-01-01t04:00:00+01:00",
    "2016-12-31T23:59:60Z",
    "2020-01-01T04:00:00",
    "2020-02-30T04:00:00Z",
    "2020-01-01 04:00:00Z",
    "2020-01-01T25:00:00Z",
    "1900-02-29T00:00:00Z",
    "2000-02-29T00:00:00Z",
    "0000-01-01T00:00:00Z",
]


def _resolve(base: str, ref: str) -> tuple[str, Any]:
    url, _, pointer = ref.partition("#")
    url = url or base
    node: Any = documents()[url]
    for part in pointer.strip("/").split("/"):
        node = node[part]
    return url, node


def _generate(schema: Any, base: str, full: bool, variant: int, depth: int = 0) -> Any:
    """A (usually) valid instance of ``schema``: every property when ``full``, else required ones."""
    if schema is True:
        return "anything"
    if "$ref" in schema:
        url, target = _resolve(base, schema["$ref"])
        return _generate(target, url, full, variant, depth)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][variant % len(schema["enum"])]
    for keyword in ("oneOf", "anyOf"):
        if keyword in schema:
            branches = schema[keyword]
            return _generate(branches[(variant + depth) % len(branches)], base, full, variant, depth + 1)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema or "allOf" in schema:
        out: dict[str, Any] = {}
        for sub in schema.get("allOf", []):
            part = _generate(sub, base, full, variant, depth)
            if isinstance(part, dict):
                out.update(part)
        required = schema.get("required", [])
        for key, sub in schema.get("properties", {}).items():
            if key in required or (full and depth < 5):
                out[key] = _generate(sub, base, full, variant, depth + 1)
        for key in required:  # some published schemas require keys they never declare
            out.setdefault(key, "undeclared")
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and full and depth < 5:
            out["extra key"] = _generate(extra, base, full, variant, depth + 1)
        return out
    if kind == "array":
        if "items" in schema and full and depth < 5:
            return [_generate(schema["items"], base, full, variant, depth + 1)]
        return []
    if kind == "string":
        fmt = schema.get("format")
        if fmt == "uuid":
            return RUN_ID
        if fmt == "date-time":
            return SAMPLE_TIMES[0]
        return "https://example.com/x" if fmt == "uri" else f"text{variant}"
    if kind == "integer":
        return max(schema.get("minimum", 3), 3)
    if kind == "number":
        return 2.5
    if kind == "boolean":
        return variant % 2 == 0
    if kind == "null":
        return None
    return "anything"


def _facet_targets() -> Iterator[tuple[str, str, str]]:
    """(file url, schema URL to put in _schemaURL, definition name) for every facet definition."""
    for url, doc in sorted(documents().items()):
        if not url.startswith(FACETS):
            continue
        name = url.rpartition("/")[2].removesuffix(".json")
        yield url, url, name
        for definition in doc["$defs"]:
            if definition.endswith("Facet"):
                yield url, f"{url}#/$defs/{definition}", definition


def _seeds() -> list[tuple[str, FacetKind, Any]]:
    """Valid starting instances: generated ones plus the spec examples, as (label, kind, facet)."""
    seeds: list[tuple[str, FacetKind, Any]] = []
    seen: set[str] = set()
    for _, schema_url, definition in _facet_targets():
        kind = kind_of(definition)
        ref = target_ref(schema_url)
        assert ref is not None, schema_url
        for full in (True, False):
            for variant in range(4):
                instance = _generate({"$ref": ref}, "", full, variant)
                if not isinstance(instance, dict):
                    continue
                instance.update(_producer=PRODUCER, _schemaURL=schema_url)
                key = json.dumps(instance, sort_keys=True)
                if key not in seen and not oracle_errors(instance, kind):
                    seen.add(key)
                    seeds.append((f"{schema_url} full={full} variant={variant}", kind, instance))
    for path in sorted((SPEC_DIR / "tests").glob("*/*.json")):
        for value in json.loads(path.read_text(encoding="utf-8")).values():
            kind = kind_of(path.parent.name)
            if not oracle_errors(value, kind):
                seeds.append((str(path), kind, value))
    return seeds


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, (*path, index))


def _with(root: Any, path: tuple[Any, ...], new: Any = None, *, delete: bool = False) -> Any:
    if not path:
        return new
    out = copy.deepcopy(root)
    node = out
    for part in path[:-1]:
        node = node[part]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = new
    return out


def _replacements(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return [not value, "true", 1, None]
    if isinstance(value, int):
        return [0, -1, 1.0, 2.5, "1", True]
    if isinstance(value, float):
        return [1, "1.5", False, -0.5]
    if isinstance(value, str):
        return [1, None, ["x"], "", "OTHER", *SAMPLE_UUIDS[2:4], *SAMPLE_TIMES[1:]]
    if isinstance(value, list):
        return [{}, "x", [1], [None], [{}], [[]], [*value, *value[:1]], [*value, {"zz": 1}]]
    if isinstance(value, dict):
        return [[], "x", 0, {}, {**value, "zz unknown": 1}, {**value, "type": "OTHER"}]
    return ["x", 1]


Mutation = tuple[tuple[Any, ...], Any, bool]  # (path, new value, delete?)


def _mutations(instance: Any) -> list[Mutation]:
    """Drop every key and item, retype every value, corrupt every array and object."""
    out: list[Mutation] = []
    for path, value in _nodes(instance):
        out.extend((path, new, False) for new in _replacements(value))
        if path:
            out.append((path, None, True))
    return out


def _mutate(instance: Any, mutation: Mutation) -> Any:
    path, new, delete = mutation
    return _with(instance, path, new, delete=delete)


MUTANTS_PER_SEED = 8


@pytest.fixture(scope="module")
def differential_cases() -> list[tuple[str, FacetKind, Any]]:
    if not HAVE_SPEC:
        pytest.skip(NO_SPEC)
    rng = random.Random(20240611)
    cases: list[tuple[str, FacetKind, Any]] = []
    seeds = _seeds()
    exhaustive: set[str] = set()
    for n, (label, kind, seed) in enumerate(seeds):
        cases.append((label, kind, seed))
        mutations = _mutations(seed)
        if "full=True" in label and seed["_schemaURL"] not in exhaustive:
            exhaustive.add(seed["_schemaURL"])  # every mutation of the first full instance per URL
        else:
            mutations = rng.sample(mutations, min(len(mutations), MUTANTS_PER_SEED))
        for i, mutation in enumerate(mutations):
            mutant = _mutate(seed, mutation)
            cases.append((f"{label} mutant {i} {mutation[:1]}", kind, mutant))
            if i == 0 and n % 3 == 0 and isinstance(mutant, dict):  # some double mutations
                cases.append(
                    (f"{label} double mutant", kind, _mutate(mutant, rng.choice(_mutations(mutant))))
                )
    # Cross-overs: two valid instances of one schema URL merged (hits oneOf "more than one" and
    # dependentRequired), shallowly and one level deep.
    by_url: dict[str, list[tuple[str, FacetKind, Any]]] = {}
    for label, kind, seed in seeds:
        by_url.setdefault(seed["_schemaURL"], []).append((label, kind, seed))
    for _url, group in sorted(by_url.items()):
        for (label, kind, a), (_, _, b) in itertools.pairwise(group):
            cases.append((f"{label} crossed", kind, {**a, **b}))
            deep = {
                k: {**a[k], **v} if isinstance(v, dict) and isinstance(a.get(k), dict) else v
                for k, v in b.items()
            }
            cases.append((f"{label} deep-crossed", kind, {**a, **deep}))
    return cases


def test_differential_against_jsonschema(differential_cases: list[tuple[str, FacetKind, Any]]) -> None:
    mismatches = []
    invalid = 0
    for label, kind, value in differential_cases:
        issues = check_facets({"f": value}, "facets", kind)
        valid = isinstance(value, dict) and oracle_valid(value, kind)
        invalid += not valid
        if bool(issues) == valid:
            detail = oracle_errors(value, kind)[:3] if isinstance(value, dict) else ["not an object"]
            mismatches.append((label, kind, json.dumps(value)[:300], [str(i) for i in issues], detail))
    assert not mismatches, f"{len(mismatches)} mismatches, first ones: {mismatches[:5]}"
    assert len(differential_cases) >= 1000
    assert invalid >= len(differential_cases) // 4  # plenty on both sides
    assert len(differential_cases) - invalid >= len(differential_cases) // 10


@needs_spec
def test_every_published_facet_definition_has_a_seed() -> None:
    labels = {label.partition(" ")[0] for label, _, _ in _seeds()}
    missing = [url for _, url, _ in _facet_targets() if url not in labels]
    assert not missing


@needs_spec
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.uuids().map(str),
        st.uuids().map(lambda u: str(u).upper()),
        st.text(alphabet="0123456789abcdefABCDEF-{}:urnid _+", min_size=30, max_size=46),
        st.uuids().flatmap(lambda u: st.integers(0, 35).map(lambda i: str(u)[:i] + "-" + str(u)[i:])),
    )
)
def test_uuid_format_matches_jsonschema(value: str) -> None:
    assert bool(reasons(parent(value), "run")) == bool(oracle_errors(parent(value), "run"))


@needs_spec
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
        st.datetimes().map(lambda d: d.isoformat() + "Z"),
        st.from_regex(
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}"
            r"(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})?",
            fullmatch=True,
        ),
    )
)
def test_date_time_format_matches_jsonschema(value: str) -> None:
    nominal = facet(NOMINAL, nominalStartTime=value)
    assert bool(reasons(nominal, "run")) == bool(oracle_errors(nominal, "run"))


# ------------------------------------------------------------------------------------------------
# The committed bundle
# ------------------------------------------------------------------------------------------------


@needs_spec
def test_committed_bundle_is_up_to_date(tmp_path: Path) -> None:
    out = tmp_path / "facet_schemas.json"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "build_facet_schemas.py"),
            "--spec-dir",
            str(SPEC_DIR),
            "--out",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == BUNDLE.read_bytes(), "run scripts/build_facet_schemas.py and commit the result"


def test_bundle_builder_rejects_keywords_the_checker_does_not_implement(tmp_path: Path) -> None:
    facets_dir = tmp_path / "published" / "facets" / "1-0-0"
    facets_dir.mkdir(parents=True)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": FACETS + "1-0-0/PatternRunFacet.json",
        "$defs": {
            "PatternRunFacet": {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}
        },
    }
    (facets_dir / "PatternRunFacet.json").write_text(json.dumps(schema), encoding="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "build_facet_schemas.py"),
            "--spec-dir",
            str(tmp_path),
            "--out",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "unsupported keyword 'pattern'" in result.stderr
    assert not (tmp_path / "out.json").exists()


def test_a_facet_nested_too_deep_for_its_checks_is_untrusted_and_its_event_kept() -> None:
    # the schema checks recurse a few calls a level: structs in structs 240 deep (480 JSON levels,
    # within the event's limit) were a 500
    field: dict[str, object] = {"name": "leaf", "type": "int"}
    for level in range(240):
        field = {"name": f"s{level}", "type": "struct", "fields": [field]}
    schema = facet(
        "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet",
        fields=[field],
    )
    event = run_event(outputs=[{"namespace": "db", "name": "t", "facets": {"schema": schema}}])
    reason = "outputs[0].facets.schema: facet is nested too deep to be checked against its schema"
    validated = validate_event(event, json.dumps(event).encode())
    assert reason in validated.warnings
    assert validated.untrusted_facets == ("outputs[0].facets.schema",)
