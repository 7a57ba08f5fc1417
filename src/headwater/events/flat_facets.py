"""Facets of flat published schemas judged by compiled msgspec structs: the facets an event carries
anew each time (nominalTime, outputStatistics…) cost a decode in C instead of a parse, a walk of
the schema's checks in Python and a serialization.

A definition is flat when, its `$ref`s and `allOf`s followed, it is one object of string, integer
and boolean properties, with a `format` at most, some of them required, and any other property
allowed (the facets' base). Such a definition becomes a struct whose fields are its properties
in the order of their names and that admits no other key. A facet whose bytes it decodes, whose
formats hold and which has no escape in its bytes is valid, and its canonical bytes are the
struct's encoding: what `orjson.dumps(value, option=OPT_SORT_KEYS)` writes. Anything else (another
key, a float, a broken format, an escape) gets `None`, and the caller judges it the general way
(`headwater.events.facets.facet_reasons`), which writes the reasons. tests/events/test_flat_facets.py
checks that both ways agree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Struct, UnsetType

from headwater.events.facets import format_test, named_schema, schema_bundle

# orjson reads an integer beyond 64 bits as a float: the struct leaves those to it (and, as its
# bounds must fit in 64 signed bits, those above 2**63 - 1 too)
_INTEGER = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
_TYPES: dict[str, Any] = {"string": str, "integer": _INTEGER, "boolean": bool}
_OBJECT_KEYS = frozenset({"allOf", "$ref", "type", "properties", "required", "additionalProperties"})
_MAX_URLS = 1_000


class _SchemaUrl(Struct, gc=False):
    """Only a facet's `_schemaURL` (the rest is skipped), to pick its struct."""

    url: str = msgspec.field(name="_schemaURL")


_URL = msgspec.json.Decoder(_SchemaUrl)
_ENCODER = msgspec.json.Encoder()
_UNDECODABLE = (msgspec.DecodeError, UnicodeDecodeError)  # not JSON, not of the struct, not UTF-8


class _Flat:
    """A flat definition: its properties' schemas and the names it requires."""

    def __init__(self) -> None:
        self.properties: dict[str, Any] = {}
        self.required: set[str] = set()

    def add(self, schema: Any, base: str, bundle: Mapping[str, Any], depth: int = 0) -> bool:
        """Merge an object schema (following `$ref` and `allOf`); False when it is not flat."""
        if not isinstance(schema, dict) or depth > 8 or not _OBJECT_KEYS.issuperset(schema):
            return False
        if schema.get("type", "object") != "object" or schema.get("additionalProperties", True) is not True:
            return False
        if "$ref" in schema:
            target, _, fragment = schema["$ref"].partition("#")
            url = target or base
            name = fragment.removeprefix("/$defs/")
            found = bundle.get(url, {}).get("$defs", {}).get(name)
            if found is None or not self.add(found, url, bundle, depth + 1):
                return False
        for sub in schema.get("allOf", ()):
            if not self.add(sub, base, bundle, depth + 1):
                return False
        for key, sub in schema.get("properties", {}).items():
            if self.properties.setdefault(key, sub) != sub:
                return False
        self.required.update(schema.get("required", ()))
        return True


# A flat definition's properties in the order of their names: (name, type, format, required),
# the type "string", "integer" or "boolean", the format one `format_test` knows or None.
Definition = tuple[tuple[str, str, str | None, bool], ...]
# A struct's decoder and the (field, format test) pairs it must pass.
_Judge = tuple[msgspec.json.Decoder[Any], tuple[tuple[str, Callable[[str], bool]], ...]]


def definition(schema_url: str) -> Definition | None:
    """The properties of the definition `schema_url` names, when it is flat (else None). The
    struct here and the compiled validation (native/lean) both judge facets by it."""
    named = named_schema(schema_url)
    if named is None:
        return None
    flat = _Flat()
    if not flat.add(named[1], named[0], schema_bundle()) or not flat.required.issubset(flat.properties):
        return None
    fields: list[tuple[str, str, str | None, bool]] = []
    for name in sorted(flat.properties):
        sub = flat.properties[name]
        kind = sub.get("type") if isinstance(sub, dict) else None
        if not isinstance(kind, str) or kind not in _TYPES or not {"type", "format"}.issuperset(sub):
            return None
        form = sub.get("format")
        if form is not None and kind != "string":  # a format on a number or a boolean: not a struct's
            return None
        known = form if form is not None and format_test(form) is not None else None
        fields.append((name, kind, known, name in flat.required))
    return tuple(fields)


def _compile(schema_url: str) -> _Judge | None:
    """The struct of the definition `schema_url` names, when it is flat."""
    found = definition(schema_url)
    if found is None:
        return None
    fields: list[tuple[str, Any, Any]] = []
    formats: list[tuple[str, Callable[[str], bool]]] = []
    for i, (name, kind, form, required) in enumerate(found):
        attribute = f"f{i}"
        test = None if form is None else format_test(form)
        if test is not None:
            formats.append((attribute, test))
        if required:
            fields.append((attribute, _TYPES[kind], msgspec.field(name=name)))
        else:
            fields.append((attribute, _TYPES[kind] | UnsetType, msgspec.field(name=name, default=UNSET)))
    struct = msgspec.defstruct("FlatFacet", fields, kw_only=True, forbid_unknown_fields=True, gc=False)
    return msgspec.json.Decoder(struct), tuple(formats)


class FlatFacets:
    """Judges facets by the struct of their `_schemaURL`'s definition, compiled on first use."""

    def __init__(self) -> None:
        self._judges: dict[str, _Judge | None] = {}
        self._lock = threading.Lock()

    def canonical(self, raw: bytes) -> bytes | None:
        """The canonical bytes of a valid facet of a flat published definition, else None (then
        only the general checks can tell)."""
        if b"\\" in raw:  # escapes: orjson and msgspec may write them differently
            return None
        try:
            url = _URL.decode(raw).url
        except _UNDECODABLE:
            return None
        judge = self._judges.get(url, UNSET)
        if judge is UNSET:
            judge = self._compiled(url)
        if judge is None:
            return None
        decoder, formats = judge
        try:
            value = decoder.decode(raw)
        except _UNDECODABLE:
            return None
        for attribute, test in formats:
            text = getattr(value, attribute)
            if text is not UNSET and not test(text):
                return None
        return _ENCODER.encode(value)

    def _compiled(self, url: str) -> _Judge | None:
        judge = _compile(url)
        with self._lock:
            if len(self._judges) >= _MAX_URLS:
                self._judges.clear()
            self._judges[url] = judge
        return judge


FLAT = FlatFacets()
