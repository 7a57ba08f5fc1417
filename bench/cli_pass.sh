#!/usr/bin/env bash
# How long `headwater pipeline run -q` takes as a user meets it, timed whole (JVM start included):
# the demo lineage stored in a fresh SQLite store, then two passes, the second one's only new events
# being the first pass's two dogfood events.
#
#   bench/cli_pass.sh                 # this checkout
#   bench/cli_pass.sh /other/src      # another checkout's src/ (before/after comparisons)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$repo/src}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
PYTHONPATH=$src "$repo/.venv/bin/python" - <<'PY'
import orjson
from headwater.demo.lineage import demo_events
from headwater.events.validate import validate_event
from headwater.store import open_store

store = open_store("sqlite:///bench.db")
events = [validate_event(doc, orjson.dumps(doc)) for doc in demo_events()]
print("demo events stored:", sum(store.append(events, "2026-11-25T00:00:00.0000000Z")))
store.close()
PY
for pass in 1 2; do
  start=$(date +%s.%N)
  PYTHONPATH=$src "$repo/.venv/bin/python" -m headwater pipeline run -q --database-url sqlite:///bench.db >/dev/null 2>&1
  end=$(date +%s.%N)
  printf 'pass %d: %.1f s\n' "$pass" "$(echo "$end - $start" | bc)"
done
