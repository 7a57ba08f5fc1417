"""Turning request bodies and files into JSON documents: one object, an array, or NDJSON lines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson

from headwater.errors import BadRequest


@dataclass(slots=True)  # not frozen: a batch makes a thousand, and frozen ones cost 8 times more
class Document:
    """One candidate event of a body: its parsed JSON, or why it could not be parsed."""

    index: int
    value: Any = None
    raw: bytes | None = None  # the event's own bytes when the body held exactly them
    error: str | None = None
    # False: only `raw` is known (its syntax checked, except a Kafka message's); whoever validates
    # it parses it (the lean path parses no more than it must). `where` then prefixes a parse
    # error found later.
    parsed: bool = True
    where: str = ""
    # The lean path's decoding (`headwater.events.lean`), when the body was decoded that way while
    # it was split; an event of an array decoded in one pass has no `raw` until it needs it, then
    # takes it from `items`.
    decoded: Any = None
    items: ArrayItems | None = None
    # The event as the compiled lean path accepted it (`lean.validate_array`, `validate_object`):
    # validated already.
    event: Any = None

    def own_bytes(self) -> bytes:
        """`raw`, taken from the array's items when the document was made without it."""
        if self.raw is None:
            assert self.items is not None
            self.raw = self.items[self.index]
        return self.raw


class ArrayItems:
    """The bytes of each item of a JSON array, split only when first asked for."""

    __slots__ = ("_body", "_items")

    def __init__(self, body: bytes) -> None:
        self._body = body
        self._items: list[msgspec.Raw] | list[bytes] | None = None

    def __getitem__(self, index: int) -> bytes:
        if self._items is None:
            try:
                self._items = _RAW_ITEMS.decode(self._body)
            except RecursionError:  # an item nested deeper than msgspec goes (the compiled path is not)
                found = split_array(self._body)
                assert found is not None, "split an array that does not parse"
                self._items = found
        return bytes(self._items[index])


class MalformedJSON(BadRequest):
    """A body or line that is not JSON; the message gives the line, column and character."""


EXACT_JSON = msgspec.json.Decoder()  # any JSON value, every integer exact whatever its size


def loads(data: bytes | str) -> Any:
    """Parse JSON fast, every number as it was sent: msgspec keeps an integer beyond 64 bits whole,
    where orjson (3.13) reads it as a float and the event would not come back as it was sent.
    Malformed JSON is explained by orjson's message, which names the line, column and character."""
    try:
        return EXACT_JSON.decode(data)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        pass
    try:
        return orjson.loads(data)  # nested deeper than msgspec goes, but within orjson's limit
    except orjson.JSONDecodeError as exc:
        raise MalformedJSON(
            f"malformed JSON at line {exc.lineno}, column {exc.colno} (char {exc.pos}): {exc.msg}"
        ) from None


def dumps(value: Any, *, sort_keys: bool = False) -> bytes:
    """Serialize compactly; sorted keys give the canonical form the content hash is taken of."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError:  # integers beyond 64 bits
        return json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False).encode()


_RAW = msgspec.json.Decoder(msgspec.Raw)
_RAW_ITEMS = msgspec.json.Decoder(list[msgspec.Raw])
_LEADING_SPACE = re.compile(rb"[ \t\r\n]*")


def unparsed_document(index: int, raw: bytes, where: str = "") -> Document | None:
    """`raw` as an unparsed document when it is well-formed JSON, else None. Decoding it for the
    lean path checks its syntax too: one pass for the common event."""
    # (imported here: lean imports validate, which imports this module)
    from headwater.events.lean import decode_one, validate_object

    event = validate_object(raw)
    if event is not None:
        return Document(index, raw=raw, parsed=False, where=where, event=event)
    decoded = decode_one(raw)
    if decoded is not None:
        return Document(index, raw=raw, parsed=False, where=where, decoded=decoded)
    try:
        _RAW.decode(raw)
    except msgspec.DecodeError:
        return None
    except RecursionError:  # nested deeper than msgspec goes: refused for its depth when validated
        pass
    return Document(index, raw=raw, parsed=False, where=where)


def _unparsed(body: bytes) -> tuple[list[Document], bool] | None:
    """An object or an array, its syntax checked and split into events' bytes without building
    them; None when the body is anything else or malformed (the full parse explains why)."""
    start = _LEADING_SPACE.match(body)
    first = body[start.end() : start.end() + 1] if start else b""
    try:
        if first == b"{":
            found = unparsed_document(0, body)
            return None if found is None else ([found], False)
        if first == b"[":
            from headwater.events.lean import decode_batch, validate_array  # see unparsed_document

            accepted = validate_array(body)  # the common batch, compiled: validated in one pass
            if accepted is not None:
                items = ArrayItems(body)
                return [Document(i, parsed=False, event=e, items=items) for i, e in enumerate(accepted)], True
            events = decode_batch(body)  # the common batch: split and decoded in one pass
            if events is not None:
                items = ArrayItems(body)
                return [
                    Document(i, parsed=False, decoded=event, items=items) for i, event in enumerate(events)
                ], True
            return [
                Document(i, raw=bytes(item), parsed=False) for i, item in enumerate(_RAW_ITEMS.decode(body))
            ], True
    except msgspec.DecodeError:
        pass
    except RecursionError:  # an event nested deeper than msgspec goes: each judged alone
        documents = _split_documents(body)
        if documents is not None:
            return documents, True
    return None


# a JSON string (escapes and all), an opening bracket, a closing one, or a comma
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|([\[{])|([\]}])|(,)', re.DOTALL)


def split_array(body: bytes) -> list[bytes] | None:
    """The bytes of each item of the JSON array `body`, found by its brackets and commas alone,
    however deep the items nest (the parsers recurse and give up); None when `body` is not an
    array whose brackets balance. The items themselves are not parsed."""
    start = _LEADING_SPACE.match(body)
    first = start.end() if start else 0
    if body[first : first + 1] != b"[":
        return None
    items: list[bytes] = []
    depth = 0
    begin = first + 1
    for token in _TOKEN.finditer(body, first):
        opening, closing, comma = token.groups()
        if opening:
            depth += 1
        elif closing:
            depth -= 1
            if depth == 0:
                last = body[begin : token.start()].strip()
                if last or items:
                    items.append(last)
                rest = body[token.end() :].strip()
                return items if not rest and all(items) else None
        elif comma and depth == 1:
            items.append(body[begin : token.start()].strip())
            begin = token.end()
    return None


def _split_documents(body: bytes) -> list[Document] | None:
    """`split_array`'s items as unparsed documents, each judged alone when it is validated."""
    items = split_array(body)
    return None if items is None else [Document(i, raw=item, parsed=False) for i, item in enumerate(items)]


_SCANNER = json.JSONDecoder()
_SPACE = " \t\r\n"


def _array_items_one_by_one(body: bytes) -> list[Document] | None:
    """The items of a JSON array that neither msgspec nor orjson takes whole, each as its own
    bytes, so that each is judged alone and the others are stored: JSON's grammar allows what
    they refuse, an escaped lone surrogate ("\\ud800") or a number beyond a double (1e400).
    Python's scanner takes both, and finds where each item ends. None when the body is not an
    array of well-formed items (the whole body's error then stands)."""
    try:
        text = body.decode()
    except UnicodeDecodeError:
        return None
    position = len(text) - len(text.lstrip(_SPACE))
    if not text.startswith("[", position):
        return None
    documents: list[Document] = []
    position += 1
    try:
        while True:
            while position < len(text) and text[position] in _SPACE:
                position += 1
            if not documents and text.startswith("]", position):
                break
            _, end = _SCANNER.raw_decode(text, position)
            raw = text[position:end].encode()
            documents.append(Document(len(documents), raw=raw, parsed=False))
            while end < len(text) and text[end] in _SPACE:
                end += 1
            if text.startswith("]", end):
                position = end + 1
                break
            if not text.startswith(",", end):
                return None
            position = end + 1
    except ValueError:  # json.JSONDecodeError is a ValueError
        return None
    except RecursionError:  # an item nested deeper than the scanner goes: split by brackets
        return _split_documents(body)
    return documents if not text[position:].strip(_SPACE) else None


def documents_from_json(body: bytes, *, lazy: bool = False) -> tuple[list[Document], bool]:
    """A JSON body: an object is one event, an array a batch. Returns (documents, is_batch).

    `lazy`: documents of an object or array keep only their bytes (`parsed` False), each event of
    an array its own bytes as sent."""
    if lazy:
        found = _unparsed(body)
        if found is not None:
            return found
    try:
        value = loads(body)
    except MalformedJSON:
        # Some producers send NDJSON as application/json; accept it when every line is JSON.
        lines = documents_from_ndjson(body)
        if len(lines) > 1 and all(doc.error is None for doc in lines):
            return lines, True
        items = _array_items_one_by_one(body)
        if items is not None:
            return items, True
        raise
    if isinstance(value, list):
        return [Document(i, item) for i, item in enumerate(value)], True
    return [Document(0, value, raw=body)], False


def documents_from_ndjson(body: bytes, *, lazy: bool = False, first_line: int = 1) -> list[Document]:
    """NDJSON: one event per non-blank line; a malformed line fails alone. `lazy`: a line that is
    well-formed JSON keeps only its bytes (`parsed` False). A piece of a longer file (whole lines)
    numbers its lines from `first_line` (its documents still from 0)."""
    docs: list[Document] = []
    for line_no, line in enumerate(body.split(b"\n"), start=first_line):
        stripped = line.strip()
        if not stripped:
            continue
        index = len(docs)
        found = unparsed_document(index, stripped, f"line {line_no}: ") if lazy else None
        if found is not None:
            docs.append(found)
            continue
        try:
            docs.append(Document(index, loads(stripped), raw=stripped))
        except MalformedJSON as exc:
            docs.append(Document(index, error=f"line {line_no}: {exc.message}"))
    return docs
