"""Length limits, in UTF-8 bytes, of the strings that become the lineage model's keys: namespaces,
names, run ids, facet names, and the identities some published facets carry (a parent job, a
symlink, a column lineage input, a schema field's path).

PostgreSQL holds at most 2,704 bytes in one index row, and the model's rows are keyed by up to
three node ids (an edge's source, destination and job). An event over a limit was stored and then
failed every pipeline pass on PostgreSQL (or, in the event store's own columns, its insert). An
event's own identities over a limit reject the event (`headwater.events.validate`); a facet's make
that facet untrusted, so the pipeline leaves it out, as any facet that breaks its rules. A tag's
name over its limit is a 400 of the tag routes (`headwater.query.catalog`).

Also how deep an event's JSON may nest (`MAX_JSON_DEPTH`): parsers recurse once a level, and an
event nested deeper than they go was a 500 that took the good events of its batch with it.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

MAX_NAMESPACE_BYTES = 256
MAX_NAME_BYTES = 600  # three node ids of a 256-byte namespace and a 600-byte name: 2,591 bytes
MAX_RUN_ID_BYTES = 256  # a run id that is not a UUID (a UUID has 36)
MAX_FIELD_PATH_BYTES = 1_500  # a schema field's path: its nested names joined by dots
# a column lineage transformation's type and subtype (DIRECT, AGGREGATION, ...), which key its rows
# with the output field, the input dataset and the input field
MAX_TRANSFORMATION_BYTES = 128
# A node id: `dataset:`, `job:` or `element:`, a namespace (or an element's type), `:` and a name
# (or an element's description). The pipeline leaves out a longer one, which an event stored before
# these limits may still hold.
MAX_NODE_ID_BYTES = len("element:") + MAX_NAMESPACE_BYTES + 1 + MAX_NAME_BYTES
MAX_TAG_BYTES = 256  # a tag's name (set through the API; it keys the tag tables beside a field)
# Arrays and objects inside each other, the event's own braces the first level. msgspec and Python's
# parsers fail past about 1,000 levels (how far depends on the caller's stack, so on the ingest
# path), orjson at 1,024, and a facet is written back inside a few more levels: 512 is a limit that
# holds on every path, far beyond any producer's facets.
MAX_JSON_DEPTH = 512
DEPTH_REASON = f"event: nested more than {MAX_JSON_DEPTH} levels deep (arrays and objects inside each other)"
NAME_LIMITS = {
    "namespace": MAX_NAMESPACE_BYTES,
    "name": MAX_NAME_BYTES,
    "field": MAX_NAME_BYTES,
    "type": MAX_TRANSFORMATION_BYTES,
    "subtype": MAX_TRANSFORMATION_BYTES,
    "transformationType": MAX_TRANSFORMATION_BYTES,
}
_MAX_REASONS = 3
_SOURCE_KEYS = ("namespace", "name", "field")  # a column lineage input's


def too_long(value: str, limit: int) -> int | None:
    """The length of `value` in UTF-8 bytes when it is over `limit`, else None."""
    if len(value) * 4 <= limit:  # at most 4 bytes a character: no need to encode
        return None
    size = len(value.encode("utf-8", "surrogatepass"))
    return size if size > limit else None


_NOT_A_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def deeper_than(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text `raw` nests arrays and objects more than `limit` levels deep. Cheap
    for the common text: one too short to hold `limit` + 1 pairs of brackets, or with no more
    opening brackets than `limit`, cannot nest deeper."""
    if len(raw) < 2 * (limit + 1) or raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    # Without its escaped backslashes and quotes, the text's quotes alternate opening and closing a
    # string: the pieces between them are, in turn, outside a string and inside one.
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in raw else raw
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = outside.translate(None, _NOT_A_BRACKET)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def _limited(holder: object, where: str, keys: tuple[str, ...], reasons: list[str]) -> None:
    """Note each of `keys` of `holder` (an object) whose string is over its limit."""
    if not isinstance(holder, dict):
        return
    for key in keys:
        value = holder.get(key)
        size = too_long(value, NAME_LIMITS[key]) if isinstance(value, str) else None
        if size is not None:
            reasons.append(f"{where}{key} is {size} bytes long; a {key} may have at most {NAME_LIMITS[key]}")


def _each(items: object) -> list[tuple[int, Any]]:
    return list(enumerate(items)) if isinstance(items, list) else []


def _schema_paths(fields: object, prefix: str, where: str, reasons: list[str]) -> None:
    for i, item in _each(fields):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        path = f"{prefix}{item['name']}"
        size = too_long(path, MAX_FIELD_PATH_BYTES)
        if size is not None:
            limit = MAX_FIELD_PATH_BYTES
            reasons.append(f"{where}[{i}] has a path of {size} bytes; a path may have at most {limit}")
            continue
        _schema_paths(item.get("fields"), f"{path}.", f"{where}[{i}].fields", reasons)


def _sources(items: object, where: str, reasons: list[str]) -> None:
    """Note the column lineage inputs of `items` (and their transformations) over their limits."""
    for i, source in _each(items):
        _limited(source, f"{where}[{i}].", _SOURCE_KEYS, reasons)
        for j, step in _each(source.get("transformations") if isinstance(source, dict) else None):
            _limited(step, f"{where}[{i}].transformations[{j}].", ("type", "subtype"), reasons)


def identity_reasons(facet_name: str, facet: dict[str, Any]) -> list[str]:
    """Why a published facet's identities break their limits (empty when they do not): its
    `facet_name` is the schema's (ParentRunFacet, SymlinksDatasetFacet, ...). The pipeline leaves
    out what these name over a limit whatever the facet's schema (`headwater.pipeline`): a facet of
    a schema it does not know, or stored before a limit, is read by its name there."""
    reasons: list[str] = []
    if facet_name == "ParentRunFacet":
        _limited(facet.get("job"), "job.", ("namespace", "name"), reasons)
        root = facet.get("root")
        if isinstance(root, dict):
            _limited(root.get("job"), "root.job.", ("namespace", "name"), reasons)
    elif facet_name == "SymlinksDatasetFacet":
        for i, identifier in _each(facet.get("identifiers")):
            _limited(identifier, f"identifiers[{i}].", ("namespace", "name"), reasons)
    elif facet_name == "ColumnLineageDatasetFacet":
        fields = facet.get("fields")
        for name, spec in fields.items() if isinstance(fields, dict) else ():
            size = too_long(name, MAX_NAME_BYTES)
            if size is not None:
                reasons.append(
                    f"fields has a field name of {size} bytes; a field may have at most {MAX_NAME_BYTES}"
                )
            _limited(spec, f"fields.{name[:40]}.", ("transformationType",), reasons)
            _sources(
                spec.get("inputFields") if isinstance(spec, dict) else None,
                f"fields.{name[:40]}.inputFields",
                reasons,
            )
        _sources(facet.get("dataset"), "dataset", reasons)
    elif facet_name == "DatasourceDatasetFacet":
        _limited(facet, "", ("name",), reasons)
    elif facet_name == "SchemaDatasetFacet":
        _schema_paths(facet.get("fields"), "", "fields", reasons)
    return reasons[:_MAX_REASONS]
