"""Parsing query parameters the same way for every API: a 400 naming the parameter, never a 500."""

from __future__ import annotations

from typing import overload

from headwater.errors import BadRequest


@overload
def whole_number(name: str, value: str | None, default: int, low: int, high: int) -> int: ...
@overload
def whole_number(name: str, value: str | None, default: None, low: int, high: int) -> int | None: ...
def whole_number(name: str, value: str | None, default: int | None, low: int, high: int) -> int | None:
    """`value` as an int in low..high; `default` when absent or empty."""
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise BadRequest(f"{name}: {value!r} is not a whole number") from None
    if not low <= number <= high:
        raise BadRequest(f"{name}: {number} is outside {low}..{high}")
    return number
