"""`schema [--crd]`: the JSON Schema of a ModelReplica, derived from the CRD; or the CRD itself, to install."""

from __future__ import annotations

import argparse
import json

import yaml

from .. import crd
from ..errors import EXIT_OK
from ..frontends.json_schema import replica_schema
from ..yamlio.libyaml import SAFE_DUMPER
from . import writer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--crd", action="store_true", help="print the ModelReplica CustomResourceDefinition as YAML instead (kubectl apply -f -)"
    )


def run(args: argparse.Namespace) -> int:
    if args.crd:
        writer.write_stdout(crd_yaml())
    else:
        writer.write_stdout(json.dumps(replica_schema(), indent=2, ensure_ascii=False) + "\n")
    return EXIT_OK


def crd_yaml() -> str:
    """The CRD as plain YAML: aliases written out (not every tool reads YAML anchors), field order kept."""

    class Dumper(SAFE_DUMPER):  # type: ignore[misc]
        def ignore_aliases(self, data: object) -> bool:
            return True

    body = yaml.dump(crd.crd(), Dumper=Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
    return f"# The ModelReplica CRD that modelplane-render validates against ({crd.CRD_FILE}).\n---\n{body}"
