"""`schema [--crd|--openapi|--render-config]`: the JSON Schema of a ModelReplica, derived from the CRD; the CRD itself, to
install; kustomize's OpenAPI schema; or the JSON Schema of the KRM function's RenderConfig."""

from __future__ import annotations

import argparse
import json

from .. import crd
from ..errors import EXIT_OK, UsageError
from ..frontends.json_schema import render_config_schema, replica_schema
from ..frontends.kustomize_openapi import kustomize_openapi
from ..yamlio.libyaml import write_unaliased
from . import writer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--crd", action="store_true", help="print the ModelReplica CustomResourceDefinition as YAML instead (kubectl apply -f -)"
    )
    parser.add_argument(
        "--openapi",
        action="store_true",
        help="print the OpenAPI schema for kustomize's `openapi:` field instead, so strategic-merge patches merge a replica's lists",
    )
    parser.add_argument(
        "--render-config",
        action="store_true",
        help="print the JSON Schema of the KRM function's RenderConfig (its function config) instead",
    )


def run(args: argparse.Namespace) -> int:
    if sum((args.crd, args.openapi, args.render_config)) > 1:
        raise UsageError("--crd, --openapi and --render-config print different things: give one")
    if args.render_config:
        writer.write_stdout(json.dumps(render_config_schema(), indent=2, ensure_ascii=False) + "\n")
    elif args.crd:
        writer.write_stdout(crd_yaml())
    elif args.openapi:
        writer.write_stdout(json.dumps(kustomize_openapi(), indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        writer.write_stdout(json.dumps(replica_schema(), indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def crd_yaml() -> str:
    """The CRD as plain YAML: aliases written out (not every tool reads YAML anchors), field order kept."""

    body = write_unaliased(crd.crd())
    return f"# The ModelReplica CRD that modelplane-render validates against ({crd.CRD_FILE}).\n---\n{body}"
