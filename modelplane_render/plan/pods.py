"""Each member's pod template: labels, scheduling, claims, volumes, and its containers (ours and the user's)."""

from __future__ import annotations

import functools
import json
from typing import Any, Optional

from .. import constants as c
from .. import names
from ..facts.registry import EngineRecord
from ..model import Container, EngineMember, EnvVar, ModelReplica, to_plain
from ..options import Options
from ..options.parsers import toleration_object

# The API server writes allocationMode: ExactCount into a request that says none (resource.k8s.io/v1
# defaults), and `requests` is an atomic list: Argo CD's diff (gitops-engine's scheme knows no
# resource.k8s.io defaults) then finds the whole list changed, and the app stays OutOfSync for ever,
# self-heal applying it again and again (seen with Argo CD v3.2.11). So it is written out.
ALLOCATION_MODE = c.DEFAULT_ALLOCATION_MODE


def device_requests(member: EngineMember) -> list[dict[str, Any]]:
    requests = []
    for request in member.device_requests or []:
        exactly: dict[str, Any] = {"deviceClassName": request.device_class_name, "allocationMode": ALLOCATION_MODE, "count": request.count}
        selectors = [{"cel": {"expression": s.cel}} for s in request.selectors or [] if s.cel]
        if selectors:
            exactly["selectors"] = selectors
        requests.append({"name": request.name, "exactly": exactly})
    return requests


def claim_template_spec(member: EngineMember) -> dict[str, Any]:
    """A ResourceClaimTemplate's `spec` as templates/resourceclaimtemplate.yaml.j2 writes it (a test holds the two
    equal)."""
    return {"spec": {"devices": {"requests": device_requests(member)}}}


def claim_name_content(spec: dict[str, Any]) -> dict[str, Any]:
    """What a claim template's name hashes, since the API server never changes its spec in place: the spec less the
    allocationMode the server writes anyway. A template that says it is the same object as one that doesn't, and
    keeps its name: a new name would restart every pod that claims through it."""
    requests = [
        {**r, "exactly": {k: v for k, v in r["exactly"].items() if (k, v) != ("allocationMode", ALLOCATION_MODE)}}
        for r in spec["spec"]["devices"]["requests"]
    ]
    return {"spec": {"devices": {"requests": requests}}}


def env_list(entries: Optional[list[EnvVar]]) -> list[dict[str, Any]]:
    return [to_plain(e) for e in entries or []]


def _probe(port: int, timeout: int) -> dict[str, Any]:
    return {"httpGet": {"path": c.HEALTH_PATH, "port": port}, "periodSeconds": c.PROBE_PERIOD_SECONDS, "timeoutSeconds": timeout}


def _engine_probes(port: int, timeout: int) -> dict[str, dict[str, Any]]:
    """Startup gives the weights their load budget; then liveness restarts a wedged engine and readiness gates traffic."""
    probe = _probe(port, timeout)
    return {
        "startupProbe": probe | {"failureThreshold": c.STARTUP_FAILURE_THRESHOLD},
        "livenessProbe": probe | {"failureThreshold": c.LIVENESS_FAILURE_THRESHOLD},
        "readinessProbe": probe | {"failureThreshold": c.READINESS_FAILURE_THRESHOLD},
    }


def pod(replica: ModelReplica, record: EngineRecord, claim: Optional[str], options: Options) -> dict[str, Any]:
    """Labels, annotations and spec of one member's pods."""
    member = record.member
    labels: dict[str, str] = dict(member.template.metadata.labels or {}) if member.template.metadata else {}
    labels[c.LABEL_REPLICA] = names.label_value(replica.metadata.name)
    labels[c.LABEL_ENGINE] = record.engine_name
    labels[c.LABEL_ROLE] = record.position
    if record.serving:
        labels[c.LABEL_SERVING] = names.label_value(replica.metadata.name)
        labels[c.LABEL_ENGINE_TYPE] = record.engine.engine_type
        if record.pd_role:
            labels[c.LABEL_LLMD_ROLE] = record.pd_role
            labels[c.LABEL_LLMD_SERVING] = "true"
    annotations = dict(member.template.metadata.annotations or {}) if member.template.metadata else {}

    hub_cache = _downloads_to_hub_cache(replica, record.container)
    containers = [
        _engine_container(replica, record, claim, options, hub_cache) if k == record.container_index else _container(ct)
        for k, ct in enumerate(member.template.spec.containers)
    ]
    init_containers = [_pd_sidecar(record)] if record.pd_sidecar else []
    volumes: list[dict[str, Any]] = [{"name": c.SHM_VOLUME, "emptyDir": {"medium": "Memory"}}]
    if replica.spec.model_cache_ref:
        volumes.append({"name": c.MODEL_CACHE_VOLUME, "persistentVolumeClaim": {"claimName": replica.spec.model_cache_ref.name}})
    elif hub_cache:
        volumes.append({"name": c.HUB_CACHE_VOLUME, "emptyDir": {"sizeLimit": options.hub_cache_size}})
    return {
        "labels": labels,
        "annotations": annotations,
        "termination_grace_period": c.ENGINE_TERMINATION_GRACE_SECONDS,
        # The platform's settings: a pod reference each, and an affinity that a node must satisfy as well as
        # the nodeSelector (the scheduler ANDs the two, so neither can widen the other).
        "service_account": options.service_account,
        "priority_class": options.priority_class,
        "node_selector": {options.node_pool_label: member.node_pool_name},
        "affinity": _affinity(options.affinity) if options.affinity else None,
        "tolerations": [toleration_object(t) for t in options.tolerations],
        "image_pull_secrets": [{"name": s.name} for s in member.template.spec.image_pull_secrets or []],
        "claims": [{"name": c.DEVICE_CLAIM, "resourceClaimTemplateName": claim}] if claim else [],
        "init_containers": init_containers,
        "containers": containers,
        "volumes": volumes,
    }


@functools.lru_cache(maxsize=8)
def _affinity(text: str) -> dict[str, Any]:
    """An affinity setting's value, decoded once a run (Options keep it as JSON text); the templates only read it."""
    decoded: dict[str, Any] = json.loads(text)
    return decoded


def _downloads_to_hub_cache(replica: ModelReplica, container: Container) -> bool:
    """Whether the engine downloads its model into our hub cache: no model cache, and no hub cache of the user's."""
    return not replica.spec.model_cache_ref and not any(e.name in c.HUB_CACHE_ENVS for e in container.env or [])


def _pd_sidecar(record: EngineRecord) -> dict[str, Any]:
    """The decode pod's pd-sidecar, a native sidecar (restartPolicy: Always), as llm-d-modelservice renders it.

    It starts before the engine and stops after it, so it proxies every request the engine is
    still finishing while the pod terminates. Its GET /health answers 200 by itself
    (pkg/sidecar/proxy/proxy.go), so it says the proxy is up; the engine's own probes say the rest.
    """
    return {
        "name": c.PD_SIDECAR_CONTAINER,
        "image": c.PD_SIDECAR_IMAGE,
        "restartPolicy": "Always",
        # Plain HTTP inside the pod, as llm-d's guides run it: the gateway's hop is the picker's business.
        "args": ["--secure-proxy=false", f"--kv-connector={record.pd_connector}", f"--vllm-port={record.port}"],
        "env": [],
        "ports": [{"name": c.PD_SIDECAR_PORT_NAME, "containerPort": c.PD_SIDECAR_PORT, "protocol": "TCP"}],
        "probes": {"readinessProbe": _probe(c.PD_SIDECAR_PORT, c.PD_SIDECAR_PROBE_TIMEOUT_SECONDS)},
        "resources": {},
        "volumeMounts": [],
    }


def _container(container: Container) -> dict[str, Any]:
    """A container of the user's other than the engine: as it was given."""
    values: dict[str, Any] = {"name": container.name, "image": container.image}
    if container.command is not None:
        values["command"] = list(container.command)
    if container.args is not None:
        values["args"] = list(container.args)
    probes: dict[str, Any] = {"readinessProbe": to_plain(container.readiness_probe)} if container.readiness_probe else {}
    values.update(
        env=env_list(container.env),
        ports=[to_plain(p) | {"protocol": "TCP"} for p in container.ports or []],
        probes=probes,
        resources=to_plain(container.resources) if container.resources else {},
        volumeMounts=[],
    )
    return values


def _engine_container(
    replica: ModelReplica, record: EngineRecord, claim: Optional[str], options: Options, hub_cache: bool
) -> dict[str, Any]:
    """The engine container: the user's, told what the record says it must be told, with our ports, probes and mounts."""
    container = record.container
    values: dict[str, Any] = {"name": container.name, "image": container.image}
    command = record.command if record.command is not None else container.command
    if command is not None:
        values["command"] = list(command)
    args = [*record.leading_args, *(container.args or []), *record.trailing_args]
    ports = [to_plain(p) | {"protocol": "TCP"} for p in container.ports or []]
    env = [e.plain() for e in record.env] + env_list(container.env)
    if hub_cache:
        env.insert(len(record.env), {"name": c.HUB_HOME_ENV, "value": c.HUB_CACHE_PATH})
    resources = to_plain(container.resources) if container.resources else {}
    probes: dict[str, Any] = {"readinessProbe": to_plain(container.readiness_probe)} if container.readiness_probe else {}
    if record.serving:
        assert record.port is not None, "validated before planning"
        ports = [{"name": c.SERVING_PORT_NAME, "containerPort": record.port, "protocol": "TCP"}] + ports
        probes = _engine_probes(record.port, record.engine.health_timeout_seconds)
        values["lifecycle"] = {"preStop": {"sleep": {"seconds": c.ENGINE_PRESTOP_SLEEP_SECONDS}}}
    if claim:
        resources["claims"] = [{"name": c.DEVICE_CLAIM}]
    mounts: list[dict[str, Any]] = [{"name": c.SHM_VOLUME, "mountPath": c.SHM_PATH}]
    if replica.spec.model_cache_ref:
        # The cache is filled by Modelplane's ModelCache job; engines only read it.
        mounts.append({"name": c.MODEL_CACHE_VOLUME, "mountPath": c.MODEL_CACHE_PATH, "readOnly": True})
    elif hub_cache:
        mounts.append({"name": c.HUB_CACHE_VOLUME, "mountPath": c.HUB_CACHE_PATH})
    if container.args is not None or args:
        values["args"] = args
    values.update(env=env, ports=ports, probes=probes, resources=resources, volumeMounts=mounts)
    if options.capabilities:
        values["securityContext"] = {"capabilities": {"add": list(options.capabilities)}}
    return values
