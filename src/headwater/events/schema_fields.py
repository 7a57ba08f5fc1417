"""The fields of a schema facet, nested ones flattened to dotted paths (`address.city`)."""

from __future__ import annotations

import orjson

from headwater.events.limits import MAX_FIELD_PATH_BYTES, too_long

SchemaField = tuple[str, int, str | None, str | None]  # path, position, type, description


def flatten_fields(fields_json: str | bytes | None) -> list[SchemaField]:
    """The `fields` array of a schema facet (JSON text) as (path, position, type, description),
    a nested field right after its parent; malformed entries are skipped, and so is a field
    whose path is over MAX_FIELD_PATH_BYTES (with its nested fields): it keys the model's rows."""
    try:
        fields = orjson.loads(fields_json) if fields_json else []
    except orjson.JSONDecodeError:
        return []
    out: list[SchemaField] = []
    _walk(fields, "", out)
    return out


def _walk(items: object, prefix: str, out: list[SchemaField]) -> None:
    if not isinstance(items, list):
        return
    for item in items:
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        if not isinstance(name, str):
            continue
        path = prefix + name
        if too_long(path, MAX_FIELD_PATH_BYTES):
            continue
        kind, text = item.get("type"), item.get("description")
        out.append(
            (path, len(out), kind if isinstance(kind, str) else None, text if isinstance(text, str) else None)
        )
        nested = item.get("fields")
        if nested:
            _walk(nested, path + ".", out)


def facet_fields(schema_facet_json: str | None) -> list[SchemaField]:
    """The flattened fields of a whole schema facet value (`{"fields": [...]}`)."""
    if not schema_facet_json:
        return []
    try:
        value = orjson.loads(schema_facet_json)
    except orjson.JSONDecodeError:
        return []
    out: list[SchemaField] = []
    if isinstance(value, dict):
        _walk(value.get("fields"), "", out)
    return out
