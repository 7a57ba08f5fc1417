"""Build ``src/headwater/events/facet_schemas.json`` from the published OpenLineage facet schemas.

The bundle is the run-time data of :mod:`headwater.events.facets`; the product never reads the
spec folder itself.  Usage::

    .venv/bin/python scripts/build_facet_schemas.py [--spec-dir DIR] [--out FILE]

The spec folder defaults to ``$HEADWATER_SPEC_DIR`` or ``../shared/openlineage-spec`` (relative
to the repository root).  Inputs are ``published/facets/<ver>/<Name>.json`` plus the core
``published/<ver>/OpenLineage.json`` definitions those files ``$ref``.

Bundle layout: one JSON object keyed by schema URL (the ``$id`` of each published facet file and
of each referenced core schema).  Each value keeps only structural keywords; annotations
(description, example, title, ...) are dropped and any keyword the checker does not implement
makes the build fail, so a new spec release cannot be silently half-checked.  ``$ref`` values are
either ``#/$defs/<Name>`` (same entry) or ``<bundle key>#/$defs/<Name>``; every ref is verified to
resolve inside the bundle.  Core entries hold only the ``$defs`` reachable from facet files.
Output is deterministic: keys sorted, compact separators, one entry per line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "src" / "headwater" / "events" / "facet_schemas.json"

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
FACET_URL = "https://openlineage.io/spec/facets/{version}/{name}"
CORE_URL_RE = re.compile(r"^https://openlineage\.io/spec/(\d+-\d+-\d+)/OpenLineage\.json$")
LOCAL_REF_RE = re.compile(r"^#/\$defs/([A-Za-z0-9_]+)$")

# Keywords whose value is a single subschema / a list of subschemas / a map name -> subschema.
SUBSCHEMA_ONE = {"items", "additionalProperties"}
SUBSCHEMA_LIST = {"allOf", "anyOf", "oneOf"}
SUBSCHEMA_MAP = {"properties", "$defs"}
# Keywords kept verbatim (the checker implements every one of them).
STRUCTURAL_LEAF = {
    "type",
    "required",
    "enum",
    "const",
    "$ref",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "dependentRequired",
}
# Annotation-only keywords: dropped.
ANNOTATIONS = {
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "example",
    "examples",
    "default",
    "deprecated",
    "documentation",
    "readOnly",
    "writeOnly",
}


class BundleError(Exception):
    """The spec folder holds something the bundle format or the checker cannot represent."""


def default_spec_dir() -> Path:
    env = os.environ.get("HEADWATER_SPEC_DIR")
    if env:
        return Path(env)
    return (REPO_ROOT / ".." / "shared" / "openlineage-spec").resolve()


def _strip(schema: Any, where: str) -> Any:
    """Return ``schema`` with annotations removed; reject keywords the checker does not know."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        raise BundleError(f"{where}: schema is neither an object nor a boolean")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key in SUBSCHEMA_MAP:
            out[key] = {name: _strip(sub, f"{where}/{key}/{name}") for name, sub in value.items()}
        elif key in SUBSCHEMA_LIST:
            out[key] = [_strip(sub, f"{where}/{key}/{i}") for i, sub in enumerate(value)]
        elif key in SUBSCHEMA_ONE:
            out[key] = _strip(value, f"{where}/{key}")
        elif key in STRUCTURAL_LEAF:
            out[key] = value
        else:
            raise BundleError(f"{where}: unsupported keyword {key!r}; teach headwater.events.facets first")
    return out


def _refs(schema: Any) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                found.append(value)
            elif key in SUBSCHEMA_MAP:
                for sub in value.values():
                    found.extend(_refs(sub))
            elif key in SUBSCHEMA_LIST:
                for sub in value:
                    found.extend(_refs(sub))
            elif key in SUBSCHEMA_ONE:
                found.extend(_refs(value))
    return found


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as fh:
        return json.load(fh)


def build_bundle(spec_dir: Path) -> dict[str, Any]:
    published = spec_dir / "published"
    facet_files = sorted(published.glob("facets/*/*.json"))
    if not facet_files:
        raise BundleError(f"no facet schemas under {published / 'facets'}")

    bundle: dict[str, Any] = {}
    for path in facet_files:
        doc = _load(path)
        url = FACET_URL.format(version=path.parent.name, name=path.name)
        if doc.get("$id") != url:
            raise BundleError(f"{path}: $id {doc.get('$id')!r} differs from its published URL {url}")
        if doc.get("$schema") != DRAFT_2020_12:
            raise BundleError(f"{path}: not a draft 2020-12 schema")
        bundle[url] = _strip(doc, url)

    # Pull in the core definitions the facet files reference, transitively.
    core_docs: dict[str, Any] = {}
    pending = [(url, ref) for url, entry in bundle.items() for ref in _refs(entry)]
    while pending:
        owner, ref = pending.pop()
        base, _, fragment = ref.partition("#")
        target = base or owner
        match = LOCAL_REF_RE.match("#" + fragment)
        if match is None:
            raise BundleError(f"{owner}: $ref {ref!r} is not of the form [<url>]#/$defs/<Name>")
        name = match.group(1)
        if target not in bundle:
            core = CORE_URL_RE.match(target)
            if core is None:
                raise BundleError(f"{owner}: $ref {ref!r} points outside the published spec")
            bundle[target] = {"$defs": {}}
            core_docs[target] = _load(published / core.group(1) / "OpenLineage.json")
        entry = bundle[target]
        if target in core_docs and name not in entry["$defs"]:
            source = core_docs[target]["$defs"].get(name)
            if source is None:
                raise BundleError(f"{owner}: $ref {ref!r} does not resolve")
            entry["$defs"][name] = _strip(source, f"{target}#/$defs/{name}")
            pending.extend((target, sub) for sub in _refs(entry["$defs"][name]))
        elif name not in entry.get("$defs", {}):
            raise BundleError(f"{owner}: $ref {ref!r} does not resolve")
    return bundle


def render(bundle: dict[str, Any]) -> str:
    lines = [
        f"{json.dumps(url)}:{json.dumps(bundle[url], sort_keys=True, separators=(',', ':'))}"
        for url in sorted(bundle)
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--spec-dir", type=Path, default=None, help="OpenLineage spec folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="bundle file to write")
    args = parser.parse_args(argv)
    spec_dir = args.spec_dir or default_spec_dir()
    try:
        text = render(build_bundle(spec_dir))
    except (BundleError, OSError, ValueError) as exc:
        print(f"build_facet_schemas: {exc}", file=sys.stderr)
        return 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
