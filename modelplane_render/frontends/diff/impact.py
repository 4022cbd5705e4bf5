"""What a change does to live pods, a line per replica: which LeaderWorkerSets roll and how, which claim templates
are replaced, what is deleted and created anew, and any update the API server would refuse (facts.updates)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import constants
from ...facts.updates import refused_update
from .objects import Key, object_title

if TYPE_CHECKING:
    from .sides import Side


def _replica(obj: dict[str, Any], key: Key) -> tuple[str, str]:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return key[2], str(labels.get(constants.LABEL_REPLICA, ""))


def _devices(objects: dict[Key, dict[str, Any]], namespace: str, pod: Any) -> int | str:
    """The devices one pod claims: the counts of the claim templates it names (`all` for an All request)."""
    total = 0
    for claim in (pod or {}).get("spec", {}).get("resourceClaims") or []:
        template = objects.get(("resource.k8s.io", "ResourceClaimTemplate", namespace, str(claim.get("resourceClaimTemplateName"))))
        for request in ((template or {}).get("spec", {}).get("spec", {}).get("devices", {}).get("requests")) or []:
            exactly = request.get("exactly") or {}
            if exactly.get("allocationMode") == "All":
                return "all"
            total += int(exactly.get("count", 1))
    return total


def _roll(key: Key, before: dict[str, Any], after: dict[str, Any], objects: dict[Key, dict[str, Any]]) -> str:
    """How a LeaderWorkerSet's update reaches its pods."""
    title = object_title(key)
    old, new = before.get("spec") or {}, after.get("spec") or {}
    scaling = _count(old, new)
    parts = [scaling] if scaling else []
    groups = new.get("replicas")
    template = new.get("leaderWorkerTemplate") or {}
    if (old.get("leaderWorkerTemplate") or {}) != template:
        size = template.get("size", 1)
        leader = _devices(objects, key[2], template.get("leaderTemplate") or template.get("workerTemplate"))
        worker = _devices(objects, key[2], template.get("workerTemplate"))
        count = 0 if "all" in (leader, worker) else int(leader) + (size - 1) * int(worker)
        gpus = "all devices" if "all" in (leader, worker) else f"{count} device{'' if count == 1 else 's'}"
        rolling = (new.get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
        unavailable, surge = rolling.get("maxUnavailable", 1), rolling.get("maxSurge", 0)
        counted = "every group (as many as the autoscaler keeps)" if groups is None else f"{groups} group{'s' if groups != 1 else ''}"
        pace = "one group at a time" if unavailable == 1 else f"{unavailable} groups at a time"
        surge_text = "without surge (a group's pods stop before its new ones start)" if surge in (0, "0", "0%") else f"surge {surge}"
        parts.append(f"rolls {counted} of {size} pod{'s' if size != 1 else ''} ({gpus} a group), {pace} {surge_text}")
    elif parts:
        parts[-1] += " (no pod restarts)"
    if not parts:
        parts.append("changes without restarting pods")
    return f"{title} {' and '.join(parts)}"


def _count(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What a change of spec.replicas does; an absent one is the autoscaler's (the autoscaled setting)."""
    if "replicas" in old and "replicas" not in new:
        # Client-side apply deletes a field it wrote before, and the CRD's default is 1 (docs/autoscaling.md).
        return (
            f"leaves its group count ({old['replicas']} now) to an autoscaler: spec.replicas is no longer rendered, and "
            "an apply without the transition in docs/autoscaling.md scales it to 1 group"
        )
    if "replicas" not in old and "replicas" in new:
        return f"takes its group count back from the autoscaler: {new['replicas']} groups"
    if old.get("replicas") != new.get("replicas"):
        return f"scales from {old['replicas']} to {new['replicas']} groups"
    return ""


def _has(side: Side, namespace: str, replica: str) -> bool:
    return any(_replica(obj, key) == (namespace, replica) for key, obj in side.objects.items())


def impacts(base: Side, head: Side, changes: list[Any]) -> list[str]:
    # changes: compare.Change (compare imports this module, not the other way)
    """A line per replica whose objects change (objects of no replica: a line of their own)."""
    by_replica: dict[tuple[str, str], list[Any]] = {}
    for change in changes:
        obj = head.objects.get(change.key) or base.objects[change.key]
        by_replica.setdefault(_replica(obj, change.key), []).append(change)
    lines = []
    for (namespace, replica), group in sorted(by_replica.items()):
        said: list[str] = []
        refused: list[str] = []
        for change in group:
            kind = change.key[1]
            if change.status == "changed":
                before, after = base.objects[change.key], head.objects[change.key]
                refused += [f"{change.title}: {why}" for why in refused_update(kind, before, after)]
                if kind == "LeaderWorkerSet":
                    said.append(_roll(change.key, before, after, head.objects))
                elif kind == "Deployment" and (before.get("spec") or {}).get("template") != (after.get("spec") or {}).get("template"):
                    said.append(f"{change.title} restarts its pods")
        added = [c for c in group if c.status == "added"]
        removed = [c for c in group if c.status == "removed"]
        new_claims = [c.title for c in added if c.key[1] == "ResourceClaimTemplate"]
        old_claims = [c.title for c in removed if c.key[1] == "ResourceClaimTemplate"]
        if new_claims and old_claims:
            said.append(f"{', '.join(new_claims)} replaces {', '.join(old_claims)} (a new template: the old one is pruned last)")
        elif new_claims:
            said.append(f"{', '.join(new_claims)} is created")
        elif old_claims:
            said.append(f"{', '.join(old_claims)} is deleted")
        for status, one, many in (
            ("removed", "is deleted (its pods stop)", "are deleted (their pods stop)"),
            ("added", "is created (its pods start from nothing)", "are created (their pods start from nothing)"),
        ):
            workloads = [c.title for c in group if c.status == status and c.key[1] in ("LeaderWorkerSet", "Deployment")]
            if workloads:
                said.append(f"{', '.join(workloads)} {one if len(workloads) == 1 else many}")
        # A claim template changed in place (not refused) is one whose spec says what the server had defaulted.
        rest = [c for c in group if c.key[1] not in ("LeaderWorkerSet", "Deployment") and not (c in added or c in removed)]
        if rest and not said:
            said.append(f"{len(rest)} object{'s' if len(rest) != 1 else ''} change{'s' if len(rest) == 1 else ''}, no pod restarts")
        if refused:
            said.append("REFUSED as an update: " + "; ".join(refused) + " (delete and create it, or sync with Replace=true)")
        who = f"ModelReplica {namespace}/{replica}" if replica else "objects of no replica"
        if replica and all(c.status == "added" for c in group) and not _has(base, namespace, replica):
            who += " is new"
        elif replica and all(c.status == "removed" for c in group) and not _has(head, namespace, replica):
            who += " is removed"
        lines.append(f"{who}: {'; '.join(said)}")
    return lines
