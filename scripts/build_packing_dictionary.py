"""Build the Zstandard dictionary of packing format 2 (src/headwater/store/packing_cores_2.zdict).

The dictionary is trained on the cores of the demo lineage's events (`headwater.demo.lineage`,
not the benchmarks' events), so it holds entropy tables as well as common strings: a core packed
with it costs about two thirds of format 1's time (whose dictionary is raw content, so every frame
builds its tables anew). Training is deterministic: this script writes the same bytes every time,
and `headwater.store.packing` refuses a file whose SHA-256 is not the one it pins. A released
format's dictionary never changes (stored cores are read with it); a better one is a new format.

    .venv/bin/python scripts/build_packing_dictionary.py [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import zstandard

from headwater.demo.lineage import stream_events
from headwater.events.validate import validate_event

TARGET = Path(__file__).resolve().parent.parent / "src/headwater/store/packing_cores_2.zdict"
EVENTS, SEED, SIZE, LEVEL = 6_000, 3, 8_192, 3


def build() -> bytes:
    cores: list[bytes | bytearray | memoryview] = []
    for doc in stream_events(EVENTS, seed=SEED):
        event = validate_event(doc)
        if event.core is not None:
            cores.append(event.core.encode())
    return zstandard.train_dictionary(SIZE, cores, level=LEVEL).as_bytes()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args()
    built = build()
    if args.check:
        same = TARGET.read_bytes() == built
        print("the same" if same else "DIFFERENT", hashlib.sha256(built).hexdigest())
        return 0 if same else 1
    TARGET.write_bytes(built)
    print(f"wrote {TARGET} ({len(built)} bytes, SHA-256 {hashlib.sha256(built).hexdigest()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
