"""What the `headwater` commands share: options that set a setting (their help, shown default and
parsing come from the settings registry in config.py, so a default is written once), and the
settings and logging of a command."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from headwater.config import Setting, Settings, load_settings, setting
from headwater.errors import HeadwaterError

if TYPE_CHECKING:  # generic in newer click only
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


class SettingType(_ParamType):
    """Reads an option's text as the setting's `HEADWATER_*` variable is read (`16MiB`, `500ms`)."""

    def __init__(self, entry: Setting) -> None:
        self.entry = entry
        self.name = entry.parse.__name__.strip("_") if entry.parse is not str else "text"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return {
            "int": "INTEGER",
            "count": "INTEGER",
            "processes": "INTEGER",
            "size": "SIZE",
            "seconds": "SECONDS",
            "float": "FLOAT",
        }.get(self.name, "TEXT")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self.entry.parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class SettingOption(click.Option):
    """An option whose value, when given, overrides one setting; its help says which variable
    sets it otherwise and the registry's default (the option itself defaults to None: keep)."""

    def __init__(self, *args: Any, setting_name: str, **kwargs: Any) -> None:
        self.setting = setting(setting_name)
        kwargs.setdefault("help", self.setting.help)
        if isinstance(self.setting.default, bool):  # a flag: --name, or --name/--no-name
            kwargs.setdefault("is_flag", True)
        else:
            kwargs.setdefault("type", SettingType(self.setting))
        super().__init__(*args, **kwargs)

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        extra["envvars"] = (self.setting.env,)
        extra["default"] = self.setting.shown_default or "none"
        return extra


def setting_option(*decls: str, setting_name: str, **kwargs: Any) -> Callable[[Any], Any]:
    """`click.option(*decls)` for the setting `setting_name`; the parameter is named after the
    setting unless `decls` names it."""
    if not any(decl.isidentifier() for decl in decls):
        decls = (*decls, setting_name)
    return click.option(*decls, cls=SettingOption, setting_name=setting_name, default=None, **kwargs)


database_option = setting_option("--database-url", setting_name="database_url")
log_level_option = setting_option("--log-level", setting_name="log_level")


def command_settings(ctx: click.Context, **overrides: Any) -> Settings:
    """The settings of a command: the file `--config` names (or the default one), the environment,
    then the options given (None: not given)."""
    config_file = ctx.find_root().params.get("config")
    try:
        return load_settings(config_file=config_file).override(**overrides)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None


def setup_logging(level: str) -> None:
    """Headwater's log lines on standard error at `level`. py4j (PySpark's bridge to the JVM)
    logs only its warnings: at INFO it ends every one-off pass with "Closing down clientserver
    connection", and at DEBUG it logs every call into the JVM."""
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)
