"""One side of a diff: the sources at a revision (or the work tree) rendered, and where each object came from."""

from __future__ import annotations

import os
import shlex
import subprocess
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
from ...yamlio.libyaml import YAMLError, load_all
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


@dataclass(frozen=True)
class BaseRenderer:
    """Another modelplane-render that renders the base side, to review an upgrade of the renderer itself: its
    command (e.g. a venv of the previous release: `/opt/mpr-0.1/bin/modelplane-render`) and the render flags of
    this run, given to it as they were given here."""

    command: tuple[str, ...]
    arguments: tuple[str, ...] = ()


def render_pairs(
    base: str, head: Optional[str], paths: list[str], options: Options, base_renderer: Optional[BaseRenderer] = None
) -> list[Pair]:
    """The sides of every app the paths name: each directory only kustomize builds on its own (built at each
    revision from a copy of it, as Argo CD builds it), the other paths together (render_both). With a base
    renderer, it renders the base side (from a copy of the base revision). Every error of every side at once,
    and no diff."""
    git = Git()
    base_tree = RevisionTree(git, base)
    head_tree = RevisionTree(git, head) if head is not None else None
    holds = [
        p
        for p in paths
        if holds_kustomization_at(base_tree, git, p)
        or (holds_kustomization_at(head_tree, git, p) if head_tree is not None else kustomization_in(p) is not None)
    ]
    if not holds and base_renderer is None:
        return [Pair(*render_both(base, head, paths, options))]
    pairs: list[Pair] = []
    errors: list[Finding] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="modelplane-render-diff-") as tmp:
        # Indexed by side (0 base, 1 head), not by revision: an upgrade's review names one revision twice.
        copies: dict[int, str] = {}
        for index, tree in enumerate((base_tree, head_tree)):
            if tree is not None:
                copies[index] = os.path.join(tmp, ("base", "head")[index])
                check_out(tree, git, copies[index])
        ours = _renderer_script(tmp, "modelplane-render", _THIS_RENDERER, pythonpath=_PACKAGE_PARENT)
        theirs = _renderer_script(tmp, "base-renderer", base_renderer.command) if base_renderer else ours
        envs = ({**os.environ, "MODELPLANE_RENDER": theirs}, {**os.environ, "MODELPLANE_RENDER": ours})

        def at(index: int, given: str) -> str:
            """Where a given path is in the copy of side `index` (the work tree's is the path itself)."""
            return os.path.join(copies[index], *git.repo_path(given).split("/")) if index in copies else given

        apps = [p for p in holds if any(is_built(at(i, p)) for i in (0, 1))]
        plain = [p for p in paths if p not in apps]
        if plain:
            try:
                pair = Pair(*render_both(base, head, plain, options))
                if base_renderer is not None:
                    pair.base = _rendered_by(base_renderer, theirs, base, [at(0, p) for p in plain], pair.base)
                pairs.append(pair)
            except InputError as exc:
                errors.extend(exc.errors)
            except RenderFailure as exc:
                failures.append(str(exc))
        for app in apps:
            sides = []
            for index, revision in enumerate((base, head)):
                label = revision if revision is not None else WORK_TREE
                directory = at(index, app)
                if kustomization_in(directory) is None:
                    sides.append(Side(label))  # new in the change, or removed by it
                    continue
                try:
                    _, objects = build(directory, shown=app, env=envs[index])
                except RenderFailure as exc:
                    failures.append(f"at {label}: {exc}")
                    continue
                if index == 0 and base_renderer is not None:
                    label = f"{label} ({shlex.join(base_renderer.command)})"
                sides.append(built_side(label, objects, app))
            if len(sides) == 2:
                pairs.append(Pair(sides[0], sides[1], app))
    if errors:
        raise InputError(errors)
    if failures:
        raise RenderFailure("; ".join(failures))
    return pairs


def _rendered_by(renderer: BaseRenderer, script: str, revision: str, paths: list[str], ours: Side) -> Side:
    """The base side as the other renderer prints it; each object's source as this renderer found it."""
    shown = shlex.join(renderer.command)
    done = subprocess.run([script, "render", *renderer.arguments, *paths], capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
        raise RenderFailure(f"the base renderer ({shown}) did not render {revision}: {message}")
    try:
        objects = [o for o in load_all(done.stdout.decode("utf-8")) if o is not None]
    except (YAMLError, UnicodeDecodeError) as exc:
        raise RenderFailure(f"the base renderer ({shown}) printed what is not YAML: {exc}") from None
    by_replica = {_replica_label(obj): ours.files[key] for key, obj in ours.objects.items()}
    side = Side(f"{revision} ({shown})", replicas=ours.replicas)
    for obj in objects:
        if not isinstance(obj, dict):
            raise RenderFailure(f"the base renderer ({shown}) printed a document that is not a Kubernetes object")
        key = object_key(obj)
        side.objects[key] = obj
        side.files[key] = ours.files.get(key) or by_replica.get(_replica_label(obj)) or "(unknown source)"
    return side


def _replica_label(obj: dict[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str((meta.get("labels") or {}).get(constants.LABEL_REPLICA, ""))


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


# This modelplane-render as a command, for the function kustomize runs at each revision
# (kustomize/bin/modelplane-render-krm's first choice, $MODELPLANE_RENDER): both sides are rendered by the
# same renderer (or the base by the one --base-renderer names), never by one a revision happens to hold.
_THIS_RENDERER = (sys.executable, "-c", "from modelplane_render.main import entry; entry()")
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(constants.__file__)))


def _renderer_script(directory: str, name: str, command: tuple[str, ...], pythonpath: Optional[str] = None) -> str:
    """A script that runs `command` with its arguments: what $MODELPLANE_RENDER names is one path."""
    path = os.path.join(directory, name)
    prefix = f"PYTHONPATH={shlex.quote(pythonpath)}${{PYTHONPATH:+:$PYTHONPATH}} " if pythonpath else ""
    with open(path, "w", encoding="utf-8") as script:
        script.write(f'#!/bin/sh\n{prefix}exec {shlex.join(command)} "$@"\n')
    os.chmod(path, 0o755)
    return path
