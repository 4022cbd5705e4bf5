"""The platform settings (service account, priority class, affinity, capabilities) on every engine pod, held to the real API server.

The API server never validates a LeaderWorkerSet's pod templates as pods: its CRD checks their shape, and
a pod's own rules are first met when the LeaderWorkerSet controller creates a pod. So each engine pod
template of every valid fixture, rendered with every setting, is made into a Pod and created on the real
kube-apiserver v1.37.2 in a strict server-side dry run (validation and admission, nothing stored), and
the affinity checker (options/pod_fields.py) is held to the API server's verdict on a table of
affinities. A capability name is not the API server's business: containerd checks it, at container start.
"""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from apiserver import ApiServer
from conftest import SHARED, VALID
from modelplane_render import constants as c
from modelplane_render import kinds
from modelplane_render.errors import UsageError
from modelplane_render.options import Options, parse_affinity, parse_capabilities
from modelplane_render.options.pod_fields import affinity_problems
from modelplane_render.pipeline import render_paths

Obj = dict[str, Any]

SERVICE_ACCOUNT = "weights-reader"
PRIORITY_CLASS = "inference-high"
CAPABILITIES = ("IPC_LOCK", "SYS_RESOURCE")
HOSTNAME = "kubernetes.io/hostname"
# What a platform team writes: H100 or H200 nodes with more than 40 GB a GPU, and engine pods spread over
# hosts where they can be.
REALISTIC_AFFINITY: Obj = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100-80GB-HBM3", "NVIDIA-H200"]},
                        {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["40000"]},
                    ]
                }
            ]
        }
    },
    "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 50,
                "podAffinityTerm": {
                    "labelSelector": {"matchExpressions": [{"key": c.LABEL_REPLICA, "operator": "Exists"}]},
                    "topologyKey": HOSTNAME,
                },
            }
        ]
    },
}
OPTIONS = Options(
    service_account=SERVICE_ACCOUNT, priority_class=PRIORITY_CLASS, affinity=parse_affinity(REALISTIC_AFFINITY), capabilities=CAPABILITIES
)
LWS_CRD = SHARED / "upstream" / "crds" / "leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml"
TABLE_NAMESPACE = "affinity-table"


@pytest.fixture(scope="module")
def rendered() -> dict[str, list[Obj]]:
    """Every valid fixture's objects, rendered with every platform setting (as the replicas say, namespaces included)."""
    return {p.name: render_paths([str(p)], OPTIONS).objects for p in VALID}


def _engine_pod_templates(objects: list[Obj]) -> Iterator[tuple[Obj, str, Obj]]:
    """(LeaderWorkerSet, where, pod template) for every pod template of every LeaderWorkerSet: its leader's, if it has one, and its workers'."""
    for obj in objects:
        if obj["kind"] != kinds.LEADER_WORKER_SET.kind:
            continue
        template = obj["spec"]["leaderWorkerTemplate"]
        for role in ("leaderTemplate", "workerTemplate"):
            if role in template:
                yield obj, f"{obj['metadata']['name']} {role}", template[role]


def _all_containers(pod_spec: Obj) -> list[Obj]:
    return [*pod_spec.get("initContainers", []), *pod_spec["containers"]]


# --- every setting reaches every engine pod, and nothing else --------------------------------------------


@pytest.mark.parametrize("case", [p.name for p in VALID])
def test_every_setting_is_in_every_engine_pod_and_the_capability_on_the_engine_only(case: str, rendered: dict[str, list[Obj]]) -> None:
    templates = list(_engine_pod_templates(rendered[case]))
    assert templates, f"{case} renders no LeaderWorkerSet"
    for _, where, template in templates:
        spec = template["spec"]
        assert spec.get("serviceAccountName") == SERVICE_ACCOUNT, where
        assert spec.get("priorityClassName") == PRIORITY_CLASS, where
        assert spec.get("affinity") == REALISTIC_AFFINITY, where
        assert spec.get("nodeSelector"), f"{where}: the affinity adds to the node pool's nodeSelector, never replaces it"
        engines = [ct for ct in spec["containers"] if ct["name"] == c.ENGINE_CONTAINER]
        assert len(engines) == 1, where
        assert engines[0]["securityContext"]["capabilities"]["add"] == list(CAPABILITIES), where
        for container in _all_containers(spec):
            if container is not engines[0]:
                assert "capabilities" not in container.get("securityContext", {}), f"{where}: {container['name']}"
    # The picker runs as its own ServiceAccount with the Role it needs, and gets none of the engine's settings.
    pickers = [o for o in rendered[case] if o["kind"] == kinds.DEPLOYMENT.kind]
    assert pickers
    for picker in pickers:
        spec = picker["spec"]["template"]["spec"]
        assert spec["serviceAccountName"] != SERVICE_ACCOUNT
        assert "priorityClassName" not in spec and "affinity" not in spec, picker["metadata"]["name"]
        for container in _all_containers(spec):
            assert "capabilities" not in container.get("securityContext", {}), picker["metadata"]["name"]


# --- the real API server ---------------------------------------------------------------------------------


@dataclass
class Cluster:
    server: ApiServer
    kubectl_path: Path

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.kubectl_path), f"--kubeconfig={self.server.kubeconfig}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )


def _admission_objects(namespaces: list[str]) -> list[Obj]:
    """What admission demands before an engine pod is created: no controller-manager runs here, so nothing else makes them."""
    objects: list[Obj] = [
        # Priority admission resolves priorityClassName to the class's value, and refuses a pod naming none.
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": PRIORITY_CLASS}, "value": 1000000},
    ]
    for namespace in namespaces:
        objects += [
            # NamespaceLifecycle admission refuses any object in a namespace that doesn't exist.
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            # ServiceAccount admission refuses a pod whose serviceAccountName names none in its namespace.
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SERVICE_ACCOUNT, "namespace": namespace}},
        ]
    # The table's pods name no ServiceAccount, so they run as their namespace's `default`, which the
    # ServiceAccount admission then requires (a cluster's controller-manager creates it; none runs here).
    objects += [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TABLE_NAMESPACE}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": TABLE_NAMESPACE}},
    ]
    return objects


@pytest.fixture(scope="module")
def cluster(rendered: dict[str, list[Obj]]) -> Iterator[Cluster]:
    """One kube-apiserver for the module, with the LeaderWorkerSet CRD and what admission needs for the engine pods."""
    from peer import real_apiserver, require_peer

    kubectl = require_peer("kubectl")
    with real_apiserver() as server:
        server.apply_crd(yaml.safe_load(LWS_CRD.read_text()))
        ready = Cluster(server, kubectl)
        namespaces = sorted({o["metadata"]["namespace"] for objects in rendered.values() for o in objects})
        done = ready.kubectl("create", "-f", "-", stdin=_stream(_admission_objects(namespaces)))
        assert done.returncode == 0, done.stderr
        yield ready


def _stream(objects: list[Obj]) -> str:
    return "".join(f"---\n{json.dumps(o)}\n" for o in objects)  # JSON is YAML, and kubectl reads a stream of them


def _refusals(done: subprocess.CompletedProcess[str], expected: dict[str, str]) -> list[str]:
    """What kubectl (-o name, one line per object it created) did not create: `<what it is>: <the server's message>`."""
    created = set(done.stdout.split())
    failed = []
    for name, what in expected.items():
        if name not in created:
            short = name.split("/", 1)[1]
            said = [line for line in done.stderr.splitlines() if f'"{short}"' in line] or [done.stderr.strip()]
            failed.append(f"{what}: {' '.join(said)}")
    return failed


@pytest.mark.real_peers
def test_every_engine_pod_of_every_fixture_is_accepted_as_a_pod(cluster: Cluster, rendered: dict[str, list[Obj]]) -> None:
    """A Pod from each engine pod template (its metadata, a name and a namespace; its spec as rendered), all in one dry run."""
    pods: list[Obj] = []
    expected: dict[str, str] = {}
    for index, (case, objects) in enumerate(rendered.items()):
        for number, (lws, where, template) in enumerate(_engine_pod_templates(objects)):
            name = f"pod-{index}-{number}"
            metadata = {**copy.deepcopy(template.get("metadata", {})), "name": name, "namespace": lws["metadata"]["namespace"]}
            pods.append({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]})
            expected[f"pod/{name}"] = f"{case}: {where}"
    assert len(pods) >= len(rendered)
    done = cluster.kubectl("create", "--dry-run=server", "--validate=strict", "-o", "name", "-f", "-", stdin=_stream(pods))
    refused = _refusals(done, expected)
    assert not refused, "the API server refused engine pods:\n" + "\n".join(refused)


@pytest.mark.real_peers
def test_every_leader_worker_set_is_accepted_by_its_crd(cluster: Cluster, rendered: dict[str, list[Obj]]) -> None:
    """The LeaderWorkerSets as rendered, with every setting, in one strict server-side dry-run apply (their CRD's schema)."""
    sets: list[Obj] = []
    expected: dict[str, str] = {}
    for case, objects in rendered.items():
        for obj in objects:
            if obj["kind"] == kinds.LEADER_WORKER_SET.kind:
                sets.append(obj)
                key = f"leaderworkerset.leaderworkerset.x-k8s.io/{obj['metadata']['name']}"
                expected[key] = f"{expected[key]}, {case}" if key in expected else case
    done = cluster.kubectl("apply", "--dry-run=server", "--validate=strict", "-o", "name", "-f", "-", stdin=_stream(sets))
    refused = _refusals(done, expected)
    assert not refused, "the API server refused LeaderWorkerSets:\n" + "\n".join(refused)


# --- the affinity checker agrees with the API server -----------------------------------------------------

# The table's pod carries these labels: matchLabelKeys and mismatchLabelKeys only mean something for
# a key the pod has (the pod strategy adds `key In (its value)` to the labelSelector, and validates after).
TABLE_POD_LABELS = {"app": "engine", "team": "search"}


def _required_node(*terms: Obj) -> Obj:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


def _node_expression(key: str, operator: str, values: list[Any] | None = None) -> Obj:
    return _required_node({"matchExpressions": [{"key": key, "operator": operator} | ({} if values is None else {"values": values})]})


def _node_field(operator: str, values: list[Any], key: str = "metadata.name") -> Obj:
    return _required_node({"matchFields": [{"key": key, "operator": operator, "values": values}]})


def _preferred_node(*weights: Any) -> Obj:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}} for w in weights
            ]
        }
    }


def _pod_term(kind: str = "podAffinity", **term: Any) -> Obj:
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": HOSTNAME} | term]}}


def _selector(operator: str, values: list[Any] | None = None, key: str = "app") -> Obj:
    return {"matchExpressions": [{"key": key, "operator": operator} | ({} if values is None else {"values": values})]}


AFFINITIES: dict[str, Any] = {
    # Accepted.
    "realistic": REALISTIC_AFFINITY,
    "empty": {},
    "nulls": {"nodeAffinity": None, "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}},
    "node: every operator": _required_node(
        {
            "matchExpressions": [
                {"key": "a", "operator": "In", "values": ["x"]},
                {"key": "b", "operator": "NotIn", "values": ["x", "y"]},
                {"key": "c", "operator": "Exists"},
                {"key": "d", "operator": "DoesNotExist", "values": []},
                {"key": "e", "operator": "Gt", "values": ["7"]},
                {"key": "f", "operator": "Lt", "values": ["007"]},
            ]
        }
    ),
    "node: required values empty and at 63": _node_expression("nvidia.com/gpu.product", "In", ["", "v" * 63]),
    # A preference's values are not held to label values: the server takes them with a Warning. Only a
    # required term's are (ValidateNodeSelectorRequirement, AllowInvalidLabelValueInRequiredNodeAffinity false).
    "node: preferred values needn't be label values": {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["NVIDIA H100", "-3"]}]}}
            ]
        }
    },
    "node: an empty term": _required_node({}),
    "node: matchFields metadata.name In and NotIn": _required_node(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1.example"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["gpu-2"]}]},
    ),
    "node: weights 1, 50 and 100": _preferred_node(1, 50, 100),
    "pod: namespaces and an empty namespaceSelector": _pod_term(namespaces=["ml-team", "a" * 63], namespaceSelector={}),
    "pod: label values at 63 and empty": _pod_term(
        labelSelector={"matchLabels": {"app": "v" * 63}} | _selector("In", ["", "a.b_c-d"], "team")
    ),
    "pod: topologyKey prefix of 253": _pod_term(topologyKey=f"{'a' * 249}.com/zone"),
    "pod: matchLabelKeys, and mismatchLabelKeys on a key the selector has": _pod_term(
        labelSelector=_selector("Exists", key="team"), matchLabelKeys=["app"], mismatchLabelKeys=["team"]
    ),
    "pod: matchLabelKeys with an empty labelSelector": _pod_term(labelSelector={}, matchLabelKeys=["app"]),
    # Refused: operators per place.
    "node: unknown operator": _node_expression("a", "Equals", ["x"]),
    "node: operator in lower case": _node_expression("a", "in", ["x"]),
    "label selector: Gt is a node operator only": _pod_term(labelSelector=_selector("Gt", ["1"])),
    # Refused: values required, forbidden, one integer.
    "node: In without values": _node_expression("a", "In"),
    "node: Exists with values": _node_expression("a", "Exists", ["x"]),
    "node: Gt with two values": _node_expression("a", "Gt", ["1", "2"]),
    "node: Lt without values": _node_expression("a", "Lt", []),
    "label selector: NotIn without values": _pod_term(labelSelector=_selector("NotIn", [])),
    "label selector: DoesNotExist with values": _pod_term(labelSelector=_selector("DoesNotExist", ["x"])),
    "node: key not given": _node_expression("", "Exists"),
    # Refused: a required term's values are label values (a node's label values are, so no other could match).
    "node: a required value with spaces": _node_expression("nvidia.com/gpu.product", "In", ["NVIDIA H100 80GB HBM3"]),
    "node: a required value of 64": _node_expression("a", "NotIn", ["v" * 64]),
    "node: Gt with a negative integer": _node_expression("a", "Gt", ["-3"]),
    # Refused: node field selectors.
    "matchFields: metadata.namespace": _node_field("In", ["x"], key="metadata.namespace"),
    "matchFields: two names": _node_field("In", ["gpu-1", "gpu-2"]),
    "matchFields: Exists": _node_field("Exists", []),
    "matchFields: not a node name": _node_field("In", ["Node_1"]),
    # Refused: terms and weights.
    "node: no terms": _required_node(),
    "node: required without nodeSelectorTerms": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}},
    "node: weight 0": _preferred_node(0),
    "node: weight 101": _preferred_node(101),
    "pod: weight 0": {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "podAffinityTerm": {"topologyKey": HOSTNAME}}]}
    },
    # Refused: topology keys, label keys and values, namespaces.
    "pod: no topologyKey": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}},
    "anti-affinity: preferred without topologyKey": {
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {"labelSelector": {}}}]}
    },
    "pod: topologyKey with a space": _pod_term(topologyKey="kubernetes.io/host name"),
    "pod: topologyKey prefix of 254": _pod_term(topologyKey=f"{'a' * 250}.com/zone"),
    "pod: topologyKey name of 64": _pod_term(topologyKey="x" * 64),
    "label selector: key starts with '-'": _pod_term(labelSelector=_selector("Exists", key="-app")),
    "label selector: value with a space": _pod_term(labelSelector=_selector("In", ["a b"])),
    "matchLabels: value of 64": _pod_term(labelSelector={"matchLabels": {"app": "v" * 64}}),
    "matchLabels: upper-case key prefix": _pod_term(labelSelector={"matchLabels": {"Example.com/app": "x"}}),
    "namespaceSelector: bad value": _pod_term(namespaceSelector={"matchLabels": {"team": "-x"}}),
    "namespaces: not a namespace name": _pod_term(namespaces=["ML_Team"]),
    "namespaces: 64 characters": _pod_term(namespaces=["a" * 64]),
    # Refused: matchLabelKeys and mismatchLabelKeys.
    "matchLabelKeys without labelSelector": _pod_term(matchLabelKeys=["app"]),
    "mismatchLabelKeys without labelSelector": _pod_term("podAntiAffinity", mismatchLabelKeys=["app"]),
    "a key in matchLabelKeys and mismatchLabelKeys": _pod_term(labelSelector={}, matchLabelKeys=["app"], mismatchLabelKeys=["app"]),
    "matchLabelKeys: not a label key": _pod_term(labelSelector={}, matchLabelKeys=["bad key"]),
    "matchLabelKeys: a key the labelSelector has": _pod_term(labelSelector={"matchLabels": {"app": "engine"}}, matchLabelKeys=["app"]),
    "anti-affinity matchLabelKeys: a key the labelSelector has": _pod_term(
        "podAntiAffinity", labelSelector=_selector("In", ["engine"]), matchLabelKeys=["app"]
    ),
    "matchLabelKeys: a key twice": _pod_term(labelSelector={}, matchLabelKeys=["app", "app"]),
    # Refused: unknown fields (strict field validation) and wrong types.
    "unknown field: nodeAfinity": {"nodeAfinity": {}},
    "unknown field: NodeAffinity (field names are case-sensitive)": {"NodeAffinity": {}},
    "unknown field: matchExpression": _pod_term(labelSelector={"matchExpression": []}),
    "wrong type: affinity a list": [],
    "wrong type: weight a string": _preferred_node("50"),
    "wrong type: values a string": _node_expression("a", "In", "x"),  # type: ignore[arg-type]
    "wrong type: a node value a number": _node_expression("a", "In", [5]),
    "wrong type: nodeSelectorTerms a mapping": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": {}}}
    },
    # Stricter than a pod on purpose (DELIBERATE).
    "node: Gt with a non-integer": _node_expression("nvidia.com/gpu.memory", "Gt", ["40GB"]),
    "node: Lt beyond a 64-bit integer": _node_expression("nvidia.com/gpu.memory", "Lt", ["99999999999999999999"]),
    "node: a null term": _required_node(None),  # type: ignore[arg-type]
    "node: a null value": _node_expression("a", "In", [None]),
    "label selector: a null value": _pod_term(labelSelector=_selector("In", [None])),
    "matchLabels: a null value": _pod_term(labelSelector={"matchLabels": {"app": None}}),
    "node: a preferred term without preference": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10}]}},
}

# What a LeaderWorkerSet can't carry as it was given: its CRD's schema refuses it (a null in a list of
# objects or strings; a field the Go type has no `omitempty` on, which controller-gen marks required), or
# prunes it (a null map value is dropped, so the selector loses the key). The affinity reaches a pod only
# through a LeaderWorkerSet, so what it refuses or changes is refused here too.
THE_LWS_SCHEMA = "the LeaderWorkerSet's CRD schema refuses or prunes it, so the pods would never get it as written"
DELIBERATE: dict[str, str] = {
    # The scheduler reads a Gt/Lt value as an integer (apimachinery labels.NewRequirement: "for 'Gt', 'Lt'
    # operators, the value must be an integer"), and a term it can't read matches no node: every engine
    # pod would stay Pending. The API server takes any label value.
    "node: Gt with a non-integer": "the scheduler compares Gt/Lt as integers: a non-integer matches no node, and the pod stays Pending",
    # The same parse is strconv.ParseInt(v, 10, 64): a value past int64 fails it as a word would.
    "node: Lt beyond a 64-bit integer": "the scheduler parses Gt/Lt as a 64-bit integer: a larger one matches no node",
    "node: a null term": THE_LWS_SCHEMA,
    "node: a null value": THE_LWS_SCHEMA,
    "label selector: a null value": THE_LWS_SCHEMA,
    "matchLabels: a null value": THE_LWS_SCHEMA,
    "node: a preferred term without preference": THE_LWS_SCHEMA,
}


def _table_pod(affinity: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "affinity", "namespace": TABLE_NAMESPACE, "labels": TABLE_POD_LABELS},
        "spec": {"containers": [{"name": c.ENGINE_CONTAINER, "image": "vllm/vllm-openai:v0.23.0"}], "affinity": affinity},
    }


def _message(status: int, body: Any) -> str:
    return str(body.get("message") if isinstance(body, dict) else body) if status >= 300 else ""


def test_the_affinity_table_says_what_it_means() -> None:
    assert set(DELIBERATE) <= set(AFFINITIES)
    assert affinity_problems(REALISTIC_AFFINITY) == []


@pytest.mark.real_peers
def test_the_affinity_checker_agrees_with_the_api_server(cluster: Cluster, rendered: dict[str, list[Obj]]) -> None:
    """Each affinity on a Pod, POSTed as strict server-side dry run (dryRun=All, fieldValidation=Strict, what kubectl's
    --dry-run=server --validate=strict asks for), one request each: the server's own verdict and message, with no
    client in between that might re-read the value."""
    disagreements: list[str] = []
    still_deliberate: list[str] = []
    for name, affinity in AFFINITIES.items():
        problems = affinity_problems(affinity)
        status, body, _ = cluster.server.dry_run_create(_table_pod(affinity))
        assert status in (201, 400, 422), f"{name}: {status} {body}"
        if (problems == []) == (status == 201):
            if name in DELIBERATE:
                still_deliberate.append(f"{name}: both now {'accept' if status == 201 else 'refuse'} it: drop it from DELIBERATE")
            continue
        if name in DELIBERATE:
            continue
        ours = "accepts" if not problems else f"refuses ({'; '.join(f'{p}: {m}' for p, m in problems)})"
        server = "accepts" if status == 201 else f"refuses ({_message(status, body)})"
        disagreements.append(f"{name}: affinity_problems {ours}, the API server {server}")
    assert not disagreements, "affinity_problems disagrees with the API server:\n" + "\n".join(disagreements)
    assert not still_deliberate, "\n".join(still_deliberate)
    # Each reason given as the LeaderWorkerSet's schema holds: it refuses the affinity, or stores another.
    (lws,) = [o for o in rendered["single-gpu-standalone"] if o["kind"] == kinds.LEADER_WORKER_SET.kind]
    for name, reason in DELIBERATE.items():
        if reason != THE_LWS_SCHEMA:
            continue
        carrier = copy.deepcopy(lws)
        carrier["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["affinity"] = AFFINITIES[name]
        status, body, _ = cluster.server.dry_run_create(carrier)
        if status == 201:
            stored = body["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["affinity"]
            assert stored != AFFINITIES[name], f"{name}: the LeaderWorkerSet carries it as written: {reason} no longer holds"


@pytest.mark.real_peers
def test_the_api_server_takes_any_capability_name(cluster: Cluster) -> None:
    """Why the render checks capability names: the API server doesn't (containerd refuses one it doesn't know at container start)."""
    pod = _table_pod(None)
    pod["spec"]["containers"][0]["securityContext"] = {"capabilities": {"add": ["IPC_LOK", "CAP_IPC_LOCK", "ALL"]}}
    status, body, _ = cluster.server.dry_run_create(pod)
    assert status == 201, body


# --- capabilities, without a server ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("IPC_LOK", "IPC_LOCK"),  # misspelt: the closest name
        ("CAP_IPC_LOCK", "'IPC_LOCK'"),  # the kernel's spelling: a pod's is without CAP_
        ("ipc_lock", "'IPC_LOCK'"),  # a pod writes them in upper case
        ("ALL", "ALL is every capability"),  # as good as privileged
    ],
)
def test_a_capability_name_a_pod_should_not_carry_is_refused_with_the_right_spelling(given: str, says: str) -> None:
    """The API server takes any name; containerd's CRI plugin prefixes CAP_ and refuses one it doesn't know when it
    starts the container, so a typo would stop every engine pod. The render refuses it first."""
    with pytest.raises(UsageError) as raised:
        parse_capabilities([given])
    assert says in str(raised.value)
    assert "--capability" in str(raised.value)


def test_capabilities_are_kept_in_order_once_each() -> None:
    assert parse_capabilities(["IPC_LOCK", "SYS_RESOURCE", "IPC_LOCK"]) == ("IPC_LOCK", "SYS_RESOURCE")
    assert parse_capabilities(None) is None
