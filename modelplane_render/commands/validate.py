"""`validate [PATH ...]`: the checks of `render`, nothing printed on success (pre-commit, CI)."""

from __future__ import annotations

from ..errors import EXIT_OK
from ..pipeline import render_paths
from .arguments import add_render_options, options_from_args
from .kustomized import build, kustomize_app_of

TYPE_CHECKING = False  # argparse only for annotations: `render`, `validate` and `argocd generate` never build a parser
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", default=["."], metavar="PATH", help="files or directories, or - for standard input (default: .)"
    )
    add_render_options(parser, "validate")


def run(args: argparse.Namespace) -> int:
    built = kustomize_app_of(args.paths, "validate", args)
    if built is not None:
        build(built, shown=built)  # the function validates; kustomize says what it refused
        return EXIT_OK
    # Render too, in memory: a replica is only valid if its output passes the output checks. No replica
    # is fine here (a pre-commit run may touch none): only a render for a cluster must yield objects.
    render_paths(args.paths, options_from_args(args, "validate", allow_empty=True))
    return EXIT_OK
