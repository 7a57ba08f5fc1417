"""The packages' arrows point one way (api → ingest/query → store → events; the pipeline hands the
store frames and never names a backend): every import in src/headwater, lazy ones included."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import headwater

SOURCE = Path(headwater.__file__).parent

# package → the Headwater packages it may import (besides itself)
ALLOWED = {
    "errors": set(),
    "lifetimes": set(),
    "config": {"errors"},
    "events": {"errors"},
    "store": {"config", "errors", "events"},
    "ingest": {"config", "errors", "events", "store"},
    "query": {"config", "errors", "events", "store"},
    "pipeline": {"config", "demo", "errors", "events", "store"},
    "api": {"config", "errors", "events", "ingest", "lifetimes", "query", "store", "ui"},
}
BACKEND_MODULES = ("headwater.store.sqlite", "headwater.store.postgres", "sqlite3", "psycopg")


def _imports() -> dict[str, set[str]]:
    """Module (dotted, under headwater) → every module it imports, anywhere in its code."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in SOURCE.rglob("*.py"):
        module = "headwater." + ".".join(path.relative_to(SOURCE).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found[module].update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found[module].add(node.module)
    return found


def _package(module: str) -> str:
    return module.split(".")[1]


def test_each_package_imports_only_the_stages_below_it() -> None:
    imports = _imports()
    assert len(imports) > 100  # the walk found the source
    wrong = []
    for module, names in sorted(imports.items()):
        package = _package(module)
        if package not in ALLOWED:  # the CLI modules and __main__ sit on top of everything
            continue
        for name in names:
            if name.startswith("headwater.") and _package(name) not in ALLOWED[package] | {package}:
                wrong.append(f"{module} imports {name}")
    assert not wrong, wrong


def test_nothing_below_the_cli_imports_the_api() -> None:
    imports = _imports()
    users = {m for m, names in imports.items() if any(n.startswith("headwater.api") for n in names)}
    assert {_package(m) for m in users} <= {"api", "cli"}, sorted(users)


def test_the_pipeline_names_no_store_backend() -> None:
    imports = _imports()
    named = [
        f"{module} imports {name}"
        for module, names in imports.items()
        if _package(module) == "pipeline"
        for name in names
        if name.startswith(BACKEND_MODULES)
    ]
    assert not named, named
