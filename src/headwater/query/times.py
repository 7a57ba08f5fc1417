"""Times in API answers and parameters: the stored fixed-width form ↔ what clients send and read."""

from __future__ import annotations

from headwater.errors import BadRequest
from headwater.events.times import EventTimeError, format_ticks, parse_event_time


def display_time(stored: str) -> str:
    """ "2024-01-02T03:04:05.1200000Z" → "2024-01-02T03:04:05.12Z": RFC 3339, no needless zeros."""
    head, _, fraction = stored.rstrip("Z").partition(".")
    fraction = fraction.rstrip("0")
    if not fraction:
        return f"{head}Z"
    width = 3 if len(fraction) <= 3 else 6 if len(fraction) <= 6 else 7
    return f"{head}.{fraction.ljust(width, '0')}Z"


def parse_time_param(name: str, value: str | None) -> str | None:
    """A time query parameter in the stored form, or a 400 naming the parameter."""
    if value is None or value == "":
        return None
    try:
        return format_ticks(parse_event_time(value))
    except EventTimeError as exc:
        raise BadRequest(f"{name}: {exc}") from None
