"""`schema`: the JSON Schema of a ModelReplica, derived from the CRD, judged by a real validator over every fixture."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import INVALID, VALID, run_cli
from modelplane_render import crd
from modelplane_render.errors import InputError
from modelplane_render.frontends.json_schema import replica_schema
from modelplane_render.yamlio.loader import decode, load_documents

CEL = "a CEL rule (x-kubernetes-validations): a JSON Schema derived from the CRD can't say it"
LIST_MAP = "unique list-map keys (x-kubernetes-list-map-keys): JSON Schema's uniqueItems compares whole items"
METADATA = "ObjectMeta: the CRD leaves metadata to the API server's own rules"
BEYOND = "a check beyond the CRD (validation/beyond_crd.py): only the output can state it"
ACROSS = "a fault across documents: a schema judges one document"
SELECTOR = "a DRA selector expression (validation/selectors.py): only a CEL compiler can judge it"
YAML_LEVEL = "a YAML-level fault (sources.py): the file doesn't load, there is nothing to judge"

# Every invalid fixture the schema lets through, and why. Every other invalid fixture must fail
# the schema; a new fixture must be classified here, and one the schema starts to catch (a CEL
# rule turned into bounds in the CRD) must leave this list.
NOT_EXPRESSIBLE = {
    "cel-selector-not-a-quantity": SELECTOR,
    "cel-selector-not-bool": SELECTOR,
    "cel-selector-quantity-compared-with-operator": SELECTOR,
    "cel-selector-syntax-error": SELECTOR,
    "cel-selector-unknown-field": SELECTOR,
    "decode-engine-on-sidecar-port": BEYOND,
    "shell-script-port-unreadable": BEYOND,
    "sglang-shell-script-without-host": BEYOND,
    "gang-ray-worker-given-engine-args": BEYOND,
    "gang-ray-image-without-ray": BEYOND,
    "gang-ray-head-claims-no-gpu": BEYOND,
    "gang-data-parallel-every-pod-serves": BEYOND,
    "gang-nnodes-not-the-gang": BEYOND,
    "gang-worker-tensor-size-differs": BEYOND,
    "gang-leader-headless": BEYOND,
    "gang-data-parallel-worker-without-start-rank": BEYOND,
    "gang-image-too-old-for-multi-node": BEYOND,
    "tensor-parallel-size-exceeds-claimed-gpus": BEYOND,
    "pd-kv-connector-the-sidecar-cannot-drive": BEYOND,
    "pd-kv-role-of-the-other-side": BEYOND,
    "pd-engines-move-kv-two-ways": BEYOND,
    "pd-sglang-disaggregation-mode-swapped": BEYOND,
    "sglang-image-without-command": BEYOND,
    "device-class-name-not-dns-subdomain": BEYOND,
    "duplicate-device-request-name": LIST_MAP,
    "duplicate-engine-name": LIST_MAP,
    "duplicate-key": YAML_LEVEL,
    "duplicate-replica": ACROSS,
    "engine-leader-without-worker": CEL,
    "engine-name-uppercase": BEYOND,
    "engine-port-digits-not-a-port": BEYOND,
    "engine-port-not-a-number": BEYOND,
    "engine-readiness-probe": CEL,
    "engine-standalone-with-worker": CEL,
    "env-value-and-value-from": CEL,
    "generate-name": METADATA,
    "gpu-in-resource-limits": CEL,
    "gpu-in-resource-requests": CEL,
    "merge-key": YAML_LEVEL,
    "metadata-unknown-field": METADATA,
    "missing-colon": YAML_LEVEL,
    "missing-namespace": BEYOND,
    "model-cache-ref-invalid-name": BEYOND,
    "namespace-not-dns-label": METADATA,
    "owner-reference-without-uid": METADATA,
    "no-device-requests": CEL,
    "no-engine-container": CEL,
    "node-pool-name-not-label-value": BEYOND,
    "pd-missing-decode-phase": CEL,
    "pd-missing-prefill-phase": CEL,
    "pd-sidecar-container-name": BEYOND,
    "pd-three-engines": CEL,
    "phase-without-prefill-decode": CEL,
    "picker-args-pool-name": BEYOND,
    "picker-env-namespace": BEYOND,
    "probe-two-handlers": CEL,
    "python-object-tag": YAML_LEVEL,
    "replica-label-invalid-key": METADATA,
    "replica-label-reserved-prefix": BEYOND,
    "replica-label-value-too-long": METADATA,
    "replica-name-starts-with-digit": METADATA,
    "replica-name-with-dot": METADATA,
    "reserved-env-modelplane-rank": BEYOND,
    "sidecar-port-clashes-with-engine": BEYOND,
    "sidecar-port-name-http": BEYOND,
    "syntax-error": YAML_LEVEL,
    "tab-indentation": YAML_LEVEL,
    "template-annotation-invalid-key": CEL,
    "template-label-invalid-key": CEL,
    "template-label-invalid-value": CEL,
    "template-label-key-prefix-too-long": CEL,
    "template-label-reserved-prefix": CEL,
    "two-engine-containers": CEL,
    "unified-engines-different-ports": BEYOND,
    "worker-member-without-worker": CEL,
    "worker-on-standalone-member": CEL,
}


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft7Validator:
    schema = replica_schema()
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def documents_of(case: Path) -> list[Any]:
    found = []
    for path in sorted(case.glob("*.y*ml")):
        if path.name.startswith("kustomization"):
            continue
        found.extend(d.data for d in load_documents(path.name, decode(path.name, path.read_bytes())))
    return found


def is_replica(data: Any) -> bool:
    return isinstance(data, dict) and data.get("apiVersion") == crd.API_VERSION and data.get("kind") == crd.KIND


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_every_valid_replica_passes(case, validator):  # type: ignore[no-untyped-def]
    replicas = [d for d in documents_of(case) if is_replica(d)]
    assert replicas
    for data in replicas:
        assert [e.message for e in validator.iter_errors(data)] == []


@pytest.mark.parametrize("case", INVALID, ids=[p.name for p in INVALID])
def test_every_invalid_fixture_a_schema_can_express_fails(case, validator):  # type: ignore[no-untyped-def]
    reason = NOT_EXPRESSIBLE.get(case.name)
    if reason == YAML_LEVEL:
        with pytest.raises(InputError):
            documents_of(case)
        return
    # Every document, not only ModelReplicas: a list, another kind or version must fail too.
    errors = [e.message for data in documents_of(case) for e in validator.iter_errors(data)]
    if reason is None:
        assert errors, f"{case.name}: the schema lets it through; if no JSON Schema can say its fault, list it in NOT_EXPRESSIBLE"
    else:
        assert errors == [], f"{case.name} is listed as not expressible ({reason}) but the schema catches it: take it off the list"


def test_the_classification_names_only_fixtures_that_exist():  # type: ignore[no-untyped-def]
    assert set(NOT_EXPRESSIBLE) <= {p.name for p in INVALID}


def test_most_invalid_fixtures_with_a_schema_fault_are_caught():  # type: ignore[no-untyped-def]
    """The schema is worth having: it catches the types, enums, bounds, patterns, required and unknown fields."""
    caught = [p.name for p in INVALID if p.name not in NOT_EXPRESSIBLE]
    assert len(caught) >= 30, caught


# -- derived from the CRD, translated where the dialects differ --------------------------------


def at(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    for part in path:
        schema = schema["items"] if part == "[]" else schema["properties"][part]
    return schema


def test_the_schema_is_draft_07_with_constants_for_apiversion_and_kind():  # type: ignore[no-untyped-def]
    schema = replica_schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert at(schema, "apiVersion")["const"] == crd.API_VERSION
    assert at(schema, "kind")["const"] == crd.KIND
    assert schema["required"] == ["apiVersion", "kind", "spec"]
    assert schema["additionalProperties"] is False


def test_translations_of_the_kubernetes_extensions():  # type: ignore[no-untyped-def]
    schema = replica_schema()
    member = at(schema, "spec", "engines", "[]", "members", "[]")
    container = at(member, "template", "spec", "containers", "[]")
    port = at(container, "readinessProbe", "httpGet", "port")
    assert port["anyOf"] == [{"type": "integer"}, {"type": "string"}] and "type" not in port  # x-kubernetes-int-or-string
    quantity = at(container, "resources", "limits")["additionalProperties"]
    assert quantity["anyOf"] == [{"type": "integer"}, {"type": "string"}] and "pattern" in quantity
    config = at(schema, "spec", "serving", "endpointPicker", "config")
    assert "additionalProperties" not in config  # x-kubernetes-preserve-unknown-fields: open
    assert "additionalProperties" not in at(schema, "status")
    assert "additionalProperties" not in at(schema, "metadata")  # the CRD leaves ObjectMeta to the API server
    assert member["additionalProperties"] is False and container["additionalProperties"] is False
    labels = at(member, "template", "metadata", "labels")
    assert labels["additionalProperties"] == {"type": "string", "maxLength": 63}
    assert at(schema, "spec", "clusterName")["description"].startswith("Name of the InferenceCluster this replica is pinned to.")
    role = {k: v for k, v in at(member, "role").items() if k != "description"}
    assert role == {"type": "string", "enum": ["Standalone", "Leader", "Worker"], "default": "Standalone"}
    assert "x-kubernetes-validations" not in json.dumps(schema)


def test_every_crd_field_and_constraint_reaches_the_schema():  # type: ignore[no-untyped-def]
    """Walk the CRD and the schema side by side: every property and every bound is carried over."""
    carried = ("enum", "default", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")
    carried += ("minProperties", "maxProperties", "required", "description")

    def walk(source: dict[str, Any], target: dict[str, Any], where: str) -> int:
        count = 0
        for key in carried:
            if key in source and not (where == "" and key == "required"):
                assert target.get(key) == source[key], f"{where or '.'}: {key}"
                count += 1
        if source.get("type") and not source.get("x-kubernetes-int-or-string"):
            assert target["type"] == source["type"], where
        for name, child in source.get("properties", {}).items():
            count += walk(child, target["properties"][name], f"{where}.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(source.get(key), dict):
                count += walk(source[key], target[key], f"{where}[{key}]")
        return count

    assert walk(crd.openapi_schema(), replica_schema(), "") > 100


def test_the_schema_follows_the_crd_at_run_time(monkeypatch):  # type: ignore[no-untyped-def]
    changed = copy.deepcopy(crd.crd())
    engines = changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["engines"]
    engines["items"]["properties"]["copies"]["maximum"] = 7
    monkeypatch.setattr(crd, "crd", lambda: changed)
    assert at(replica_schema(), "spec", "engines", "[]", "copies")["maximum"] == 7


# -- the command ---------------------------------------------------------------------------------


def test_schema_prints_the_json_schema():  # type: ignore[no-untyped-def]
    result = run_cli("schema")
    assert (result.code, result.stderr) == (0, "")
    assert json.loads(result.stdout) == replica_schema()
    assert result.stdout == run_cli("schema").stdout and result.stdout.endswith("}\n")


def test_schema_crd_prints_the_crd_as_plain_yaml():  # type: ignore[no-untyped-def]
    result = run_cli("schema", "--crd")
    assert (result.code, result.stderr) == (0, "")
    assert list(yaml.safe_load_all(result.stdout)) == [crd.crd()]
    events = yaml.parse(result.stdout, Loader=yaml.SafeLoader)
    assert not any(isinstance(e, yaml.AliasEvent) or getattr(e, "anchor", None) for e in events)  # aliases written out
