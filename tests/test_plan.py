"""What the output means, stated for every valid fixture: claims, selectors, sizes, names, no GPUs as resources."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from conftest import VALID
from modelplane_render import constants as c
from modelplane_render.names import label_value
from modelplane_render.options import Options
from modelplane_render.pipeline import render_paths


def load_sources(case) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    docs = []
    for path in sorted(case.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return [d for d in docs if d.get("kind") == "ModelReplica"]


def rendered(case) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    return render_paths([str(case)], Options()).objects


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def pod_templates(lws: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    template = lws["spec"]["leaderWorkerTemplate"]
    pods = [("worker", template["workerTemplate"])]
    if "leaderTemplate" in template:
        pods.insert(0, ("leader", template["leaderTemplate"]))
    return pods


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


CASES = pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])


@CASES
def test_every_claim_a_pod_references_exists_and_asks_for_what_the_member_asked(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    templates = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in by_kind(objects, "ResourceClaimTemplate")}
    asked = {}
    for replica in load_sources(case):
        for engine in replica["spec"]["engines"]:
            for member in engine["members"]:
                for request in member.get("deviceRequests", []):
                    asked[(replica["metadata"]["name"], engine["name"], member.get("role", "Standalone"), request["name"])] = request
    referenced = set()
    for lws in by_kind(objects, "LeaderWorkerSet"):
        for _, pod in pod_templates(lws):
            claims = pod["spec"].get("resourceClaims", [])
            engine = next(ct for ct in pod["spec"]["containers"] if ct["name"] == c.ENGINE_CONTAINER)
            used = [cl["name"] for cl in engine.get("resources", {}).get("claims", [])]
            assert used == [cl["name"] for cl in claims], "the engine container uses exactly the pod's claims"
            for claim in claims:
                key = (lws["metadata"]["namespace"], claim["resourceClaimTemplateName"])
                assert key in templates, f"pod references a missing ResourceClaimTemplate {key}"
                referenced.add(key)
                labels = pod["metadata"]["labels"]
                replica = next(r for r in load_sources(case) if label_value(r["metadata"]["name"]) == labels[c.LABEL_REPLICA])
                for request in templates[key]["spec"]["spec"]["devices"]["requests"]:
                    source = asked[(replica["metadata"]["name"], labels[c.LABEL_ENGINE], labels[c.LABEL_ROLE], request["name"])]
                    assert request["exactly"]["deviceClassName"] == source["deviceClassName"]
                    assert request["exactly"]["count"] == source.get("count", 1)
                    expressions = [s["cel"] for s in source.get("selectors", [])]
                    assert [s["cel"]["expression"] for s in request["exactly"].get("selectors", [])] == expressions
    assert referenced == set(templates), "every ResourceClaimTemplate is used by a pod"


@CASES
def test_the_pool_selects_every_serving_pod_and_no_worker(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    for pool in by_kind(objects, "InferencePool"):
        selector = pool["spec"]["selector"]["matchLabels"]
        namespace = pool["metadata"]["namespace"]
        selected_serving = 0
        for lws in by_kind(objects, "LeaderWorkerSet"):
            if lws["metadata"]["namespace"] != namespace:
                continue
            for _, pod in pod_templates(lws):
                labels = pod["metadata"]["labels"]
                role = labels[c.LABEL_ROLE]
                mine = labels[c.LABEL_REPLICA] == pool["metadata"]["labels"][c.LABEL_REPLICA]
                if role == "Worker" or not mine:
                    assert not selects(selector, labels), f"pool {pool['metadata']['name']} selects a {role} pod"
                else:
                    assert selects(selector, labels), "a serving pod is not in its pool"
                    selected_serving += 1
                    containers = pod["spec"].get("initContainers", []) + pod["spec"]["containers"]
                    ports = {p["containerPort"] for ct in containers for p in ct.get("ports", [])}
                    assert pool["spec"]["targetPorts"][0]["number"] in ports, "the pool targets a port the pod listens on"
        assert selected_serving >= 1


@CASES
def test_gang_sizes_and_copies_match_the_replica(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    workloads = by_kind(objects, "LeaderWorkerSet")
    expected = []
    for replica in load_sources(case):
        for engine in replica["spec"]["engines"]:
            workers = [m for m in engine["members"] if m.get("role") == "Worker"]
            size = 1 + (workers[0]["worker"]["nodes"] if workers else 0)
            expected.append((engine["name"], engine.get("copies", 1), size, bool(workers)))
    got = [
        (
            lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"][c.LABEL_ENGINE],
            lws["spec"]["replicas"],
            lws["spec"]["leaderWorkerTemplate"]["size"],
            "leaderTemplate" in lws["spec"]["leaderWorkerTemplate"],
        )
        for lws in workloads
    ]
    assert sorted(got) == sorted(expected)
    for lws in workloads:
        rollout = lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]
        assert rollout["maxSurge"] == 0, "a surge needs spare GPUs and deadlocks a full pool"


@CASES
def test_no_gpu_is_requested_as_an_extended_resource(case):  # type: ignore[no-untyped-def]
    for obj in rendered(case):
        text = yaml.safe_dump(obj)
        assert "nvidia.com/gpu:" not in text.replace("key: nvidia.com/gpu", "")


@CASES
def test_every_name_fits_its_kind_and_what_controllers_derive_from_it(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    service_names = {o["metadata"]["name"] for o in by_kind(objects, "Service")}
    for obj in objects:
        name = obj["metadata"]["name"]
        assert len(name) <= 63, name
        for value in obj["metadata"].get("labels", {}).values():
            assert len(value) <= 63
    for lws in by_kind(objects, "LeaderWorkerSet"):
        name = lws["metadata"]["name"]
        # worker StatefulSet `<lws>-<group>` + `-<10-char revision hash>` is a label value <= 63
        assert len(f"{name}-{lws['spec']['replicas'] - 1}-0123456789") <= 63
        assert name not in service_names, "LWS's headless Service would clash with ours"
        for _, pod in pod_templates(lws):
            for value in pod["metadata"]["labels"].values():
                assert len(value) <= 63


@CASES
def test_serving_pods_carry_port_and_probe_and_workers_do_not(case):  # type: ignore[no-untyped-def]
    for lws in by_kind(rendered(case), "LeaderWorkerSet"):
        for _, pod in pod_templates(lws):
            labels = pod["metadata"]["labels"]
            engine = next(ct for ct in pod["spec"]["containers"] if ct["name"] == c.ENGINE_CONTAINER)
            if labels[c.LABEL_ROLE] == "Worker":
                assert c.LABEL_SERVING not in labels
                # A headless worker serves no HTTP: a probe would never pass.
                assert not {"startupProbe", "livenessProbe", "readinessProbe"} & set(engine)
                assert all(p["name"] != c.SERVING_PORT_NAME for p in engine.get("ports", []))
            else:
                http = next(p for p in engine["ports"] if p["name"] == c.SERVING_PORT_NAME)
                for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                    assert engine[probe]["httpGet"]["port"] == http["containerPort"]
            assert pod["spec"]["nodeSelector"][c.LABEL_POOL]
            assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"]["tolerations"]
            mounts = {m["mountPath"] for m in engine["volumeMounts"]}
            assert c.SHM_PATH in mounts
            if labels[c.LABEL_ROLE] in ("Leader", "Worker"):
                assert [e["name"] for e in engine["env"][:2]] == [c.ENV_LEADER_ADDRESS, c.ENV_RANK]


def test_prefill_decode_roles_ports_and_sidecar():  # type: ignore[no-untyped-def]
    case = next(p for p in VALID if p.name == "prefill-decode-kimi-k2")
    objects = rendered(case)
    pods = {
        pod["metadata"]["labels"][c.LABEL_LLMD_ROLE]: pod for lws in by_kind(objects, "LeaderWorkerSet") for _, pod in pod_templates(lws)
    }
    assert set(pods) == {"prefill", "decode"}
    decode = pods["decode"]["spec"]
    assert [ct["name"] for ct in decode["containers"]] == ["engine"]
    (sidecar,) = decode["initContainers"]
    assert (sidecar["name"], sidecar["restartPolicy"]) == (c.PD_SIDECAR_CONTAINER, "Always"), "a native sidecar outlives the engine's drain"
    assert decode["containers"][0]["ports"][0]["containerPort"] == 8001
    assert "--vllm-port=8001" in sidecar["args"]
    (pool,) = by_kind(objects, "InferencePool")
    assert pool["spec"]["targetPorts"] == [{"number": c.PD_SIDECAR_PORT}]
    (config,) = by_kind(objects, "ConfigMap")
    picker_config = yaml.safe_load(config["data"][c.PICKER_CONFIG_KEY])
    assert [p["name"] for p in picker_config["schedulingProfiles"]] == ["prefill", "decode"]
    producer = next(p for p in picker_config["plugins"] if p["type"] == "approx-prefix-cache-producer")
    assert producer["parameters"]["blockSizeTokens"] == 64


def test_model_cache_names_the_model_only_without_command_or_model_flag():  # type: ignore[no-untyped-def]
    def engine_args(name: str) -> list[str]:
        case = next(p for p in VALID if p.name == name)
        (lws,) = by_kind(rendered(case), "LeaderWorkerSet")
        pod = pod_templates(lws)[0][1]
        return next(ct for ct in pod["spec"]["containers"] if ct["name"] == "engine").get("args", [])

    # vLLM's model is positional (`vllm serve /mnt/models`): its --model flag is deprecated.
    assert engine_args("model-cache-vllm")[0] == "/mnt/models"
    assert "/mnt/models" not in engine_args("single-gpu-standalone")  # it names its model with --model
    assert engine_args("model-cache-sglang-command").count("--model-path=/mnt/models") == 1  # its own, and no other


def test_passthrough_objects_are_unchanged_and_local_config_is_dropped():  # type: ignore[no-untyped-def]
    case = next(p for p in VALID if p.name == "objects-passed-through")
    objects = rendered(case)
    extras = [d for d in yaml.safe_load_all((case / "extras.yaml").read_text()) if d]
    for extra in extras[:2]:
        assert extra in objects
    assert not by_kind(objects, "RenderConfig")
    assert not by_kind(objects, "Kustomization")


def test_replica_labels_reach_object_metadata_but_never_selectors():  # type: ignore[no-untyped-def]
    case = next(p for p in VALID if p.name == "several-copies")
    objects = rendered(case)
    for obj in objects:
        assert obj["metadata"]["labels"]["team"] == "search"
    for obj in by_kind(objects, "InferencePool"):
        assert "team" not in obj["spec"]["selector"]["matchLabels"]
    for obj in by_kind(objects, "Deployment"):
        assert "team" not in obj["spec"]["selector"]["matchLabels"]


def test_picker_overrides_are_honoured():  # type: ignore[no-untyped-def]
    case = next(p for p in VALID if p.name == "endpoint-picker-overrides")
    objects = rendered(case)
    (deployment,) = by_kind(objects, "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"].startswith("mirror.example.com/")
    assert container["args"][-2:] == ["--v=2", "--zap-encoder=json"]
    assert {"name": "GOMAXPROCS", "value": "2"} in container["env"]
    assert deployment["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "mirror-pull"}]
    (config,) = by_kind(objects, "ConfigMap")
    assert yaml.safe_load(config["data"][c.PICKER_CONFIG_KEY])["plugins"][1]["type"] == "kv-cache-utilization-scorer"
    assert deployment["spec"]["replicas"] == 1, "a user's picker overrides don't bring back a standby"


def test_a_picker_config_is_written_the_same_alone_or_beside_others(tmp_path):  # type: ignore[no-untyped-def]
    """Each distinct config is dumped once a run: a replica's ConfigMap must not depend on who came first.

    The second replica's config repeats its queue-scorer parameters through a YAML alias; the
    first writes them out. Same data, so the same text, and never an anchor.
    """
    overrides = next(p for p in VALID if p.name == "endpoint-picker-overrides") / "replica.yaml"
    text = overrides.read_text()
    assert "        - type: queue-scorer\n" in text and "          - pluginRef: queue-scorer\n            weight: 1\n" in text
    written_out = text.replace("        - type: queue-scorer\n", "        - {type: queue-scorer, parameters: {a: 1}}\n", 1).replace(
        "          - pluginRef: queue-scorer\n            weight: 1\n",
        "          - pluginRef: queue-scorer\n            weight: 1\n            parameters: {a: 1}\n",
        1,
    )
    aliased = text.replace("        - type: queue-scorer\n", "        - {type: queue-scorer, parameters: &p {a: 1}}\n", 1).replace(
        "          - pluginRef: queue-scorer\n            weight: 1\n",
        "          - pluginRef: queue-scorer\n            weight: 1\n            parameters: *p\n",
        1,
    )
    (tmp_path / "a.yaml").write_text(written_out)
    (tmp_path / "b.yaml").write_text(aliased.replace("namespace: ", "namespace: other-", 1))

    def config_texts(paths: list[str]) -> dict[str, str]:
        objects = render_paths(paths, Options()).objects
        return {o["metadata"]["namespace"]: o["data"][c.PICKER_CONFIG_KEY] for o in by_kind(objects, "ConfigMap")}

    together = config_texts([str(tmp_path)])
    alone = {**config_texts([str(tmp_path / "a.yaml")]), **config_texts([str(tmp_path / "b.yaml")])}
    assert together == alone and len(set(together.values())) == 1
    assert "&" not in next(iter(together.values())) and "parameters:\n" in next(iter(together.values()))


def test_the_pickers_tls_is_one_setting_each_front_end_spells():  # type: ignore[no-untyped-def]
    from modelplane_render.frontends.argocd import settings_from_env
    from modelplane_render.frontends.krm import read_function_config

    def secure_serving(options: Options) -> list[str]:
        objects = render_paths([str(next(p for p in VALID if p.name == "single-gpu-standalone"))], options).objects
        (deployment,) = by_kind(objects, "Deployment")
        return [a for a in deployment["spec"]["template"]["spec"]["containers"][0]["args"] if a.startswith("--secure-serving")]

    assert secure_serving(Options()) == ["--secure-serving=true"], "the picker's own default, said out loud"
    config = {
        "apiVersion": "render.modelplane.ai/v1alpha1",
        "kind": "RenderConfig",
        "metadata": {"name": "r"},
        "spec": {"pickerPlaintext": True},
    }
    argocd = settings_from_env({"ARGOCD_APP_PARAMETERS": '[{"name": "picker-plaintext", "string": "true"}]'}).options
    for options in (Options(picker_plaintext=True), read_function_config(config).options, argocd):
        assert secure_serving(options) == ["--secure-serving=false"]


def test_the_node_pool_label_and_tolerations_are_settings_each_front_end_spells():  # type: ignore[no-untyped-def]
    """GKE labels its pools cloud.google.com/gke-nodepool; an AMD pool is tainted amd.com/gpu, not nvidia.com/gpu."""
    from modelplane_render.frontends.argocd import settings_from_env
    from modelplane_render.frontends.krm import read_function_config

    def pods(options: Options) -> list[dict[str, Any]]:
        objects = render_paths([str(next(p for p in VALID if p.name == "multi-node-leader-worker"))], options).objects
        return [pod for lws in by_kind(objects, "LeaderWorkerSet") for _, pod in pod_templates(lws)]

    wanted_selector = {"cloud.google.com/gke-nodepool": "gpu-h200"}
    wanted = [
        {"key": "amd.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "pool", "operator": "Equal", "value": "inference"},
    ]
    config = {
        "apiVersion": "render.modelplane.ai/v1alpha1",
        "kind": "RenderConfig",
        "metadata": {"name": "r"},
        "spec": {"nodePoolLabel": "cloud.google.com/gke-nodepool", "tolerations": ["amd.com/gpu:NoSchedule", "pool=inference"]},
    }
    parameters = '[{"name": "node-pool-label", "string": "cloud.google.com/gke-nodepool"}, {"name": "tolerations", "string": "amd.com/gpu:NoSchedule, pool=inference"}]'
    for options in (read_function_config(config).options, settings_from_env({"ARGOCD_APP_PARAMETERS": parameters}).options):
        for pod in pods(options):
            assert pod["spec"]["nodeSelector"] == wanted_selector and pod["spec"]["tolerations"] == wanted
    untolerated = read_function_config({**config, "spec": {"tolerations": []}}).options
    assert all("tolerations" not in pod["spec"] for pod in pods(untolerated))
    assert pods(Options())[0]["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_the_command_lines_toleration_and_node_pool_label():  # type: ignore[no-untyped-def]
    from conftest import run_cli

    case = str(next(p for p in VALID if p.name == "single-gpu-standalone"))
    result = run_cli("render", "--node-pool-label", "eks.amazonaws.com/nodegroup", "--toleration", "none", case)
    (lws,) = by_kind(list(yaml.safe_load_all(result.stdout)), "LeaderWorkerSet")
    pod = pod_templates(lws)[0][1]
    assert pod["spec"]["nodeSelector"] == {"eks.amazonaws.com/nodegroup": "gpu-l4"} and "tolerations" not in pod["spec"]
    for bad in ("amd.com/gpu:NoRun", "none,x", "Bad Key"):
        refused = (
            run_cli("render", "--toleration", *bad.split(","), case)
            if "," not in bad
            else run_cli("render", "--toleration", "none", "--toleration", "x", case)
        )
        assert (refused.code, refused.stdout) == (2, ""), bad
