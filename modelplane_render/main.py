"""The command line: parse, dispatch to a command module, turn every failure into a message and an exit code."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn, Optional

from . import __version__
from .errors import EXIT_INVALID, EXIT_USAGE, InputError, RenderFailure, UsageError

PROG = "modelplane-render"
COMMANDS = {
    "render": "render the sources' objects to stdout",
    "validate": "check the sources, print nothing on success",
    "krm": "run as a KRM function (kustomize exec): a ResourceList on stdin, one on stdout",
    "argocd": "run as Argo CD's config-management plugin: `argocd generate` and `argocd discover` (argocd/plugin.yaml)",
    "diff": "compare the rendered objects at two git revisions (exit 3 when they differ)",
    "schema": "print the JSON Schema of a ModelReplica (or, with --crd, the CRD), derived from the CRD",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Render Modelplane ModelReplicas into the Kubernetes objects that serve them.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f".commands.{name}", __package__)
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        module = importlib.import_module(f".commands.{args.command}", __package__)
        code: int = module.run(args)
        return code
    except InputError as exc:
        sys.stderr.write("".join(f"{e}\n" for e in exc.errors))
        return EXIT_INVALID
    except UsageError as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return EXIT_USAGE
    except RenderFailure as exc:
        sys.stderr.write(f"{PROG}: {exc}\n")
        return EXIT_INVALID
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return EXIT_INVALID
    except Exception as exc:  # the last line of defence: never a traceback on a user's screen
        sys.stderr.write(f"{PROG}: internal error ({type(exc).__name__}: {exc}); please report it with the input that caused it\n")
        return EXIT_INVALID


def entry() -> NoReturn:
    sys.exit(main())
