"""The comparison of two sides: each object added, removed or changed, as a unified YAML diff, and what it means for live pods."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Optional

from ... import constants, names
from ...kinds import WORKLOAD_KINDS
from ...output import sort_key
from .impact import impacts
from .objects import Key, object_text, object_title
from .sides import Side


@dataclass
class Change:
    key: Key
    status: str  # "added", "removed" or "changed"
    file: str
    hunks: list[str]  # unified diff lines after the ---/+++ header, each ending in a newline
    added: int
    removed: int

    @property
    def title(self) -> str:
        return object_title(self.key)


@dataclass
class Comparison:
    base: str
    head: str
    changes: list[Change]
    notes: list[str]
    unchanged: int
    cluster: Optional[str] = None  # the InferenceCluster both sides were rendered for; None: every replica
    app: Optional[str] = None  # the directory kustomize built for both sides; None: the plain paths
    impacts: list[str] = field(default_factory=list)  # what the change does to live pods, a line per replica

    @property
    def scope(self) -> str:
        """Which part of the diff this is: the kustomization built and the cluster, or nothing for the plain paths."""
        return ", ".join(([f"kustomization {self.app}"] if self.app else []) + ([f"cluster {self.cluster}"] if self.cluster else []))

    def count(self, status: str) -> int:
        return sum(1 for c in self.changes if c.status == status)

    @property
    def lines_added(self) -> int:
        return sum(c.added for c in self.changes)

    @property
    def lines_removed(self) -> int:
        return sum(c.removed for c in self.changes)


def compare(base: Side, head: Side, context: int = 3, cluster: Optional[str] = None, app: Optional[str] = None) -> Comparison:
    changes: list[Change] = []
    unchanged = 0
    keys = set(base.objects) | set(head.objects)

    def order(key: Key) -> tuple[Any, ...]:
        obj = head.objects.get(key) or base.objects[key]
        return (*sort_key(obj), key)

    for key in sorted(keys, key=order):
        before = object_text(base.objects[key]).splitlines(keepends=True) if key in base.objects else []
        after = object_text(head.objects[key]).splitlines(keepends=True) if key in head.objects else []
        if before == after:
            unchanged += 1
            continue
        status = "added" if key not in base.objects else "removed" if key not in head.objects else "changed"
        lines = list(difflib.unified_diff(before, after, n=context))[2:]  # the ---/+++ header is written per format
        lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        plus = sum(1 for line in lines if line.startswith("+"))
        minus = sum(1 for line in lines if line.startswith("-"))
        file = head.files.get(key) or base.files[key]
        changes.append(Change(key, status, file, lines, plus, minus))
    notes = _notes(base, head, changes)
    of = f" of cluster {cluster}" if cluster is not None else ""
    if base.objects and not head.objects:
        # An empty side is what Argo CD turns into deleting everything: said first, never a quiet diff.
        notes.insert(0, f"all {len(base.objects)} objects{of} are removed: Argo CD (with pruning) will delete every one of them")
    elif head.objects and not base.objects and cluster is not None:
        notes.insert(0, f"cluster {cluster} had no objects: all {len(head.objects)} are added")
    return Comparison(base.label, head.label, changes, notes, unchanged, cluster, app, impacts(base, head, changes))


def _notes(base: Side, head: Side, changes: list[Change]) -> list[str]:
    """What a reviewer must not miss: a removed workload deletes live pods, and a rename is a removal."""
    notes = []
    gone = [r for r in base.replicas if r not in head.replicas]
    new = [r for r in head.replicas if r not in base.replicas]
    for namespace, name in sorted(gone):
        same_ns = [r for r in new if r[0] == namespace]
        same_file = [r for r in same_ns if head.replicas[r] == base.replicas[(namespace, name)]]
        match = same_file if len(same_file) == 1 else same_ns if len(same_ns) == 1 else []
        if match:
            new.remove(match[0])
            notes.append(
                f"ModelReplica {namespace}/{name} is renamed to {match[0][0]}/{match[0][1]}: its objects are removed and new ones added, "
                "so Argo CD will replace the live pods (the old ones are deleted and the new ones start from scratch on free GPUs), "
                "not roll them"
            )
        else:
            notes.append(f"ModelReplica {namespace}/{name} is removed: Argo CD (with pruning) will delete its objects and its live pods")
    kept = {(ns, names.label_value(name)) for ns, name in head.replicas if (ns, name) in base.replicas}

    def replica_of(side: Side, key: Key) -> tuple[str, str]:
        labels = (side.objects[key].get("metadata") or {}).get("labels") or {}
        return key[2], str(labels.get(constants.LABEL_REPLICA, ""))

    workloads = [c for c in changes if c.key[1] in WORKLOAD_KINDS and c.status != "changed"]
    for change in workloads:
        if change.status != "removed" or replica_of(base, change.key) not in kept:
            continue
        successors = [
            c.title
            for c in workloads
            if c.status == "added" and c.key[1] == change.key[1] and replica_of(head, c.key) == replica_of(base, change.key)
        ]
        if successors:
            notes.append(
                f"{change.title} is replaced by {' and '.join(successors)}: its live pods are deleted and the new ones start "
                "from scratch on free GPUs (a new name is not a rolling update)"
            )
        else:
            notes.append(f"{change.title} is removed: Argo CD (with pruning) will delete its live pods")
    return notes
