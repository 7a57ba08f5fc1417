# Sourced by scripts/run and scripts/test: make ./.venv with Headwater installed, on a fresh
# Debian/Ubuntu machine too (installs python3-venv through apt when it is missing).
set -euo pipefail

_sudo() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
  echo "need root (or sudo) to run: $*" >&2; return 1; fi; }

_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "Headwater needs Python 3.11 or newer (apt-get install python3)" >&2; return 1
}

headwater_setup() {
  local extras="${1:-}"
  local py; py=$(_python)
  if [ ! -x .venv/bin/python ]; then
    if ! "$py" -c 'import ensurepip, venv' 2>/dev/null; then
      echo "installing python3-venv (apt)…" >&2
      _sudo apt-get update -qq && _sudo apt-get install -y -qq python3-venv >/dev/null
    fi
    "$py" -m venv .venv
  fi
  local stamp=".venv/.headwater-installed${extras:+-$extras}"
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "installing Headwater into .venv…" >&2
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e ".${extras:+[$extras]}"
    touch "$stamp"
  fi
}
