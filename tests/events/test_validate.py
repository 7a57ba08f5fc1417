"""Every core validation rule: what is accepted, what is rejected, and the path each error names."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import pytest

from headwater.errors import InvalidEvent
from headwater.events.limits import DEPTH_REASON, MAX_JSON_DEPTH
from headwater.events.validate import validate_event
from tests.factories import facet, nested_event, run_event


def errors_of(event: Any) -> list[str]:
    with pytest.raises(InvalidEvent) as caught:
        validate_event(event)
    return caught.value.errors


def test_a_complete_run_event_is_accepted_with_its_identities() -> None:
    run_id = str(uuid.uuid4())
    event = validate_event(run_event(run_id, event_type="COMPLETE", namespace="ns", job="a.b"))
    assert event.kind == "run"
    assert event.run_id == run_id
    assert event.event_type == "COMPLETE"
    assert (event.job_namespace, event.job_name) == ("ns", "a.b")
    assert event.root_run_id == run_id
    assert event.parent_run_id is None
    assert event.warnings == ()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda e: e.pop("eventTime"), "eventTime: is required"),
        (lambda e: e.update(eventTime="yesterday"), "eventTime: 'yesterday' is not an ISO 8601"),
        (
            lambda e: e.update(eventTime="2024-02-30T00:00:00Z"),
            "eventTime: '2024-02-30T00:00:00Z' is not a valid",
        ),
        (lambda e: e.update(eventTime=1714557600), "eventTime: must be a string, got a number"),
        (  # an offset that takes year 1 out of datetime's range: a 400, not a crash
            lambda e: e.update(eventTime="0001-01-01T00:00:00+23:59"),
            "eventTime: '0001-01-01T00:00:00+23:59' is outside the range",
        ),
        (
            lambda e: e.update(eventTime="9999-12-31T23:59:59-23:59"),
            "eventTime: '9999-12-31T23:59:59-23:59' is outside",
        ),
        (lambda e: e["run"].update(runId=""), "run.runId: must not be empty"),
        (lambda e: e["run"].update(runId=42), "run.runId: must be a string, got a number"),
        (lambda e: e["run"].update(runId=None), "run.runId: must be a string, got null"),
        (lambda e: e["run"].pop("runId"), "run.runId: is required"),
        (lambda e: e.pop("run"), "run: is required"),
        (lambda e: e.update(run=[]), "run: must be an object, got an array"),
        (lambda e: e["job"].pop("namespace"), "job.namespace: is required"),
        (lambda e: e["job"].pop("name"), "job.name: is required"),
        (lambda e: e["job"].update(name=7), "job.name: must be a string, got a number"),
        (lambda e: e.pop("job"), "job: is required"),
        (lambda e: e.pop("producer"), "producer: is required"),
        (lambda e: e.update(producer=None), "producer: must be a string, got null"),
        (lambda e: e.update(eventType="DONE"), "eventType: 'DONE' is not one of"),
        (lambda e: e.update(eventType="start"), "eventType: 'start' is not one of"),
        (lambda e: e.update(inputs={"namespace": "a", "name": "b"}), "inputs: must be an array of datasets"),
        (lambda e: e.update(outputs=["table"]), "outputs[0]: must be a dataset object, got a string"),
        (lambda e: e["inputs"][0].pop("name"), "inputs[0].name: is required"),
        (lambda e: e["run"].update(facets=[]), "run.facets: must be an object, got an array"),
        (lambda e: e["job"].update(facets="x"), "job.facets: must be an object, got a string"),
        (lambda e: e["outputs"][0].update(facets=None), "outputs[0].facets: must be an object, got null"),
        (lambda e: e["inputs"][0].update(inputFacets=3), "inputs[0].inputFacets: must be an object"),
        (lambda e: e["outputs"][0].update(outputFacets=[]), "outputs[0].outputFacets: must be an object"),
        (lambda e: e.update(schemaURL=5), "schemaURL: must be a string"),
    ],
)
def test_core_violations_are_rejected_naming_the_field(mutate: Any, expected: str) -> None:
    event = run_event()
    mutate(event)
    assert any(error.startswith(expected) for error in errors_of(event)), errors_of(event)


def test_every_error_of_an_event_is_reported_at_once() -> None:
    event = run_event()
    event["run"]["runId"] = ""
    del event["producer"]
    del event["job"]["name"]
    assert len(errors_of(event)) == 3


def test_non_objects_are_rejected() -> None:
    assert errors_of([1, 2]) == ["event: must be a JSON object, got an array"]
    assert errors_of("x") == ["event: must be a JSON object, got a string"]


def test_an_event_with_no_run_job_or_dataset_is_rejected() -> None:
    assert errors_of({"eventTime": "2024-01-01T00:00:00Z", "producer": "p"})[0].startswith("event: has none")


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00.0000000Z"),
        ("2024-05-01T10:00:00", "2024-05-01T10:00:00.0000000Z"),  # no offset: UTC, as Marquez
        ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00.0000000Z"),
        ("2024-05-01T05:30:00.5-04:30", "2024-05-01T10:00:00.5000000Z"),
        ("2024-05-01T10:00:00.123456789Z", "2024-05-01T10:00:00.1234567Z"),
        ("2024-05-01 10:00:00.1+0000", "2024-05-01T10:00:00.1000000Z"),
    ],
)
def test_event_times_are_normalized_to_utc(value: str, stored: str) -> None:
    assert validate_event(run_event(event_time=value)).event_time == stored


def test_event_without_schema_url_is_accepted_and_kind_inferred() -> None:
    run = run_event()
    del run["schemaURL"]
    assert validate_event(run).kind == "run"
    job = {"eventTime": "2024-01-01T00:00:00Z", "producer": "p", "job": {"namespace": "n", "name": "j"}}
    assert validate_event(job).kind == "job"
    dataset = {
        "eventTime": "2024-01-01T00:00:00Z",
        "producer": "p",
        "dataset": {"namespace": "n", "name": "d"},
    }
    ds = validate_event(dataset)
    assert (ds.kind, ds.dataset_namespace, ds.dataset_name) == ("dataset", "n", "d")


@pytest.mark.parametrize(
    "url",
    [
        "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/RunEvent",
        "https://openlineage.io/spec/1-0-0/OpenLineage.json#/definitions/RunEvent",
        "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "https://openlineage.io/spec/2-0-2/OpenLineage.json",
    ],
)
def test_older_schema_urls_are_accepted(url: str) -> None:
    event = run_event()
    event["schemaURL"] = url
    assert validate_event(event).kind == "run"


def test_schema_url_fragment_decides_the_kind() -> None:
    event = {
        "eventTime": "2024-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
        "job": {"namespace": "n", "name": "j"},
    }
    assert validate_event(event).kind == "job"
    event["run"] = {"runId": str(uuid.uuid4())}
    assert errors_of(event) == ["run: a JobEvent must not carry a run"]
    static = {
        "eventTime": "2024-01-01T00:00:00Z",
        "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "n", "name": "d"},
        "job": {"namespace": "n", "name": "j"},
        "run": {"runId": str(uuid.uuid4())},
    }
    assert errors_of(static) == ["event: a DatasetEvent must not carry both job and run"]


def test_event_type_is_optional_in_2_0_2() -> None:
    event = run_event()
    del event["eventType"]
    assert validate_event(event).event_type is None


def test_uppercase_run_ids_are_normalized() -> None:
    run_id = str(uuid.uuid4())
    assert validate_event(run_event(run_id.upper())).run_id == run_id


@pytest.mark.parametrize(
    "run_id",
    [
        "run_id",
        "dag_run_2024-11-26",
        "a/b c%",
        "Ärger #7 \u65e5",
        "ABC",
        "0190c1f2-7d3e-7b3a-9c1d-6f2a8e4b5c7d-",
    ],
)
def test_a_run_id_that_is_not_a_uuid_is_kept_as_sent_with_a_warning(run_id: str) -> None:
    doc = run_event(run_id)
    validated = validate_event(doc)
    assert validated.run_id == validated.root_run_id == run_id  # not lower-cased: only UUIDs are
    assert validated.warnings == (f"run.runId: {run_id!r} is not a UUID",)
    assert validated.untrusted_facets == ()
    assert doc["run"]["runId"] == run_id


def test_namespaces_names_and_run_ids_are_limited_in_bytes() -> None:
    """They become the model's node ids, three of which must fit one PostgreSQL index row."""
    at_limit = run_event(namespace="n" * 256, job="é" * 300)  # 600 bytes in 300 characters
    at_limit["inputs"][0]["name"] = "i" * 600
    assert validate_event(at_limit).job_name == "é" * 300
    over = run_event("r" * 257, namespace="é" * 129, job="j" * 601)
    over["outputs"][0]["namespace"] = "o" * 300
    assert errors_of(over) == [
        "run.runId: is 257 bytes long; a run id may have at most 256",
        "job.namespace: is 258 bytes long; a namespace may have at most 256",
        "job.name: is 601 bytes long; a name may have at most 600",
        "outputs[0].namespace: is 300 bytes long; a namespace may have at most 256",
    ]
    dataset_event = {
        "eventTime": "2024-05-01T10:00:00Z",
        "producer": "p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": "ns", "name": "d" * 601},
    }
    assert errors_of(dataset_event) == ["dataset.name: is 601 bytes long; a name may have at most 600"]


def test_a_parent_run_id_over_the_limit_costs_the_facet_not_the_event() -> None:
    event = validate_event(run_event(parent="p" * 300))
    assert event.warnings == (
        "run.facets.parent: run.runId is 300 bytes long; a run id may have at most 256",
    )
    assert event.untrusted_facets == ("run.facets.parent",)
    assert (event.parent_run_id, event.root_run_id) == (None, event.run_id)


def _long(n: int) -> str:
    return "".join(chr(0x61 + (i * 7) % 26) for i in range(n))


_SYMLINK = {"namespace": "n", "name": _long(700), "type": "TABLE"}


@pytest.mark.parametrize(
    ("where", "facet_value", "reason"),
    [
        (
            "outputs[0].facets.symlinks",
            facet("SymlinksDatasetFacet", "1-0-1", identifiers=[_SYMLINK]),
            "identifiers[0].name is 700 bytes long; a name may have at most 600",
        ),
        (
            "outputs[0].facets.columnLineage",
            facet(
                "ColumnLineageDatasetFacet",
                "1-2-0",
                fields={"a": {"inputFields": [{"namespace": "n", "name": "t", "field": _long(601)}]}},
            ),
            "fields.a.inputFields[0].field is 601 bytes long; a field may have at most 600",
        ),
        (
            "outputs[0].facets.columnLineage",
            facet(
                "ColumnLineageDatasetFacet",
                "1-2-0",
                fields={},
                dataset=[
                    {
                        "namespace": "n",
                        "name": "t",
                        "field": "f",
                        "transformations": [{"type": "DIRECT", "subtype": _long(129)}],
                    }
                ],
            ),
            "dataset[0].transformations[0].subtype is 129 bytes long; a subtype may have at most 128",
        ),
        (
            "outputs[0].facets.columnLineage",
            facet(
                "ColumnLineageDatasetFacet",
                "1-0-1",
                fields={
                    "a": {
                        "inputFields": [{"namespace": "n", "name": "t", "field": "f"}],
                        "transformationType": _long(200),
                        "transformationDescription": "d",
                    }
                },
            ),
            "fields.a.transformationType is 200 bytes long; a transformationType may have at most 128",
        ),
        (
            "inputs[0].facets.dataSource",
            {**facet("DatasourceDatasetFacet", "1-0-1", uri="s3://b"), "name": _long(601)},
            "name is 601 bytes long; a name may have at most 600",
        ),
        (
            "outputs[0].facets.schema",
            facet(
                "SchemaDatasetFacet",
                "1-1-1",
                fields=[{"name": "s", "type": "struct", "fields": [{"name": _long(1500), "type": "int"}]}],
            ),
            "fields[0].fields[0] has a path of 1502 bytes; a path may have at most 1500",
        ),
        (
            "run.facets.parent",
            facet(
                "ParentRunFacet",
                "1-1-0",
                run={"runId": str(uuid.uuid4())},
                job={"namespace": _long(257), "name": "p"},
            ),
            "job.namespace is 257 bytes long; a namespace may have at most 256",
        ),
    ],
)
def test_identities_over_their_limits_in_a_facet_cost_the_facet_not_the_event(
    where: str, facet_value: dict[str, Any], reason: str
) -> None:
    """A facet's identities key model rows as the event's own do; over a limit, the facet is
    untrusted (the pipeline leaves it out) and the event kept."""
    doc = run_event()
    container, _, name = where.rpartition(".")
    holder: Any = doc
    for part in container.replace("[0]", ".0").split("."):
        holder = holder[int(part)] if part.isdigit() else holder.setdefault(part, {})
    holder[name] = facet_value
    event = validate_event(doc)
    assert event.warnings == (f"{where}: {reason}",)
    assert event.untrusted_facets == (where,)


def test_a_facet_name_over_the_limit_costs_the_facet_not_the_event() -> None:
    doc = run_event()
    doc["job"]["facets"]["f" * 601] = facet("DocumentationJobFacet", description="d")
    event = validate_event(doc)
    assert event.warnings == (
        f"job.facets.{'f' * 601}: its name is 601 bytes long; a facet name may have at most 600",
    )
    assert len(event.untrusted_facets) == 1


def test_the_warning_names_the_run_id_exactly() -> None:
    assert validate_event(run_event("run_id")).warnings == ("run.runId: 'run_id' is not a UUID",)


def test_parent_and_root_run_ids_that_are_not_uuids_are_kept_with_warnings() -> None:
    doc = run_event(parent="dag_run_2024-11-26", root="scheduler/run 7")
    before = copy.deepcopy(doc)
    validated = validate_event(doc)
    assert (validated.parent_run_id, validated.root_run_id) == ("dag_run_2024-11-26", "scheduler/run 7")
    assert validated.warnings == (
        "run.facets.parent.run.runId: 'dag_run_2024-11-26' is not a UUID",
        "run.facets.parent.root.run.runId: 'scheduler/run 7' is not a UUID",
    )
    assert validated.untrusted_facets == ()  # the rest of the parent facet meets its schema
    assert doc == before and '"runId":"dag_run_2024-11-26"' in validated.payload


def test_a_parent_facet_breaking_its_schema_elsewhere_stays_untrusted() -> None:
    doc = run_event(parent="dag_run_1")
    del doc["run"]["facets"]["parent"]["job"]
    validated = validate_event(doc)
    assert validated.untrusted_facets == ("run.facets.parent",)
    assert validated.warnings[0] == "run.facets.parent.run.runId: 'dag_run_1' is not a UUID"
    assert [w for w in validated.warnings[1:] if w.startswith("run.facets.parent: ")]
    assert validated.parent_run_id == "dag_run_1"


@pytest.mark.parametrize("bad", ["", 7, None])
def test_a_parent_run_id_that_is_no_id_costs_the_facet_not_the_event(bad: Any) -> None:
    doc = run_event(parent="placeholder")
    doc["run"]["facets"]["parent"]["run"]["runId"] = bad
    validated = validate_event(doc)
    assert validated.untrusted_facets == ("run.facets.parent",)
    assert validated.parent_run_id is None and validated.root_run_id == validated.run_id


def test_parent_and_root_run_ids_come_from_the_parent_facet() -> None:
    parent, root = str(uuid.uuid4()), str(uuid.uuid4())
    event = validate_event(run_event(parent=parent, root=root))
    assert (event.parent_run_id, event.root_run_id) == (parent, root)
    only_parent = validate_event(run_event(parent=parent))
    assert (only_parent.parent_run_id, only_parent.root_run_id) == (parent, parent)


def test_a_broken_standard_facet_is_kept_as_a_warning_and_marked_untrusted() -> None:
    event = run_event()
    event["inputs"][0]["facets"] = {"schema": facet("SchemaDatasetFacet", "1-1-1", fields="id INT")}
    validated = validate_event(event)
    assert validated.untrusted_facets == ("inputs[0].facets.schema",)
    assert validated.warnings and validated.warnings[0].startswith("inputs[0].facets.schema: ")
    assert "fields" in validated.warnings[0]


def test_a_facet_without_producer_is_a_warning_not_an_error() -> None:
    event = run_event()
    event["job"]["facets"] = {"sql": {"query": "select 1"}}
    validated = validate_event(event)
    assert any(w.startswith("job.facets.sql: ") for w in validated.warnings)


def test_custom_facets_are_kept_as_sent() -> None:
    event = run_event()
    event["run"]["facets"]["myCompany"] = {
        "_producer": "https://example.com",
        "_schemaURL": "https://example.com/schemas/MyFacet.json",
        "anything": [1, {"goes": True}],
    }
    validated = validate_event(event)
    assert validated.warnings == ()
    assert '"anything":[1,{"goes":true}]' in validated.payload


def test_same_content_gives_same_id_whatever_the_key_order() -> None:
    event = run_event()
    reordered = dict(reversed(list(copy.deepcopy(event).items())))
    assert validate_event(event).event_id == validate_event(reordered).event_id


def test_different_events_in_the_same_millisecond_get_different_ids() -> None:
    ids = {
        validate_event(run_event(event_time="2024-05-01T10:00:00.000Z", job=f"job{i}")).event_id
        for i in range(1000)
    }
    assert len(ids) == 1000


def test_event_id_is_a_version_1_uuid_carrying_the_event_time() -> None:
    event = validate_event(run_event(event_time="2024-05-01T10:00:00.1234567Z"))
    parsed = uuid.UUID(event.event_id)
    assert parsed.version == 1
    gregorian_to_unix = 0x01B21DD213814000
    ticks = parsed.time - gregorian_to_unix
    assert ticks == 17145576001234567


def test_the_payload_keeps_the_raw_bytes_when_given() -> None:
    raw = b'{"eventTime":"2024-01-01T00:00:00Z",  "producer":"p","job":{"namespace":"n","name":"j"}}'
    import orjson

    assert validate_event(orjson.loads(raw), raw).payload == raw.decode()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "2024-05-01T24:00:00Z",
            "eventTime: '2024-05-01T24:00:00Z' is not a valid date-time (hour must be in 0..23)",
        ),
        (
            "2024-05-01T23:60:00Z",
            "eventTime: '2024-05-01T23:60:00Z' is not a valid date-time (minute must be in 0..59)",
        ),
        (
            "2024-05-01T23:59:61Z",
            "eventTime: '2024-05-01T23:59:61Z' is not a valid date-time (second must be in 0..59)",
        ),
        ("2024-05-01T10:00:00+24:00", "eventTime: '2024-05-01T10:00:00+24:00' has an invalid UTC offset"),
    ],
)
def test_a_date_seen_before_still_has_its_time_of_day_checked(value: str, expected: str) -> None:
    validate_event(run_event(event_time="2024-05-01T10:00:00Z"))  # the date is known from now on
    assert errors_of(run_event(event_time=value)) == [expected]


def test_a_leap_second_is_the_first_second_of_the_next_minute() -> None:
    validate_event(run_event(event_time="2024-05-01T10:00:00Z"))
    assert (
        validate_event(run_event(event_time="2024-05-01T23:59:60Z")).event_time
        == "2024-05-02T00:00:00.0000000Z"
    )
    event = validate_event(run_event(event_time="2024-05-01T23:59:60.5+01:00"))
    assert event.event_time == "2024-05-01T23:00:00.5000000Z"


def test_an_event_nested_deeper_than_the_limit_is_refused_whole() -> None:
    deepest = json.loads(nested_event(MAX_JSON_DEPTH))
    assert validate_event(deepest).warnings == ()
    assert errors_of(json.loads(nested_event(MAX_JSON_DEPTH + 1))) == [DEPTH_REASON]
    assert errors_of(json.loads(nested_event(900))) == [DEPTH_REASON]  # past what orjson writes
    with pytest.raises(InvalidEvent) as caught:
        validate_event(json.loads(nested_event(MAX_JSON_DEPTH + 1)), nested_event(MAX_JSON_DEPTH + 1))
    assert caught.value.errors == [DEPTH_REASON]
