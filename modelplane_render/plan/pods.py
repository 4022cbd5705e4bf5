"""Each member's pod template: labels, scheduling, claims, volumes, and its containers (ours and the user's)."""

from __future__ import annotations

from typing import Any, Optional

from .. import constants as c
from .. import names
from ..facts.engines import member_is_serving, serving_port
from ..facts.flags import has_flag
from ..model import Container, Engine, EngineMember, EnvVar, ModelReplica, to_plain


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


def _probe(port: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": c.HEALTH_PATH, "port": port},
        "initialDelaySeconds": c.PROBE_INITIAL_DELAY_SECONDS,
        "periodSeconds": c.PROBE_PERIOD_SECONDS,
        "timeoutSeconds": c.PROBE_TIMEOUT_SECONDS,
    }


def pod(replica: ModelReplica, engine: Engine, member: EngineMember, claim: Optional[str], pd: bool) -> dict[str, Any]:
    """Labels, annotations and spec of one member's pods."""
    serving = member_is_serving(member)
    labels: dict[str, str] = dict(member.template.metadata.labels or {}) if member.template.metadata else {}
    labels[c.LABEL_REPLICA] = names.label_value(replica.metadata.name)
    labels[c.LABEL_ENGINE] = engine.name
    labels[c.LABEL_ROLE] = member.role
    if serving:
        labels[c.LABEL_SERVING] = names.label_value(replica.metadata.name)
        if pd:
            labels[c.LABEL_LLMD_ROLE] = "prefill" if engine.phase == "Prefill" else "decode"
            labels[c.LABEL_LLMD_SERVING] = "true"
    annotations = dict(member.template.metadata.annotations or {}) if member.template.metadata else {}

    containers = [_container(replica, engine, member, ct, claim, pd) for ct in member.template.spec.containers]
    if serving and pd and engine.phase == "Decode":
        port = serving_port(engine, member, pd)
        containers.append(
            {
                "name": c.PD_SIDECAR_CONTAINER,
                "image": c.PD_SIDECAR_IMAGE,
                "args": ["--secure-proxy=false", "--kv-connector=nixlv2", f"--vllm-port={port}"],
                "env": [],
                "ports": [{"name": c.PD_SIDECAR_PORT_NAME, "containerPort": c.PD_SIDECAR_PORT, "protocol": "TCP"}],
                "readinessProbe": _probe(c.PD_SIDECAR_PORT),
                "resources": {},
                "volumeMounts": [],
            }
        )
    volumes: list[dict[str, Any]] = [{"name": c.SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
    if replica.spec.model_cache_ref:
        volumes.append({"name": c.MODEL_CACHE_VOLUME, "persistentVolumeClaim": {"claimName": replica.spec.model_cache_ref.name}})
    return {
        "labels": labels,
        "annotations": annotations,
        "node_selector": {c.LABEL_POOL: member.node_pool_name},
        "tolerations": [c.GPU_TOLERATION],
        "image_pull_secrets": [{"name": s.name} for s in member.template.spec.image_pull_secrets or []],
        "claims": [{"name": c.DEVICE_CLAIM, "resourceClaimTemplateName": claim}] if claim else [],
        "containers": containers,
        "volumes": volumes,
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
    probe = to_plain(container.readiness_probe) if container.readiness_probe else None
    if container.name == c.ENGINE_CONTAINER:
        ours: list[dict[str, Any]] = []
        if member.role in ("Leader", "Worker"):
            # First in the list, so `$(MODELPLANE_RANK)` in a user's args or env resolves.
            ours += [{"name": c.ENV_LEADER_ADDRESS, "value": c.LWS_LEADER_ADDRESS}, {"name": c.ENV_RANK, "value": c.LWS_WORKER_INDEX}]
        if pd:
            ours += [
                {"name": c.NIXL_HOST_ENV, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": c.NIXL_PORT_ENV, "value": c.NIXL_PORT},
            ]
        env = ours + env
        if member_is_serving(member):
            port = serving_port(engine, member, pd)
            ports = [{"name": c.SERVING_PORT_NAME, "containerPort": port, "protocol": "TCP"}] + ports
            probe = _probe(port)
            if replica.spec.model_cache_ref and container.command is None and not has_flag(args, "--model"):
                # Without --model vLLM silently serves its default model instead of the cache.
                args.append(f"--model={c.MODEL_CACHE_PATH}")
        if claim:
            resources["claims"] = [{"name": c.DEVICE_CLAIM}]
        mounts.append({"name": c.SHM_VOLUME, "mountPath": c.SHM_PATH})
        if replica.spec.model_cache_ref:
            mounts.append({"name": c.MODEL_CACHE_VOLUME, "mountPath": c.MODEL_CACHE_PATH})
    if container.args is not None or args:
        values["args"] = args
    values.update(env=env, ports=ports, readinessProbe=probe, resources=resources, volumeMounts=mounts)
    return values
