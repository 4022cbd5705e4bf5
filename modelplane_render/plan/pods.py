"""Each member's pod template: labels, scheduling, claims, volumes, and its containers (ours and the user's)."""

from __future__ import annotations

from typing import Any, Optional

from .. import constants as c
from .. import names
from ..facts.engines import VLLM, EngineFacts, engine_container, engine_of, flags_to_add, member_is_serving, needs_model_flag, serving_port
from ..model import Container, Engine, EngineMember, EnvVar, ModelReplica, to_plain
from ..options import Options, toleration_object


def device_requests(member: EngineMember) -> list[dict[str, Any]]:
    requests = []
    for request in member.device_requests or []:
        exactly: dict[str, Any] = {"deviceClassName": request.device_class_name, "count": request.count}
        selectors = [{"cel": {"expression": s.cel}} for s in request.selectors or [] if s.cel]
        if selectors:
            exactly["selectors"] = selectors
        requests.append({"name": request.name, "exactly": exactly})
    return requests


def env_list(entries: Optional[list[EnvVar]]) -> list[dict[str, Any]]:
    return [to_plain(e) for e in entries or []]


def _probe(port: int, timeout: int) -> dict[str, Any]:
    return {"httpGet": {"path": c.HEALTH_PATH, "port": port}, "periodSeconds": c.PROBE_PERIOD_SECONDS, "timeoutSeconds": timeout}


def _engine_probes(port: int, facts: EngineFacts) -> dict[str, dict[str, Any]]:
    """Startup gives the weights their load budget; then liveness restarts a wedged engine and readiness gates traffic."""
    probe = _probe(port, facts.health_timeout_seconds)
    return {
        "startupProbe": probe | {"failureThreshold": c.STARTUP_FAILURE_THRESHOLD},
        "livenessProbe": probe | {"failureThreshold": c.LIVENESS_FAILURE_THRESHOLD},
        "readinessProbe": probe | {"failureThreshold": c.READINESS_FAILURE_THRESHOLD},
    }


def pod(replica: ModelReplica, engine: Engine, member: EngineMember, claim: Optional[str], pd: bool, options: Options) -> dict[str, Any]:
    """Labels, annotations and spec of one member's pods."""
    serving = member_is_serving(member)
    labels: dict[str, str] = dict(member.template.metadata.labels or {}) if member.template.metadata else {}
    labels[c.LABEL_REPLICA] = names.label_value(replica.metadata.name)
    labels[c.LABEL_ENGINE] = engine.name
    labels[c.LABEL_ROLE] = member.role
    if serving:
        labels[c.LABEL_SERVING] = names.label_value(replica.metadata.name)
        labels[c.LABEL_ENGINE_TYPE] = engine_of(engine_container(member)[1]).engine_type
        if pd:
            labels[c.LABEL_LLMD_ROLE] = "prefill" if engine.phase == "Prefill" else "decode"
            labels[c.LABEL_LLMD_SERVING] = "true"
    annotations = dict(member.template.metadata.annotations or {}) if member.template.metadata else {}

    containers = [_container(replica, engine, member, ct, claim, pd) for ct in member.template.spec.containers]
    init_containers = [_pd_sidecar(engine, member, pd)] if serving and pd and engine.phase == "Decode" else []
    volumes: list[dict[str, Any]] = [{"name": c.SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
    if replica.spec.model_cache_ref:
        volumes.append({"name": c.MODEL_CACHE_VOLUME, "persistentVolumeClaim": {"claimName": replica.spec.model_cache_ref.name}})
    return {
        "labels": labels,
        "annotations": annotations,
        "termination_grace_period": c.ENGINE_TERMINATION_GRACE_SECONDS,
        "node_selector": {options.node_pool_label: member.node_pool_name},
        "tolerations": [toleration_object(t) for t in options.tolerations],
        "image_pull_secrets": [{"name": s.name} for s in member.template.spec.image_pull_secrets or []],
        "claims": [{"name": c.DEVICE_CLAIM, "resourceClaimTemplateName": claim}] if claim else [],
        "init_containers": init_containers,
        "containers": containers,
        "volumes": volumes,
    }


def _pd_sidecar(engine: Engine, member: EngineMember, pd: bool) -> dict[str, Any]:
    """The decode pod's pd-sidecar, a native sidecar (restartPolicy: Always), as llm-d-modelservice renders it.

    It starts before the engine and stops after it, so it proxies every request the engine is
    still finishing while the pod terminates. Its GET /health answers 200 by itself
    (pkg/sidecar/proxy/proxy.go), so it says the proxy is up; the engine's own probes say the rest.
    """
    port = serving_port(engine, member, pd)
    connector = engine_of(engine_container(member)[1]).pd_connector
    return {
        "name": c.PD_SIDECAR_CONTAINER,
        "image": c.PD_SIDECAR_IMAGE,
        "restartPolicy": "Always",
        # Plain HTTP inside the pod, as llm-d's guides run it: the gateway's hop is the picker's business.
        "args": ["--secure-proxy=false", f"--kv-connector={connector}", f"--vllm-port={port}"],
        "env": [],
        "ports": [{"name": c.PD_SIDECAR_PORT_NAME, "containerPort": c.PD_SIDECAR_PORT, "protocol": "TCP"}],
        "probes": {"readinessProbe": _probe(c.PD_SIDECAR_PORT, c.PD_SIDECAR_PROBE_TIMEOUT_SECONDS)},
        "resources": {},
        "volumeMounts": [],
    }


def _container(
    replica: ModelReplica, engine: Engine, member: EngineMember, container: Container, claim: Optional[str], pd: bool
) -> dict[str, Any]:
    values: dict[str, Any] = {"name": container.name, "image": container.image}
    if container.command is not None:
        values["command"] = list(container.command)
    args = list(container.args or [])
    ports = [to_plain(p) | {"protocol": "TCP"} for p in container.ports or []]
    env = env_list(container.env)
    resources = to_plain(container.resources) if container.resources else {}
    mounts: list[dict[str, Any]] = []
    probes: dict[str, Any] = {"readinessProbe": to_plain(container.readiness_probe)} if container.readiness_probe else {}
    if container.name == c.ENGINE_CONTAINER:
        facts = engine_of(container)
        ours: list[dict[str, Any]] = []
        if member.role in ("Leader", "Worker"):
            # First in the list, so `$(MODELPLANE_RANK)` in a user's args or env resolves.
            ours += [{"name": c.ENV_LEADER_ADDRESS, "value": c.LWS_LEADER_ADDRESS}, {"name": c.ENV_RANK, "value": c.LWS_WORKER_INDEX}]
        if pd and facts is VLLM:
            ours += [
                {"name": c.NIXL_HOST_ENV, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": c.NIXL_PORT_ENV, "value": c.NIXL_PORT},
            ]
        env = ours + env
        args += flags_to_add(engine, member, pd)
        if replica.spec.model_cache_ref and needs_model_flag(container):
            # Without it vLLM silently serves its default model instead of the cache. vLLM takes
            # it first and positional (`vllm serve MODEL`): its --model is deprecated.
            if facts.positional_model:
                args.insert(0, c.MODEL_CACHE_PATH)
            else:
                args.append(f"{facts.model_flags[0]}={c.MODEL_CACHE_PATH}")
        if member_is_serving(member):
            port = serving_port(engine, member, pd)
            ports = [{"name": c.SERVING_PORT_NAME, "containerPort": port, "protocol": "TCP"}] + ports
            probes = _engine_probes(port, facts)
            values["lifecycle"] = {"preStop": {"sleep": {"seconds": c.ENGINE_PRESTOP_SLEEP_SECONDS}}}
        if claim:
            resources["claims"] = [{"name": c.DEVICE_CLAIM}]
        mounts.append({"name": c.SHM_VOLUME, "mountPath": c.SHM_PATH})
        if replica.spec.model_cache_ref:
            # The cache is filled by Modelplane's ModelCache job; engines only read it.
            mounts.append({"name": c.MODEL_CACHE_VOLUME, "mountPath": c.MODEL_CACHE_PATH, "readOnly": True})
    if container.args is not None or args:
        values["args"] = args
    values.update(env=env, ports=ports, probes=probes, resources=resources, volumeMounts=mounts)
    return values
