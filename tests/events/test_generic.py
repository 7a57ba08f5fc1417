"""Validation of generic events: one test per rule, each error naming its path and reason."""

from __future__ import annotations

from typing import Any

import pytest

from headwater.errors import InvalidEvent
from headwater.events.generic import MAX_ELEMENT_BYTES, MAX_NAME_BYTES, MAX_TEXT_BYTES, validate_generic_event


def event(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "description": "put model: churn",
        "type": "put model",
        "elements": [
            {
                "description": "churn",
                "type": "model",
                "tags": {"model-hash": "4b85", "model-type": "Python3"},
            },
            {"description": "model-manage-1", "type": "fastscore-service"},
        ],
        "tags": {"pneumo-timestamp": "2018-12-12T21:35:21.613138Z"},
    }
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not ...}


def errors_of(doc: object) -> list[str]:
    with pytest.raises(InvalidEvent) as caught:
        validate_generic_event(doc)
    return caught.value.errors


def test_a_fastscore_event_is_accepted_with_its_elements_and_tags() -> None:
    accepted = validate_generic_event(event())
    assert (accepted.type, accepted.description) == ("put model", "put model: churn")
    assert [(e.type, e.description) for e in accepted.elements] == [
        ("model", "churn"),
        ("fastscore-service", "model-manage-1"),
    ]
    assert accepted.elements[0].tags == (("model-hash", "4b85"), ("model-type", "Python3"))
    assert accepted.elements[1].tags == ()
    assert accepted.tags == (("pneumo-timestamp", "2018-12-12T21:35:21.613138Z"),)
    assert accepted.client_id is None


def test_elements_may_be_empty_and_tags_absent() -> None:
    accepted = validate_generic_event(event(elements=[], tags=...))
    assert accepted.elements == () and accepted.tags == ()


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ([], "event: must be a JSON object, got an array"),
        (event(description=...), "description: missing"),
        (event(type=...), "type: missing"),
        (event(elements=...), "elements: missing"),
        (event(description=""), "description: must not be empty"),
        (event(type="   "), "type: must not be empty"),
        (event(type=7), "type: must be a string, got a number"),
        (event(description=None), "description: must be a string, got null"),
        (event(elements={"a": 1}), "elements: must be an array, got an object"),
        (event(elements=["model"]), "elements[0]: must be an object, got a string"),
        (
            event(elements=[{"type": "model", "description": "a"}, {"description": "b"}]),
            "elements[1].type: missing",
        ),
        (event(elements=[{"type": "model"}]), "elements[0].description: missing"),
        (
            event(elements=[{"type": "m", "description": "d", "tags": []}]),
            "elements[0].tags: must be an object, got an array",
        ),
        (event(tags="x"), "tags: must be an object, got a string"),
        (event(tags={"k": None}), "tags.k: must be a string, number or boolean, got null"),
        (event(tags={"k": {"nested": 1}}), "tags.k: must be a string, number or boolean, got an object"),
        (event(tags={"k": [1]}), "tags.k: must be a string, number or boolean, got an array"),
        (event(tags={"": "v"}), "tags.: key must not be empty"),
        (event(tags={"k": "a\u0000b"}), "tags.k: must not contain NUL characters"),
        (event(type="x" * (MAX_NAME_BYTES + 1)), f"type: longer than {MAX_NAME_BYTES} bytes"),
        (event(description="é" * MAX_TEXT_BYTES), f"description: longer than {MAX_TEXT_BYTES} bytes"),
        (  # an element's description is its name in the lineage graph: limited as a dataset's name
            event(elements=[{"type": "m", "description": "é" * (MAX_ELEMENT_BYTES // 2 + 1)}]),
            f"elements[0].description: longer than {MAX_ELEMENT_BYTES} bytes",
        ),
        (event(id=12), "id: must be a string, got a number"),
        (event(id=""), "id: must not be empty"),
    ],
)
def test_each_rule_names_the_path_and_the_reason(doc: object, error: str) -> None:
    assert error in errors_of(doc)


def test_every_error_of_an_event_is_reported_at_once() -> None:
    errors = errors_of({"elements": [{}, {"type": 1, "description": "d"}], "tags": {"k": None}})
    assert errors == [
        "description: missing",
        "type: missing",
        "elements[0].type: missing",
        "elements[0].description: missing",
        "elements[1].type: must be a string, got a number",
        "tags.k: must be a string, number or boolean, got null",
    ]


def test_numbers_and_booleans_are_stored_as_strings() -> None:
    accepted = validate_generic_event(
        event(tags={"n": 3, "x": 2.5, "b": True, "f": False, "s": "", "big": 10**30})
    )
    assert dict(accepted.tags) == {
        "n": "3",
        "x": "2.5",
        "b": "true",
        "f": "false",
        "s": "",
        "big": str(10**30),
    }


def test_a_client_id_gives_the_same_event_id_and_none_a_new_one() -> None:
    first = validate_generic_event(event(id="fastscore-42"))
    again = validate_generic_event(event(id="fastscore-42", description="put model: churn (resent)"))
    assert first.event_id == again.event_id and first.client_id == "fastscore-42"
    assert validate_generic_event(event(id="fastscore-43")).event_id != first.event_id
    assert validate_generic_event(event()).event_id != validate_generic_event(event()).event_id


def test_the_payload_is_kept_as_sent() -> None:
    raw = b'{"type": "t", "description": "d", "elements": []}'
    assert (
        validate_generic_event({"type": "t", "description": "d", "elements": []}, raw).payload == raw.decode()
    )
