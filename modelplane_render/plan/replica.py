"""The objects a replica becomes, and what each is named (names.py holds the naming rules)."""

from __future__ import annotations

from typing import Any

from .. import constants as c
from .. import kinds, names
from ..facts.picker import ROLE_RULES
from ..facts.registry import resolve_replica
from ..model import ModelReplica
from ..options import Options
from . import ReplicaPlan
from .picker import picker_config_text, picker_deployment
from .pods import claim_name_content, claim_template_spec, pod


def plan_replica(replica: ModelReplica, options: Options, source: str) -> ReplicaPlan:
    name = replica.metadata.name
    namespace = replica.metadata.namespace or options.namespace
    assert namespace, "a replica without a namespace is rejected before planning"
    # Every member's engine, resolved once: what the pods, the pool and the picker's config read.
    resolved = resolve_replica(replica)
    pool_member = resolved.pool_member()
    meta_labels = _object_labels(replica)
    meta_annotations = dict(replica.metadata.annotations)
    plan = ReplicaPlan(name, namespace)

    def add(kind: kinds.OutputKind, obj_name: str, **values: Any) -> None:
        values.setdefault("labels", meta_labels)
        values.setdefault("annotations", meta_annotations)
        plan.add(kind, obj_name, {"name": obj_name, "namespace": namespace, **values}, source)

    picker = names.picker_name(name)
    pool = names.pool_name(name)
    config_text = picker_config_text(replica, pool_member)
    add(kinds.SERVICE_ACCOUNT, picker)
    add(kinds.ROLE, picker, rules=list(ROLE_RULES))
    add(kinds.ROLE_BINDING, picker, service_account=picker)
    add(kinds.CONFIG_MAP, picker, data={c.PICKER_CONFIG_KEY: config_text})

    workloads: list[tuple[str, dict[str, Any]]] = []
    for engine, records in zip(replica.spec.engines, resolved.records, strict=True):
        pods: dict[str, dict[str, Any]] = {}
        for record in records:
            claim = None
            if record.member.device_requests:
                spec = claim_template_spec(record.member)
                claim = names.claim_template_name(name, engine.name, record.position, claim_name_content(spec))
                add(
                    kinds.RESOURCE_CLAIM_TEMPLATE,
                    claim,
                    requests=spec["spec"]["devices"]["requests"],
                    annotations=_prune_last(meta_annotations),
                )
            pods[record.position] = pod(replica, record, claim, options)
        workloads.append(
            (
                names.workload_name(name, engine.name),
                {
                    # Autoscaled: no count at all, so neither apply mode writes one over the autoscaler's.
                    "replicas": None if options.autoscaled else engine.copies,
                    "size": records[0].gang_size,
                    "leader": pods.get("Leader"),
                    "worker": pods.get("Worker") or pods["Standalone"],
                    "engine_label": engine.name,
                },
            )
        )
    for workload, values in workloads:
        add(kinds.LEADER_WORKER_SET, workload, **values)

    target_port = c.PD_SIDECAR_PORT if resolved.prefill_decode else pool_member.port
    add(
        kinds.INFERENCE_POOL,
        pool,
        selector={c.LABEL_SERVING: names.label_value(name)},
        target_port=target_port,
        picker=picker,
        picker_port=c.PICKER_GRPC_PORT,
    )
    add(
        kinds.SERVICE,
        picker,
        selector={c.LABEL_PICKER_APP: picker},
        port=c.PICKER_GRPC_PORT,
        port_name=c.PICKER_GRPC_SERVICE_PORT_NAME,
    )
    add(
        kinds.DEPLOYMENT, picker, **picker_deployment(replica, picker, pool, config_text, options.picker_plaintext, options.picker_requests)
    )
    if options.gateway:
        gateway_namespace, gateway_name = options.gateway
        add(
            kinds.HTTP_ROUTE,
            names.route_name(name),
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


def _prune_last(annotations: dict[str, str]) -> dict[str, str]:
    """A claim template's annotations: Argo CD prunes an old one only after the rest of the sync is healthy.

    A changed device request is a new template (its name hashes its spec); the LeaderWorkerSet rolls
    onto it one group at a time, and a pod of the old revision recreated meanwhile (an eviction,
    RecreateGroupOnPodRestart) still names the old template. PruneLast deletes it in the sync's
    last wave, after the LeaderWorkerSet reads Healthy (argocd/health: every group updated and ready),
    so no pod can still need it; removing the replica still prunes every template it had.
    """
    given = annotations.get(c.ANNOTATION_ARGOCD_SYNC_OPTIONS, "")
    options = [o.strip() for o in given.split(",") if o.strip()]
    if c.ARGOCD_PRUNE_LAST not in options:
        options.append(c.ARGOCD_PRUNE_LAST)
    return annotations | {c.ANNOTATION_ARGOCD_SYNC_OPTIONS: ",".join(options)}
