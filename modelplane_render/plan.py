"""Stage 3, plan: every decision about what a replica becomes, as pure functions of the model.

The plan says which objects exist, what each is named, which pods carry which labels, ports,
env, volumes and claims. Templates then only give these decisions their YAML shape.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Optional

from . import constants as c
from . import names
from .flags import find_flag, has_flag, small_decimal
from .model import Container, Engine, EngineMember, EnvVar, ModelReplica, PickerContainer, to_plain
from .options import Options

# Flags of the picker that follow the pool and the config: a user repeating one is an error.
PICKER_FLAGS = (
    "--pool-name",
    "--pool-namespace",
    "--pool-group",
    "--config-file",
    "--grpc-port",
    "--grpc-health-port",
    "--metrics-port",
    "--metrics-endpoint-auth",
    "--ha-enable-leader-election",
)
PICKER_ENV = ("NAMESPACE", "POD_NAME")


@dataclass
class PlannedObject:
    """One object to render: the template that gives it shape and the values it needs."""

    api_version: str
    kind: str
    name: str
    namespace: str
    template: str
    values: dict[str, Any]
    source: str = ""


@dataclass
class ReplicaPlan:
    replica: str
    namespace: str
    objects: list[PlannedObject] = field(default_factory=list)


def member_is_serving(member: EngineMember) -> bool:
    """Standalone pods and Leader pods serve; workers only join the leader's gang."""
    return member.role in ("Standalone", "Leader")


def engine_container(member: EngineMember) -> tuple[int, Container]:
    (found,) = [(i, ct) for i, ct in enumerate(member.template.spec.containers) if ct.name == c.ENGINE_CONTAINER]
    return found


def engine_port_spec(engine: Engine, member: EngineMember, prefill_decode: bool) -> tuple[Optional[int], Optional[tuple[int, int]]]:
    """The port the engine serves on, and where in the args it was set (None: the default).

    The engine's own `--port` wins; else 8000, or 8001 for a decode engine, whose pod's
    port 8000 belongs to the pd-sidecar. A `--port` that is not a port number gives None.
    """
    index, container = engine_container(member)
    found = find_flag(container.args or [], "--port")
    if found is None:
        return (c.DECODE_PORT if prefill_decode and engine.phase == "Decode" else c.SERVING_PORT), None
    where = (index, found[0])
    port = small_decimal(found[1])
    if port is None or not 1 <= port <= 65535:
        return None, where
    return port, where


def serving_port(engine: Engine, member: EngineMember, prefill_decode: bool) -> int:
    port, _ = engine_port_spec(engine, member, prefill_decode)
    assert port is not None, "validated before planning"
    return port


def block_size(engine: Engine) -> int:
    """The KV block size the picker's prefix index must match: vLLM `--block-size`, SGLang `--page-size`."""
    member = next(m for m in engine.members if member_is_serving(m))
    _, container = engine_container(member)
    found = find_flag(container.args or [], "--block-size", "--page-size")
    size = small_decimal(found[1]) if found else None
    return size if size else c.DEFAULT_BLOCK_SIZE


def is_prefill_decode(replica: ModelReplica) -> bool:
    return replica.spec.serving is not None and replica.spec.serving.mode == "PrefillDecode"


def plan_replica(replica: ModelReplica, options: Options, source: str) -> ReplicaPlan:
    name = replica.metadata.name
    namespace = replica.metadata.namespace or options.namespace
    assert namespace, "a replica without a namespace is rejected before planning"
    pd = is_prefill_decode(replica)
    meta_labels = _object_labels(replica)
    meta_annotations = dict(replica.metadata.annotations)
    plan = ReplicaPlan(name, namespace)

    def add(api: str, kind: str, obj_name: str, template: str, **values: Any) -> None:
        values.setdefault("labels", meta_labels)
        values.setdefault("annotations", meta_annotations)
        plan.objects.append(
            PlannedObject(api, kind, obj_name, namespace, template, {"name": obj_name, "namespace": namespace, **values}, source)
        )

    picker = names.picker_name(name)
    pool = names.pool_name(name)
    config_text = _picker_config_text(replica)
    add("v1", "ServiceAccount", picker, "serviceaccount.yaml.j2")
    add("rbac.authorization.k8s.io/v1", "Role", picker, "role.yaml.j2")
    add("rbac.authorization.k8s.io/v1", "RoleBinding", picker, "rolebinding.yaml.j2", service_account=picker)
    add("v1", "ConfigMap", picker, "configmap.yaml.j2", data={c.PICKER_CONFIG_KEY: config_text})

    workloads: list[tuple[str, dict[str, Any]]] = []
    for engine in replica.spec.engines:
        pods: dict[str, dict[str, Any]] = {}
        for member in engine.members:
            claim = None
            if member.device_requests:
                claim = names.claim_template_name(name, engine.name, member.role)
                add(c.DRA_API, "ResourceClaimTemplate", claim, "resourceclaimtemplate.yaml.j2", requests=_device_requests(member))
            pods[member.role] = _pod(replica, engine, member, claim, pd)
        workers = engine.member("Worker")
        size = 1 + (workers.worker.nodes if workers and workers.worker else 0)
        workloads.append(
            (
                names.workload_name(name, engine.name),
                {
                    "replicas": engine.copies,
                    "size": size,
                    "leader": pods.get("Leader"),
                    "worker": pods.get("Worker") or pods["Standalone"],
                    "engine_label": engine.name,
                },
            )
        )
    for workload, values in workloads:
        add(c.LWS_API, "LeaderWorkerSet", workload, "leaderworkerset.yaml.j2", **values)

    serving_engine = _decode_engine(replica) if pd else replica.spec.engines[0]
    serving_member = next(m for m in serving_engine.members if member_is_serving(m))
    target_port = c.PD_SIDECAR_PORT if pd else serving_port(serving_engine, serving_member, pd)
    add(
        c.POOL_API,
        "InferencePool",
        pool,
        "inferencepool.yaml.j2",
        selector={c.LABEL_SERVING: names.label_value(name)},
        target_port=target_port,
        picker=picker,
        picker_port=c.PICKER_GRPC_PORT,
    )
    add(
        "v1",
        "Service",
        picker,
        "service.yaml.j2",
        selector={c.LABEL_PICKER_APP: picker},
        port=c.PICKER_GRPC_PORT,
        port_name=c.PICKER_GRPC_SERVICE_PORT_NAME,
    )
    add("apps/v1", "Deployment", picker, "deployment.yaml.j2", **_picker_deployment(replica, picker, pool, config_text))
    add("policy/v1", "PodDisruptionBudget", picker, "poddisruptionbudget.yaml.j2", selector={c.LABEL_PICKER_APP: picker})
    if options.gateway:
        gateway_namespace, gateway_name = options.gateway
        add(
            c.ROUTE_API,
            "HTTPRoute",
            names.route_name(name),
            "httproute.yaml.j2",
            gateway_namespace=gateway_namespace,
            gateway_name=gateway_name,
            # No namespace in the path: a string kustomize's namespace overlay could not rewrite.
            # Replica names are unique per cluster in Modelplane (cluster and index are in them).
            path_prefix=f"/{name}/",
            pool=pool,
        )
    return plan


def _object_labels(replica: ModelReplica) -> dict[str, str]:
    """The replica's own labels reach every object's metadata (never a selector), then ours."""
    labels = dict(replica.metadata.labels)
    labels[c.LABEL_MANAGED_BY] = c.MANAGED_BY
    labels[c.LABEL_REPLICA] = names.label_value(replica.metadata.name)
    return labels


def _decode_engine(replica: ModelReplica) -> Engine:
    return next(e for e in replica.spec.engines if e.phase == "Decode")


def _device_requests(member: EngineMember) -> list[dict[str, Any]]:
    requests = []
    for request in member.device_requests or []:
        exactly: dict[str, Any] = {"deviceClassName": request.device_class_name, "count": request.count}
        selectors = [{"cel": {"expression": s.cel}} for s in request.selectors or [] if s.cel]
        if selectors:
            exactly["selectors"] = selectors
        requests.append({"name": request.name, "exactly": exactly})
    return requests


def _env(entries: Optional[list[EnvVar]]) -> list[dict[str, Any]]:
    return [to_plain(e) for e in entries or []]


def _probe(port: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": c.HEALTH_PATH, "port": port},
        "initialDelaySeconds": c.PROBE_INITIAL_DELAY_SECONDS,
        "periodSeconds": c.PROBE_PERIOD_SECONDS,
        "timeoutSeconds": c.PROBE_TIMEOUT_SECONDS,
    }


def _pod(replica: ModelReplica, engine: Engine, member: EngineMember, claim: Optional[str], pd: bool) -> dict[str, Any]:
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
    env = _env(container.env)
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


def _picker_config(replica: ModelReplica) -> dict[str, Any]:
    """The EndpointPickerConfig: the user's whole config, or llm-d's defaults for the mode.

    The prefix index's block size must equal the engine's KV block size (vLLM --block-size,
    SGLang --page-size), or prefix-aware routing silently degrades: the first engine's under
    Unified, the decode engine's under PrefillDecode.
    """
    serving = replica.spec.serving
    if serving and serving.endpoint_picker and serving.endpoint_picker.config is not None:
        return serving.endpoint_picker.config
    pd = is_prefill_decode(replica)
    engine = _decode_engine(replica) if pd else replica.spec.engines[0]
    plugins: list[dict[str, Any]] = [
        {
            "type": "approx-prefix-cache-producer",
            "parameters": {
                "autoTune": False,
                "blockSizeTokens": block_size(engine),
                "maxPrefixBlocksToMatch": 256,
                "lruCapacityPerServer": 31250,
            },
        },
        {"type": "prefix-cache-scorer"},
        {"type": "queue-scorer"},
        {"type": "max-score-picker"},
    ]
    scorers = [
        {"pluginRef": "max-score-picker"},
        {"pluginRef": "prefix-cache-scorer", "weight": 2},
        {"pluginRef": "queue-scorer", "weight": 1},
    ]
    if not pd:
        profiles = [{"name": "default", "plugins": scorers}]
    else:
        plugins += [
            {"type": "disagg-headers-handler"},
            {"type": "prefill-filter"},
            {"type": "decode-filter"},
            {"type": "prefix-based-pd-decider", "parameters": {"nonCachedTokens": 16}},
            {"type": "disagg-profile-handler", "parameters": {"deciders": {"prefill": "prefix-based-pd-decider"}}},
        ]
        profiles = [
            {"name": "prefill", "plugins": [{"pluginRef": "prefill-filter"}] + scorers},
            {"name": "decode", "plugins": [{"pluginRef": "decode-filter"}] + scorers},
        ]
    return {"apiVersion": c.PICKER_CONFIG_API, "kind": "EndpointPickerConfig", "plugins": plugins, "schedulingProfiles": profiles}


def _picker_config_text(replica: ModelReplica) -> str:
    return _config_yaml(_picker_config(replica))


# Replicas of one shape share their picker config (the default, with one block size), and
# dumping it costs about a third of a millisecond: each distinct config is dumped once a run.
# repr() is the key, not JSON, because it tells 1 from "1" from True, in keys as in values; it
# can't see an object used twice (which PyYAML writes as an anchor), but _picker_config builds
# every config fresh from the model, so none is shared.
_CONFIG_TEXT: dict[str, str] = {}


def _config_yaml(config: dict[str, Any]) -> str:
    key = repr(config)
    text = _CONFIG_TEXT.get(key)
    if text is None:
        import yaml

        from .output import PlainDumper  # PyYAML's safe dumper, by a faster way

        text = _CONFIG_TEXT[key] = yaml.dump(config, Dumper=PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    return text


def _picker_deployment(replica: ModelReplica, picker: str, pool: str, config_text: str) -> dict[str, Any]:
    serving = replica.spec.serving
    user: Optional[PickerContainer] = None
    pull_secrets: list[dict[str, str]] = []
    if serving and serving.endpoint_picker:
        user = serving.endpoint_picker.template.spec.containers[0]
        pull_secrets = [{"name": s.name} for s in serving.endpoint_picker.template.spec.image_pull_secrets or []]
    args = [
        f"--pool-name={pool}",
        f"--pool-group={c.POOL_API.split('/')[0]}",
        f"--config-file={c.PICKER_CONFIG_DIR}/{c.PICKER_CONFIG_KEY}",
        f"--grpc-port={c.PICKER_GRPC_PORT}",
        f"--grpc-health-port={c.PICKER_HEALTH_PORT}",
        f"--metrics-port={c.PICKER_METRICS_PORT}",
        "--metrics-endpoint-auth=false",
        "--ha-enable-leader-election",
    ] + list(user.args or [] if user else [])
    # The pool's namespace comes from the downward API, not a literal, so a kustomize
    # `namespace:` overlay can never leave the picker watching the old one.
    env = [
        {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ] + _env(user.env if user else None)
    container: dict[str, Any] = {
        "name": user.name if user else c.PICKER_CONTAINER,
        "image": user.image if user else c.PICKER_IMAGE,
        "args": args,
        "env": env,
        "resources": to_plain(user.resources) if user and user.resources else {},
    }
    if user and user.command is not None:
        container["command"] = list(user.command)
    checksum = hashlib.sha256(config_text.encode("utf-8")).hexdigest()
    return {
        "replicas": c.PICKER_REPLICAS,
        "selector": {c.LABEL_PICKER_APP: picker},
        "pod_labels": {c.LABEL_PICKER_APP: picker, c.LABEL_REPLICA: names.label_value(replica.metadata.name)},
        "pod_annotations": {c.ANNOTATION_PICKER_CHECKSUM: checksum},
        "service_account": picker,
        "config_map": picker,
        "container": container,
        "image_pull_secrets": pull_secrets,
        "ports": {"grpc": c.PICKER_GRPC_PORT, "health": c.PICKER_HEALTH_PORT, "metrics": c.PICKER_METRICS_PORT},
        "config_dir": c.PICKER_CONFIG_DIR,
    }
