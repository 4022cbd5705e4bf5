"""Every x-kubernetes-validations rule of the CRD, run by a real CEL implementation, judges as its Python predicate.

validation/cel.py keeps one hand-written predicate per rule for speed; the rule text in the CRD stays the one
truth. This compiles each rule's text from the CRD with cel-expr-python (the strings extension at version 2, as
kube-apiserver 1.37 declares it: k8s.io/apiserver@v0.37.2 pkg/cel/environment/base.go, "String library"; the
rules use no Kubernetes library) and evaluates it, with `self` the defaulted value of the node the rule sits on,
on every node of every fixture replica and every document test_apiserver generates, and beside it the predicate
`PREDICATES[normalise(rule)]` on the same value. Any disagreement fails; so does a rule never seen both holding
and failing at each place it sits, so the comparison can't pass by never asking.

The nodes compared are those where validation/structural.py asks its rule runner: a node with no schema fault
beneath it (a predicate may assume the shape its schema promises). Unlike the project's runner, the recorder
here doesn't add rule failures to the errors, so an enclosing node's rules still run after a rule below fails,
as on the API server. Every other node a rule sits on must have a schema fault beneath it.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel
from test_apiserver import DOCUMENTS, ENGINE_CONTAINER, LEADER, _set, _variant

from modelplane_render import crd
from modelplane_render.errors import FieldPath, Finding, MapKey, format_path
from modelplane_render.validation.cel import PREDICATES, normalise
from modelplane_render.validation.structural import StructuralValidator
from modelplane_render.yamlio.document import Document

# Steps of a schema path that are not property names: each item of a list, each value of a map.
ITEM = "[*]"
ENTRY = "{*}"
SchemaPath = tuple[str, ...]

# What kube-apiserver 1.37 adds to base CEL that the rules use: the strings extension (for split), version 2.
CEL_CONFIG = "extensions:\n- name: strings\n  version: 2\n"


@dataclass(frozen=True)
class Rule:
    """One rule at one place of the schema (a rule under a YAML alias sits at each place the alias is used)."""

    where: SchemaPath
    text: str
    field_path: str | None

    def __str__(self) -> str:
        at = "".join(s if s in (ITEM, ENTRY) else "." + s for s in self.where) or "."
        return f"{at} {self.text!r}" + (f" (fieldPath {self.field_path})" if self.field_path else "")


def collect_rules(schema: dict[str, Any], where: SchemaPath = ()) -> Iterator[Rule]:
    for rule in schema.get("x-kubernetes-validations", []):
        yield Rule(where, rule["rule"], rule.get("fieldPath"))
    for name, inner in (schema.get("properties") or {}).items():
        yield from collect_rules(inner, where + (name,))
    if isinstance(schema.get("items"), dict):
        yield from collect_rules(schema["items"], where + (ITEM,))
    if isinstance(schema.get("additionalProperties"), dict):
        yield from collect_rules(schema["additionalProperties"], where + (ENTRY,))


RULES = list(collect_rules(crd.openapi_schema()))


def schema_at(where: SchemaPath) -> dict[str, Any]:
    node = crd.openapi_schema()
    for step in where:
        node = node["items"] if step == ITEM else node["additionalProperties"] if step == ENTRY else node["properties"][step]
    return node


def nodes_at(value: Any, where: SchemaPath, path: FieldPath = ()) -> Iterator[tuple[FieldPath, Any]]:
    """(field path, value) of every node of the data at the schema path: each item of a list, each map entry."""
    if not where:
        yield path, value
        return
    step, rest = where[0], where[1:]
    if step == ITEM:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from nodes_at(item, rest, path + (i,))
    elif step == ENTRY:
        if isinstance(value, dict):
            for key, item in value.items():
                yield from nodes_at(item, rest, path + (MapKey(key),))
    elif isinstance(value, dict) and step in value:
        yield from nodes_at(value[step], rest, path + (step,))


@functools.cache
def programs() -> dict[str, Any]:
    """Each rule's text compiled once, as the API server compiles it: `self` dynamic, maps as maps."""
    env = cel.NewEnv(variables={"self": cel.Type.DYN}, config=cel.NewEnvConfigFromYaml(CEL_CONFIG))
    return {rule.text: env.compile(rule.text) for rule in RULES}


def cel_holds(rule: Rule, value: Any) -> tuple[bool, str]:
    """The API server's verdict: the rule holds only if it evaluates to true; an evaluation error fails it."""
    result = programs()[rule.text].eval(data={"self": value})
    if result.type() == cel.Type.ERROR:
        return False, f"error {result.value()}"
    verdict = result.value()
    assert isinstance(verdict, bool), f"{rule}: CEL gave {verdict!r}, not a boolean"
    return verdict, str(verdict).lower()


def predicate_holds(rule: Rule, value: Any) -> tuple[bool, str]:
    """The predicate's verdict: True holds; False, or a path naming the breaking entry, fails."""
    predicate = PREDICATES.get(normalise(rule.text))
    assert predicate is not None, f"{rule}: no predicate in validation/cel.py"
    try:
        verdict = predicate(value)
    except Exception as error:  # in production this would be a crash, not a verdict
        return False, f"raised {error!r}"
    assert verdict is True or verdict is False or isinstance(verdict, tuple), f"{rule}: the predicate returned {verdict!r}"
    return verdict is True, repr(verdict)


@dataclass
class Comparison:
    evaluated: int = 0
    skipped: int = 0  # nodes with a schema fault beneath: neither the project nor (for type faults) the server runs CEL
    holds: dict[Rule, int] = field(default_factory=lambda: {rule: 0 for rule in RULES})
    fails: dict[Rule, int] = field(default_factory=lambda: {rule: 0 for rule in RULES})
    disagreements: list[str] = field(default_factory=list)
    unexplained: list[str] = field(default_factory=list)


def judge(name: str, document: Document, seen: Comparison) -> None:
    errors: list[Finding] = []
    asked: dict[FieldPath, Any] = {}

    def record(path: FieldPath, value: Any, schema: dict[str, Any], errors: list[Finding]) -> None:
        asked[path] = value

    data = StructuralValidator(document, errors, record).check(document.data, crd.openapi_schema(), ())
    faults = [e.path for e in errors]
    walked: set[FieldPath] = set()
    for rule in RULES:
        for path, value in nodes_at(data, rule.where):
            walked.add(path)
            where = f"{name}: {format_path(path) or '.'}: {rule}"
            if path not in asked:
                below = format_path(path)
                if not any(f == below or f.startswith(below + ".") or f.startswith(below + "[") or not below for f in faults):
                    seen.unexplained.append(f"{where}: structural never asked, and nothing beneath it failed")
                seen.skipped += 1
                continue
            assert asked[path] is value, f"{where}: structural judged another value than its output holds"
            by_cel, cel_said = cel_holds(rule, value)
            by_predicate, predicate_said = predicate_holds(rule, value)
            seen.evaluated += 1
            (seen.holds if by_cel else seen.fails)[rule] += 1
            if by_cel != by_predicate:
                seen.disagreements.append(f"{where}: CEL says {cel_said}, the predicate {predicate_said}, on {value!r:.300}")
    stray = set(asked) - walked
    assert not stray, f"{name}: structural asked for rules where the CRD walk finds none: {sorted(map(format_path, stray))}"


def _picker(container: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return _set("spec.serving", {"endpointPicker": {"template": {"spec": {"containers": [{"name": "p", "image": "i", **container}]}}}})


def more_variants() -> Iterator[tuple[str, Document]]:
    """What test_apiserver's variants don't reach: the rules under the picker container's aliased env and resources
    failing there, the annotation key prefix past 253, and the edges where a Python spelling could part from CEL's:
    RE2's `$` is the end of the text while Python's also matches before a final newline; size() counts characters,
    not UTF-8 bytes (the `é` key's prefix is 127 characters, 254 bytes)."""
    for key in ("team\n", "example.com/team\n", "a" * 253 + "/b", "a" * 254 + "/b", "é" * 127 + "/b"):
        yield _variant(f"cel-label-key-{len(key)}-{key[:12]!r}", _set(f"{LEADER}.template.metadata", {"labels": {key: "v"}}))
    for value in ("v\n", "", "a" * 63):
        yield _variant(f"cel-label-value-{len(value)}-{value[:4]!r}", _set(f"{LEADER}.template.metadata", {"labels": {"team": value}}))
    for key in ("example.com/a\n", "a" * 253 + "/b", "a" * 254 + "/b", "modelplane.ai/x"):
        yield _variant(f"cel-annotation-key-{len(key)}-{key[:12]!r}", _set(f"{LEADER}.template.metadata", {"annotations": {key: "v"}}))
    yield _variant("cel-containers-no-engine", _set(f"{LEADER}.template.spec.containers", [{"name": "side", "image": "x"}]))
    yield _variant(
        "cel-env-both-unicode",
        _set(f"{ENGINE_CONTAINER}.env", [{"name": "A", "value": "é", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]),
    )
    yield _variant("cel-picker-env-both", _picker({"env": [{"name": "A", "value": "1", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}))
    yield _variant("cel-picker-env-ok", _picker({"env": [{"name": "A", "value": "1"}]}))
    yield _variant("cel-picker-gpu-limit", _picker({"resources": {"limits": {"gpu.intel.com/xe": 1}}}))
    yield _variant("cel-picker-gpu-request", _picker({"resources": {"requests": {"nvidia.com/gpu": 1}}}))
    yield _variant("cel-picker-cpu", _picker({"resources": {"requests": {"cpu": 1}, "limits": {"memory": "1Gi"}}}))
    yield _variant("cel-gpu-limit-among-others", _set(f"{ENGINE_CONTAINER}.resources", {"limits": {"cpu": 1, "gpu.intel.com/i915": 1}}))
    yield _variant("cel-gpu-request-xe", _set(f"{ENGINE_CONTAINER}.resources", {"requests": {"gpu.intel.com/xe": "1"}}))
    yield _variant("cel-probe-grpc", _set(f"{ENGINE_CONTAINER}.readinessProbe", {"grpc": {"port": 9000}}))
    yield _variant("cel-worker-nodes-on-standalone", lambda d: d["spec"]["engines"][0].update(members=[_standalone(d, worker=True)]))
    yield _variant("cel-standalone-only", lambda d: d["spec"]["engines"][0].update(members=[_standalone(d)]))
    yield _variant("cel-leader-only", lambda d: d["spec"]["engines"][0]["members"].pop(1))
    yield _variant(
        "cel-pd-no-phase", lambda d: d["spec"].update(serving={"mode": "PrefillDecode"}, engines=[_engine(d, "a"), _engine(d, "b")])
    )


def _engine(data: dict[str, Any], name: str) -> dict[str, Any]:
    return {**copy.deepcopy(data["spec"]["engines"][0]), "name": name}


def _standalone(data: dict[str, Any], *, worker: bool = False) -> dict[str, Any]:
    member: dict[str, Any] = {**copy.deepcopy(data["spec"]["engines"][0]["members"][0]), "role": "Standalone"}
    if worker:
        member["worker"] = {"nodes": 1}
    return member


MORE = list(more_variants())


@functools.cache
def comparison() -> Comparison:
    seen = Comparison()
    for name, document in [*DOCUMENTS, *MORE]:
        judge(name, document, seen)
    return seen


def test_rules_are_collected_with_their_places() -> None:
    assert {rule.text for rule in RULES} == {r["rule"] for r in crd.iter_rules()}
    assert len(RULES) > len({rule.text for rule in RULES})  # the aliased env and resources rules sit at two places
    for rule in RULES:
        if rule.field_path:
            schema_at(rule.where + tuple(part for part in rule.field_path.split(".") if part))  # names a field of the schema


def test_cel_and_the_predicates_agree_on_every_node() -> None:
    seen = comparison()
    assert not seen.unexplained, "\n".join(seen.unexplained)
    assert not seen.disagreements, f"{len(seen.disagreements)} disagreements:\n" + "\n".join(seen.disagreements)
    print(f"rule evaluations compared: {seen.evaluated} ({len(RULES)} rule places); nodes under a schema fault: {seen.skipped}")


def test_every_rule_is_seen_holding_and_failing_at_each_place() -> None:
    seen = comparison()
    never = [f"{rule}: holds {seen.holds[rule]}, fails {seen.fails[rule]}" for rule in RULES if not (seen.holds[rule] and seen.fails[rule])]
    assert not never, "rules the comparison never saw both ways:\n" + "\n".join(never)
