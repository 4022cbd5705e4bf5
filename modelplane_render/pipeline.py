"""The stages in order: sources → model → plan → render → output. Every front end calls this.

What a source document becomes:
- `modelplane.ai/v1alpha1` ModelReplica: validated and rendered (never emitted itself);
- any other `modelplane.ai` kind or version: an error (ModelDeployments are Modelplane's to
  compose; an unknown version is a typo or a newer schema than this tool knows);
- an object marked `config.kubernetes.io/local-config: "true"` (a kustomize function
  config), and any `render.modelplane.ai` object (our RenderConfig): skipped;
- any other Kubernetes object (apiVersion, kind and metadata.name): passed through unchanged;
- a document that is not a Kubernetes object: an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from . import constants as c
from . import crd
from .errors import Finding, InputError, RenderFailure, describe
from .options import Options
from .output import parse_checked_and_serialised, serialise, sort_key
from .plan.replica import plan_replica
from .render import render_object
from .sources import iter_documents
from .validation import judge_replica
from .yamlio.document import Document

LOCAL_CONFIG = "config.kubernetes.io/local-config"


class Head(NamedTuple):
    """What a run knows of each object it prints, kept when the objects themselves are not."""

    api_version: str
    kind: str
    namespace: str
    name: str
    replica: str  # the replica it was rendered from (its modelplane.ai/replica label), or ""


def head_of(obj: dict[str, Any]) -> Head:
    """What is known of an object; one passed through may hold anything where metadata and labels should be."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    labels = meta.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    return Head(
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name")),
        str(labels.get(c.LABEL_REPLICA, "")),
    )


@dataclass
class Rendered:
    """The checked objects of a run, in output order (empty unless kept: a render of 10,000 replicas
    would hold half a gigabyte of them), what is known of each, and the text that prints them, as the
    objects' parts (joined only when asked for: the whole output twice is 200 MB at that scale)."""

    objects: list[dict[str, Any]]
    chunks: list[str]
    heads: list[Head] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.chunks)


ALLOW_EMPTY = "--allow-empty (Argo CD: the plugin parameter allow-empty; a RenderConfig: spec.allowEmpty)"


def classify(document: Document) -> tuple[str, Optional[Finding]]:
    """'replica', 'passthrough' or 'skip', or an error saying why the document can't be taken."""
    data = document.data
    if not isinstance(data, dict):
        shape = "a list" if isinstance(data, list) else "a scalar"
        return "", document.error((), f"a document must be a Kubernetes object (a mapping with apiVersion and kind), not {shape}")
    api_version, kind = data.get("apiVersion"), data.get("kind")
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is None:
            return "", document.error((key,), "required field is missing: every document must be a Kubernetes object")
        if not isinstance(value, str) or not value:
            return "", document.error((key,), "must be a non-empty string")
    assert isinstance(api_version, str) and isinstance(kind, str)
    meta = data.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict) and str(annotations.get(LOCAL_CONFIG, "")).lower() == "true":
        return "skip", None
    group = api_version.split("/")[0] if "/" in api_version else ""
    if group == c.RENDER_CONFIG_GROUP:
        return "skip", None  # the KRM function's config, found beside the replicas it renders
    if group == crd.GROUP:
        if kind != crd.KIND:
            return "", document.error(
                ("kind",),
                f"{kind} is not rendered by modelplane-render: only {crd.KIND} ({crd.API_VERSION}) is; Modelplane itself composes other modelplane.ai kinds",
            )
        if api_version != crd.API_VERSION:
            return "", document.error(
                ("apiVersion",), f"{crd.KIND} {api_version} is not known: this version of modelplane-render reads {crd.API_VERSION}"
            )
        return "replica", None
    name = meta.get("name") if isinstance(meta, dict) else None
    if meta is not None and not isinstance(meta, dict):
        return "", document.error(("metadata",), f"must be a mapping, not {describe(meta)}")
    if name is None:
        return "", document.error(("metadata", "name"), "required field is missing: every object passed through needs a name")
    if not isinstance(name, str):
        return "", document.error(("metadata", "name"), f"must be a string, not {describe(name)}")
    if not name:
        return "", document.error(("metadata", "name"), "must not be empty: every object passed through needs a name")
    return "passthrough", None


def render_documents(
    documents: Iterable[Document | Finding], options: Options, *, emit: bool = True, keep_objects: bool = True
) -> Rendered:
    """Validate every document, then (only if all are valid) plan, render and check the output.

    `keep_objects=False`: each object is let go once it is checked and written (the text and the
    heads are all `render` and Argo CD print or check), so memory holds the output, not its objects.
    """
    errors: list[Finding] = []
    replicas: list[tuple[Document, Any]] = []
    passthrough: list[dict[str, Any]] = []
    for item in documents:
        if isinstance(item, Finding):
            errors.append(item)
            continue
        role, error = classify(item)
        if error:
            errors.append(error)
        elif role == "replica":
            replica, found = judge_replica(item, options.namespace)
            errors.extend(found)
            if replica is not None:
                replicas.append((item, replica))
        elif role == "passthrough":
            passthrough.append(item.data)
    errors.extend(_duplicate_replicas(replicas, options))
    if errors:
        raise InputError(errors)
    if not emit:
        return Rendered([], [])
    # From here on a document is only its file's name: its data and the position of every node
    # (most of a run's memory) are let go before the output is built.
    to_render = [(document.file, replica) for document, replica in replicas if options.renders(replica.spec.cluster_name)]
    if not to_render and not options.allow_empty:
        raise RenderFailure(_nothing_to_render([replica for _, replica in replicas], options))
    replicas.clear()

    # Each object with its part of the output stream: a rendered object's comes from the same parse
    # that checks it, an object passed through is serialised as it is.
    entries: list[tuple[Any, Head, str, Optional[dict[str, Any]]]] = []

    def keep(obj: dict[str, Any], text: str) -> None:
        entries.append((sort_key(obj), head_of(obj), text, obj if keep_objects else None))

    for obj in passthrough:
        keep(obj, serialise([obj]))
    passthrough.clear()
    for source, replica in to_render:
        for planned in plan_replica(replica, options, source).objects:
            keep(*parse_checked_and_serialised(planned, render_object(planned)))
    entries.sort(key=lambda entry: entry[0])
    heads = [head for _, head, _, _ in entries]
    _check_unique(heads)
    objects = [obj for _, _, _, obj in entries if obj is not None]
    chunks = [text for _, _, text, _ in entries]
    entries.clear()
    return Rendered(objects, chunks, heads)


def _nothing_to_render(replicas: list[Any], options: Options) -> str:
    """Why a render would yield no object from a replica, and how to allow it."""
    if not replicas:
        why = "nothing to render: the sources hold no ModelReplica"
    else:
        clusters = ", ".join(sorted({r.spec.cluster_name for r in replicas}))
        count = f"{len(replicas)} ModelReplica" + ("s" if len(replicas) > 1 else "")
        why = f"nothing to render for cluster {options.cluster}: none of the {count} is pinned to it (spec.clusterName: {clusters})"
    return f"{why}. Argo CD (with pruning) deletes every live object an app no longer renders; if that is meant, pass {ALLOW_EMPTY}"


def _duplicate_replicas(replicas: list[tuple[Document, Any]], options: Options) -> list[Finding]:
    seen: dict[tuple[str, str], Document] = {}
    errors = []
    for document, replica in replicas:
        # Across every cluster, as Modelplane names replicas (the cluster is part of the name).
        key = (replica.metadata.namespace or options.namespace or "", replica.metadata.name)
        if key in seen:
            first = seen[key]
            line = first.positions.of_value(("metadata", "name"))[0]
            errors.append(document.error(("metadata", "name"), f"replica {key[0]}/{key[1]} is also defined in {first.file}:{line}"))
        else:
            seen[key] = document
    return errors


def _check_unique(heads: list[Head]) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    for head in heads:
        key = (head.api_version.split("/")[0], head.kind, head.namespace, head.name)
        if key in seen:
            raise RenderFailure(f"two objects would be {key[1]} {key[2]}/{key[3]}: rename the replica or the object passed through")
        seen.add(key)


def render_paths(paths: list[str], options: Options, *, emit: bool = True, keep_objects: bool = True) -> Rendered:
    return render_documents(iter_documents(paths), options, emit=emit, keep_objects=keep_objects)
