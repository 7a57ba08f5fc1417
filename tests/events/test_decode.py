"""Splitting a body into its events' bytes, also when an event nests deeper than a parser goes."""

from __future__ import annotations

import json

import pytest

from headwater.events.decode import documents_from_json, split_array
from headwater.events.limits import DEPTH_REASON
from tests.factories import nested_event, run_event


def test_an_array_is_split_into_its_items_by_brackets_and_commas_alone() -> None:
    items = [b'{"a": "],[,{"}', b"[1, [2, [3]]]", b'"x\\",y"', b"7", nested_event(5000)]
    body = b" [ " + b" ,\n ".join(items) + b" ] \n"
    assert split_array(body) == items
    assert split_array(b"[]") == []


@pytest.mark.parametrize("body", [b"{}", b"[1,]", b"[,1]", b"[1", b"[1]]", b"[1] x", b"[[1]"])
def test_what_is_no_array_of_balanced_items_is_not_split(body: bytes) -> None:
    assert split_array(body) is None


def test_an_array_holding_an_event_too_deep_to_parse_keeps_each_event_apart() -> None:
    good, deep = json.dumps(run_event()).encode(), nested_event(5000)
    body = b"[" + good + b"," + deep + b"," + good + b"]"
    documents, is_batch = documents_from_json(body, lazy=True)
    assert is_batch and [doc.own_bytes() for doc in documents] == [good, deep, good]
    eager, _ = documents_from_json(body)
    assert [doc.own_bytes() for doc in eager] == [good, deep, good]


def test_the_depth_reason_names_the_limit() -> None:
    assert DEPTH_REASON.startswith("event: nested more than 512 levels deep")
