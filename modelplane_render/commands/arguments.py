"""The options every rendering command shares, as argparse arguments, and how they become Options."""

from __future__ import annotations

from ..options import Options, parse_gateway, parse_namespace

TYPE_CHECKING = False  # argparse only for annotations: `render`, `validate` and `argocd generate` never build a parser
if TYPE_CHECKING:
    import argparse


def add_render_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", "-n", metavar="NS", help="namespace of replicas that set none")
    parser.add_argument("--gateway", metavar="NAMESPACE/NAME", help="render an HTTPRoute per replica, attached to this Gateway")


def options_from_args(args: argparse.Namespace) -> Options:
    return Options(namespace=parse_namespace(args.namespace), gateway=parse_gateway(args.gateway))
