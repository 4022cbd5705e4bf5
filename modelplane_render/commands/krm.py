"""`krm`: run as a KRM function (kustomize exec): a ResourceList on stdin, one on stdout.

On invalid input the exit code is 1 and, unlike the other commands, stdout is not empty: it
holds the input items unchanged with the errors as `results` (the KRM contract; kustomize
ignores stdout then and shows stderr, which holds the same errors one a line).
"""

from __future__ import annotations

import argparse
import sys

from ..frontends.krm import run_function
from . import writer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "The function config is a render.modelplane.ai/v1alpha1 RenderConfig (spec.namespace, spec.gateway, "
        "spec.sources); see the README's kustomize section."
    )


def run(args: argparse.Namespace) -> int:
    outcome = run_function(sys.stdin.buffer.read())
    writer.write_stdout(outcome.text)
    if outcome.problems:
        writer.write_stderr(*outcome.stderr_lines)
    return outcome.code
