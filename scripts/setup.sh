# Sourced by scripts/run and scripts/test: make ./.venv with Headwater installed, on a fresh
# Debian/Ubuntu machine too (installs python3-venv through apt when it is missing), with a Java 17+
# runtime for Spark (pyspark 4 needs one; installed through apt when there is none).
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

# Major version of the Java runtime $1 (a java command), 0 when it does not run: "1.8.0_292" is 8,
# "17.0.15" is 17, "21" is 21, "23-ea" is 23.
_java_major() {
  local out re='version "([0-9]+)(\.([0-9]+))?'
  out=$("$1" -version 2>&1) || { echo 0; return 0; }
  if [[ $out =~ $re ]]; then
    if [ "${BASH_REMATCH[1]}" = 1 ]; then echo "${BASH_REMATCH[3]:-0}"; else echo "${BASH_REMATCH[1]}"; fi
  else
    echo 0
  fi
}

# The home of a Java 17+ runtime on this machine (the java on PATH, else one in /usr/lib/jvm), or nothing.
_java17_home() {
  local java
  if java=$(command -v java) && [ "$(_java_major "$java")" -ge 17 ]; then
    java=$(readlink -f "$java"); echo "${java%/bin/java}"; return 0
  fi
  for java in /usr/lib/jvm/*/bin/java; do
    if [ -x "$java" ] && [ "$(_java_major "$java")" -ge 17 ]; then
      java=$(readlink -f "$java"); echo "${java%/bin/java}"; return 0
    fi
  done
}

# Spark runs $JAVA_HOME/bin/java when JAVA_HOME is set, else the java on PATH: make that a Java 17+,
# installing one through apt (openjdk-17-jre-headless, else default-jre-headless) when there is none.
headwater_java() {
  local home
  if [ -n "${JAVA_HOME:-}" ]; then
    [ "$(_java_major "$JAVA_HOME/bin/java")" -ge 17 ] && return 0
  elif [ "$(_java_major java)" -ge 17 ]; then
    return 0
  fi
  home=$(_java17_home)
  if [ -z "$home" ]; then
    echo "installing a Java 17 runtime for Spark (apt)…" >&2
    { _sudo apt-get update -qq &&
      _sudo mkdir -p /usr/share/man/man1 && # openjdk's postinst needs it on slim images
      { _sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null ||
        _sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null; }
    } || true
    hash -r
    home=$(_java17_home)
    if [ -z "$home" ]; then
      echo "Spark needs Java 17 or newer: install one (apt-get install openjdk-17-jre-headless)" \
        "and put it on PATH or in JAVA_HOME" >&2
      return 1
    fi
  fi
  if [ -n "${JAVA_HOME:-}" ] || [ "$(_java_major java)" -lt 17 ]; then
    echo "Spark will use the Java runtime in $home (JAVA_HOME=${JAVA_HOME:-<unset>} before)" >&2
    export JAVA_HOME="$home"
  fi
}

# The lean validation path compiled (native/lean, Rust, a fifth less CPU an event validated):
# built offline against the crates Debian packages, installed through apt with a Rust compiler
# when missing, into src/headwater/events/ (rebuilt when its sources are newer). Without it
# Headwater validates the same events in Python. It also holds the pipeline's compactor
# (compact.rs), which Python's code replaces the same way when it is missing.
_NATIVE_PACKAGES="cargo rustc librust-pyo3-dev librust-sha2-dev"
headwater_native() {
  local built=src/headwater/events/_lean_native.so
  if [ -f "$built" ] && [ -z "$(find native/lean/src native/lean/Cargo.toml -newer "$built")" ]; then
    return 0
  fi
  # shellcheck disable=SC2086
  if ! command -v cargo >/dev/null || ! dpkg -s $_NATIVE_PACKAGES >/dev/null 2>&1; then
    echo "installing Rust and the crates of the compiled validation (apt)…" >&2
    # shellcheck disable=SC2086
    { _sudo apt-get update -qq &&
      _sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $_NATIVE_PACKAGES >/dev/null; } || true
    hash -r
  fi
  echo "building the compiled validation (native/lean)…" >&2
  rm -f native/lean/Cargo.lock # resolved again against the packaged crates, whatever cargo wrote it
  if (cd native/lean && PYO3_PYTHON="$PWD/../../.venv/bin/python" cargo build --release --quiet); then
    # a new file renamed into place: a process running with the old one keeps its own copy
    cp native/lean/target/release/lib_lean_native.so "$built.new" && mv -f "$built.new" "$built"
  else
    echo "could not build native/lean: Headwater validates events in Python (slower)" >&2
  fi
}

headwater_setup() {
  local extras="${1:-}"
  local py; py=$(_python)
  headwater_java
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
  headwater_native
  # Spark's classes recorded once per machine (and per Java and pyspark): every later Spark start
  # maps them instead of loading them, about 4 s less a `pipeline run` (bench/README.md)
  .venv/bin/headwater pipeline prepare --quiet ||
    echo "could not record Spark's classes: Spark will start without them" >&2
}
