"""Event ids and the SHA-256 that keeps the GIL (events/ids.py)."""

from __future__ import annotations

import hashlib
import random

import pytest

from headwater.events.ids import content_hash, event_id, sha256
from headwater.events.times import parse_event_time


@pytest.mark.parametrize("size", [0, 1, 2_046, 2_047, 2_048, 4_094, 4_095, 4_096, 100_000])
def test_sha256_in_pieces_is_the_digest_of_the_whole(size: int) -> None:
    data = random.Random(size).randbytes(size)
    assert sha256(data) == hashlib.sha256(data).digest()
    assert content_hash(data) == hashlib.sha256(data).digest()


def test_event_id_is_the_same_for_the_same_content_and_differs_otherwise() -> None:
    ticks = parse_event_time("2026-11-27T08:00:00.000Z")
    big = b'{"run":"' + b"x" * 5_000 + b'"}'  # hashed in pieces
    other = b'{"run":"' + b"x" * 4_999 + b'y"}'
    assert event_id(ticks, content_hash(big)) == event_id(ticks, content_hash(bytes(big)))
    assert event_id(ticks, content_hash(big)) != event_id(ticks, content_hash(other))
