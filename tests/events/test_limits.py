"""How deep an event may nest: `deeper_than` counts the brackets that nest, not those in strings."""

from __future__ import annotations

import json

import pytest

from headwater.events.limits import MAX_JSON_DEPTH, deeper_than
from tests.factories import nested_event


@pytest.mark.parametrize("depth", [5, 40, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 5000])
def test_the_depth_of_arrays_and_objects_inside_each_other(depth: int) -> None:
    text = nested_event(depth)
    assert not deeper_than(text, depth)
    assert deeper_than(text, depth - 1)
    assert deeper_than(text) == (depth > MAX_JSON_DEPTH)


def test_brackets_in_strings_nest_nothing_whatever_their_escapes() -> None:
    strings = {
        "plain": "[[[[{{{{",
        "escaped quote": '\\"[[[[{{{{"',
        "backslashes": "\\\\" * 3 + "[[[[",
        "backslash then quote": '\\\\"' + "{{{{",
        "key [[[[": ["]]]]", "{{{{"],
    }
    text = json.dumps(strings).encode()
    assert json.loads(text) == strings
    assert not deeper_than(text, 2)
    assert deeper_than(text, 1)


def test_siblings_do_not_add_up() -> None:
    text = json.dumps({"a": [[[]], [[]], [[]]] * 300, "b": [{"c": {}}] * 300}).encode()
    assert not deeper_than(text, 4)
    assert deeper_than(text, 3)
