"""Event ids (version-1 UUIDs from eventTime and content) and the node ids every API shares."""

from __future__ import annotations

import hashlib

from headwater.events.times import gregorian_ticks

# hashlib lets other threads run while it hashes 2,048 bytes or more in one call. In a server
# process that costs more than it gives: the event loop validating requests and the writer thread
# committing them then hand the GIL to each other on every event (a context switch each way), and
# a batch's events took 13-25% more CPU with the writer thread beside the validation than without
# it (bench/README.md, "The GIL handed over on every event"). Fed in smaller pieces, the hash
# object never releases it; the digest is the same.
_HELD_GIL_PIECE = 2_047


def sha256(data: bytes) -> bytes:
    """The SHA-256 digest of `data`, computed without releasing the GIL."""
    if len(data) <= _HELD_GIL_PIECE:
        return hashlib.sha256(data).digest()
    digest = hashlib.sha256()
    view = memoryview(data)
    for start in range(0, len(data), _HELD_GIL_PIECE):
        digest.update(view[start : start + _HELD_GIL_PIECE])
    return digest.digest()


def content_hash(canonical: bytes) -> bytes:
    """SHA-256 of an event's canonical JSON: equal content, equal hash, whatever the key order."""
    return sha256(canonical)


def event_id(ticks: int, digest: bytes) -> str:
    """A version-1 UUID whose timestamp is the eventTime and whose other 62 bits come from the hash.

    The same event sent twice gets the same id; two different events at the same 100 ns differ
    in the hash bits, so they never collide the way millisecond-truncated time UUIDs do.
    """
    timestamp = gregorian_ticks(ticks)
    time_low = timestamp & 0xFFFFFFFF
    time_mid = (timestamp >> 32) & 0xFFFF
    time_hi_version = ((timestamp >> 48) & 0x0FFF) | 0x1000
    tail = int.from_bytes(digest[:8], "big")
    clock_seq = ((tail >> 48) & 0x3FFF) | 0x8000  # RFC 4122 variant
    node = (tail & 0xFFFFFFFFFFFF) | 0x010000000000  # multicast bit: not a MAC address
    value = (time_low << 96) | (time_mid << 80) | (time_hi_version << 64) | (clock_seq << 48) | node
    digits = f"{value:032x}"  # what str(uuid.UUID(int=value)) writes, without building one
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def dataset_node_id(namespace: str, name: str) -> str:
    return f"dataset:{namespace}:{name}"


def job_node_id(namespace: str, name: str) -> str:
    return f"job:{namespace}:{name}"


def run_node_id(run_id: str) -> str:
    return f"run:{run_id}"
