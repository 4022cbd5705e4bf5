"""`argocd generate|discover`: the commands argocd/plugin.yaml runs in Argo CD's plugin sidecar.

Both run in the app's source directory, as argocd-cmp-server starts them, and take no paths.
`generate` prints the objects (stdout holds only them); on any fault stdout is empty, the
exit code is non-zero and stderr's first line is the first fault, `file:line:col: field:
message` (the Argo CD UI shows it after `` `modelplane-render argocd generate` failed exit status
1: ``). `discover` prints the first file that declares a ModelReplica, or nothing.
"""

from __future__ import annotations

import os

from ..errors import EXIT_OK
from ..frontends import argocd
from . import writer

TYPE_CHECKING = False  # argparse only for annotations: `render`, `validate` and `argocd generate` never build a parser
if TYPE_CHECKING:
    import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="argocd_command", metavar="SUBCOMMAND", parser_class=type(parser))
    sub.required = True
    sub.add_parser(
        "generate",
        help="print the objects of the app in the current directory (plugin.yaml's generate.command)",
        description="Render the app in the current directory from Argo CD's plugin environment: ARGOCD_APP_PARAMETERS, "
        "ARGOCD_ENV_MODELPLANE_*, ARGOCD_APP_NAMESPACE and KUBE_API_VERSIONS (see the README's Argo CD section).",
    )
    sub.add_parser(
        "discover",
        help="print the first file declaring a ModelReplica, or nothing (plugin.yaml's discover.find.command)",
        description="Print the first *.yaml/*.yml file under the current directory with a top-level `kind: ModelReplica` "
        "line, or nothing. Reads only text; always exits 0 unless the output can't be written.",
    )

    project = sub.add_parser(
        "appproject",
        help="print an AppProject that allows exactly the kinds the plugin renders (docs/argocd.md: Security)",
        description="Print an Argo CD AppProject for the Applications that name the plugin: the source repositories and "
        "destinations given, and exactly the kinds modelplane-render renders (plus those given with --allow-kind). The "
        "sidecar runs a repository's kustomize exec functions, so the project names its repositories; '*' is refused.",
    )
    project.add_argument("--name", default="modelplane-render", help="the AppProject's name (default: modelplane-render)")
    project.add_argument("--argocd-namespace", default="argocd", metavar="NS", help="the namespace Argo CD runs in (default: argocd)")
    project.add_argument("--src", action="append", metavar="REPO", help="a source repository (URL; repeatable, at least one)")
    project.add_argument(
        "--dest", action="append", metavar="SERVER,NAMESPACE", help="a destination cluster and namespace (a glob), repeatable"
    )
    project.add_argument(
        "--allow-kind",
        action="append",
        metavar="[GROUP/]KIND",
        help="a namespaced kind your replicas' directories pass through (e.g. Secret, policy/PodDisruptionBudget), repeatable",
    )
    project.add_argument(
        "--allow-cluster-kind",
        action="append",
        metavar="[GROUP/]KIND",
        help="a cluster-scoped kind they pass through (e.g. scheduling.k8s.io/PriorityClass), repeatable",
    )
    project.add_argument("--create-namespace", action="store_true", help="allow Namespaces, which syncOptions CreateNamespace=true creates")


def run(args: argparse.Namespace) -> int:
    if args.argocd_command == "appproject":
        from ..frontends.argocd_project import app_project
        from ..yamlio.libyaml import write_document

        project = app_project(
            args.name,
            args.argocd_namespace,
            args.src or [],
            args.dest or [],
            args.allow_kind or [],
            args.allow_cluster_kind or [],
            args.create_namespace,
        )
        writer.write_stdout(write_document(project))
        return EXIT_OK
    if args.argocd_command == "discover":
        found = argocd.discover(os.curdir)
        if found is not None:
            writer.write_stdout(f"{found}\n")
        return EXIT_OK
    writer.write_stdout(argocd.generate(os.environ))
    return EXIT_OK
