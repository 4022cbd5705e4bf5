"""`render [PATH ...]`: print every rendered object of the sources as one YAML stream."""

from __future__ import annotations

import os

from ..cache.directory import ENV_CACHE_DIR
from ..cache.render import cached, render_key
from ..errors import EXIT_OK
from ..walk import STDIN
from . import writer
from .arguments import add_render_options, options_from_args
from .kustomized import build, kustomize_app_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", default=["."], metavar="PATH", help="files or directories, or - for standard input (default: .)"
    )
    add_render_options(parser, "render")


def run(args: argparse.Namespace) -> int:
    built = kustomize_app_of(args.paths, "render", args)
    if built is not None:
        text, _ = build(built, shown=built)
        writer.write_stdout(text)
        return EXIT_OK
    options = options_from_args(args, "render")

    def produce() -> list[str]:
        # Deferred (startup.DEFERRED): a render-cache hit found after parsing loads no stage.
        from ..pipeline import render_paths

        return render_paths(list(args.paths), options, keep_objects=False).chunks

    # Standard input can't be hashed before it is read: such a run is never cached. Without a cache
    # the objects' parts are written as they are, never joined (10,000 replicas print 100 MB).
    if STDIN in args.paths or not os.environ.get(ENV_CACHE_DIR):
        writer.write_stdout(produce())
    else:
        writer.write_stdout(cached(args.paths, lambda: "".join(produce()), key=render_key(options)))
    return EXIT_OK
