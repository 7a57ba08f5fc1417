"""docs/cli.md equals the `--help` of every `headwater` command (commands added later included),
and each option that sets a setting shows that setting's variable and real default."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import click
import pytest

from headwater.cli import main
from headwater.cli_options import SettingOption

REPO = Path(__file__).resolve().parent.parent
FIX = "run `.venv/bin/python scripts/cli_reference.py` and commit docs/cli.md"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cli_reference = _generator()


def _walk(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _walk(command, (*path, name))
        else:
            found.append((*path, name))
    return found


def test_docs_cli_md_equals_help() -> None:
    documented = (REPO / "docs" / "cli.md").read_text()
    headings = set(re.findall(r"^## `headwater ?(.*)`$", documented, re.M))
    commands = {" ".join(path) for path in _walk(main)}
    assert headings == commands, f"docs/cli.md does not list every command: {FIX}"
    assert documented == cli_reference.reference(), f"docs/cli.md differs from --help: {FIX}"


def test_a_new_command_is_picked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    @click.command("retention-example")
    def example() -> None:
        """A command added after the reference was written."""

    monkeypatch.setitem(main.commands, "retention-example", example)
    assert ("retention-example",) in list(cli_reference.command_paths())
    assert "## `headwater retention-example`" in cli_reference.reference()
    assert "A command added after the reference was written." in cli_reference.reference()


@pytest.mark.parametrize("path", [(), ("serve",), ("db", "backup")], ids=["main", "serve", "db-backup"])
def test_reference_is_the_help_the_command_prints(path: tuple[str, ...]) -> None:
    """Through the installed `headwater` script in a 100-column terminal, not only click's runner."""
    printed = subprocess.run(
        [str(Path(sys.executable).parent / "headwater"), *path, "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout
    assert printed == cli_reference.help_text(path)


def _setting_options(group: click.Group = main) -> list[tuple[str, SettingOption]]:
    found = []
    for path in _walk(group):
        command: click.Command = group
        for name in path:
            assert isinstance(command, click.Group)
            command = command.commands[name]
        found += [(" ".join(path), p) for p in command.params if isinstance(p, SettingOption)]
    return found


def test_setting_options_show_the_registry_default() -> None:
    options = _setting_options()
    assert {option.setting.name for _, option in options} >= {
        "database_url",
        "host",
        "port",
        "write_keys",
        "workers",
        "spark_master",
        "pipeline_interval",
        "pipeline_dogfood",
    }
    for command, option in options:
        assert option.default is None, f"{command} {option.opts}: the option would hide the setting"
        help_text = cli_reference.help_text(tuple(command.split()) if command else ())
        flat = " ".join(help_text.split())
        shown = option.setting.shown_default or "none"
        assert f"[env var: {option.setting.env}; default: {shown}]" in flat, (command, option.opts)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve", "--workers", "-1"], "'--workers': -1 is not 0 (one per core) or more"),
        (["serve", "--max-body-bytes", "lots"], "'--max-body-bytes': 'lots' is not a size"),
        (["pipeline", "run", "--interval", "soon"], "'--interval': 'soon' is not a duration"),
    ],
)
def test_setting_options_parse_like_the_variables(args: list[str], message: str) -> None:
    from click.testing import CliRunner

    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and message in result.stderr, result.output
