"""The command line: parse, dispatch to a command module, turn every failure into a message and an exit code."""

from __future__ import annotations

import gc
import importlib
import os
import sys

from . import __version__
from .cache.directory import ENV_CACHE_DIR
from .cache.render import answer
from .commands import writer
from .errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    InputError,
    InternalError,
    RenderFailure,
    UsageError,
    bounded,
    error_line,
    printable,
    tool_line,
)

# Light by design (startup.CACHE_HIT): argparse, re and typing are imported only when
# needed, and a command's module only when it runs, so a render-cache hit costs little more than
# the interpreter's start-up (argparse alone would double that).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, NoReturn, Optional

PROG = "modelplane-render"
# The modules of pyproject.toml's dependencies, and the distribution each comes from: a run without
# one is a setup to fix, not a bug (tests/test_commands.py holds this equal to pyproject's list).
DEPENDENCIES = {"yaml": "PyYAML", "jinja2": "Jinja2", "markupsafe": "Jinja2", "ruamel": "ruamel.yaml", "cel_expr_python": "cel-expr-python"}
COMMANDS = {
    "render": "render the sources' objects to stdout",
    "validate": "check the sources, print nothing on success",
    "krm": "run as a KRM function (kustomize exec): a ResourceList on stdin, one on stdout",
    "argocd": "run as Argo CD's config-management plugin: `argocd generate` and `argocd discover` (argocd/plugin.yaml)",
    "diff": "compare the rendered objects at two git revisions (exit 3 when they differ)",
    "schema": "print the JSON Schema of a ModelReplica (or, with --crd, the CRD), derived from the CRD",
}


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser, with the arguments of `command` (the one about to run) only.

    Every command is listed (for --help and for an unknown name's error), but only the one
    given is imported to declare its arguments: each command module imports what it runs.
    """
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(f"{message} (see {self.prog} --help)")

    parser = _Parser(prog=PROG, description="Render Modelplane ModelReplicas into the Kubernetes objects that serve them.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, help_text in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            _command_module(name).add_arguments(command_parser)
    return parser


def _command_module(name: str) -> Any:
    return importlib.import_module(f".commands.{name}", __package__)


def _command_named(arguments: list[str]) -> Optional[str]:
    """The command a command line runs: its first word that is not an option (options come after it)."""
    first = next((a for a in arguments if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        arguments = list(sys.argv[1:] if argv is None else argv)
        stored = _from_cache(arguments)
        if stored is not None:
            writer.write_stdout(stored)
            return EXIT_OK
        args = _plain_command_line(arguments) or build_parser(_command_named(arguments)).parse_args(arguments)
        code: int = _command_module(args.command).run(args)
        return code
    except InputError as exc:
        writer.write_stderr(*(error_line(e) for e in exc.errors))
        return EXIT_INVALID
    except UsageError as exc:
        # A structured setting's problems (options.SettingProblems): a line each, every one at once.
        writer.write_stderr(*(tool_line(line) for line in getattr(exc, "lines", None) or [str(exc)]))
        return EXIT_USAGE
    except RenderFailure as exc:
        writer.write_stderr(tool_line(str(exc)))
        return EXIT_INVALID
    except KeyboardInterrupt:
        writer.write_stderr(f"{PROG}: interrupted")
        return EXIT_INTERRUPTED
    except MemoryError:
        writer.write_stderr(
            f"{PROG}: out of memory (the input is within the limits docs/validation.md states, but this machine has too little memory)"
        )
        return EXIT_INVALID
    except ModuleNotFoundError as exc:
        distribution = DEPENDENCIES.get((exc.name or "").split(".")[0])
        if distribution is None:
            _report_internal(f"({type(exc).__name__}: {exc})", exc)
            return EXIT_INTERNAL
        writer.write_stderr(
            f"{PROG}: {distribution} is not installed ({exc}), and {PROG} needs it: install {PROG} with pip, which "
            f"brings its dependencies ({', '.join(sorted(set(DEPENDENCIES.values())))}), or run it from the venv it is installed in"
        )
        return EXIT_USAGE
    except InternalError as exc:
        _report_internal(str(exc), exc)
        return EXIT_INTERNAL
    except Exception as exc:  # the last line of defence: never a traceback on a user's screen (unless asked for)
        _report_internal(f"({type(exc).__name__}: {exc})", exc)
        return EXIT_INTERNAL


ENV_DEBUG = "MODELPLANE_RENDER_DEBUG"


def _report_internal(what: str, exc: BaseException) -> None:
    """A bug of ours: what went wrong, the version, how to report it; the traceback too with MODELPLANE_RENDER_DEBUG=1."""
    if os.environ.get(ENV_DEBUG) == "1":
        import traceback

        writer.write_stderr(*"".join(traceback.format_exception(exc)).rstrip("\n").split("\n"))
    writer.write_stderr(
        f"{PROG}: internal error {printable(bounded(what))}: a bug of {PROG} {__version__}, not of the input; "
        f"please report it with the input that caused it ({ENV_DEBUG}=1 prints the traceback)"
    )


def _plain_command_line(arguments: list[str]) -> Any:
    """What argparse makes of the command lines run most, without building the parser.

    `render PATH...` and `validate PATH...` with no option (no argument starting with `-`), and
    Argo CD's `argocd generate`: building the parser of every command costs more than a cold
    render's own work on one replica. Anything else is None, and argparse parses it;
    tests/test_commands.py holds both equal.
    """
    from types import SimpleNamespace

    if arguments[:1] in (["render"], ["validate"]) and not any(a.startswith("-") for a in arguments[1:]):
        from .commands.arguments import unset

        return SimpleNamespace(command=arguments[0], paths=arguments[1:] or ["."], **unset(arguments[0]))
    if arguments == ["argocd", "generate"]:
        return SimpleNamespace(command="argocd", argocd_command="generate")
    return None


def _from_cache(arguments: list[str]) -> Optional[str]:
    """The render cache's stored output for this command line, when it is on and has it (cache.render.answer)."""
    return answer(arguments, os.environ) if os.environ.get(ENV_CACHE_DIR) else None


def entry() -> NoReturn:
    # A process renders once and exits, and a render makes no reference cycles worth collecting
    # (peak memory of 1000 replicas is the same without the collector): the cyclic collector's
    # passes over a growing heap only cost time, 19% of a render of 1000 replicas.
    gc.disable()
    sys.exit(main())
