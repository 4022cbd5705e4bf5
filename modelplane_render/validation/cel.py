"""The CRD's CEL rules (`x-kubernetes-validations`), each as a small Python predicate.

The CRD holds the rule and its message; this module holds one predicate per rule, keyed
by the rule's own text, so the two can't drift apart unnoticed: a rule in the CRD with no
predicate here fails loudly (and a test checks that every rule has one and every
predicate has a rule). The API-server test then proves each predicate judges as CEL does.
Values are as the API server sees them when CEL runs: after defaulting.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import FieldPath, SourceError
from ..sources import Document

Predicate = Callable[[Any], bool]

_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


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
            lambda md: all(not k.startswith("modelplane.ai/") for k in md.get("labels", {})),
        ),
        (
            "!has(self.labels) || self.labels.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",
            lambda md: all(_LABEL_KEY.search(k) for k in md.get("labels", {})),
        ),
        (
            "!has(self.labels) || self.labels.all(k, k.split('/')[0].size() <= 253)",
            lambda md: all(len(k.split("/")[0]) <= 253 for k in md.get("labels", {})),
        ),
        (
            "!has(self.labels) || self.labels.all(k, self.labels[k].matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$'))",
            lambda md: all(_LABEL_VALUE.search(v) for v in md.get("labels", {}).values()),
        ),
        (
            "!has(self.annotations) || self.annotations.all(k, k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",
            lambda md: all(_LABEL_KEY.search(k) for k in md.get("annotations", {})),
        ),
        (
            "!has(self.annotations) || self.annotations.all(k, k.split('/')[0].size() <= 253)",
            lambda md: all(len(k.split("/")[0]) <= 253 for k in md.get("annotations", {})),
        ),
        ("self.exists_one(c, c.name == 'engine')", lambda cs: sum(1 for c in cs if c["name"] == "engine") == 1),
        (
            "self.all(c, c.name != 'engine' || !has(c.readinessProbe))",
            lambda cs: all(c["name"] != "engine" or "readinessProbe" not in c for c in cs),
        ),
        (
            "[has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",
            lambda p: _one_of(p, "httpGet", "tcpSocket", "grpc"),
        ),
        ("!has(self.value) || !has(self.valueFrom)", lambda e: not ("value" in e and "valueFrom" in e)),
        (
            "[has(self.secretKeyRef), has(self.configMapKeyRef), has(self.fieldRef)].filter(x, x).size() == 1",
            lambda v: _one_of(v, "secretKeyRef", "configMapKeyRef", "fieldRef"),
        ),
        (
            "!has(self.limits) || self.limits.all(k, !k.endsWith('/gpu'))",
            lambda r: all(not k.endswith("/gpu") for k in r.get("limits", {})),
        ),
        (
            "!has(self.requests) || self.requests.all(k, !k.endsWith('/gpu'))",
            lambda r: all(not k.endswith("/gpu") for k in r.get("requests", {})),
        ),
    ]
}


def field_path(base: FieldPath, field_path_expr: str | None) -> FieldPath:
    """Append a rule's `fieldPath` (`.members`, `.labels`) to the path of the node it is on."""
    if not field_path_expr:
        return base
    return base + tuple(part for part in field_path_expr.split(".") if part)


def make_rule_runner(document: Document) -> Callable[[FieldPath, Any, dict[str, Any], list[SourceError]], None]:
    def run(path: FieldPath, value: Any, schema: dict[str, Any], errors: list[SourceError]) -> None:
        for rule in schema["x-kubernetes-validations"]:
            predicate = PREDICATES.get(normalise(rule["rule"]))
            if predicate is None:
                raise LookupError(f"the CRD has a rule this version can't evaluate: {rule['rule']}")
            if not predicate(value):
                errors.append(document.error(field_path(path, rule.get("fieldPath")), rule["message"]))

    return run
