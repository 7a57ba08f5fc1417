"""The OpenLineage event model: decoding, validation, event kinds, event ids and node ids."""

from headwater.events.model import Event, EventKind
from headwater.events.validate import validate_event

__all__ = ["Event", "EventKind", "validate_event"]
