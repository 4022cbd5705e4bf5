"""Would it serve: for every valid fixture, what the programs that run the output will do with it.

Each engine's behaviour is stated here as its own source has it (not read from facts/, which is
what is under test): the port it binds when no flag says, the address it listens on, how it is told
the model. The port a container really binds must be the one its pod declares, its probes check,
the pool targets and the pd-sidecar forwards to; the picker's probes must ask for services its
health server answers; its Role must cover what it watches.

This oracle is independent on purpose: it never imports facts.registry or facts.engines to compute
what it expects (engine_kind, DEFAULT_PORT and argv below are its own), so a wrong fact in the
registry fails here instead of being copied into the expectation. A new engine in the registry is
taught to this file by hand.
"""

from __future__ import annotations

import json
import shlex
from typing import Any, Optional

import pytest
import yaml
from test_plan import by_kind, pod_templates, rendered

from conftest import VALID
from modelplane_render import constants as c

CASES = pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])

# vllm/entrypoints/openai/cli_args.py: port 8000, every address; python/sglang/srt/server_args.py:
# 127.0.0.1:30000. llm-d-router v0.9.0 pkg/sidecar/proxy/options.go: the pd-sidecar listens on 8000.
DEFAULT_PORT = {"vllm": 8000, "sglang": 30000}
LOOPBACK_BY_DEFAULT = {"vllm": False, "sglang": True}
SIDECAR_DEFAULT_PORT = 8000
SHELLS = {"sh", "bash", "/bin/sh", "/bin/bash"}
# cmd/epp/runner/health.go with --ha-enable-leader-election: liveness is SERVING on every replica,
# readiness (and "" and the ext-proc name) only on the leader; any other name is SERVICE_UNKNOWN.
# cmd/epp/runner/health.go at v0.9.0: with leader election, these answer on every replica (liveness) and on
# the leader only (readiness); without it, every name answers as readiness does. A probe must ask for one
# the server answers either way ("inference-extension" gets SERVICE_UNKNOWN under leader election).
LIVENESS_ANSWERED_BY_EVERY_REPLICA = {"liveness"}
READINESS_ANSWERED_BY_THE_LEADER = {"readiness", "", "envoy.service.ext_proc.v3.ExternalProcessor"}
# pkg/epp/server/controller_manager.go and controller_config.go: what the picker lists and watches.
PICKER_WATCHES = [
    ("", "pods"),
    ("inference.networking.k8s.io", "inferencepools"),
    *(
        (group, kind)
        for group in ("llm-d.ai", "inference.networking.x-k8s.io")
        for kind in ("inferenceobjectives", "inferencemodelrewrites")
    ),
]


def argv(container: dict[str, Any]) -> list[str]:
    """What the engine sees: command and args; in a shell string, the words of the command that serves."""
    words = list(container.get("command") or []) + list(container.get("args") or [])
    if words[:1] and words[0] in SHELLS and len(words) > 2 and words[1] == "-c":
        commands: list[list[str]] = [[]]
        for word in shlex.split(words[2].replace("&&", " && ").replace(";", " ; ")):
            if word in ("&&", ";", "||"):
                commands.append([])
            else:
                commands[-1].append(word)
        serving = [cmd for cmd in commands if "serve" in cmd or "sglang.launch_server" in cmd]
        return serving[-1] if serving else commands[-1]
    return words


def engine_kind(container: dict[str, Any]) -> str:
    """SGLang when its command, or the args after it (an interpreter's, a shell's script), name it; else by image."""
    command = container.get("command") or []
    words = " ".join(command + (container.get("args") or []) if command else [])
    return "sglang" if "sglang" in (words or container["image"].split("/")[-1]) else "vllm"


def runs_model_server(container: dict[str, Any]) -> bool:
    words = argv(container)
    return not container.get("command") or "serve" in words or "sglang.launch_server" in words


def flag(words: list[str], name: str) -> Optional[str]:
    value = None
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            value = words[i + 1]
        elif word.startswith(name + "="):
            value = word.split("=", 1)[1]
    return value


def bound_port(container: dict[str, Any]) -> int:
    """The port the engine binds: its last --port, else its own default."""
    port = flag(argv(container), "--port")
    return int(port) if port else DEFAULT_PORT[engine_kind(container)]


def engine_pods(objects: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(lws, pod) for lws in by_kind(objects, "LeaderWorkerSet") for _, pod in pod_templates(lws)]


def engine_of(pod: dict[str, Any]) -> dict[str, Any]:
    (engine,) = [ct for ct in pod["spec"]["containers"] if ct["name"] == c.ENGINE_CONTAINER]
    return engine


def serves(pod: dict[str, Any]) -> bool:
    return c.LABEL_SERVING in pod["metadata"]["labels"]


def sidecar_of(pod: dict[str, Any]) -> Optional[dict[str, Any]]:
    found = [ct for ct in pod["spec"].get("initContainers", []) if ct["name"] == c.PD_SIDECAR_CONTAINER]
    return found[0] if found else None


@CASES
def test_each_serving_engine_binds_the_port_its_pod_declares_and_probes(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        if not serves(pod):
            continue
        engine = engine_of(pod)
        port = bound_port(engine)
        (http,) = [p for p in engine["ports"] if p["name"] == c.SERVING_PORT_NAME]
        assert http["containerPort"] == port
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            assert engine[probe]["httpGet"]["port"] == port, probe


@CASES
def test_an_engine_that_would_listen_on_loopback_is_told_every_address(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        engine = engine_of(pod)
        if serves(pod) and LOOPBACK_BY_DEFAULT[engine_kind(engine)]:
            assert flag(argv(engine), "--host") == "0.0.0.0", "the kubelet and the pool reach the pod's IP, never its loopback"


@CASES
def test_no_two_containers_of_a_pod_bind_one_port(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        bound: list[int] = []
        for container in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]:
            if container["name"] == c.ENGINE_CONTAINER and serves(pod):
                bound.append(bound_port(container))
            elif container["name"] == c.PD_SIDECAR_CONTAINER:
                bound.append(int(flag(container["args"], "--port") or SIDECAR_DEFAULT_PORT))
            else:
                bound += [p["containerPort"] for p in container.get("ports", [])]
        assert len(bound) == len(set(bound)), bound


@CASES
def test_the_pool_targets_the_port_every_pod_it_selects_serves_on(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    for pool in by_kind(objects, "InferencePool"):
        (target,) = [p["number"] for p in pool["spec"]["targetPorts"]]
        selected = [
            pod
            for _, pod in engine_pods(objects)
            if all(pod["metadata"]["labels"].get(k) == v for k, v in pool["spec"]["selector"]["matchLabels"].items())
        ]
        assert selected
        for pod in selected:
            sidecar = sidecar_of(pod)
            if sidecar is not None:
                assert int(flag(sidecar["args"], "--port") or SIDECAR_DEFAULT_PORT) == target
                # The sidecar forwards to the engine's real port, and says which connector it speaks.
                engine = engine_of(pod)
                assert int(flag(sidecar["args"], "--vllm-port") or 8001) == bound_port(engine)
                assert flag(sidecar["args"], "--kv-connector") == {"vllm": "nixlv2", "sglang": "sglang"}[engine_kind(engine)]
            else:
                assert bound_port(engine_of(pod)) == target


@CASES
def test_every_member_that_runs_the_model_server_is_told_the_model(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        engine = engine_of(pod)
        if not runs_model_server(engine):
            continue
        words = argv(engine)
        if engine_kind(engine) == "sglang":
            assert flag(words, "--model-path") or flag(words, "--model"), words
        else:
            # `vllm serve MODEL`: the first word after serve, or the image's entrypoint's first argument.
            rest = words[words.index("serve") + 1 :] if "serve" in words else words
            assert (rest and not rest[0].startswith("-")) or flag(words, "--model"), words


@CASES
def test_pods_say_which_engine_they_run_for_the_pickers_metric_names(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        if serves(pod):
            engine = engine_of(pod)
            assert pod["metadata"]["labels"]["llm-d.ai/engine-type"] == engine_kind(engine)
            if engine_kind(engine) == "sglang":
                assert "--enable-metrics" in argv(engine), "SGLang serves no /metrics unless asked"


@CASES
def test_nixl_side_channel_env_goes_to_vllm_prefill_decode_engines_only(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        engine = engine_of(pod)
        names = {e["name"] for e in engine.get("env", [])}
        pd = "llm-d.ai/role" in pod["metadata"]["labels"]
        assert (c.NIXL_HOST_ENV in names) == (pd and engine_kind(engine) == "vllm")


@CASES
def test_the_model_cache_is_mounted_read_only(case):  # type: ignore[no-untyped-def]
    for _, pod in engine_pods(rendered(case)):
        for mount in engine_of(pod).get("volumeMounts", []):
            if mount["name"] == c.MODEL_CACHE_VOLUME:
                assert mount["readOnly"] is True


@CASES
def test_serving_pods_drain_before_they_stop(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    (picker,) = by_kind(objects, "Deployment")[:1]
    for _, pod in engine_pods(objects):
        grace = pod["spec"]["terminationGracePeriodSeconds"]
        if serves(pod):
            sleep = engine_of(pod)["lifecycle"]["preStop"]["sleep"]["seconds"]
            assert 0 < sleep < grace
        # The picker mirrors the pool's longest grace period, so it outlives every drain.
        assert picker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= grace


@CASES
def test_the_pickers_probes_ask_for_services_its_health_server_answers(case):  # type: ignore[no-untyped-def]
    for deployment in by_kind(rendered(case), "Deployment"):
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        # One picker, every replica of it Ready once the pool syncs: Argo CD and `kubectl rollout status`
        # read the Deployment available (with a standby under leader election they never would).
        assert not any(a.startswith("--ha-enable-leader-election") for a in container["args"]) and deployment["spec"]["replicas"] == 1
        assert container["livenessProbe"]["grpc"]["service"] in LIVENESS_ANSWERED_BY_EVERY_REPLICA
        assert container["readinessProbe"]["grpc"]["service"] in READINESS_ANSWERED_BY_THE_LEADER
        # The new picker starts before the old one stops, and is trusted only once it has had time to listen.
        assert deployment["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
        assert deployment["spec"]["minReadySeconds"] >= 3


@CASES
def test_the_pickers_role_lets_it_list_and_watch_all_it_watches(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    for role in by_kind(objects, "Role"):
        for group, resource in PICKER_WATCHES:
            assert any(
                group in rule["apiGroups"] and resource in rule["resources"] and {"list", "watch"} <= set(rule["verbs"])
                for rule in role["rules"]
            ), (group, resource)
    assert by_kind(objects, "PodDisruptionBudget") == [], "over one picker, any budget forbids draining its node"


@CASES
def test_every_picker_parameter_takes_effect(case):  # type: ignore[no-untyped-def]
    for config_map in by_kind(rendered(case), "ConfigMap"):
        text = config_map["data"][c.PICKER_CONFIG_KEY]
        assert "&" not in text and "*" not in text, "no anchors or aliases: a PR's diff must read as it applies"
        config = yaml.safe_load(text)
        for plugin in config["plugins"]:
            assert plugin["type"] != "disagg-headers-handler", "deprecated: the profile handler sets the header"
            parameters = plugin.get("parameters", {})
            if plugin["type"] == "approx-prefix-cache-producer":
                # approximateprefix/plugin.go: raised to 64 below that; overridden by maxPrefixTokensToMatch.
                assert parameters.get("blockSizeTokens", 64) >= 64
                assert "maxPrefixBlocksToMatch" not in parameters


def test_the_readmes_requirements_name_every_image_the_tool_adds():  # type: ignore[no-untyped-def]
    """Every image in the output that no replica named is one the README's Requirements list."""
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    requirements = readme[readme.index("## Requirements") : readme.index("## Quick start")]
    named = set()
    for case in VALID:
        text = "\n".join(p.read_text() for p in case.glob("*.yaml"))
        for obj in rendered(case):
            for template in (
                [obj["spec"]["template"]]
                if obj["kind"] == "Deployment"
                else [pod for _, pod in pod_templates(obj)]
                if obj["kind"] == "LeaderWorkerSet"
                else []
            ):
                for container in template["spec"].get("initContainers", []) + template["spec"]["containers"]:
                    if container["image"] not in text:
                        named.add(container["image"])
    assert named == {c.PICKER_IMAGE, c.PD_SIDECAR_IMAGE}
    for image in named:
        assert f"`{image}`" in requirements, image


# vLLM v0.23.0 vllm/engine/arg_utils.py (--nnodes, --node-rank, --master-addr: the mp backend across nodes, since
# v0.11.1) and vllm/entrypoints/cli/serve.py (--headless starts no API server); SGLang 0.5's server args
# (--nnodes, --node-rank, --dist-init-addr). Each pod of a gang must be told all three, or it starts alone.
GANG_FLAGS = {"vllm": ("--nnodes", "--node-rank", "--master-addr"), "sglang": ("--nnodes", "--node-rank", "--dist-init-addr")}
SIZES = {"vllm": ("--tensor-parallel-size", "--pipeline-parallel-size"), "sglang": ("--tp-size", "--pp-size")}


def _user_wired(words: list[str]) -> bool:
    """A gang its own script joins (Ray), or whose data-parallel ranks the user wrote: its flags are the user's."""
    return flag(words, "--distributed-executor-backend") == "ray" or any(w.startswith("--data-parallel") for w in words)


@CASES
def test_every_pod_of_a_gang_is_told_the_gang_it_belongs_to(case):  # type: ignore[no-untyped-def]
    for lws, pod in engine_pods(rendered(case)):
        size = lws["spec"]["leaderWorkerTemplate"]["size"]
        engine = engine_of(pod)
        words = argv(engine)
        if size == 1 or not runs_model_server(engine) or _user_wired(words):
            continue
        kind = engine_kind(engine)
        nnodes, rank, leader = (flag(words, name) for name in GANG_FLAGS[kind])
        assert nnodes == str(size), (case, words)
        # The rank and the leader come from the LeaderWorkerSet's own env, first in the container's env.
        assert rank == "$(MODELPLANE_RANK)" and leader is not None and leader.startswith("$(MODELPLANE_LEADER_ADDRESS)"), words
        env = {e["name"]: e.get("value") for e in engine["env"]}
        assert env["MODELPLANE_RANK"] == "$(LWS_WORKER_INDEX)" and env["MODELPLANE_LEADER_ADDRESS"] == "$(LWS_LEADER_ADDRESS)"
        if kind == "vllm":
            assert ("--headless" in words) == (not serves(pod)), (case, words)


@CASES
def test_the_pods_of_a_gang_share_its_parallel_sizes(case):  # type: ignore[no-untyped-def]
    for lws in by_kind(rendered(case), "LeaderWorkerSet"):
        engines = [engine_of(pod) for _, pod in pod_templates(lws)]
        if len(engines) < 2 or not all(runs_model_server(e) for e in engines) or any(_user_wired(argv(e)) for e in engines):
            continue
        kind = engine_kind(engines[0])
        sizes = {tuple(flag(argv(e), name) or "1" for name in SIZES[kind]) for e in engines}
        assert len(sizes) == 1, (case, sizes)


@CASES
def test_no_engine_uses_more_gpus_than_its_pod_claims(case):  # type: ignore[no-untyped-def]
    objects = rendered(case)
    claims = {o["metadata"]["name"]: o for o in by_kind(objects, "ResourceClaimTemplate")}
    for lws, pod in engine_pods(objects):
        engine = engine_of(pod)
        words = argv(engine)
        if not runs_model_server(engine) or any(w.startswith("--data-parallel") for w in words):
            continue
        gpus = sum(
            r["exactly"]["count"]
            for claim in pod["spec"].get("resourceClaims", [])
            for r in claims[claim["resourceClaimTemplateName"]]["spec"]["spec"]["devices"]["requests"]
            if r["exactly"]["deviceClassName"].startswith("gpu.")
        )
        tensor, pipeline = (int(flag(words, name) or 1) for name in SIZES[engine_kind(engine)])
        assert gpus == 0 or tensor * pipeline <= gpus * lws["spec"]["leaderWorkerTemplate"]["size"], (case, words, gpus)


RAY_STUB = """#!/bin/sh
echo "ray $*" >> "$CALLS"
if [ "$1 $2" = "start --block" ] && [ ! -e "$CALLS.head-up" ]; then touch "$CALLS.head-up"; exit 1; fi
"""
ENGINE_STUB = """#!/bin/sh
echo "$(basename "$0") $*" >> "$CALLS"
printf '%s\\0' "$@" > "$CALLS.argv"
"""


def _run_pod_command(container: dict[str, Any], tmp_path: Any, env: dict[str, str]) -> tuple[list[str], list[str]]:
    """Run a rendered container's command and args under /bin/sh as the kubelet would exec them, with `ray` and the
    engine's program stubbed on PATH: (the calls made in order, the argv the engine program got)."""
    import os
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("ray", RAY_STUB), ("vllm", ENGINE_STUB)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    calls = tmp_path / "calls"
    for leftover in (calls, tmp_path / "calls.argv", tmp_path / "calls.head-up"):
        leftover.unlink(missing_ok=True)
    words = [*container["command"], *container.get("args", [])]
    run_env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls), **env}
    with_sleep = words[2].replace("sleep 5", "sleep 0")  # the Worker's retry pause, not what is tested
    subprocess.run([words[0], words[1], with_sleep, *words[3:]], env=run_env, check=True, timeout=30)
    engine_argv = (tmp_path / "calls.argv").read_bytes().split(b"\0")[:-1] if (tmp_path / "calls.argv").exists() else []
    return calls.read_text().splitlines(), [w.decode() for w in engine_argv]


def test_a_ray_gang_starts_ray_on_every_pod_and_the_engine_unchanged_on_the_leader(tmp_path):  # type: ignore[no-untyped-def]
    """vLLM's Ray backend in plain args (fixtures/valid/ray-gang-plain-args): the Leader's shell starts the Ray head and
    then execs `vllm serve` with exactly the rendered args (no word re-split or expanded by the shell); the Worker
    retries `ray start` against the Leader's address until the head answers, and runs nothing else."""
    (lws,) = by_kind(rendered(next(p for p in VALID if p.name == "ray-gang-plain-args")), "LeaderWorkerSet")
    (leader, worker) = (engine_of(pod) for _, pod in pod_templates(lws))
    args = [*leader["args"], '--chat-template-content-format=$(x) "$HOME" *']  # a word a shell would mangle as text
    calls, engine_argv = _run_pod_command(leader | {"args": args}, tmp_path, {})
    assert calls == ["ray start --head --port=6379", f"vllm serve {' '.join(args)}"]
    assert engine_argv == ["serve", *args]
    assert flag(args, "--distributed-executor-backend") == "ray" and flag(args, "--nnodes") is None
    calls, engine_argv = _run_pod_command(worker, tmp_path, {"MODELPLANE_LEADER_ADDRESS": "leader.example"})
    assert calls == ["ray start --block --address=leader.example:6379"] * 2 and engine_argv == []
    assert "args" not in worker, "a Ray Worker runs no engine: no model, no flags"
    env = {e["name"]: e.get("value") for e in worker["env"]}
    assert env["MODELPLANE_LEADER_ADDRESS"] == "$(LWS_LEADER_ADDRESS)"
    # Ray places vLLM's ranks on the Worker's GPUs, which load the weights there.
    assert (
        worker["resources"]["claims"]
        and {"name": c.MODEL_CACHE_VOLUME, "mountPath": c.MODEL_CACHE_PATH, "readOnly": True} in worker["volumeMounts"]
    )


# llm-d-router v0.9.0 pkg/sidecar/proxy: nixlv2 hands prefill's kv_transfer_params to decode, which only vLLM's
# NixlConnector returns (connector_nixlv2.go); sglang adds a bootstrap host, port and room, which SGLang answers
# only under --disaggregation-mode. vllm/config/kv_transfer.py: a producer sends KV blocks, a consumer takes them.
SIDECAR_TRANSFER = {"nixlv2": "NixlConnector", "shared-storage": "SharedStorageConnector"}
KV_ROLES = {"prefill": ("kv_producer", "kv_both"), "decode": ("kv_consumer", "kv_both")}


@CASES
def test_prefill_decode_engines_move_kv_blocks_the_way_the_sidecar_drives(case):  # type: ignore[no-untyped-def]
    pods = [pod for _, pod in engine_pods(rendered(case))]
    sidecars = [s for s in map(sidecar_of, pods) if s]
    if not sidecars:
        return
    protocol = flag(sidecars[0]["args"], "--kv-connector")
    for pod in pods:
        role, engine = pod["metadata"]["labels"].get("llm-d.ai/role"), engine_of(pod)
        words = argv(engine)
        if role is None or not runs_model_server(engine):
            continue
        if engine_kind(engine) == "vllm":
            config = json.loads(flag(words, "--kv-transfer-config") or "{}")
            assert config.get("kv_connector") == SIDECAR_TRANSFER.get(str(protocol)), (case, protocol, config)
            assert config.get("kv_role") in KV_ROLES[role], (case, role, config)
        else:
            assert protocol == "sglang" and flag(words, "--disaggregation-mode") == role, (case, words)


@CASES
def test_the_picker_prints_no_trace_spans_and_requests_what_it_runs_on(case):  # type: ignore[no-untyped-def]
    """llm-d-router v0.9.0 pkg/epp/server/options.go: --tracing defaults to true, exporting spans to stdout with no collector."""
    for deployment in by_kind(rendered(case), "Deployment"):
        (picker,) = deployment["spec"]["template"]["spec"]["containers"]
        tracing = [a for a in picker["args"] if a.startswith("--tracing")]
        assert tracing[-1:] == ["--tracing=false"] or len(tracing) > 1, (case, tracing)
        assert picker["resources"].get("requests"), case  # never BestEffort: first evicted under pressure
