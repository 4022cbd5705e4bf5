"""One side of a diff: the sources at a revision (or the work tree) rendered, and where each object came from."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from ... import constants, names
from ...errors import Finding, InputError, RenderFailure
from ...options import Options
from ...pipeline import classify, render_documents
from ...sources import iter_documents
from ...yamlio.document import Document
from .objects import Key, object_key
from .revisions import Git, RevisionTree, iter_revision_documents

WORK_TREE = "work tree"


@dataclass
class Side:
    """The rendered objects of one revision, with the source file of each and of each replica."""

    label: str
    objects: dict[Key, dict[str, Any]] = field(default_factory=dict)
    files: dict[Key, str] = field(default_factory=dict)
    replicas: dict[tuple[str, str], str] = field(default_factory=dict)  # (namespace, name) -> file


def render_side(label: str, documents: Iterable[Document | Finding], options: Options) -> Side:
    side = Side(label)
    passthrough: dict[Key, str] = {}
    replica_labels: dict[tuple[str, str], str] = {}

    def remember(items: Iterable[Document | Finding]) -> Iterator[Document | Finding]:
        for item in items:
            if isinstance(item, Document):
                role, error = classify(item)
                if error is None and role == "replica":
                    meta, spec = item.data.get("metadata") or {}, item.data.get("spec")
                    pinned = options.renders(spec.get("clusterName") if isinstance(spec, dict) else None)
                    if pinned and isinstance(meta, dict) and isinstance(meta.get("name"), str):
                        namespace = str(meta.get("namespace") or options.namespace or "")
                        side.replicas.setdefault((namespace, meta["name"]), item.file)
                        replica_labels.setdefault((namespace, names.label_value(meta["name"])), item.file)
                elif error is None and role == "passthrough":
                    passthrough.setdefault(object_key(item.data), item.file)
            yield item

    rendered = render_documents(remember(documents), options)
    for obj in rendered.objects:
        key = object_key(obj)
        side.objects[key] = obj
        labels = (obj.get("metadata") or {}).get("labels") or {}
        file = passthrough.get(key) or replica_labels.get((key[2], str(labels.get(constants.LABEL_REPLICA, ""))))
        side.files[key] = file or "(unknown source)"
    return side


def _with_revision(error: Finding, revision: Optional[str]) -> Finding:
    if revision is None:
        return error
    return Finding(f"{revision}:{error.file}", error.line, error.column, error.path, error.message)


def render_both(base: str, head: Optional[str], paths: list[str], options: Options) -> tuple[Side, Side]:
    """Both sides, or every error of both (each named with its revision) and no diff."""
    git = Git()
    base_tree = RevisionTree(git, base)
    head_tree = RevisionTree(git, head) if head is not None else None

    # A path may be new in the change (or deleted by it): it need only exist on one side.
    present: tuple[list[str], list[str]] = ([], [])
    missing: list[Finding] = []
    for given in paths:
        rel = git.repo_path(given)
        at_base = base_tree.resolve(rel).kind != "missing"
        at_head = os.path.lexists(given) if head_tree is None else head_tree.resolve(rel).kind != "missing"
        if not at_base and not at_head:
            missing.append(Finding(given, 1, 1, ".", f"no such file or directory at {base} or {head or 'the ' + WORK_TREE}"))
        if at_base:
            present[0].append(given)
        if at_head:
            present[1].append(given)
    if missing:
        raise InputError(missing)

    errors: list[Finding] = []
    failures: list[str] = []
    sides: list[Side] = []
    for revision, tree, given_paths in ((base, base_tree, present[0]), (head, head_tree, present[1])):
        label = revision if revision is not None else WORK_TREE
        documents = iter_documents(given_paths) if tree is None else iter_revision_documents(tree, git, given_paths)
        try:
            sides.append(render_side(label, documents, options))
        except InputError as exc:
            errors.extend(_with_revision(e, revision) for e in exc.errors)
        except RenderFailure as exc:
            failures.append(f"at {label}: {exc}")
    if errors:
        raise InputError(errors)
    if failures:
        raise RenderFailure("; ".join(failures))
    return sides[0], sides[1]
