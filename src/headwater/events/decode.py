"""Turning request bodies and files into JSON documents: one object, an array, or NDJSON lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

from headwater.errors import BadRequest


@dataclass(frozen=True, slots=True)
class Document:
    """One candidate event of a body: its parsed JSON, or why it could not be parsed."""

    index: int
    value: Any = None
    raw: bytes | None = None  # the event's own bytes when the body held exactly them
    error: str | None = None


class MalformedJSON(BadRequest):
    """A body or line that is not JSON; the message gives the line, column and character."""


def loads(data: bytes | str) -> Any:
    """Parse JSON fast; integers beyond 64 bits fall back to the standard library."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "64-bit" in str(exc) or "integer" in str(exc).lower():
            try:
                return json.loads(data)
            except json.JSONDecodeError:
                pass
        raise MalformedJSON(
            f"malformed JSON at line {exc.lineno}, column {exc.colno} (char {exc.pos}): {exc.msg}"
        ) from None


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Serialize compactly; sorted keys give the canonical form the content hash is taken of."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError:  # integers beyond 64 bits
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False).encode()


def documents_from_json(body: bytes) -> tuple[list[Document], bool]:
    """A JSON body: an object is one event, an array a batch. Returns (documents, is_batch)."""
    try:
        value = loads(body)
    except MalformedJSON:
        # Some producers send NDJSON as application/json; accept it when every line is JSON.
        lines = documents_from_ndjson(body)
        if len(lines) > 1 and all(doc.error is None for doc in lines):
            return lines, True
        raise
    if isinstance(value, list):
        return [Document(i, item) for i, item in enumerate(value)], True
    return [Document(0, value, raw=body)], False


def documents_from_ndjson(body: bytes) -> list[Document]:
    """NDJSON: one event per non-blank line; a malformed line fails alone."""
    docs: list[Document] = []
    for line_no, line in enumerate(body.split(b"\n"), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        index = len(docs)
        try:
            docs.append(Document(index, loads(stripped), raw=stripped))
        except MalformedJSON as exc:
            docs.append(Document(index, error=f"line {line_no}: {exc.message}"))
    return docs
