"""The options every rendering command shares, as argparse arguments, and how they become Options."""

from __future__ import annotations

from typing import Any

from ..options import (
    DEFAULT_TOLERATIONS,
    Options,
    parse_cluster,
    parse_gateway,
    parse_namespace,
    parse_node_pool_label,
    parse_tolerations,
    platform,
)

TYPE_CHECKING = False  # argparse only for annotations: `render`, `validate` and `argocd generate` never build a parser
if TYPE_CHECKING:
    import argparse


def add_render_options(parser: argparse.ArgumentParser, *, clusters: bool = False) -> None:
    """The options of every rendering command; `clusters`: --cluster may be given several times (diff: one report each)."""
    parser.add_argument("--namespace", "-n", metavar="NS", help="namespace of replicas that set none")
    parser.add_argument("--gateway", metavar="NAMESPACE/NAME", help="render an HTTPRoute per replica, attached to this Gateway")
    parser.add_argument(
        "--picker-plaintext",
        action="store_true",
        help="the endpoint picker serves plaintext gRPC (--secure-serving=false), for a gateway that can't speak TLS to it",
    )
    parser.add_argument(
        "--node-pool-label",
        metavar="KEY",
        help="the node label a member's nodePoolName selects (default: modelplane.ai/pool; GKE: cloud.google.com/gke-nodepool)",
    )
    default = ", ".join(f"{k}:{e}" for k, _, e in DEFAULT_TOLERATIONS)
    parser.add_argument(
        "--toleration",
        metavar="KEY[=VALUE][:EFFECT]",
        action="append",
        help=f"a taint every engine pod tolerates, repeatable, replacing the default ({default}); `none` for no toleration",
    )
    if clusters:
        parser.add_argument(
            "--cluster",
            metavar="NAME",
            action="append",
            help="compare only the replicas pinned to cluster NAME; repeat it for a report per cluster",
        )
    else:
        parser.add_argument(
            "--cluster", metavar="NAME", help="render only the replicas whose spec.clusterName is NAME (the others are still validated)"
        )


def add_allow_empty(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="succeed with no object rendered from a replica (by default an error: Argo CD prunes whatever an app no longer renders)",
    )


def options_from_args(args: argparse.Namespace, *, allow_empty: bool = False) -> Options:
    return Options(
        namespace=parse_namespace(args.namespace),
        gateway=parse_gateway(args.gateway),
        cluster=parse_cluster(args.cluster),
        allow_empty=allow_empty or getattr(args, "allow_empty", False),  # validate has no --allow-empty
        picker_plaintext=args.picker_plaintext,
        **platform_options(args),
    )


def platform_options(args: argparse.Namespace) -> dict[str, Any]:
    """--node-pool-label and --toleration, as Options fields (only those given: the rest keep their defaults)."""
    return platform(parse_node_pool_label(args.node_pool_label), parse_tolerations(args.toleration))
