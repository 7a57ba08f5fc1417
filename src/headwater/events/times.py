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


_DATES_MAX = 100_000
_days: dict[tuple[int, int, int], int] = {}  # days since the epoch of each valid date seen
_dates: dict[int, str] = {}  # "YYYY-MM-DD" of a day since the epoch


# The form most producers send ("2024-05-01T10:00:00.123Z"): the minute it names is read once and
# remembered, and only its seconds and fraction are read for each event (a third of the cost).
_UTC_FORM = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}):([0-5][0-9]|60)(?:\.([0-9]{1,7}))?Z")
_MINUTES_MAX = 10_000
_minutes: dict[str, int] = {}  # "YYYY-MM-DDTHH:MM" → its ticks, for each valid one seen
_minute_names: dict[int, str] = {}  # minutes since the epoch → "YYYY-MM-DDTHH:MM"
_TICKS_PER_MINUTE = 60 * TICKS_PER_SECOND


def parse_event_time(value: str) -> int:
    """Return the time as 100 ns ticks since the Unix epoch (UTC); a missing offset means UTC."""
    match = _UTC_FORM.fullmatch(value)
    if match is None:
        return _parse(value)
    minute, second, fraction = match.groups()
    into = int(second) * TICKS_PER_SECOND + (int((fraction + "000000")[:7]) if fraction else 0)
    base = _minutes.get(minute)
    if base is None:
        ticks = _parse(value)  # checks the date and the time of day
        if len(_minutes) >= _MINUTES_MAX:
            _minutes.clear()
        _minutes[minute] = ticks - into  # (a leap second is the next minute's first)
        return ticks
    if base + into > _MAX_TICKS:
        return _parse(value)  # which says why
    return base + into


def _parse(value: str) -> int:
    match = _RFC3339.fullmatch(value.strip())
    if match is None:
        raise EventTimeError(f"{value!r} is not an ISO 8601 / RFC 3339 date-time")
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    date = (int(year), int(month), int(day))
    days = _days.get(date)
    hour_, minute_, second_ = int(hour), int(minute), int(second)
    if days is None or hour_ > 23 or minute_ > 59 or second_ > 60:
        days = _valid_days(value, date, hour_, minute_, second_)
    # A leap second (:60) is the 59th plus one: the next minute's first second.
    seconds = days * 86_400 + hour_ * 3_600 + minute_ * 60 + second_
    if sign is not None and not zulu:
        hours, minutes = int(off_h), int(off_m or 0)
        if hours > 23 or minutes > 59:
            raise EventTimeError(f"{value!r} has an invalid UTC offset")
        offset = hours * 3_600 + minutes * 60
        seconds = seconds - offset if sign == "+" else seconds + offset
    ticks = seconds * TICKS_PER_SECOND
    if fraction:
        ticks += int((fraction + "000000")[:7])
    # Beyond 1582-5236 (the offset may take year 1 or 9999 out of datetime's range too).
    if not _MIN_TICKS <= ticks <= _MAX_TICKS:
        raise EventTimeError(f"{value!r} is outside the range an eventId can represent (1582-5236)")
    return ticks


def _valid_days(value: str, date: tuple[int, int, int], hour: int, minute: int, second: int) -> int:
    """Days since the epoch of a date, once datetime has confirmed the date and the time of day."""
    try:
        moment = datetime(*date, hour, minute, 59 if second == 60 else second, tzinfo=UTC)
    except ValueError as exc:
        raise EventTimeError(f"{value!r} is not a valid date-time ({exc})") from None
    days = (moment - _EPOCH).days
    if len(_days) >= _DATES_MAX:
        _days.clear()
    _days[date] = days
    return days


def format_ticks(ticks: int) -> str:
    """Ticks since the epoch as a fixed-width UTC string, ordered like the times it names."""
    minutes, rest = divmod(ticks, _TICKS_PER_MINUTE)
    name = _minute_names.get(minutes)
    if name is None:
        name = _format(minutes * _TICKS_PER_MINUTE)[:16]
        if len(_minute_names) >= _MINUTES_MAX:
            _minute_names.clear()
        _minute_names[minutes] = name
    second, fraction = divmod(rest, TICKS_PER_SECOND)
    return f"{name}:{second:02d}.{fraction:07d}Z"


def _format(ticks: int) -> str:
    seconds, rest = divmod(ticks, TICKS_PER_SECOND)
    days, second_of_day = divmod(seconds, 86_400)
    date = _dates.get(days)
    if date is None:
        date = f"{_EPOCH + timedelta(days=days):%Y-%m-%d}"
        if len(_dates) >= _DATES_MAX:
            _dates.clear()
        _dates[days] = date
    hour, second_of_hour = divmod(second_of_day, 3_600)
    minute, second = divmod(second_of_hour, 60)
    return f"{date}T{hour:02d}:{minute:02d}:{second:02d}.{rest:07d}Z"


def gregorian_ticks(ticks: int) -> int:
    """Ticks since the epoch → the 60-bit timestamp of a version-1 UUID."""
    return ticks + _GREGORIAN_OFFSET_TICKS


def now_ticks() -> int:
    delta = datetime.now(UTC) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * TICKS_PER_SECOND + delta.microseconds * 10
