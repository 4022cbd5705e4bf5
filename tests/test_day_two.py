"""Day two: every edit of a replica applies to a live cluster as an update, in both of Argo CD's apply modes.

A ResourceClaimTemplate's spec is immutable (k8s v1.37.2 pkg/apis/resource/validation
ValidateResourceClaimTemplateUpdate), so its name carries a hash of what it claims: an edit of a device
request is a new template that the LeaderWorkerSet rolls onto, and the old one is pruned last (its
annotation `argocd.argoproj.io/sync-options: PruneLast=true`). Every other name stays as it was.

The catalogue applies render A, then render B, to the real kube-apiserver v1.37.2 with the real kubectl
v1.37.2: client-side apply (Argo CD's default, the three-way merge of last-applied-configuration) and
server-side apply, the rendered text sent as printed, then deletes what B no longer renders (Argo CD's
prune). Every object must be accepted; the test says which were renamed. The bare API server runs no
LeaderWorkerSet webhook (kubernetes-sigs/lws is not on the Go module proxy): its update rules are held
as facts below, checked on every pair of renders.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT, VALID
from modelplane_render import crd, names
from modelplane_render.options import Options, parse_affinity
from modelplane_render.pipeline import render_paths
from modelplane_render.plan.pods import claim_name_content

FIXTURES = {p.name: p for p in VALID}
Replica = dict[str, Any]
Objects = dict[tuple[str, str], dict[str, Any]]


def _fixture(name: str) -> Replica:
    data: Replica = yaml.safe_load((FIXTURES[name] / "replica.yaml").read_text())
    return data


DEFAULTS = Options()


def _render(tmp: Path, replica: Replica, options: Options = DEFAULTS) -> tuple[str, Objects]:
    source = tmp / f"replica-{abs(hash(json.dumps(replica, sort_keys=True)))}.yaml"
    source.write_text(json.dumps(replica))  # JSON is YAML, and quotes every string as it is
    rendered = render_paths([str(source)], options)
    return rendered.text, {(o["kind"], o["metadata"]["name"]): o for o in rendered.objects}


# --- claim templates: renamed with what they claim, nothing else renamed ------------------------------


def _claims(objects: Objects) -> dict[str, dict[str, Any]]:
    return {name: obj for (kind, name), obj in objects.items() if kind == "ResourceClaimTemplate"}


@pytest.mark.parametrize("case", [p.name for p in VALID])
def test_a_claim_templates_name_hashes_the_spec_it_is_rendered_with(case: str) -> None:
    """The name is the hash of the spec as printed: so the spec can't change while the name stays."""
    rendered = render_paths([str(FIXTURES[case])], Options())
    objects = {(o["kind"], o["metadata"]["name"]): o for o in rendered.objects}
    for obj in objects.values():
        if obj["kind"] != "LeaderWorkerSet":
            continue
        template = obj["spec"]["leaderWorkerTemplate"]
        replica = obj["metadata"]["labels"]["modelplane.ai/replica"]
        engine = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]["modelplane.ai/engine"]
        for role_key, position in (("leaderTemplate", "Leader"), ("workerTemplate", None)):
            pod = template.get(role_key)
            if pod is None:
                continue
            for claim in pod["spec"].get("resourceClaims", []):
                claimed = objects[("ResourceClaimTemplate", claim["resourceClaimTemplateName"])]
                role = position or pod["metadata"]["labels"]["modelplane.ai/role"]
                content = claim_name_content(claimed["spec"])
                assert claim["resourceClaimTemplateName"] == names.claim_template_name(replica, engine, role, content)


DEVICE_EDITS: dict[str, Callable[[Replica], None]] = {
    "count": lambda r: _member(r).__setitem__("deviceRequests", [dict(_member(r)["deviceRequests"][0], count=2)]),
    "class": lambda r: _member(r).__setitem__("deviceRequests", [dict(_member(r)["deviceRequests"][0], deviceClassName="gpu.amd.com")]),
    "selector": lambda r: _member(r).__setitem__(
        "deviceRequests",
        [dict(_member(r)["deviceRequests"][0], selectors=[{"cel": 'device.driver == "gpu.nvidia.com"'}])],
    ),
}


def _member(replica: Replica, engine: int = 0, member: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = replica["spec"]["engines"][engine]["members"][member]
    return found


def _container(replica: Replica, engine: int = 0, member: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = _member(replica, engine, member)["template"]["spec"]["containers"][0]
    return found


@pytest.mark.parametrize("edit", list(DEVICE_EDITS))
def test_an_edit_of_what_a_member_claims_renames_its_template_and_nothing_else(edit: str, tmp_path: Path) -> None:
    base = _fixture("single-gpu-standalone")
    changed = copy.deepcopy(base)
    DEVICE_EDITS[edit](changed)
    _, before = _render(tmp_path, base)
    _, after = _render(tmp_path, changed)
    assert set(before) - set(after) == {("ResourceClaimTemplate", n) for n in _claims(before)}
    assert set(after) - set(before) == {("ResourceClaimTemplate", n) for n in _claims(after)}
    (lws,) = [o for (k, _), o in after.items() if k == "LeaderWorkerSet"]
    (claim,) = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["resourceClaims"]
    assert claim["resourceClaimTemplateName"] in _claims(after)


def test_an_edit_elsewhere_keeps_every_name() -> None:
    base = _fixture("single-gpu-standalone")
    changed = copy.deepcopy(base)
    _container(changed)["image"] = "vllm/vllm-openai:v0.23.1"
    _container(changed)["args"] = [*_container(changed).get("args", []), "--max-num-seqs=64"]
    changed["spec"]["engines"][0]["copies"] = 3
    changed["metadata"].setdefault("labels", {})["team"] = "search"
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    assert set(_render(tmp, base)[1]) == set(_render(tmp, changed)[1])


def test_a_claim_template_is_pruned_last_and_keeps_the_replicas_own_sync_options(tmp_path: Path) -> None:
    base = _fixture("single-gpu-standalone")
    (claim,) = _claims(_render(tmp_path, base)[1]).values()
    assert claim["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "PruneLast=true"
    base["metadata"]["annotations"] = {"argocd.argoproj.io/sync-options": "Replace=false"}
    objects = _render(tmp_path, base)[1]
    (claim,) = _claims(objects).values()
    assert claim["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "Replace=false,PruneLast=true"
    others = [o for (k, _), o in objects.items() if k != "ResourceClaimTemplate"]
    assert all(o["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == "Replace=false" for o in others)


# --- LeaderWorkerSet v0.10.0's webhook (pkg/webhooks/leaderworkerset_webhook.go ValidateUpdate), as facts ---


def _scaled(value: Any, replicas: int, *, round_up: bool) -> int:
    """An int-or-percent of rollingUpdateConfiguration, scaled against replicas as the webhook scales it."""
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * replicas
        return -(-share // 100) if round_up else share // 100
    return int(value)


def lws_update_problems(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What LWS v0.10.0's webhooks refuse of an update (pkg/webhooks/leaderworkerset_webhook.go ValidateUpdate
    :98-116 and generalValidate :123-190; the real webhooks, run by hand on this catalogue, refused none of it).
    Its defaulting (:52-85) sets networkConfig.subdomainPolicy again before validating, so "can't become null"
    (:111) is never met through the API server; the templates write Shared, the default, themselves, so that
    defaulting never patches a create (its patch re-serialises the object and adds `resources: {}` to a
    container without resources, which the next client-side apply then removes: a spurious update)."""
    problems = []
    old_t, new_t = old["spec"]["leaderWorkerTemplate"], new["spec"]["leaderWorkerTemplate"]
    old_sub, new_sub = (old_t.get("subGroupPolicy") or {}).get("subGroupSize"), (new_t.get("subGroupPolicy") or {}).get("subGroupSize")
    if old_sub != new_sub:
        problems.append("leaderWorkerTemplate.subGroupPolicy.subGroupSize is immutable (and can't be set or removed)")
    if new_t.get("size", 1) < 1:
        problems.append("leaderWorkerTemplate.size must be at least 1")
    replicas = new["spec"].get("replicas", 1)
    rolling = (new["spec"].get("rolloutStrategy") or {}).get("rollingUpdateConfiguration") or {}
    unavailable = _scaled(rolling.get("maxUnavailable", 1), replicas, round_up=False)
    surge = _scaled(rolling.get("maxSurge", 0), replicas, round_up=True)
    if replicas > 0 and unavailable == 0 and surge == 0:
        problems.append("rollingUpdateConfiguration: maxUnavailable must not be 0 when maxSurge is 0")
    if (new["spec"].get("networkConfig") or {}).get("subdomainPolicy") is None:
        problems.append("networkConfig.subdomainPolicy is left to the webhook's defaulting, which patches the create")
    return problems


def test_the_lws_facts_refuse_what_the_real_webhook_refused() -> None:
    """The refusals the real webhook gave when run by hand, each held by the facts above."""
    (lws,) = [o for (k, _), o in _render(Path("/tmp"), _fixture("single-gpu-standalone"))[1].items() if k == "LeaderWorkerSet"]
    assert lws_update_problems(lws, lws) == []
    for change, says in (
        (lambda s: s["leaderWorkerTemplate"].__setitem__("size", 0), "size"),
        (lambda s: s["rolloutStrategy"]["rollingUpdateConfiguration"].update(maxUnavailable="10%"), "maxUnavailable"),
        (lambda s: s["leaderWorkerTemplate"].__setitem__("subGroupPolicy", {"subGroupSize": 1}), "subGroupSize"),
    ):
        changed = copy.deepcopy(lws)
        change(changed["spec"])
        assert any(says in p for p in lws_update_problems(lws, changed)), says


# --- the catalogue, on the real API server with the real kubectl --------------------------------------

# The release before claim templates were named by what they claim (main when issue 27 was filed): its
# render, then this one's, is the day-two edit of every user who upgrades.
PREVIOUS_RELEASE = "945b331"


def _edit(base: str, change: Callable[[Replica], None] | None = None) -> Callable[[], tuple[Replica, Replica]]:
    def make() -> tuple[Replica, Replica]:
        a = _fixture(base)
        b = copy.deepcopy(a)
        if change is not None:
            change(b)
        return a, b

    return make


def _picker(replica: Replica) -> dict[str, Any]:
    found: dict[str, Any] = replica["spec"]["serving"]["endpointPicker"]
    return found


def _reshaped(a_case: str, b_case: str) -> Callable[[], tuple[Replica, Replica]]:
    """Replica A, and B: another fixture's spec under A's name (its first engine keeps A's engine name)."""

    def make() -> tuple[Replica, Replica]:
        a, b = _fixture(a_case), _fixture(b_case)
        b["metadata"] = copy.deepcopy(a["metadata"])
        b["spec"]["engines"][0]["name"] = a["spec"]["engines"][0]["name"]
        return a, b

    return make


def _swapped(make: Callable[[], tuple[Replica, Replica]]) -> Callable[[], tuple[Replica, Replica]]:
    return lambda: tuple(reversed(make()))  # type: ignore[return-value]


CATALOGUE: dict[str, tuple[Callable[[], tuple[Replica, Replica]], Options, Options, set[str]]] = {
    # name: (replicas A and B, options A, options B, the kinds whose objects may be renamed)
    "device count": (_edit("single-gpu-standalone", DEVICE_EDITS["count"]), Options(), Options(), {"ResourceClaimTemplate"}),
    "device class": (_edit("single-gpu-standalone", DEVICE_EDITS["class"]), Options(), Options(), {"ResourceClaimTemplate"}),
    "device selector": (_edit("single-gpu-standalone", DEVICE_EDITS["selector"]), Options(), Options(), {"ResourceClaimTemplate"}),
    "image": (
        _edit("single-gpu-standalone", lambda r: _container(r).__setitem__("image", "vllm/vllm-openai:v0.23.1")),
        Options(),
        Options(),
        set(),
    ),
    "args": (_edit("single-gpu-standalone", lambda r: _container(r)["args"].append("--max-num-seqs=64")), Options(), Options(), set()),
    "env": (
        _edit(
            "single-gpu-standalone", lambda r: _container(r).setdefault("env", []).append({"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"})
        ),
        Options(),
        Options(),
        set(),
    ),
    "port": (
        _edit("single-gpu-standalone", lambda r: _container(r).__setitem__("ports", [{"name": "metrics", "containerPort": 9090}])),
        Options(),
        Options(),
        set(),
    ),
    "copies": (_edit("several-copies", lambda r: r["spec"]["engines"][0].__setitem__("copies", 5)), Options(), Options(), set()),
    "worker nodes": (
        # A gang whose args leave --nnodes to us (the fixture that writes --nnodes=2 is refused at 4 pods).
        _edit("env-from-secrets-and-downward-api", lambda r: _member(r, 0, 1)["worker"].__setitem__("nodes", 3)),
        Options(),
        Options(),
        set(),
    ),
    "members added (one node to a leader and workers)": (
        _reshaped("single-gpu-standalone", "multi-node-leader-worker"),
        Options(),
        Options(),
        {"ResourceClaimTemplate"},
    ),
    "members removed": (
        _swapped(_reshaped("single-gpu-standalone", "multi-node-leader-worker")),
        Options(),
        Options(),
        {"ResourceClaimTemplate"},
    ),
    "unified to prefill/decode": (
        _reshaped("single-gpu-standalone", "prefill-decode-kimi-k2"),
        Options(),
        Options(),
        {"ResourceClaimTemplate", "LeaderWorkerSet"},
    ),
    "prefill/decode to unified": (
        _swapped(_reshaped("single-gpu-standalone", "prefill-decode-kimi-k2")),
        Options(),
        Options(),
        {"ResourceClaimTemplate", "LeaderWorkerSet"},
    ),
    "picker image": (
        _edit(
            "endpoint-picker-overrides",
            lambda r: _picker(r)["template"]["spec"]["containers"][0].__setitem__(
                "image", "mirror.example.com/llm-d/llm-d-router-endpoint-picker:v0.9.1"
            ),
        ),
        Options(),
        Options(),
        set(),
    ),
    "picker args": (
        _edit("endpoint-picker-overrides", lambda r: _picker(r)["template"]["spec"]["containers"][0].__setitem__("args", ["--v=4"])),
        Options(),
        Options(),
        set(),
    ),
    "picker config": (
        _edit("endpoint-picker-overrides", lambda r: _picker(r)["config"]["schedulingProfiles"][0]["plugins"][1].__setitem__("weight", 2)),
        Options(),
        Options(),
        set(),
    ),
    "model cache": (
        _edit("model-cache-vllm", lambda r: r["spec"]["modelCacheRef"].__setitem__("name", "other-cache")),
        Options(),
        Options(),
        set(),
    ),
    "labels and annotations": (
        _edit(
            "single-gpu-standalone",
            lambda r: r["metadata"].update(labels={"team": "search"}, annotations={"example.com/owner": "search"}),
        ),
        Options(),
        Options(),
        set(),
    ),
    "gateway on": (_edit("single-gpu-standalone"), Options(), Options(gateway=("gateway-system", "inference")), set()),
    "gateway off": (_edit("single-gpu-standalone"), Options(gateway=("gateway-system", "inference")), Options(), set()),
    "picker plaintext": (_edit("single-gpu-standalone"), Options(), Options(picker_plaintext=True), set()),
    "node-pool label": (_edit("single-gpu-standalone"), Options(), Options(node_pool_label="cloud.google.com/gke-nodepool"), set()),
    "tolerations": (_edit("single-gpu-standalone"), Options(), Options(tolerations=(("amd.com/gpu", None, "NoSchedule"),)), set()),
    "platform settings": (
        _edit("multi-node-leader-worker"),
        Options(),
        Options(
            service_account="weights-reader",
            priority_class="inference-high",
            affinity=parse_affinity(
                {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}
                        ]
                    }
                }
            ),
            capabilities=("IPC_LOCK",),
        ),
        set(),
    ),
}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    from conftest import SHARED
    from peer import peer_missing, real_apiserver, require_peer

    kubectl = require_peer("kubectl")
    peers = Path(os.environ.get("MODELPLANE_PEERS_DIR") or Path.home() / ".cache" / "modelplane-render" / "peers")
    gateway = sorted((peers / "crds").glob("gateway-api-v*"))
    if not gateway:
        peer_missing("gateway-api-crds")
    with real_apiserver() as server:
        server.wait_for_api("resource.k8s.io/v1", "ResourceClaimTemplate")
        for name in ("leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml", "inference.networking.k8s.io_inferencepools.v1.6.0.yaml"):
            server.apply_crd(yaml.safe_load((SHARED / "upstream" / "crds" / name).read_text()))
        server.apply_crd(yaml.safe_load((gateway[-1] / "gateway.networking.k8s.io_httproutes.yaml").read_text()))
        server.apply_crd(crd.crd())
        yield server, kubectl


def _kubectl(cluster: tuple[Any, Path], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    server, kubectl = cluster
    return subprocess.run(
        [str(kubectl), f"--kubeconfig={server.kubeconfig}", *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def _apply(cluster: tuple[Any, Path], text: str, mode: str) -> None:
    flags = ["--server-side", "--field-manager=argocd-controller"] if mode == "server-side" else []
    done = _kubectl(cluster, "apply", *flags, "-f", "-", stdin=text)
    assert done.returncode == 0, f"{mode} apply refused:\n{done.stderr}"


def _prune(cluster: tuple[Any, Path], gone: Objects) -> None:
    for (kind, name), obj in sorted(gone.items()):
        api = obj["apiVersion"]
        resource = f"{kind.lower()}.{api.split('/')[0]}" if "/" in api else kind.lower()
        done = _kubectl(cluster, "delete", resource, name, "-n", obj["metadata"]["namespace"], "--wait=false")
        assert done.returncode == 0, done.stderr


def _in_namespace(replica: Replica, namespace: str) -> Replica:
    replica = copy.deepcopy(replica)
    replica["metadata"]["namespace"] = namespace
    return replica


@pytest.mark.real_peers
@pytest.mark.parametrize("mode", ["client-side", "server-side"])
@pytest.mark.parametrize("edit", list(CATALOGUE))
def test_every_edit_applies_as_an_update(cluster: tuple[Any, Path], edit: str, mode: str, tmp_path: Path) -> None:
    make, options_a, options_b, renamable = CATALOGUE[edit]
    namespace = f"d2-{abs(hash(edit)) % 10**8}-{mode[0]}"
    cluster[0].create_namespace(namespace)
    a, b = (_in_namespace(r, namespace) for r in make())
    text_a, objects_a = _render(tmp_path, a, options_a)
    text_b, objects_b = _render(tmp_path, b, options_b)
    for key in set(objects_a) & set(objects_b):
        if key[0] == "LeaderWorkerSet":
            assert lws_update_problems(objects_a[key], objects_b[key]) == [], key
    _apply(cluster, text_a, mode)
    _apply(cluster, text_b, mode)
    gone = {k: o for k, o in objects_a.items() if k not in objects_b}
    _prune(cluster, gone)
    renamed = {kind for kind, _ in set(gone) | (set(objects_b) - set(objects_a))} - {"HTTPRoute"}
    assert renamed <= renamable, f"{edit}: renamed {sorted(renamed)}"


def _previous_release_render(tmp_path: Path, source: Path, release: str = PREVIOUS_RELEASE) -> str:
    """`render` of the previous release: its tree from git, run with this interpreter."""
    tree = tmp_path / "previous"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", release], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    done = subprocess.run(
        [sys.executable, str(tree / "plugin.py"), "render", str(source)],
        capture_output=True,
        text=True,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree), "XDG_CACHE_HOME": str(tmp_path / "cache"), "MODELPLANE_RENDER_CACHE_DIR": ""},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.real_peers
@pytest.mark.parametrize("mode", ["client-side", "server-side"])
@pytest.mark.parametrize("case", ["single-gpu-standalone", "multi-node-leader-worker", "prefill-decode-kimi-k2", "several-copies"])
def test_upgrading_the_renderer_applies_as_an_update(cluster: tuple[Any, Path], case: str, mode: str, tmp_path: Path) -> None:
    """The previous release's render, then this one's: claim templates are renamed (so every engine with devices rolls)."""
    namespace = f"up-{abs(hash(case)) % 10**8}-{mode[0]}"
    cluster[0].create_namespace(namespace)
    source = tmp_path / "replica.yaml"
    source.write_text(json.dumps(_in_namespace(_fixture(case), namespace)))
    text_a = _previous_release_render(tmp_path, source)
    objects_a = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(text_a) if o}
    rendered = render_paths([str(source)], Options())
    objects_b = {(o["kind"], o["metadata"]["name"]): o for o in rendered.objects}
    _apply(cluster, text_a, mode)
    _apply(cluster, rendered.text, mode)
    gone = {k: o for k, o in objects_a.items() if k not in objects_b}
    _prune(cluster, gone)
    assert {kind for kind, _ in gone} <= {"ResourceClaimTemplate"}
    assert {kind for kind, _ in gone} == {"ResourceClaimTemplate"}, "every claim template is renamed by this upgrade"


# The render before claim templates wrote out allocationMode: ExactCount (which the server defaults).
BEFORE_ALLOCATION_MODE = "f15b14c"


@pytest.mark.real_peers
@pytest.mark.parametrize("mode", ["client-side", "server-side"])
def test_a_claim_template_reads_back_as_rendered_and_the_upgrade_renames_none(cluster: tuple[Any, Path], mode: str, tmp_path: Path) -> None:
    """Argo CD compares the live object with the rendered one, and a device request list is atomic: a default the
    server writes into it (allocationMode) made every app OutOfSync for ever. The live spec must read back as
    rendered; and the upgrade that wrote the default out keeps every name (no pod restarts) and applies."""
    namespace = f"alloc-{mode[0]}"
    cluster[0].create_namespace(namespace)
    source = tmp_path / "replica.yaml"
    source.write_text(json.dumps(_in_namespace(_fixture("prefill-decode-kimi-k2"), namespace)))
    text_a = _previous_release_render(tmp_path, source, BEFORE_ALLOCATION_MODE)
    rendered = render_paths([str(source)], Options())
    claims_a = {
        name
        for (kind, name) in ((o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(text_a) if o)
        if kind == "ResourceClaimTemplate"
    }
    claims_b = {o["metadata"]["name"]: o for o in rendered.objects if o["kind"] == "ResourceClaimTemplate"}
    assert claims_a == set(claims_b) and claims_a
    _apply(cluster, text_a, mode)
    _apply(cluster, rendered.text, mode)
    for name, claim in claims_b.items():
        live = json.loads(_kubectl(cluster, "get", "-n", namespace, "resourceclaimtemplate", name, "-o", "json").stdout)
        # The device requests, an atomic list, read back exactly (the claim's `metadata: {}` the server adds is a
        # map beside them: a three-way merge keeps it, and Argo CD's diff with it).
        assert live["spec"]["spec"] == claim["spec"]["spec"], name
