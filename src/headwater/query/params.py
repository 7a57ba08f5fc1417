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


def boolean(name: str, value: str | None, default: bool) -> bool:
    """true/false (also 1/0, yes/no); `default` when absent or empty."""
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise BadRequest(f"{name}: {value!r} is neither true nor false")


def choice(name: str, value: str | None, default: str, allowed: tuple[str, ...]) -> str:
    """One of `allowed` (case-insensitive); `default` when absent or empty."""
    if value is None or value == "":
        return default
    for option in allowed:
        if value.strip().lower() == option.lower():
            return option
    raise BadRequest(f"{name}: {value!r} is none of {', '.join(allowed)}")
