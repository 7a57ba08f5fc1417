"""API keys: `Authorization: Bearer <key>`, with separate write and read permissions."""

from __future__ import annotations

import hmac

from fastapi import Request

from headwater.config import Settings
from headwater.errors import Forbidden, Unauthorized


def _presented_key(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, key = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("Authorization header must be 'Bearer <api key>'")
    return key.strip()


def _matches(key: str, keys: tuple[str, ...]) -> bool:
    found = False
    for candidate in keys:  # compare with every key in constant time
        found |= hmac.compare_digest(key.encode(), candidate.encode())
    return found


# The checks are async only so that FastAPI runs them on the event loop, not in its thread pool.
def _require(request: Request, allowed: tuple[str, ...], others: tuple[str, ...], action: str) -> None:
    if not allowed:
        return
    key = _presented_key(request)
    if key is None:
        raise Unauthorized(f"an API key is required to {action}: send 'Authorization: Bearer <key>'")
    if _matches(key, allowed):
        return
    if _matches(key, others):
        raise Forbidden(f"this API key may not {action}")
    raise Unauthorized("unknown API key")


async def require_write(request: Request) -> None:
    settings: Settings = request.app.state.settings
    _require(request, settings.write_keys, settings.read_keys, "send events")


async def require_read(request: Request) -> None:
    settings: Settings = request.app.state.settings
    _require(request, settings.read_keys, settings.write_keys, "read")


async def require_tag_write(request: Request) -> None:
    """Tags are writes: the write keys set them."""
    settings: Settings = request.app.state.settings
    _require(request, settings.write_keys, settings.read_keys, "write tags")


async def require_delete(request: Request) -> None:
    """Deleting a dataset, job or namespace is a write: the write keys do it."""
    settings: Settings = request.app.state.settings
    _require(request, settings.write_keys, settings.read_keys, "delete")
