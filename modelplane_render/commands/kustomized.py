"""A PATH that only kustomize builds, for `render` and `validate`: built as Argo CD builds it (frontends.kustomize_app)."""

from __future__ import annotations

from typing import Any, Optional

from ..errors import UsageError
from ..walk import kustomization_in


def build(directory: str, *, shown: str) -> tuple[str, list[dict[str, Any]]]:
    from ..frontends.kustomize_app import build as kustomize_build

    return kustomize_build(directory, shown=shown)


def kustomize_app_of(paths: list[str], command: str) -> Optional[str]:
    """The one PATH kustomize builds, or None when no PATH is one. Such a directory is one app, as an Argo CD
    Application is: it comes alone (two overlays of one replica would print its objects twice)."""
    if not any(kustomization_in(p) for p in paths):
        return None  # no kustomization: nothing to read, and no YAML loaded for it (a cache hit after parsing)
    from ..sources import is_built

    built = [p for p in paths if is_built(p)]
    if not built:
        return None
    if len(paths) > 1:
        raise UsageError(
            f"{built[0]} is a kustomization that kustomize builds, one app as Argo CD syncs it: {command} it alone "
            f"(modelplane-render {command} {built[0]}); diff takes several"
        )
    return built[0]
