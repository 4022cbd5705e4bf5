"""`diff BASE [HEAD] [-- PATH ...]`: what a change does to the rendered objects, for review.

Revisions first, then the paths after `--`, as git takes them. Exit 0 when the rendered output is
the same at both revisions, 3 when it differs (CI can tell a change from a failure), 1 on invalid
input at either revision (and no diff), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import NoReturn

from ..errors import EXIT_DIFFERS, EXIT_OK, UsageError
from ..frontends.diff.compare import compare
from ..frontends.diff.report import format_markdown_per_cluster, format_text_per_cluster
from ..frontends.diff.sides import BaseRenderer, render_pairs
from ..options import LIST, command_settings
from ..options.parsers import parse_cluster
from . import writer
from .arguments import add_render_options, given_flags, options_from_args
from .kustomized import refuse_render_flags

USAGE = "%(prog)s [options] BASE [HEAD] [-- PATH ...]"
FORMATS = ("text", "markdown")
COLOURS = ("auto", "always", "never")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see modelplane-render diff --help)")


def _add_options(parser: argparse.ArgumentParser) -> None:
    add_render_options(parser, "diff")
    parser.add_argument("--format", choices=FORMATS, default=None, help="text (default) or markdown, for a pull-request comment")
    parser.add_argument(
        "--color", "--colour", dest="color", choices=COLOURS, default=None, help="colour the text diff (default: auto, on a terminal)"
    )
    parser.add_argument("-U", "--unified", type=int, default=None, metavar="N", help="lines of context around each change (default: 3)")
    parser.add_argument(
        "--base-renderer",
        default=None,
        metavar="COMMAND",
        help="render BASE with this modelplane-render instead (a command line, e.g. the previous release's "
        "/opt/mpr-0.1/bin/modelplane-render): review an upgrade of the renderer, with BASE and HEAD the same revision",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = USAGE
    parser.description = (
        "Render PATH (default: .) at two git revisions and compare the objects: a summary of added, removed and changed objects, "
        "then a unified YAML diff per object. HEAD defaults to the work tree. Revisions are read from git's objects; the checkout "
        "and the index are never touched. Exit codes: 0 same output, 3 different output, 1 invalid input, 2 usage error."
    )
    _add_options(parser)
    # Everything from the first revision on, `--` included: argparse would drop the `--` that separates revisions from paths.
    parser.add_argument("words", nargs=argparse.REMAINDER, metavar="BASE [HEAD] [-- PATH ...]", help=argparse.SUPPRESS)


def _split(args: argparse.Namespace) -> argparse.Namespace:
    """Options given after the first revision, the revisions, and the paths after `--`."""
    words: list[str] = list(args.words)
    before, paths = (words[: words.index("--")], words[words.index("--") + 1 :]) if "--" in words else (words, [])
    inner = _Parser(prog="modelplane-render diff", usage=USAGE, add_help=False)
    _add_options(inner)
    inner.add_argument("revisions", nargs="*")
    late = inner.parse_intermixed_args(before)
    # A flag given before the revisions and again after: a repeatable one has both, a switch is on
    # if either turns it on, and text given later wins.
    for setting in command_settings("diff"):
        _merge(args, late, setting.dest, repeatable=setting.kind == LIST or setting.diff_help is not None)
    for dest in ("format", "color", "unified", "base_renderer"):
        _merge(args, late, dest, repeatable=False)
    if not late.revisions:
        raise UsageError("a BASE revision is required (see modelplane-render diff --help)")
    if len(late.revisions) > 2:
        raise UsageError(f"at most two revisions, got {len(late.revisions)}: put paths after -- (see modelplane-render diff --help)")
    late.paths = paths or ["."]
    return late


def _merge(early: argparse.Namespace, late: argparse.Namespace, dest: str, *, repeatable: bool) -> None:
    before, after = getattr(early, dest), getattr(late, dest)
    if repeatable:
        setattr(late, dest, (before or []) + (after or []) or None)
    elif after is None:
        setattr(late, dest, before)


def run(args: argparse.Namespace) -> int:
    args = _split(args)
    # One comparison per cluster asked for (in the order given, each once), or one of every replica.
    clusters = list(dict.fromkeys(parse_cluster(c) for c in args.cluster or [])) or [None]
    context = 3 if args.unified is None else args.unified
    if context < 0:
        raise UsageError("--unified must be 0 or more")
    base, head = args.revisions[0], (args.revisions[1] if len(args.revisions) == 2 else None)
    base_renderer = None
    if args.base_renderer is not None:
        command = tuple(shlex.split(args.base_renderer))
        if not command:
            raise UsageError("--base-renderer needs a command")
        # An empty side is shown, not refused, as with this renderer (options_from_args below).
        flags = given_flags(args, "render", leave_out=("cluster", "allow-empty"))
        base_renderer = BaseRenderer(command, (*flags, "--allow-empty"))
    comparisons = []
    for cluster in clusters:
        # An empty side is shown (loudly, by compare's notes), not refused: that is what review is for.
        options = options_from_args(args, "diff", cluster=cluster, allow_empty=True)
        renderer = base_renderer
        if renderer is not None and cluster is not None:
            renderer = BaseRenderer(renderer.command, (*renderer.arguments, "--cluster", cluster))
        for pair in render_pairs(base, head, args.paths, options, renderer):
            if pair.app is not None:
                refuse_render_flags(args, "diff", pair.app)
            comparisons.append(compare(pair.base, pair.head, context=context, cluster=cluster, app=pair.app))
    if args.format == "markdown":
        text = format_markdown_per_cluster(comparisons)
    else:
        colour = args.color or "auto"
        on_terminal = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        text = format_text_per_cluster(comparisons, colour=colour == "always" or (colour == "auto" and on_terminal))
    writer.write_stdout(text)
    return EXIT_DIFFERS if any(c.changes for c in comparisons) else EXIT_OK
