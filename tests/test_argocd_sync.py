"""Argo CD syncs what the plugin renders: the whole loop, from a commit to live objects (issue 32).

Real Argo CD v3.2.11 (repo-server, application controller, ApplicationSet controller), our plugin in the
real argocd-cmp-server, a git daemon, redis, and a real kube-apiserver with kube-controller-manager's
garbage collector and workload controllers (tests/argocd_loop.py). No kubelet and no LWS or Gateway
controller run: the tests write what those would (a pod's readiness, a LeaderWorkerSet's or an
InferencePool's status), exactly as their programs write it, and read what Argo CD makes of it.

Opt-in (`pytest -m argocd_sync`, about 3 min); .ci/run runs it. Each test has an app directory and a
namespace of its own, so the module shares one loop.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from argocd_install import INSTALL_EXAMPLE, build_install, repo_server
from argocd_loop import (
    NAMESPACE,
    PROJECT,
    ArgoLoop,
    LoopError,
    conditions,
    health_status,
    operation_phase,
    running_loop,
    sync_revision,
    sync_status,
)

from conftest import ROOT, SHARED, VALID
from modelplane_render.frontends import argocd as argocd_frontend

pytestmark = [pytest.mark.argocd_sync, pytest.mark.real_peers]

PLUGIN = argocd_frontend.PLUGIN_FULL_NAME
TRACKING = "argocd.argoproj.io/tracking-id"
EXAMPLES = "examples"  # fixtures/valid, as the README renders it
SERVING_CRDS = ("leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml", "inference.networking.k8s.io_inferencepools.v1.6.0.yaml")


# A team's own Argo CD setting, kept in its kustomization (examples/argocd-install) beside our Component.
TEAM_SETTING = ("users.anonymous.enabled", "false")
TEAM_PATCH = f"""patches:
- patch: |-
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: argocd-cm
    data:
      {TEAM_SETTING[0]}: "{TEAM_SETTING[1]}"
"""


@pytest.fixture(scope="module")
def team_installs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A team's Argo CD install before and after it adds our Component: examples/argocd-install with a
    setting of the team's own, without and with its `components:` entry."""
    example = (INSTALL_EXAMPLE / "kustomization.yaml").read_text() + TEAM_PATCH
    component = "components:\n- ../../argocd\n"
    assert example.count(component) == 1
    before = build_install(tmp_path_factory.mktemp("argocd-before"), example.replace(component, ""))
    after = build_install(tmp_path_factory.mktemp("argocd-after"), example)
    return before, after


@pytest.fixture(scope="module")
def loop(team_installs: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> Iterator[ArgoLoop]:
    from peer import peer_missing, real_apiserver, require_peer

    bin_dir = require_peer("argocd-cmp-server").parent
    for name in ("kube-controller-manager", "kustomize"):
        require_peer(name)
    if shutil.which("redis-server") is None:
        peer_missing("redis-server")
    peers = bin_dir.parent
    gateway = sorted((peers / "crds").glob("gateway-api-v*"))
    if not gateway:
        peer_missing("gateway-api-crds")
    existing, install = team_installs
    venv_bin = Path(sys.executable).parent
    sidecar_path = os.pathsep.join([str(venv_bin), str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"])
    with real_apiserver() as api:
        api.wait_for_api("resource.k8s.io/v1", "ResourceClaimTemplate")
        for name in SERVING_CRDS:
            api.apply_crd(yaml.safe_load((SHARED / "upstream" / "crds" / name).read_text()))
        api.apply_crd(yaml.safe_load((gateway[-1] / "gateway.networking.k8s.io_httproutes.yaml").read_text()))
        # objects-passed-through's extras, which the loop's AppProject must allow besides what we render.
        with running_loop(api, bin_dir, existing, install, sidecar_path, allow_kinds=("Secret", "PersistentVolumeClaim")) as running:
            running.commit("the examples", copy={f"{EXAMPLES}/{f.name}": f for f in VALID})
            try:
                yield running
            except BaseException:
                print(running.logs(), file=sys.stderr)
                raise


def application(
    loop: ArgoLoop, name: str, path: str, namespace: str, parameters: dict[str, str] | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """An Application as argocd/application.yaml has it: the plugin named, automated sync with prune and self-heal."""
    plugin: dict[str, Any] = {"name": PLUGIN}
    if parameters:
        plugin["parameters"] = [{"name": k, "string": v} for k, v in parameters.items()]
    if env:
        plugin["env"] = [{"name": k, "value": v} for k, v in env.items()]
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "project": PROJECT,
            "source": {"repoURL": loop.repo_url, "targetRevision": "main", "path": path, "plugin": plugin},
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}, "syncOptions": ["CreateNamespace=true"]},
        },
    }
    return loop.create(app)


def synced_at(loop: ArgoLoop, name: str, revision: str, timeout: float = 180.0, serve: bool = False) -> dict[str, Any]:
    """Wait until the app has synced `revision` and the sync operation succeeded.

    serve: meanwhile play the kubelet and the LWS controller for the app's workloads (serving_as_controllers),
    as a sync that prunes needs: a claim template is pruned last (PruneLast), and Argo CD prunes it only
    once every other object of the app is Healthy."""

    def done(app: dict[str, Any]) -> bool:
        if serve:
            serving_as_controllers(loop, app)
        return sync_status(app) == "Synced" and sync_revision(app) == revision and operation_phase(app) == "Succeeded"

    return loop.wait_app(name, done, f"Synced at {revision[:8]}", timeout)


def rendered(loop: ArgoLoop, path: str, namespace: str, *args: str) -> list[dict[str, Any]]:
    """What `modelplane-render render` prints for the app's directory, as the sidecar's generate would."""
    command = [str(Path(sys.executable).parent / "modelplane-render"), "render", f"--namespace={namespace}", *args, str(loop.repo / path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    group = obj["apiVersion"].rpartition("/")[0]
    return (group, obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def managed(app: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    return {(r.get("group", ""), r["kind"], r.get("namespace", ""), r["name"]) for r in (app.get("status") or {}).get("resources") or []}


def live(loop: ArgoLoop, obj: dict[str, Any]) -> dict[str, Any] | None:
    return loop.get(obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])


def test_an_application_syncs_the_example_replicas_with_every_object_tracked_and_nothing_else(loop: ArgoLoop) -> None:
    for namespace in ("ml-team", "inference", "platform", "research"):
        loop.api.create_namespace(namespace)
    application(loop, "examples", EXAMPLES, "ml-team")
    revision = loop.git("rev-parse", "HEAD")
    app = synced_at(loop, "examples", revision)
    objects = rendered(loop, EXAMPLES, "ml-team")
    assert managed(app) == {key(o) for o in objects}
    for obj in objects:
        found = live(loop, obj)
        assert found is not None, key(obj)
        group, kind, namespace, name = key(obj)
        assert found["metadata"]["annotations"][TRACKING] == f"examples:{group}/{kind}:{namespace}/{name}"
        assert found["metadata"].get("labels", {}) == obj["metadata"].get("labels", {}), key(obj)


# -- one replica an app --------------------------------------------------------------------------------


def test_the_component_applied_onto_an_existing_install_adds_the_sidecar_and_two_settings_and_nothing_else(
    loop: ArgoLoop, team_installs: tuple[list[dict[str, Any]], list[dict[str, Any]]]
) -> None:
    """`kubectl apply --server-side` of the team's kustomization with our Component, onto its running install
    (the loop's start did both): the repo-server rolls once, with its own containers and ours; the team's own
    argocd-cm setting stays beside our health checks; every other object is as it was."""
    before, after = team_installs
    changed = {(o["kind"], o["metadata"]["name"]) for o in after if o not in before}
    assert changed == {("Deployment", "argocd-repo-server"), ("ConfigMap", "argocd-cm"), ("ConfigMap", plugin_config_map(after))}
    assert all(o in after for o in before if (o["kind"], o["metadata"]["name"]) not in changed)
    deployment = loop.get("apps/v1", "Deployment", NAMESPACE, "argocd-repo-server")
    assert deployment is not None and deployment["metadata"]["generation"] == 2  # created, then the sidecar added
    pod = deployment["spec"]["template"]["spec"]
    # (The apply merges our container into the live list first: order in a list keyed by name is not kept.)
    live_containers = {c["name"]: c for c in pod["containers"]}
    assert sorted(live_containers) == ["argocd-repo-server", "modelplane-render"]
    [sidecar] = [c for c in repo_server(after)["containers"] if c["name"] == "modelplane-render"]
    # The container the loop's argocd-cmp-server was started from is the live one (the server adds defaults).
    assert {k: v for k, v in live_containers["modelplane-render"].items() if k in sidecar} == sidecar
    settings = loop.get("v1", "ConfigMap", NAMESPACE, "argocd-cm")
    assert settings is not None
    assert settings["data"][TEAM_SETTING[0]] == TEAM_SETTING[1]
    assert {k for k in settings["data"] if k.startswith("resource.customizations.health.")} == {
        "resource.customizations.health.leaderworkerset.x-k8s.io_LeaderWorkerSet",
        "resource.customizations.health.inference.networking.k8s.io_InferencePool",
    }
    for other in loop.list("apps/v1", "Deployment", NAMESPACE):
        if other["metadata"]["name"] != "argocd-repo-server":
            assert other["metadata"]["generation"] == 1, other["metadata"]["name"]


def plugin_config_map(objects: list[dict[str, Any]]) -> str:
    [name] = [
        o["metadata"]["name"] for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("modelplane-render-plugin-")
    ]
    return str(name)


def replica_text(fixture: str, *, name: str | None = None, edit: Any = None) -> str:
    """The fixture's first ModelReplica without its namespace (the app's destination gives it), optionally renamed or edited."""
    [source] = sorted((ROOT / "fixtures" / "valid" / fixture).glob("*.yaml"))
    replica = copy.deepcopy(next(d for d in yaml.safe_load_all(source.read_text()) if d and d.get("kind") == "ModelReplica"))
    replica["metadata"].pop("namespace", None)
    if name is not None:
        replica["metadata"]["name"] = name
    if edit is not None:
        edit(replica)
    return yaml.safe_dump(replica, sort_keys=False)


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def lws_reports(loop: ArgoLoop, lws: dict[str, Any], ready: bool, gone_ok: bool = False) -> None:
    """The LeaderWorkerSet's status as kubernetes-sigs/lws v0.10.0 writes it (makeCondition: Progressing, then Available).

    gone_ok: one deleted meanwhile (pruned) is left alone, as its controller would."""
    found = live(loop, lws)
    if found is None and gone_ok:
        return
    assert found is not None
    wanted = found["spec"].get("replicas", 1)
    condition = (
        {"type": "Available", "status": "True", "reason": "AllGroupsReady", "message": "All replicas are ready"}
        if ready
        else {"type": "Progressing", "status": "True", "reason": "GroupsProgressing", "message": "Replicas are progressing"}
    )
    condition |= {"lastTransitionTime": now(), "observedGeneration": found["metadata"]["generation"]}
    status = {
        "observedGeneration": found["metadata"]["generation"],
        "replicas": wanted,
        "updatedReplicas": wanted,
        "readyReplicas": wanted if ready else 0,
        "conditions": [condition],
    }
    meta = found["metadata"]
    loop.merge_patch(lws["apiVersion"], "LeaderWorkerSet", meta["namespace"], meta["name"], {"status": status}, "status", gone_ok=gone_ok)


def picker_pods(loop: ArgoLoop, deployment: dict[str, Any]) -> list[dict[str, Any]]:
    """The picker Deployment's live pods (the real ReplicaSet controller made them), not terminating."""
    selector = ",".join(f"{k}={v}" for k, v in deployment["spec"]["selector"]["matchLabels"].items())
    pods = loop.list("v1", "Pod", deployment["metadata"]["namespace"], selector)
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def kubelet_reports_ready(loop: ArgoLoop, pod: dict[str, Any], gone_ok: bool = False) -> None:
    """What a kubelet writes once the pod's readiness probe passes (gone_ok: a pod deleted meanwhile is left alone)."""
    stamp = now()
    status = {
        "phase": "Running",
        "conditions": [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": stamp},
            {"type": "Initialized", "status": "True", "lastTransitionTime": stamp},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": stamp},
            {"type": "Ready", "status": "True", "lastTransitionTime": stamp},
        ],
    }
    loop.merge_patch("v1", "Pod", pod["metadata"]["namespace"], pod["metadata"]["name"], {"status": status}, "status", gone_ok=gone_ok)


def wait_for(loop: ArgoLoop, check: Any, what: str, timeout: float = 60.0) -> Any:
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        loop.check_alive()
        if time.monotonic() > deadline:
            raise LoopError(f"not {what} after {timeout:.0f}s")
        time.sleep(0.25)


def gateway_reports(loop: ArgoLoop, pool: dict[str, Any], accepted: bool) -> None:
    """The InferencePool's status.parents entry a Gateway implementation writes (GIE v1.6.0 api/v1 conditions)."""
    found = live(loop, pool)
    assert found is not None
    generation = found["metadata"]["generation"]
    accepted_condition = (
        {"type": "Accepted", "status": "True", "reason": "Accepted", "message": ""}
        if accepted
        else {
            "type": "Accepted",
            "status": "False",
            "reason": "NotSupportedByParent",
            "message": "this Gateway class does not support InferencePool",
        }
    )
    parent = {
        "parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "gateway-system", "name": "inference"},
        "controllerName": "example.com/gateway-controller",
        "conditions": [
            accepted_condition | {"lastTransitionTime": now(), "observedGeneration": generation},
            {
                "type": "ResolvedRefs",
                "status": "True",
                "reason": "ResolvedRefs",
                "message": "",
                "lastTransitionTime": now(),
                "observedGeneration": generation,
            },
        ],
    }
    loop.merge_patch(
        pool["apiVersion"],
        "InferencePool",
        found["metadata"]["namespace"],
        found["metadata"]["name"],
        {"status": {"parents": [parent]}},
        "status",
    )


def serving_as_controllers(loop: ArgoLoop, app: dict[str, Any]) -> None:
    """Every workload of the app ready, as its controllers would report it once the pods serve.

    A LeaderWorkerSet not yet Available at its generation gets the LWS controller's status; a pod of a
    Deployment that isn't Ready gets the kubelet's (the ReplicaSet and Deployment controllers, which run,
    do the rest)."""
    for resource in (app.get("status") or {}).get("resources") or []:
        api_version = f"{resource['group']}/{resource['version']}" if resource.get("group") else resource["version"]
        obj = {
            "apiVersion": api_version,
            "kind": resource["kind"],
            "metadata": {"namespace": resource.get("namespace"), "name": resource["name"]},
        }
        found = live(loop, obj)
        if found is None or found["metadata"].get("deletionTimestamp"):  # pruned: its controllers report it no more
            continue
        if resource["kind"] == "LeaderWorkerSet":
            status = found.get("status") or {}
            generation = found["metadata"]["generation"]
            available = any(
                c["type"] == "Available" and c["status"] == "True" and c.get("observedGeneration") == generation
                for c in status.get("conditions") or []
            )
            if not available or status.get("observedGeneration") != generation:
                lws_reports(loop, obj, ready=True, gone_ok=True)
        elif resource["kind"] == "Deployment":
            for pod in picker_pods(loop, found):
                if not any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions") or []):
                    kubelet_reports_ready(loop, pod, gone_ok=True)


def resource_health(app: dict[str, Any], kind: str) -> str | None:
    [resource] = [r for r in (app.get("status") or {}).get("resources") or [] if r["kind"] == kind]
    return (resource.get("health") or {}).get("status")


def app_health(loop: ArgoLoop, name: str, wanted: str, timeout: float = 60.0) -> dict[str, Any]:
    return loop.wait_app(name, lambda app: health_status(app) == wanted, wanted, timeout)


def test_health_reads_progressing_while_groups_start_healthy_when_they_serve_degraded_when_a_gateway_refuses(loop: ArgoLoop) -> None:
    revision = loop.commit("health", write={"apps/health/replica.yaml": replica_text("single-gpu-standalone")})
    application(loop, "health", "apps/health", "health")
    synced_at(loop, "health", revision)
    objects = rendered(loop, "apps/health", "health")
    [lws] = of_kind(objects, "LeaderWorkerSet")
    [picker] = of_kind(objects, "Deployment")
    [pool] = of_kind(objects, "InferencePool")

    # Nothing reported yet: the LWS controller hasn't written a status, the picker pod isn't Ready.
    app = app_health(loop, "health", "Progressing")
    lws_reports(loop, lws, ready=False)
    pods = wait_for(loop, lambda: picker_pods(loop, picker), "a picker pod made by the ReplicaSet controller")
    # The real picker: the one replica is Ready once its caches sync (no leader election: docs/design.md).
    assert len(pods) == picker["spec"]["replicas"] == 1
    for pod in pods:
        kubelet_reports_ready(loop, pod)
    wait_for(loop, lambda: (live(loop, picker) or {}).get("status", {}).get("availableReplicas") == 1, "the picker Deployment available")
    app = loop.wait_app("health", lambda a: resource_health(a, "Deployment") == "Healthy", "with its picker Deployment Healthy")
    assert resource_health(app, "LeaderWorkerSet") == "Progressing" and health_status(app) == "Progressing"

    lws_reports(loop, lws, ready=True)
    app = app_health(loop, "health", "Healthy")
    assert sync_status(app) == "Synced"

    gateway_reports(loop, pool, accepted=False)
    app = app_health(loop, "health", "Degraded")
    [resource] = [r for r in app["status"]["resources"] if r["kind"] == "InferencePool"]
    assert "NotSupportedByParent" in resource["health"]["message"]
    gateway_reports(loop, pool, accepted=True)
    app_health(loop, "health", "Healthy")


def resource_versions(loop: ArgoLoop, objects: list[dict[str, Any]]) -> dict[tuple[str, str, str, str], tuple[str, str]]:
    versions = {}
    for obj in objects:
        found = live(loop, obj)
        assert found is not None, key(obj)
        # Not resourceVersion where there is a generation: a controller's status write is no change of ours.
        meta = found["metadata"]
        versions[key(obj)] = (meta["uid"], str(meta.get("generation") or meta["resourceVersion"]))
    return versions


def test_a_broken_commit_shows_the_plugins_error_and_changes_no_live_object_until_the_fix(loop: ArgoLoop) -> None:
    good = loop.commit("broken: good", write={"apps/broken/replica.yaml": replica_text("single-gpu-standalone")})
    application(loop, "broken", "apps/broken", "broken")
    synced_at(loop, "broken", good)
    objects = rendered(loop, "apps/broken", "broken")
    before = resource_versions(loop, objects)

    def break_it(replica: dict[str, Any]) -> None:
        replica["spec"]["engines"][0]["members"][0]["deviceRequests"][0]["count"] = 0

    bad = loop.commit(
        "broken: a device count of 0", write={"apps/broken/replica.yaml": replica_text("single-gpu-standalone", edit=break_it)}
    )
    app = loop.hard_refresh("broken")
    app = loop.wait_app("broken", lambda a: any(c["type"] == "ComparisonError" for c in conditions(a)), "showing the plugin's error")
    [error] = [c["message"] for c in conditions(app) if c["type"] == "ComparisonError"]
    assert "replica.yaml:" in error and "spec.engines[0].members[0].deviceRequests[0].count" in error, error
    assert sync_revision(app) != bad
    # Self-heal and automated sync had their chance: a second refresh, and still nothing applied or pruned.
    loop.hard_refresh("broken")
    assert resource_versions(loop, objects) == before
    app = loop.application("broken")
    assert operation_phase(app) == "Succeeded" and app["status"]["operationState"]["syncResult"]["revision"] == good

    fixed = loop.commit("broken: fixed", write={"apps/broken/replica.yaml": replica_text("single-gpu-standalone")})
    loop.hard_refresh("broken")
    app = synced_at(loop, "broken", fixed)
    assert not [c for c in conditions(app) if c["type"] == "ComparisonError"]
    assert resource_versions(loop, objects) == before  # the same objects as before: nothing to apply


def engine_container(lws: dict[str, Any]) -> dict[str, Any]:
    template = lws["spec"]["leaderWorkerTemplate"]
    pod = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
    return dict(next(c for c in pod["containers"] if c["name"] == "engine"))


def claim_templates(lws: dict[str, Any]) -> list[str]:
    template = lws["spec"]["leaderWorkerTemplate"]
    pod = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
    return [claim["resourceClaimTemplateName"] for claim in pod.get("resourceClaims") or []]


def test_day_two_commits_a_device_count_an_image_and_copies_each_sync_as_updates(loop: ArgoLoop) -> None:
    path = "apps/day-two/replica.yaml"
    first = loop.commit("day two: first", write={path: replica_text("single-gpu-standalone")})
    application(loop, "day-two", "apps/day-two", "day-two")
    synced_at(loop, "day-two", first)
    [lws] = of_kind(rendered(loop, "apps/day-two", "day-two"), "LeaderWorkerSet")
    uid = live(loop, lws)["metadata"]["uid"]  # type: ignore[index]
    member = lambda r: r["spec"]["engines"][0]["members"][0]  # noqa: E731
    edits = [
        ("two GPUs", lambda r: member(r)["deviceRequests"][0].update(count=2)),
        ("a new image", lambda r: member(r)["template"]["spec"]["containers"][0].update(image="vllm/vllm-openai:v0.23.1")),
        ("two copies", lambda r: r["spec"]["engines"][0].update(copies=2)),
    ]
    for done, (what, _) in enumerate(edits, start=1):
        before = rendered(loop, "apps/day-two", "day-two")

        def edited(replica: dict[str, Any], upto: int = done) -> None:
            for _, edit in edits[:upto]:
                edit(replica)

        revision = loop.commit(f"day two: {what}", write={path: replica_text("single-gpu-standalone", edit=edited)})
        loop.hard_refresh("day-two")
        app = synced_at(loop, "day-two", revision, serve=True)
        assert not conditions(app), conditions(app)
        after = rendered(loop, "apps/day-two", "day-two")
        assert managed(app) == {key(o) for o in after}
        [want] = of_kind(after, "LeaderWorkerSet")
        found = live(loop, want)
        assert found is not None and found["metadata"]["uid"] == uid, "the LeaderWorkerSet is updated in place, never replaced"
        assert engine_container(found)["image"] == engine_container(want)["image"]
        assert found["spec"].get("replicas") == want["spec"].get("replicas")
        for name in claim_templates(found):  # every claim template the pods name is live
            assert loop.get("resource.k8s.io/v1", "ResourceClaimTemplate", "day-two", name) is not None, name
        for obj in (o for o in before if key(o) not in {key(a) for a in after}):  # a renamed claim template: pruned
            wait_for(loop, lambda obj=obj: live(loop, obj) is None, f"{key(obj)} pruned")
    found = live(loop, lws)
    assert found is not None and found["spec"]["replicas"] == 2
    assert engine_container(found)["image"] == "vllm/vllm-openai:v0.23.1"
    [template] = claim_templates(found)
    claim = loop.get("resource.k8s.io/v1", "ResourceClaimTemplate", "day-two", template)
    assert claim is not None and claim["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2


def test_a_replicas_file_removed_prunes_exactly_its_objects(loop: ArgoLoop) -> None:
    first = loop.commit(
        "prune: two replicas",
        write={
            "apps/prune/a.yaml": replica_text("single-gpu-standalone", name="keep"),
            "apps/prune/b.yaml": replica_text("single-gpu-standalone", name="remove"),
        },
    )
    application(loop, "prune", "apps/prune", "prune")
    synced_at(loop, "prune", first)
    both = rendered(loop, "apps/prune", "prune")
    kept_before = resource_versions(loop, [o for o in both if "remove" not in o["metadata"]["name"]])
    second = loop.commit("prune: one removed", write={"apps/prune/b.yaml": None})
    loop.hard_refresh("prune")
    app = synced_at(loop, "prune", second, serve=True)
    kept = rendered(loop, "apps/prune", "prune")
    assert managed(app) == {key(o) for o in kept}
    gone = [o for o in both if key(o) not in {key(k) for k in kept}]
    assert gone and all("remove" in o["metadata"]["name"] for o in gone)
    for obj in gone:  # foreground deletion: gone once the garbage collector has finished it
        wait_for(loop, lambda obj=obj: live(loop, obj) is None, f"{key(obj)} gone")
    assert resource_versions(loop, kept) == kept_before


def test_an_applicationset_over_two_clusters_renders_each_clusters_pinned_replicas_only(loop: ArgoLoop) -> None:
    """argocd/applicationset.yaml as shipped, with two cluster secrets: two names for one API server.

    Argo CD keys a cluster by its URL, so the second is the same server as https://localhost."""
    source = ROOT / "fixtures" / "valid" / "several-replicas-in-one-file"
    replicas = [d for d in yaml.safe_load_all(next(source.glob("*.yaml")).read_text()) if d and d.get("kind") == "ModelReplica"]
    for replica in replicas:
        replica["metadata"].pop("namespace", None)
    pinned = {r["spec"]["clusterName"] for r in replicas if r["spec"].get("clusterName")}
    assert len(pinned) == 2, pinned
    revision = loop.commit("fleet", write={"apps/fleet/replicas.yaml": yaml.safe_dump_all(replicas, sort_keys=False)})
    for cluster, host in zip(sorted(pinned), ("127.0.0.1", "localhost"), strict=True):
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": f"cluster-{cluster}",
                "namespace": NAMESPACE,
                "labels": {"argocd.argoproj.io/secret-type": "cluster", "modelplane.ai/inference-cluster": cluster},
            },
            "stringData": {
                "name": cluster,
                "server": f"https://{host}:{loop.api.port}",
                "config": json.dumps({"bearerToken": loop.api.token, "tlsClientConfig": {"insecure": True}}),
            },
        }
        loop.create(secret)
    appset = yaml.safe_load((ROOT / "argocd" / "applicationset.yaml").read_text())
    template = appset["spec"]["template"]["spec"]
    template["source"] |= {"repoURL": loop.repo_url, "path": "apps/fleet"}
    template["destination"]["namespace"] = "fleet"
    template["syncPolicy"]["syncOptions"] = ["CreateNamespace=true"]
    loop.create(appset)
    for cluster in sorted(pinned):
        name = f"replicas-{cluster}"
        wait_for(loop, lambda name=name: loop.get("argoproj.io/v1alpha1", "Application", NAMESPACE, name), f"Application {name} generated")
        app = synced_at(loop, name, revision)
        want = rendered(loop, "apps/fleet", "fleet", f"--cluster={cluster}")
        assert want and managed(app) == {key(o) for o in want}
        names = {o["metadata"]["name"] for o in want if o["kind"] == "LeaderWorkerSet"}
        assert all(cluster in n for n in names), names
        for obj in want:
            found = live(loop, obj)
            assert found is not None and found["metadata"]["annotations"][TRACKING].startswith(f"{name}:")


def test_a_kustomize_overlay_is_built_in_the_sidecar_and_refuses_render_parameters(loop: ArgoLoop) -> None:
    revision = loop.commit("kustomize", copy={"kustomize": ROOT / "kustomize"})
    application(loop, "overlay-with-parameter", "kustomize/overlays/prod", "ml-prod", parameters={"gateway": "gateway-system/other"})
    app = loop.wait_app(
        "overlay-with-parameter", lambda a: any(c["type"] == "ComparisonError" for c in conditions(a)), "refusing the render parameter"
    )
    [error] = [c["message"] for c in conditions(app) if c["type"] == "ComparisonError"]
    assert "gateway" in error and "this app is a kustomization, whose RenderConfig (spec) holds the render" in error, error
    assert not managed(app)

    application(loop, "overlay", "kustomize/overlays/prod", "ml-prod")
    app = synced_at(loop, "overlay", revision)
    kustomize = Path(os.environ.get("MODELPLANE_PEERS_DIR") or Path.home() / ".cache" / "modelplane-render" / "peers") / "bin" / "kustomize"
    built = subprocess.run(
        [str(kustomize), "build", "--enable-alpha-plugins", "--enable-exec", str(loop.repo / "kustomize" / "overlays" / "prod")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert built.returncode == 0, built.stderr
    want = [o for o in yaml.safe_load_all(built.stdout) if o]
    assert managed(app) == {key(o) for o in want}
    [route] = of_kind(want, "HTTPRoute")
    assert live(loop, route)["spec"]["parentRefs"][0]["name"] == "inference-gateway"  # type: ignore[index]  # the RenderConfig's
    assert all(live(loop, o)["metadata"]["labels"]["env"] == "prod" for o in want)  # type: ignore[index]


def test_kustomize_build_options_reach_kustomize_in_the_sidecar(loop: ArgoLoop) -> None:
    """An overlay whose patch lies outside it fails under kustomize's default load restrictor, in the Application's
    error; with the parameter it syncs, the shared patch applied to the live objects."""
    revision = loop.commit(
        "an overlay with a shared patch",
        copy={"kustomize": ROOT / "kustomize"},
        write={
            "kustomize/shared-patches/pool.yaml": "- {op: replace, path: /spec/engines/0/members/0/nodePoolName, value: gpu-l4-spot}\n",
            "kustomize/overlays/spot/kustomization.yaml": "resources: [../../base]\nnamespace: ml-spot\npatches:\n"
            "- target: {kind: ModelReplica}\n  path: ../../shared-patches/pool.yaml\ntransformers: [../../base/render]\n",
        },
    )
    application(loop, "overlay-spot", "kustomize/overlays/spot", "ml-spot")
    app = loop.wait_app("overlay-spot", lambda a: any(c["type"] == "ComparisonError" for c in conditions(a)), "kustomize's refusal")
    [error] = [c["message"] for c in conditions(app) if c["type"] == "ComparisonError"]
    assert "is not in or below" in error, error
    options = [{"name": "kustomize-build-options", "string": "--load-restrictor LoadRestrictionsNone"}]
    loop.merge_patch(
        "argoproj.io/v1alpha1", "Application", NAMESPACE, "overlay-spot", {"spec": {"source": {"plugin": {"parameters": options}}}}
    )
    loop.hard_refresh("overlay-spot")
    app = synced_at(loop, "overlay-spot", revision)
    [lws] = [o for o in loop.list("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "ml-spot")]
    assert lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["nodeSelector"] == {"modelplane.ai/pool": "gpu-l4-spot"}


def refused(app: dict[str, Any]) -> list[dict[str, Any]]:
    """The resources a sync attempt refused; the Application's retry policy keeps the operation Running meanwhile."""
    results = app.get("status", {}).get("operationState", {}).get("syncResult", {}).get("resources", [])
    return [r for r in results if r.get("status") == "SyncFailed"]


def test_the_generated_project_refuses_a_kind_it_does_not_allow_and_another_repository(loop: ArgoLoop) -> None:
    """The loop's AppProject (`argocd appproject`, as argocd/appproject.yaml): a PodDisruptionBudget passed through
    is not one of the kinds we render nor one allowed, so the sync creates nothing; a repository not listed
    is no source at all."""
    pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: keep-one\nspec:\n  minAvailable: 1\n"
    revision = loop.commit(
        "a kind the project does not allow",
        write={"apps/pdb/replica.yaml": replica_text("single-gpu-standalone"), "apps/pdb/pdb.yaml": pdb},
    )
    application(loop, "pdb", "apps/pdb", "pdb")
    app = loop.wait_app("pdb", lambda a: bool(refused(a)), "refused by the project", timeout=120)
    [message] = [r["message"] for r in refused(app) if r["kind"] == "PodDisruptionBudget"]
    assert message == "resource policy:PodDisruptionBudget is not permitted in project modelplane-render", message
    assert sync_revision(app) in ("", revision) and loop.list("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "pdb") == []
    other = application(loop, "other-repository", "apps/pdb", "pdb")
    other["spec"]["source"]["repoURL"] = loop.repo_url + "-fork"
    loop.merge_patch("argoproj.io/v1alpha1", "Application", NAMESPACE, "other-repository", {"spec": {"source": other["spec"]["source"]}})
    app = loop.wait_app("other-repository", lambda a: any(c["type"] == "InvalidSpecError" for c in conditions(a)), "refused as a source")
    [error] = [c["message"] for c in conditions(app) if c["type"] == "InvalidSpecError"]
    assert "is not permitted in project 'modelplane-render'" in error, error


def test_a_plain_applications_parameters_reach_the_render(loop: ArgoLoop) -> None:
    revision = loop.commit("parameters", write={"apps/parameters/replica.yaml": replica_text("single-gpu-standalone")})
    parameters = {"gateway": "gateway-system/inference", "node-pool-label": "cloud.google.com/gke-nodepool"}
    application(loop, "parameters", "apps/parameters", "parameters", parameters=parameters)
    app = synced_at(loop, "parameters", revision)
    want = rendered(
        loop, "apps/parameters", "parameters", "--gateway=gateway-system/inference", "--node-pool-label=cloud.google.com/gke-nodepool"
    )
    assert managed(app) == {key(o) for o in want}
    [route] = of_kind(want, "HTTPRoute")
    found = live(loop, route)
    assert found is not None and found["spec"]["parentRefs"] == [
        {"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": "gateway-system", "name": "inference"}
    ]
    [lws] = of_kind(want, "LeaderWorkerSet")
    template = live(loop, lws)["spec"]["leaderWorkerTemplate"]  # type: ignore[index]
    pod = (template.get("leaderTemplate") or template["workerTemplate"])["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "gpu-l4"}
