"""The Argo CD front end: what a config-management plugin (CMP v2) run of `argocd generate` reads.

Argo CD's repo-server sends the plugin sidecar (argocd-cmp-server) the app's files and an
environment; the sidecar runs `modelplane-render argocd generate` in the app's source directory
with its own environment plus that one. What we take from it, in order of precedence:

- plugin parameters, `ARGOCD_APP_PARAMETERS` (a JSON array of `{name, string|array|map}`): only
  what the Application sets is sent, never the announced defaults, so the defaults live here
  (the settings' table, `options.PARAMETERS`, which `argocd/plugin.yaml` announces; a test keeps
  the two equal). A list (tolerations) is an `array`, or a `string` of comma-separated entries.
  An unknown name is an error: a typo would otherwise render with the default, silently;
- Application env, `ARGOCD_ENV_<NAME>` (`spec.source.plugin.env`): `MODELPLANE_<PARAMETER>` for
  each parameter, for tools that template env rather than parameters; an unknown
  `ARGOCD_ENV_MODELPLANE_*` is an error for the same reason;
- `ARGOCD_APP_NAMESPACE` (the Application's destination namespace): the namespace of replicas
  that set none, as `--namespace` is on the command line;
- `KUBE_API_VERSIONS` (what the destination cluster serves, `group/version` and
  `group/version/Kind`, comma-separated): checked against the APIs of the rendered objects, so a
  missing LeaderWorkerSet, DRA or InferencePool API fails here, with what to install, instead
  of in a sync that has already applied half of the objects.

Discovery (`argocd discover`, plugin.yaml's `find.command`) reads only the app directory and
only the text of its YAML files: a file with a top-level `kind: ModelReplica` line matches. It
does not parse YAML, so a replica file with a syntax error still matches, and `generate` then
reports the error with its line, rather than Argo CD reporting that no plugin matched.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..cache.render import ARGOCD_ENV_NAMES, ARGOCD_ENV_PREFIX, argocd_key, cached
from ..errors import Finding, InputError, RenderFailure, UsageError
from ..kinds import API_REMEDIES
from ..options import LIST, PARAMETERS, RENDER_SETTINGS, Options, Setting, options_with, read
from ..options.parsers import parse_namespace
from ..pipeline import Head, Rendered, head_of, render_paths
from ..walk import KUSTOMIZE_FILE_NAMES, MAX_FILE_BYTES, find_files
from .kustomize_app import build, is_built

PLUGIN_NAME = "modelplane-render"
PLUGIN_VERSION = "v1"
# What an Application names in `spec.source.plugin.name`: Argo CD joins name and version.
PLUGIN_FULL_NAME = f"{PLUGIN_NAME}-{PLUGIN_VERSION}"

# Declared where the render cache keys a run by them, so the key can't leave one out.
ENV_PARAMETERS, ENV_APP_NAMESPACE, ENV_SOURCE_PATH, ENV_API_VERSIONS = ARGOCD_ENV_NAMES
ENV_APP_PREFIX = ARGOCD_ENV_PREFIX
WHERE_PARAMETERS = "Application spec.source.plugin.parameters"
WHERE_ENV = "Application spec.source.plugin.env"
# The parameters are the settings' table's rows with an Argo CD title (options.PARAMETERS): what
# argocd/plugin.yaml announces, a test keeps equal. Application env names are theirs, MODELPLANE_<NAME>.
_BY_NAME = {p.name: p for p in PARAMETERS}
_BY_APP_ENV = {p.app_env: p for p in PARAMETERS}
CHECK_CLUSTER_APIS = _BY_NAME["check-cluster-apis"]
KUSTOMIZE_BUILD_OPTIONS = _BY_NAME["kustomize-build-options"]

# The APIs our rendered objects use that a cluster may lack are kinds.API_REMEDIES. Objects passed
# through unchanged are the user's own and are not checked: Argo CD names their missing APIs itself.


@dataclass(frozen=True)
class ArgoSettings:
    """Everything `argocd generate` takes from its environment."""

    options: Options
    check_cluster_apis: bool
    api_versions: Optional[frozenset[str]]  # None: Argo CD sent none, so nothing to check against
    source_path: str  # the app's path in its repository, to show in errors ("" when unknown)
    given: frozenset[str] = frozenset()  # the parameters the Application set, by parameter or env
    kustomize_flags: tuple[str, ...] = ()  # more flags for kustomize build, when the app is a kustomization


def settings_from_env(env: Mapping[str, str]) -> ArgoSettings:
    """Read the CMP environment; a UsageError names the Application field to fix."""
    given = {**_app_env_values(env), **parse_parameters(env.get(ENV_PARAMETERS, ""))}
    values = {p.name: read(p, _in_kind(p, given.get(p.name)), f"{WHERE_PARAMETERS} {p.name}") for p in PARAMETERS}
    if values["namespace"] is None:
        where = f"{ENV_APP_NAMESPACE} (the Application's spec.destination.namespace)"
        values["namespace"] = parse_namespace(env.get(ENV_APP_NAMESPACE, ""), where)
    check = values.pop(CHECK_CLUSTER_APIS.name)
    kustomize_flags = values.pop(KUSTOMIZE_BUILD_OPTIONS.name)
    return ArgoSettings(
        options=options_with(values),
        check_cluster_apis=CHECK_CLUSTER_APIS.default if check is None else check,
        api_versions=parse_api_versions(env.get(ENV_API_VERSIONS)),
        source_path=_clean_source_path(env.get(ENV_SOURCE_PATH, "")),
        given=frozenset(given),
        kustomize_flags=kustomize_flags or (),
    )


def _in_kind(parameter: Setting, value: str | list[str] | None) -> Any:
    """A parameter's value in its setting's kind: a LIST from an array, or from text whose entries are comma-separated."""
    if parameter.kind == LIST and isinstance(value, str):
        entries = [t.strip() for t in value.split(",") if t.strip()]
        return entries or None  # empty text: the default, as for every parameter
    return value


def parse_parameters(text: str) -> dict[str, str | list[str]]:
    """ARGOCD_APP_PARAMETERS as {name: string value, or array for a LIST}; parameters given without a value are left out.

    Argo CD sends `null` when the Application's plugin block has no parameters, and nothing at
    all when the Application has no plugin block (a discovered app).
    """
    if text.strip() in ("", "null"):
        return {}
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{ENV_PARAMETERS} is not JSON ({exc}): it is Argo CD's to set, from {WHERE_PARAMETERS}") from None
    if not isinstance(items, list):
        raise UsageError(f"{ENV_PARAMETERS} must be a JSON array of parameters, as Argo CD sends it")
    known = ", ".join(p.name for p in PARAMETERS)
    values: dict[str, str | list[str]] = {}
    for index, item in enumerate(items):
        where = f"{WHERE_PARAMETERS}[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise UsageError(f"{where}: a parameter must have a name")
        name = item["name"]
        if name not in _BY_NAME:
            raise UsageError(f"{where}: unknown parameter {name!r}: {PLUGIN_FULL_NAME} takes {known}")
        if name in values:
            raise UsageError(f"{where}: parameter {name!r} is given twice")
        value = _parameter_value(_BY_NAME[name], item, where)
        if value is not None:
            values[name] = value
    return values


def _parameter_value(parameter: Setting, item: dict[str, Any], where: str) -> str | list[str] | None:
    """A parameter's `string`, or for a LIST its `array`; a `map` is no setting's form."""
    takes = "a string (`string: ...`) or an array (`array: [...]`)" if parameter.kind == LIST else "a string (`string: ...`)"
    for form in ("array", "map"):
        if item.get(form) is not None and not (form == "array" and parameter.kind == LIST):
            raise UsageError(f"{where}: parameter {parameter.name!r} takes {takes}, not {'an' if form == 'array' else 'a'} {form}")
    array, value = item.get("array"), item.get("string")
    if array is not None:
        if not isinstance(array, list) or not all(isinstance(entry, str) for entry in array):
            raise UsageError(f"{where}: parameter {parameter.name!r} must be an array of strings")
        return [entry.strip() for entry in array if entry.strip()] or None
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{where}: parameter {parameter.name!r} must be a string")
    return value


def _app_env_values(env: Mapping[str, str]) -> dict[str, str]:
    """Our Application env entries (ARGOCD_ENV_MODELPLANE_*), by parameter name."""
    values: dict[str, str] = {}
    prefix = ENV_APP_PREFIX + "MODELPLANE_"
    for key in sorted(env):
        if not key.startswith(prefix):
            continue
        name = key[len(ENV_APP_PREFIX) :]
        parameter = _BY_APP_ENV.get(name)
        if parameter is None:
            known = ", ".join(p.app_env for p in PARAMETERS)
            raise UsageError(f"{WHERE_ENV} {name} is not known: {PLUGIN_FULL_NAME} reads {known}")
        values[parameter.name] = env[key]
    return values


def _clean_source_path(path: str) -> str:
    path = posixpath.normpath(path) if path else ""
    return "" if path in (".", "/") else path.strip("/")


def parse_api_versions(text: Optional[str]) -> Optional[frozenset[str]]:
    """KUBE_API_VERSIONS as a set of entries; None when it is absent or empty (nothing known)."""
    if text is None:
        return None
    entries = frozenset(e.strip() for e in text.split(",") if e.strip())
    return entries or None


def is_served(entries: frozenset[str], api_version: str, kind: str) -> bool:
    """Whether the cluster serves kind at api_version.

    Argo CD sends both forms, `group/version` and `group/version/Kind`. When a group/version is
    listed with kinds, the kind must be among them; when only `group/version` is listed (a
    client that sends no kinds), the group/version is enough.
    """
    if f"{api_version}/{kind}" in entries:
        return True
    prefix = f"{api_version}/"
    return api_version in entries and not any(e.startswith(prefix) for e in entries)


def missing_apis(heads: Iterable[Head], entries: frozenset[str]) -> tuple[list[str], list[str]]:
    """The APIs our objects need that the cluster does not serve (with what to install), and the replicas needing them."""
    needed: dict[tuple[str, str], list[Head]] = {}
    for head in heads:
        if head.api_version in API_REMEDIES:
            needed.setdefault((head.api_version, head.kind), []).append(head)
    order = list(API_REMEDIES)
    phrases: list[str] = []
    replicas: set[str] = set()
    for (api_version, kind), users in sorted(needed.items(), key=lambda item: (order.index(item[0][0]), item[0][1])):
        if is_served(entries, api_version, kind):
            continue
        phrases.append(f"{api_version} {kind} ({API_REMEDIES[api_version]})")
        replicas.update(head.replica for head in users)
    return phrases, sorted(replicas - {""})


def check_cluster_apis(rendered: Rendered, settings: ArgoSettings) -> None:
    """Fail before Argo CD applies anything when the destination cluster lacks an API our objects need."""
    if not settings.check_cluster_apis or settings.api_versions is None:
        return
    missing, replicas = missing_apis(rendered.heads, settings.api_versions)
    if missing:
        who = f" (needed by replica {', '.join(replicas)})" if replicas else ""
        raise RenderFailure(
            f"the destination cluster does not serve {'; '.join(missing)}{who}. Nothing was generated, so nothing is "
            f"applied or pruned; if this Application's sync installs these APIs itself, set the plugin parameter "
            f'{CHECK_CLUSTER_APIS.name} to "false"'
        )


def render_for_argocd(source_dir: str, settings: ArgoSettings) -> str:
    """What Argo CD gets for the app in source_dir: the one call of the shared pipeline, and the checks of its objects.

    Text in (the files, the settings), text out, and only a success returns: a render cache may
    wrap this call, keyed by the files, `settings.options`, `settings.check_cluster_apis` and
    `settings.api_versions` (`settings.source_path` only changes how errors are shown, and errors
    are raised, never returned).
    """
    # A render with nothing from a replica fails in the pipeline unless the allow-empty parameter says
    # so: Argo CD would prune every live object of the Application.
    rendered = render_paths([source_dir], settings.options, keep_objects=False)
    check_cluster_apis(rendered, settings)
    return rendered.text


def generate(env: Mapping[str, str], source_dir: str = ".") -> str:
    """The YAML stream Argo CD applies, for the app in source_dir; an exception on any fault.

    An app directory holding a kustomization that does more than list its own files is a kustomize
    app: kustomize builds it, running the function its kustomizations name (kustomize_build); reading
    its files as replicas would drop its patches and namespace without a word. A plain base's files
    are read, as `render` reads them (frontends.kustomize_app).
    """
    settings = settings_from_env(env)
    if is_built(source_dir):
        return kustomize_build(source_dir, settings)
    if KUSTOMIZE_BUILD_OPTIONS.name in settings.given:
        raise UsageError(
            f"{WHERE_PARAMETERS} {KUSTOMIZE_BUILD_OPTIONS.name}: this app is not a kustomization, and no kustomize builds it; "
            "leave the parameter out"
        )
    try:
        # The key is the environment as given (what main()'s cache.answer looks up before parsing
        # it); settings is derived from it, so equal keys mean equal settings.
        return cached([source_dir], lambda: render_for_argocd(source_dir, settings), key=argocd_key(env), env=env)
    except InputError as exc:
        raise InputError(_in_repository(e, settings.source_path) for e in exc.errors) from None


def _in_repository(error: Finding, source_path: str) -> Finding:
    """An error's file shown by its path in the repository (`deploy/replicas/qwen.yaml`), as the UI user knows it."""
    if not source_path or error.file.startswith("/"):
        return error
    return Finding(posixpath.join(source_path, error.file), error.line, error.column, error.path, error.message)


def kustomize_build(source_dir: str, settings: ArgoSettings) -> str:
    """`kustomize build --enable-alpha-plugins --enable-exec`, in the sidecar: its output checked, or its error.

    The exec function runs here, beside argocd-cmp-server as user 999, not in the repo-server, and
    only for Applications that name this plugin. The render options come from the app's RenderConfig
    (one place for them, as on a laptop); a plugin parameter that is one is refused rather than ignored.
    """
    # What a kustomize app's RenderConfig says instead: the parameters that are render settings.
    ignored = sorted(name for name in settings.given if name in {s.name for s in RENDER_SETTINGS})
    if ignored:
        raise UsageError(
            f"{WHERE_PARAMETERS} {', '.join(ignored)}: this app is a kustomization, whose RenderConfig (spec) holds the render "
            "options; set them there"
        )
    text, objects = build(
        source_dir,
        flags=settings.kustomize_flags,
        missing="this app is a kustomization, and kustomize is not on the sidecar's PATH (the image argocd/Containerfile builds has it)",
        instead="point the Application at a directory without a kustomization",
    )
    check_cluster_apis(Rendered(objects, [text], [head_of(o) for o in objects]), settings)
    return text


# A top-level `kind: ModelReplica` (block style, at the start of a line), or a JSON-style `"kind": "ModelReplica"`.
_REPLICA_KIND = re.compile(
    rb"""^kind[ \t]*:[ \t]*(["']?)ModelReplica\1[ \t]*(?:#.*)?\r?$|"kind"[ \t]*:[ \t]*"ModelReplica\"""", re.MULTILINE
)


# A root holding one of these is another tool's app: Argo CD asks plugins before it looks for a
# kustomization or a chart (util/app/discovery/discovery.go), so matching it would take the app over.
OTHER_TOOLS_ROOTS = (*sorted(KUSTOMIZE_FILE_NAMES), "Chart.yaml")


def discover(source_dir: str = ".") -> Optional[str]:
    """The first YAML file under source_dir (walked as `render` walks) that declares a ModelReplica, or None.

    Only text is read: no YAML parsing, no file outside source_dir. Faults are not errors
    here: a file that can't be read doesn't match, and `generate` reports it if the app
    matches through another file. A kustomize or Helm root never matches.
    """
    if any(os.path.lexists(os.path.join(source_dir, name)) for name in OTHER_TOOLS_ROOTS):
        return None
    files, _ = find_files([source_dir])
    for shown, real in files:
        try:
            with open(real, "rb") as handle:
                text = handle.read(MAX_FILE_BYTES)
        except OSError:
            continue
        if _REPLICA_KIND.search(text):
            return shown
    return None
