"""One side of a diff: the sources at a revision (or the work tree) rendered, and where each object came from."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from ... import constants, names
from ...errors import Finding, InputError, RenderFailure
from ...options import Options
from ...pipeline import classify, render_documents
from ...sources import iter_documents
from ...yamlio.document import Document
from ..kustomize_app import build, is_built, kustomization_in
from .objects import Key, object_key
from .revisions import Git, RevisionTree, built_kustomizations_at, check_out, holds_kustomization_at, iter_revision_documents

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
        if tree is None:
            documents: Iterable[Document | Finding] = iter_documents(given_paths)
        else:
            documents = [*built_kustomizations_at(tree, git, given_paths), *iter_revision_documents(tree, git, given_paths)]
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


@dataclass
class Pair:
    """The two sides of one app: the plain paths together (app None), or one directory kustomize builds."""

    base: Side
    head: Side
    app: Optional[str] = None


def render_pairs(base: str, head: Optional[str], paths: list[str], options: Options) -> list[Pair]:
    """The sides of every app the paths name: each directory only kustomize builds on its own (built at each
    revision from a copy of it, as Argo CD builds it), the other paths together (render_both). Every error of
    every side at once, and no diff."""
    git = Git()
    base_tree = RevisionTree(git, base)
    head_tree = RevisionTree(git, head) if head is not None else None
    holds = [
        p
        for p in paths
        if holds_kustomization_at(base_tree, git, p)
        or (holds_kustomization_at(head_tree, git, p) if head_tree is not None else kustomization_in(p) is not None)
    ]
    if not holds:
        return [Pair(*render_both(base, head, paths, options))]
    pairs: list[Pair] = []
    errors: list[Finding] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="modelplane-render-diff-") as tmp:
        copies: dict[Optional[str], str] = {}
        for revision, tree in ((base, base_tree), (head, head_tree)):
            if tree is not None:
                copies[revision] = os.path.join(tmp, "base" if tree is base_tree else "head")
                check_out(tree, git, copies[revision])
        env = {**os.environ, "MODELPLANE_RENDER": _this_renderer(tmp)}

        def at(revision: Optional[str], given: str) -> str:
            rel = git.repo_path(given)
            return given if revision is None else os.path.join(copies[revision], *rel.split("/"))

        apps = [p for p in holds if any(is_built(at(r, p)) for r in (base, head))]
        plain = [p for p in paths if p not in apps]
        if plain:
            try:
                pairs.append(Pair(*render_both(base, head, plain, options)))
            except InputError as exc:
                errors.extend(exc.errors)
            except RenderFailure as exc:
                failures.append(str(exc))
        for app in apps:
            sides = []
            for revision in (base, head):
                label = revision if revision is not None else WORK_TREE
                directory = at(revision, app)
                if kustomization_in(directory) is None:
                    sides.append(Side(label))  # new in the change, or removed by it
                    continue
                try:
                    _, objects = build(directory, shown=app, env=env)
                except RenderFailure as exc:
                    failures.append(f"at {label}: {exc}")
                    continue
                sides.append(built_side(label, objects, app))
            if len(sides) == 2:
                pairs.append(Pair(sides[0], sides[1], app))
    if errors:
        raise InputError(errors)
    if failures:
        raise RenderFailure("; ".join(failures))
    return pairs


def built_side(label: str, objects: list[dict[str, Any]], app: str) -> Side:
    """A side kustomize built: every object from the app's directory; its replicas known by their objects' label."""
    side = Side(label)
    for obj in objects:
        key = object_key(obj)
        side.objects[key] = obj
        side.files[key] = app
        replica = ((obj.get("metadata") or {}).get("labels") or {}).get(constants.LABEL_REPLICA)
        if isinstance(replica, str):
            side.replicas.setdefault((key[2], replica), app)
    return side


def _this_renderer(directory: str) -> str:
    """A command that runs this modelplane-render, for the function kustomize runs at each revision
    (kustomize/bin/modelplane-render-krm's first choice, $MODELPLANE_RENDER): both sides are rendered by the
    same renderer, never by one a revision happens to hold."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(constants.__file__)))
    path = os.path.join(directory, "modelplane-render")
    with open(path, "w", encoding="utf-8") as script:
        script.write(
            "#!/bin/sh\n"
            f"PYTHONPATH={shlex.quote(package_parent)}${{PYTHONPATH:+:$PYTHONPATH}} "
            f"exec {shlex.quote(sys.executable)} -c 'from modelplane_render.main import entry; entry()' \"$@\"\n"
        )
    os.chmod(path, 0o755)
    return path
