"""`render [PATH ...]`: print every rendered object of the sources as one YAML stream."""

from __future__ import annotations

from .. import writer
from ..cli_options import add_render_options, options_from_args
from ..errors import EXIT_OK

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    add_render_options(parser)


def run(args: argparse.Namespace) -> int:
    from ..cache import render_text

    writer.write_stdout(render_text(args.paths, options_from_args(args)))
    return EXIT_OK
