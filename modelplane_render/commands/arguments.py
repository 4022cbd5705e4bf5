"""The render settings' flags (options.SETTINGS) as argparse arguments, and how the parsed flags become Options."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..options import LIST, SWITCH, Options, command_settings, options_with, read

TYPE_CHECKING = False  # argparse only for annotations: `render`, `validate` and `argocd generate` never build a parser
if TYPE_CHECKING:
    import argparse


def add_render_options(parser: argparse.ArgumentParser, command: str) -> None:
    """The flags of `command`'s settings; diff takes a setting with a diff_help once per report."""
    for setting in command_settings(command):
        names = [n for n in (setting.option, setting.short) if n]
        repeat = setting.kind == LIST or (command == "diff" and setting.diff_help is not None)
        help_text = setting.diff_help if command == "diff" and setting.diff_help else setting.help
        if setting.kind == SWITCH:
            parser.add_argument(*names, dest=setting.dest, action="store_true", default=None, help=help_text)
        else:
            parser.add_argument(*names, dest=setting.dest, metavar=setting.metavar, action="append" if repeat else "store", help=help_text)


def unset(command: str) -> dict[str, Any]:
    """What argparse makes of a command line that gives none of `command`'s flags (main reads such lines without it)."""
    return {setting.dest: None for setting in command_settings(command)}


def options_from_args(args: argparse.Namespace, command: str, **fixed: Any) -> Options:
    """Options from the parsed flags of `command`; `fixed`: Options fields that no flag of this run changes."""
    settings = [s for s in command_settings(command) if s.field and s.field not in fixed]
    return replace(options_with({s.name: read(s, getattr(args, s.dest), s.option or s.name) for s in settings}), **fixed)


def given_flags(args: argparse.Namespace, command: str, *, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The flags of `command`'s settings given on this command line, as a command line again (for another
    modelplane-render to be given the same: diff's --base-renderer); `leave_out`: settings by name."""
    flags: list[str] = []
    for setting in command_settings(command):
        value = getattr(args, setting.dest, None)  # a setting the parsing command doesn't take is not given
        if value is None or setting.option is None or setting.name in leave_out:
            continue
        if setting.kind == SWITCH:
            if value:
                flags.append(setting.option)
        else:
            flags += [part for v in (value if isinstance(value, list) else [value]) for part in (setting.option, str(v))]
    return flags
