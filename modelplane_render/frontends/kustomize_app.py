"""A directory that only kustomize builds, built as Argo CD's `generate` builds it: kustomize with the function.

One rule for `render`, `validate`, `diff` and Argo CD: a PATH holding a kustomization that does more
than list its own files (sources.kustomize_builds) is built by the real kustomize, with
`--enable-alpha-plugins --enable-exec`, so its patches, namespace, labels and the function it names
all apply; its output is checked before anyone sees it. Without kustomize, it is an error, never a
render of the unpatched files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import Any, Optional

from .. import crd
from ..errors import RenderFailure
from ..sources import is_built
from ..walk import kustomization_in
from ..yamlio.libyaml import load_all

__all__ = ["KUSTOMIZE_FLAGS", "build", "is_built", "kustomization_in"]

KUSTOMIZE_FLAGS = ("--enable-alpha-plugins", "--enable-exec")


def build(
    directory: str,
    *,
    shown: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    missing: Optional[str] = None,
    instead: str = "give the directory of the replicas instead",
    flags: tuple[str, ...] = (),
) -> tuple[str, list[dict[str, Any]]]:
    """kustomize's output for the directory and its objects, checked: every document an object, at least one, and
    no ModelReplica left unrendered. `shown` names the directory in messages (Argo CD's app has no name to give);
    `missing` is the message when kustomize is not on PATH, `instead` the remedy for a base built without the function;
    `flags`: more flags for kustomize build (options.kustomize_build)."""
    import subprocess  # only a directory kustomize builds runs a process

    kustomize = shutil.which("kustomize", path=(env or os.environ).get("PATH"))
    if kustomize is None:
        raise RenderFailure(
            missing
            or f"{shown or directory} holds a kustomization, which kustomize builds, and kustomize is not on PATH: install "
            "kustomize (README: kustomize)"
        )
    of = f" of {shown}" if shown else ""
    every_flag = (*KUSTOMIZE_FLAGS, *flags)
    result = subprocess.run([kustomize, "build", *every_flag, directory], capture_output=True, env=None if env is None else dict(env))
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip() or f"kustomize build exited {result.returncode}"
        raise RenderFailure(f"kustomize build {' '.join(every_flag)}{' ' + shown if shown else ''} failed: {message}")
    text = result.stdout.decode("utf-8")
    objects = [o for o in load_all(text) if o is not None]
    if not all(isinstance(o, dict) and o.get("apiVersion") and o.get("kind") for o in objects):
        raise RenderFailure(f"kustomize build{of} printed a document that is not a Kubernetes object")
    if not objects:
        raise RenderFailure(f"kustomize build{of} printed no object: Argo CD would prune every live object of the Application")
    unrendered = sorted(str((o.get("metadata") or {}).get("name")) for o in objects if o.get("apiVersion") == crd.API_VERSION)
    if unrendered:
        raise RenderFailure(
            f"kustomize build{of} printed ModelReplica {', '.join(unrendered)} unrendered: list the RenderConfig directory "
            f"under the kustomization's transformers: (README: kustomize), or {instead}"
        )
    return text, objects
