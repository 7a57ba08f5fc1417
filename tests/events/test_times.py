"""eventTime parsing and formatting: the remembered-minute fast path agrees with the full parser."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwater.events import times
from headwater.events.times import EventTimeError, format_ticks, parse_event_time


def _full(value: str) -> int | str:
    try:
        return times._parse(value)
    except EventTimeError as exc:
        return str(exc)


def _fast(value: str) -> int | str:
    try:
        return parse_event_time(value)
    except EventTimeError as exc:
        return str(exc)


_VALUES = st.builds(
    "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}Z".format,
    st.integers(1582, 5237),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 60),
    st.integers(0, 61),
    st.sampled_from(["", ".1", ".123", ".1234567", ".999999", ".12345678"]),
)


@given(_VALUES)
def test_the_fast_path_agrees_with_the_full_parser(value: str) -> None:
    for _ in range(2):  # the first sighting of a minute, then the remembered minute
        assert _fast(value) == _full(value)


@given(_VALUES)
def test_formatting_agrees_with_the_full_formatter(value: str) -> None:
    ticks = _full(value)
    if isinstance(ticks, int):
        for _ in range(2):
            assert format_ticks(ticks) == times._format(ticks)


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("2024-06-30T23:59:60Z", "2024-07-01T00:00:00.0000000Z"),  # a leap second
        ("2024-06-30T23:59:59.5Z", "2024-06-30T23:59:59.5000000Z"),
        ("5236-12-31T23:59:59Z", None),  # beyond what an eventId can hold
    ],
)
def test_edges_of_a_remembered_minute(value: str, stored: str | None) -> None:
    if stored is None:
        with pytest.raises(EventTimeError):
            parse_event_time(value)
        return
    parse_event_time(value[:17] + "00Z")  # the minute is remembered first
    assert format_ticks(parse_event_time(value)) == stored
