"""Dead letters as the API and the CLI show them: where the message came from, why, and its bytes."""

from __future__ import annotations

import base64
from typing import Any

from headwater.store.base import DeadLetter


def _bytes_json(prefix: str, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {prefix: None}
    try:
        return {prefix: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {prefix + "Base64": base64.b64encode(data).decode("ascii")}


def dead_letter_json(letter: DeadLetter) -> dict[str, Any]:
    """`value` (and `key`) as text when it is UTF-8, else as `valueBase64` (`keyBase64`)."""
    return {
        "id": letter.id,
        "topic": letter.topic,
        "partition": letter.partition,
        "offset": letter.offset,
        **_bytes_json("key", letter.key),
        "error": letter.error,
        "receivedAt": letter.received_at,
        "valueBytes": len(letter.value) if letter.value is not None else 0,
        **_bytes_json("value", letter.value),
    }
