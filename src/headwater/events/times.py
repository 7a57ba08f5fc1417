"""eventTime parsing: RFC 3339 with up to 100 ns precision, normalized to UTC."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# Whole seconds are handled by datetime; the fraction is kept as 100 ns ticks ourselves because
# datetime stops at microseconds and eventIds order events at 100 ns.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2})(?::?([0-9]{2}))?)?"
)

TICKS_PER_SECOND = 10_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Version-1 UUIDs count 100 ns ticks from the Gregorian reform in 60 bits.
_GREGORIAN_OFFSET_TICKS = 0x01B21DD213814000
_MIN_TICKS = -_GREGORIAN_OFFSET_TICKS
_MAX_TICKS = (1 << 60) - 1 - _GREGORIAN_OFFSET_TICKS


class EventTimeError(ValueError):
    """eventTime cannot be read; the message says why."""


def parse_event_time(value: str) -> int:
    """Return the time as 100 ns ticks since the Unix epoch (UTC); a missing offset means UTC."""
    match = _RFC3339.fullmatch(value.strip())
    if match is None:
        raise EventTimeError(f"{value!r} is not an ISO 8601 / RFC 3339 date-time")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction, zulu, sign, off_h, off_m = match.group(7, 8, 9, 10, 11)
    leap = second == 60
    try:
        moment = datetime(year, month, day, hour, minute, 59 if leap else second, tzinfo=UTC)
    except ValueError as exc:
        raise EventTimeError(f"{value!r} is not a valid date-time ({exc})") from None
    if sign is not None and not zulu:
        hours, minutes = int(off_h), int(off_m or 0)
        if hours > 23 or minutes > 59:
            raise EventTimeError(f"{value!r} has an invalid UTC offset")
        offset = timedelta(hours=hours, minutes=minutes)
        try:
            moment = moment - offset if sign == "+" else moment + offset
        except OverflowError:  # year 1 east of UTC, or 9999 west of it
            raise EventTimeError(
                f"{value!r} is outside the range an eventId can represent (1582-5236)"
            ) from None
    delta = moment - _EPOCH
    ticks = (delta.days * 86_400 + delta.seconds + (1 if leap else 0)) * TICKS_PER_SECOND
    if fraction:
        ticks += int((fraction + "000000")[:7])
    if not _MIN_TICKS <= ticks <= _MAX_TICKS:
        raise EventTimeError(f"{value!r} is outside the range an eventId can represent (1582-5236)")
    return ticks


def format_ticks(ticks: int) -> str:
    """Ticks since the epoch as a fixed-width UTC string, ordered like the times it names."""
    seconds, rest = divmod(ticks, TICKS_PER_SECOND)
    moment = _EPOCH + timedelta(seconds=seconds)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{rest:07d}Z"


def gregorian_ticks(ticks: int) -> int:
    """Ticks since the epoch → the 60-bit timestamp of a version-1 UUID."""
    return ticks + _GREGORIAN_OFFSET_TICKS


def now_ticks() -> int:
    delta = datetime.now(UTC) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * TICKS_PER_SECOND + delta.microseconds * 10
