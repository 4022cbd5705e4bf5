"""The CRD's CEL rules (`x-kubernetes-validations`), each as a small Python predicate.

The CRD holds the rule and its message; this module holds one predicate per rule, keyed
by the rule's own text, so the two can't drift apart unnoticed: a rule in the CRD with no
predicate here fails loudly (and a test checks that every rule has one and every
predicate has a rule). The API-server test then proves each predicate judges as CEL does.
Values are as the API server sees them when CEL runs: after defaulting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

from .. import names
from ..errors import FieldPath, Finding, MapKey
from ..yamlio.document import Document

# A predicate answers True (the rule holds), False (it fails: report at the rule's node and
# fieldPath), or a path below fieldPath naming the entry that breaks it, reported at its key.
Verdict = Union[bool, tuple[Any, ...]]
Predicate = Callable[[Any], Verdict]

# Extended resources of GPU device plugins; GPUs bind only through DRA here.
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe")
_GPU_LIST = "[" + ", ".join(f"'{g}'" for g in GPU_RESOURCES) + "]"


def normalise(rule: str) -> str:
    return " ".join(rule.split())


def _pd(spec: dict[str, Any]) -> bool:
    return "serving" in spec and spec["serving"].get("mode") == "PrefillDecode"


def _phases(spec: dict[str, Any], phase: str) -> int:
    return sum(1 for e in spec["engines"] if e.get("phase") == phase)


def _engine_shape(engine: dict[str, Any]) -> bool:
    roles = [m["role"] for m in engine["members"]]
    if len(roles) == 1 and roles[0] == "Standalone":
        return True
    return roles.count("Leader") == 1 and "Worker" in roles and "Standalone" not in roles


def _one_of(value: dict[str, Any], *keys: str) -> bool:
    return sum(1 for k in keys if k in value) == 1


def _every_key(entries: dict[str, Any], holds: Callable[[str], Any]) -> Verdict:
    """True, or the first key of a map (labels, limits) for which the rule does not hold."""
    for key in entries:
        if not holds(key):
            return (MapKey(key),)
    return True


PREDICATES: dict[str, Predicate] = {
    normalise(rule): predicate
    for rule, predicate in [
        (
            "!has(self.serving) || self.serving.mode != 'PrefillDecode' || size(self.engines) == 2",
            lambda s: not _pd(s) or len(s["engines"]) == 2,
        ),
        (
            "!has(self.serving) || self.serving.mode != 'PrefillDecode' || self.engines.exists_one(e, has(e.phase) && e.phase == 'Prefill')",
            lambda s: not _pd(s) or _phases(s, "Prefill") == 1,
        ),
        (
            "!has(self.serving) || self.serving.mode != 'PrefillDecode' || self.engines.exists_one(e, has(e.phase) && e.phase == 'Decode')",
            lambda s: not _pd(s) or _phases(s, "Decode") == 1,
        ),
        (
            "(has(self.serving) && self.serving.mode == 'PrefillDecode') || !self.engines.exists(e, has(e.phase))",
            lambda s: _pd(s) or not any("phase" in e for e in s["engines"]),
        ),
        (
            "(self.members.size() == 1 && self.members[0].role == 'Standalone') || (self.members.exists_one(m, m.role == 'Leader')"
            " && self.members.exists(m, m.role == 'Worker') && !self.members.exists(m, m.role == 'Standalone'))",
            _engine_shape,
        ),
        (
            "self.members.exists(m, has(m.deviceRequests))",
            lambda e: any("deviceRequests" in m for m in e["members"]),
        ),
        ("!has(self.worker) || self.role == 'Worker'", lambda m: "worker" not in m or m["role"] == "Worker"),
        ("self.role != 'Worker' || has(self.worker)", lambda m: m["role"] != "Worker" or "worker" in m),
        (
            "!has(self.labels) || self.labels.all(k, !k.startsWith('modelplane.ai/'))",
            lambda md: _every_key(md.get("labels", {}), lambda k: not k.startswith("modelplane.ai/")),
        ),
        (
            "!has(self.labels) || self.labels.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",
            lambda md: _every_key(md.get("labels", {}), names.QUALIFIED_NAME.search),
        ),
        (
            "!has(self.labels) || self.labels.all(k, k.split('/')[0].size() <= 253)",
            lambda md: _every_key(md.get("labels", {}), lambda k: len(k.split("/")[0]) <= 253),
        ),
        (
            "!has(self.labels) || self.labels.all(k, self.labels[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",
            lambda md: _every_key(md.get("labels", {}), lambda k: names.LABEL_VALUE.search(md["labels"][k])),
        ),
        (
            "!has(self.annotations) || self.annotations.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",
            lambda md: _every_key(md.get("annotations", {}), names.QUALIFIED_NAME.search),
        ),
        (
            "!has(self.annotations) || self.annotations.all(k, k.split('/')[0].size() <= 253)",
            lambda md: _every_key(md.get("annotations", {}), lambda k: len(k.split("/")[0]) <= 253),
        ),
        ("self.exists_one(c, c.name == 'engine')", lambda cs: sum(1 for c in cs if c["name"] == "engine") == 1),
        (
            "self.all(c, c.name != 'engine' || !has(c.readinessProbe))",
            lambda cs: next(((i, "readinessProbe") for i, c in enumerate(cs) if c["name"] == "engine" and "readinessProbe" in c), True),
        ),
        (
            "[has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",
            lambda p: _one_of(p, "httpGet", "tcpSocket", "grpc"),
        ),
        ("!has(self.value) || !has(self.valueFrom)", lambda e: not ("value" in e and "valueFrom" in e)),
        (
            "!has(self.limits) || " + _GPU_LIST + ".all(g, !(g in self.limits))",
            lambda r: _every_key(r.get("limits", {}), lambda k: k not in GPU_RESOURCES),
        ),
        (
            "!has(self.requests) || " + _GPU_LIST + ".all(g, !(g in self.requests))",
            lambda r: _every_key(r.get("requests", {}), lambda k: k not in GPU_RESOURCES),
        ),
    ]
}


def field_path(base: FieldPath, field_path_expr: str | None) -> FieldPath:
    """Append a rule's `fieldPath` (`.members`, `.labels`) to the path of the node it is on."""
    if not field_path_expr:
        return base
    return base + tuple(part for part in field_path_expr.split(".") if part)


def make_rule_runner(document: Document) -> Callable[[FieldPath, Any, dict[str, Any], list[Finding]], None]:
    def run(path: FieldPath, value: Any, schema: dict[str, Any], errors: list[Finding]) -> None:
        for rule in schema["x-kubernetes-validations"]:
            predicate = PREDICATES.get(normalise(rule["rule"]))
            if predicate is None:
                raise LookupError(f"the CRD has a rule this version can't evaluate: {rule['rule']}")
            verdict = predicate(value)
            if verdict is True:
                continue
            where = field_path(path, rule.get("fieldPath"))
            if isinstance(verdict, tuple):
                errors.append(document.error(where + verdict, rule["message"], at_key=isinstance(verdict[-1], MapKey)))
            else:
                errors.append(document.error(where, rule["message"]))

    return run
