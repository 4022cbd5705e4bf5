"""The `kustomize build` flags an Application that is a kustomization may add (Argo CD's kustomize.buildOptions).

Argo CD hands kustomize.buildOptions to its own kustomize only: a plugin gets the app's env, parameters and
API versions (reposerver/repository/repository.go), so the sidecar takes them as a parameter. Only flags
whose meaning in the sidecar is known are taken; each other one is refused, never passed on unread.
"""

from __future__ import annotations

from ..errors import UsageError

# Always given (kustomize_app.KUSTOMIZE_FLAGS: the RenderConfig's exec function); accepted, so that a team's
# Argo CD kustomize.buildOptions can be copied as it is.
ALWAYS_ON = ("--enable-alpha-plugins", "--enable-exec")
LOAD_RESTRICTOR = "--load-restrictor"
LOAD_RESTRICTIONS = ("LoadRestrictionsRootOnly", "LoadRestrictionsNone")
# Why each flag that kustomize has but the sidecar refuses is refused: the remedy, in the message.
REFUSED = {
    "--enable-helm": "the sidecar image has no helm (argocd/image.toml); commit the chart's rendered output, or "
    "let Argo CD's own Helm source build it",
    "--helm-command": "the sidecar image has no helm (argocd/image.toml)",
    "--network": "the sidecar runs no containerized function",
    "--mount": "the sidecar runs no containerized function",
    "--env": "the sidecar runs no containerized function; an exec function sees the sidecar's environment",
    "-e": "the sidecar runs no containerized function; an exec function sees the sidecar's environment",
    "--output": "Argo CD reads the objects from standard output",
    "-o": "Argo CD reads the objects from standard output",
}


def parse_kustomize_build_options(value: str | None, source: str) -> tuple[str, ...] | None:
    """The flags, space-separated as Argo CD's kustomize.buildOptions are, in the form kustomize is given them."""
    if value is None or not value.strip():
        return None
    words = value.split()
    flags: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        name, equals, argument = word.partition("=")
        if name in ALWAYS_ON and not equals:
            pass
        elif name == LOAD_RESTRICTOR:
            if not equals:
                index += 1
                argument = words[index] if index < len(words) else ""
            if argument not in LOAD_RESTRICTIONS:
                raise UsageError(f"{source} {value!r}: {LOAD_RESTRICTOR} takes {' or '.join(LOAD_RESTRICTIONS)}, not {argument!r}")
            flags = [f for f in flags if not f.startswith(LOAD_RESTRICTOR + "=")] + [f"{LOAD_RESTRICTOR}={argument}"]
        elif name in REFUSED:
            raise UsageError(f"{source} {value!r}: {name} is not taken here: {REFUSED[name]}")
        else:
            raise UsageError(
                f"{source} {value!r}: {word!r} is not a kustomize build flag the sidecar takes "
                f"({LOAD_RESTRICTOR} {'|'.join(LOAD_RESTRICTIONS)}; {' and '.join(ALWAYS_ON)} are always on)"
            )
        index += 1
    return tuple(flags) or None
