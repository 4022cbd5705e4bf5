"""A PATH that only kustomize builds, for `render` and `validate`: built as Argo CD builds it (frontends.kustomize_app)."""

from __future__ import annotations

from typing import Any, Optional

from ..errors import UsageError
from ..walk import kustomization_in
from .arguments import given_flags


def build(directory: str, *, shown: str) -> tuple[str, list[dict[str, Any]]]:
    from ..frontends.kustomize_app import build as kustomize_build

    return kustomize_build(directory, shown=shown)


def kustomize_app_of(paths: list[str], command: str, args: Any = None) -> Optional[str]:
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
    refuse_render_flags(args, command, built[0])
    return built[0]


def refuse_render_flags(args: Any, command: str, built: str) -> None:
    """A kustomization's RenderConfig holds its render options (one place, as Argo CD has it): a flag would be ignored."""
    flags = given_flags(args, command) if args is not None else []
    if flags:
        names = sorted({f for f in flags if f.startswith("-")})
        raise UsageError(
            f"{', '.join(names)}: {built} is a kustomization that kustomize builds, and its RenderConfig (spec) holds the render "
            "options; set them there"
        )
