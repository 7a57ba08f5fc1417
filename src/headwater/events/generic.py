"""Generic lineage events (FastScore style): typed elements with key/value tags, validated here.

An event is `{description, type, elements: [{description, type, tags}], tags, id?}`. An element is
identified by (type, description), a tag by (key, value); tag values are kept as strings. The
optional client `id` makes a resend idempotent; without it every event is new.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from headwater.errors import InvalidEvent
from headwater.events import limits
from headwater.events.decode import dumps
from headwater.events.ids import sha256

GENERIC_KIND = "generic"
GENERIC_PRODUCER = "generic"  # the event store's producer column of every generic event
# Ids of resent events: uuid5 of the client id in this namespace, so the same id maps to one event.
_CLIENT_ID_NAMESPACE = uuid.UUID("8d1f3a52-5f0e-4b7a-9c1e-6b2d4e0a7c31")
# The browse tables index (type, description) and (key, value): PostgreSQL's b-tree takes ~2.7 kB
# per entry, so names and values are bounded in UTF-8 bytes.
MAX_NAME_BYTES = 256  # type, tag key, client id
MAX_TEXT_BYTES = 2048  # an event's description, a tag value
# An element's description is its name in the lineage graph (`element:{type}:{description}`), and an
# edge there is keyed by two such ids: bounded as an OpenLineage name is.
MAX_ELEMENT_BYTES = limits.MAX_NAME_BYTES  # an element's description

Tags = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class GenericElement:
    """An element of an event with the tags it carries in that event."""

    type: str
    description: str
    tags: Tags = ()


@dataclass(frozen=True, slots=True)
class GenericEvent:
    """One accepted generic event, ready to store; its time is when the store keeps it."""

    event_id: str  # the event store's key: from the client id, else random
    client_id: str | None
    type: str
    description: str
    elements: tuple[GenericElement, ...]
    tags: Tags
    content_hash: str
    payload: str  # the JSON as sent


_JSON_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def _describe(value: object) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return _JSON_NAMES.get(type(value), type(value).__name__)


class _Checker:
    """Collects `path: reason` errors while walking one event."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def fail(self, path: str, reason: str) -> None:
        self.errors.append(f"{path}: {reason}")

    def text(self, obj: dict[str, Any], key: str, path: str, limit: int, *, required: bool = True) -> str:
        if key not in obj:
            if required:
                self.fail(path + key, "missing")
            return ""
        value = obj[key]
        if not isinstance(value, str):
            self.fail(path + key, f"must be a string, got {_describe(value)}")
            return ""
        self.check_text(path + key, value, limit)
        return value

    def check_text(self, path: str, value: str, limit: int, *, what: str = "", empty: bool = False) -> bool:
        """Whether `value` may be stored; if not, say why at `path` (`what` names a key's fault)."""
        if not empty and not value.strip():
            self.fail(path, f"{what}must not be empty")
        elif "\x00" in value:
            self.fail(path, f"{what}must not contain NUL characters")
        elif len(value.encode("utf-8", "surrogatepass")) > limit:
            self.fail(path, f"{what}longer than {limit} bytes")
        else:
            return True
        return False

    def tags(self, obj: dict[str, Any], path: str) -> Tags:
        if "tags" not in obj:
            return ()
        value = obj["tags"]
        path += "tags"
        if not isinstance(value, dict):
            self.fail(path, f"must be an object, got {_describe(value)}")
            return ()
        tags: list[tuple[str, str]] = []
        for key, item in value.items():
            where = f"{path}.{key}"
            if not self.check_text(where, key, MAX_NAME_BYTES, what="key "):
                continue
            text = tag_value(item)
            if text is None:
                self.fail(where, f"must be a string, number or boolean, got {_describe(item)}")
            elif self.check_text(where, text, MAX_TEXT_BYTES, empty=True):
                tags.append((key, text))
        return tuple(tags)


def tag_value(value: object) -> str | None:
    """A tag value as stored: strings as they are, numbers and booleans in their JSON form."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return dumps(value).decode()
    return None


def validate_generic_event(doc: object, raw: bytes | None = None) -> GenericEvent:
    """Check one decoded generic event; return it ready to store, or raise InvalidEvent naming
    every field at fault (`elements[1].type: missing`)."""
    if not isinstance(doc, dict):
        raise InvalidEvent([f"event: must be a JSON object, got {_describe(doc)}"])
    check = _Checker()
    client_id: str | None = None
    if "id" in doc:
        client_id = check.text(doc, "id", "", MAX_NAME_BYTES) or None
    description = check.text(doc, "description", "", MAX_TEXT_BYTES)
    kind = check.text(doc, "type", "", MAX_NAME_BYTES)
    elements: list[GenericElement] = []
    if "elements" not in doc:
        check.fail("elements", "missing")
    elif not isinstance(doc["elements"], list):
        check.fail("elements", f"must be an array, got {_describe(doc['elements'])}")
    else:
        for position, item in enumerate(doc["elements"]):
            path = f"elements[{position}]"
            if not isinstance(item, dict):
                check.fail(path, f"must be an object, got {_describe(item)}")
                continue
            elements.append(
                GenericElement(
                    type=check.text(item, "type", path + ".", MAX_NAME_BYTES),
                    description=check.text(item, "description", path + ".", MAX_ELEMENT_BYTES),
                    tags=check.tags(item, path + "."),
                )
            )
    tags = check.tags(doc, "")
    if check.errors:
        raise InvalidEvent(check.errors)
    canonical = dumps(doc, sort_keys=True)
    digest = sha256(canonical).hex()
    if client_id is not None:
        event_id = str(uuid.uuid5(_CLIENT_ID_NAMESPACE, client_id))
    else:
        event_id = str(uuid.uuid4())
    return GenericEvent(
        event_id=event_id,
        client_id=client_id,
        type=kind,
        description=description,
        elements=tuple(elements),
        tags=tags,
        content_hash=digest,
        payload=(raw if raw is not None else dumps(doc)).decode("utf-8", "replace"),
    )
