"""Request bodies as producers send them: content types, gzip, size limits → JSON documents."""

from __future__ import annotations

import zlib

from headwater.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from headwater.events.decode import Document, documents_from_json, documents_from_ndjson

JSON_TYPES = frozenset({"application/json", "text/json", ""})
NDJSON_TYPES = frozenset(
    {"application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines"}
)
_CHUNK = 256 * 1024


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def check_content_type(content_type: str | None) -> bool:
    """Return True for NDJSON, False for JSON; raise 415 for anything else."""
    kind = media_type(content_type)
    if kind in NDJSON_TYPES:
        return True
    if kind in JSON_TYPES or (kind.startswith("application/") and kind.endswith("+json")):
        return False
    raise UnsupportedMediaType(
        f"Content-Type {kind!r} is not supported: send application/json (one event or an array) "
        "or application/x-ndjson (one event per line)"
    )


def decompress(body: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """Undo gzip (or deflate) without ever holding more than max_bytes of output."""
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("identity", ""):
        return body
    if encoding in ("gzip", "x-gzip"):
        wbits = 16 + zlib.MAX_WBITS
    elif encoding == "deflate":
        wbits = zlib.MAX_WBITS
    else:
        raise UnsupportedMediaType(f"Content-Encoding {encoding!r} is not supported: use gzip or none")
    inflater = zlib.decompressobj(wbits)
    out = bytearray()
    try:
        data = body
        while data:
            out += inflater.decompress(data, max_bytes + 1 - len(out))
            if len(out) > max_bytes:
                raise PayloadTooLarge(f"body is larger than {max_bytes} bytes once decompressed")
            data = inflater.unconsumed_tail
        out += inflater.flush()
    except zlib.error as exc:
        raise BadRequest(f"body is not valid {encoding}: {exc}") from None
    if not inflater.eof:
        raise BadRequest(f"body is truncated {encoding} data")
    if len(out) > max_bytes:
        raise PayloadTooLarge(f"body is larger than {max_bytes} bytes once decompressed")
    return bytes(out)


def read_documents(
    body: bytes, content_type: str | None, content_encoding: str | None, max_bytes: int, *, lazy: bool = False
) -> tuple[list[Document], bool]:
    """The candidate events of a body and whether it was a batch (array or NDJSON); `lazy` leaves
    well-formed events unparsed (see `headwater.events.decode`)."""
    ndjson = check_content_type(content_type)
    data = decompress(body, content_encoding, max_bytes)
    if not data.strip():
        raise BadRequest("body is empty: send one OpenLineage event, an array of them, or NDJSON")
    if ndjson:
        return documents_from_ndjson(data, lazy=lazy), True
    return documents_from_json(data, lazy=lazy)
