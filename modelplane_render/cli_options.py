"""The options every rendering front end shares, and how they become plan.Options."""

from __future__ import annotations

import re

from .errors import UsageError
from .options import Options

TYPE_CHECKING = False  # argparse only for annotations: `render`, `validate` and `argocd generate` never build a parser
if TYPE_CHECKING:
    import argparse

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def add_render_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", "-n", metavar="NS", help="namespace of replicas that set none")
    parser.add_argument("--gateway", metavar="NAMESPACE/NAME", help="render an HTTPRoute per replica, attached to this Gateway")


def parse_namespace(value: str | None, source: str = "--namespace") -> str | None:
    if value is None or value == "":
        return None
    if len(value) > 63 or not _DNS_LABEL.match(value):
        raise UsageError(f"{source} {value!r} is not a namespace name (a DNS label: lowercase letters, digits and '-')")
    return value


def parse_gateway(value: str | None, source: str = "--gateway") -> tuple[str, str] | None:
    if value is None or value == "":
        return None
    parts = value.split("/")
    if len(parts) != 2 or not all(len(p) <= 63 and _DNS_LABEL.match(p) for p in parts):
        raise UsageError(f"{source} {value!r} must be NAMESPACE/NAME of a Gateway")
    return parts[0], parts[1]


def options_from_args(args: argparse.Namespace) -> Options:
    return Options(namespace=parse_namespace(args.namespace), gateway=parse_gateway(args.gateway))
