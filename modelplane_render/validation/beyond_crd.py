"""Checks beyond the CRD: values the CRD accepts but that would be illegal where they land.

A `nodePoolName` that is not a label value becomes an invalid `nodeSelector`; a sidecar port
that is the engine's port makes a pod the API server refuses. Each is reported at its source,
like any other error, rather than emitted for the cluster to refuse. This is the one list of
such checks; the API-server differential test treats exactly these as expected disagreements
between the CRD and us (see CHECKS_BEYOND_CRD).
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import constants as c
from .. import names
from ..errors import FieldPath, Finding, MapKey
from ..facts.flags import has_flag
from ..facts.gangs import accelerators
from ..facts.picker import PICKER_ENV, PICKER_FLAGS
from ..facts.registry import RESERVED_ENV, EngineRecord, ResolvedReplica, resolve_replica
from ..model import Container, EngineMember, ModelReplica
from ..yamlio.document import Document

# The names of the checks, for the differential test and the docs.
CHECKS_BEYOND_CRD = (
    "replica-name",
    "replica-namespace",
    "replica-labels",
    "engine-name",
    "node-pool-label-value",
    "device-request-name",
    "device-class-name",
    "object-references",
    "env-reserved",
    "ports",
    "prefill-decode-ports",
    "unified-ports",
    "picker-args",
    "engine-command",
)

_REFERENCE_MESSAGE = "must be a DNS subdomain (lowercase letters, digits, '-' and '.'), as the name of a Kubernetes object"


def check_replica(replica: ModelReplica, document: Document, namespace: str | None) -> list[Finding]:
    errors: list[Finding] = []

    def fail(path: FieldPath, message: str) -> None:
        errors.append(document.error(path, message))

    meta = replica.metadata
    if not names.DNS_1035.match(meta.name):
        fail(
            ("metadata", "name"),
            "must start with a lowercase letter and hold only lowercase letters, digits and '-': "
            "it names the replica's Services and LeaderWorkerSets, which must be DNS-1035 labels",
        )
    if not (meta.namespace or namespace):
        fail(
            ("metadata",),
            "the replica has no namespace, and its picker's RoleBinding needs one: set metadata.namespace, or a default "
            "namespace (--namespace; Argo CD: the Application's destination; kustomize: the RenderConfig's spec.namespace)",
        )
    for key in meta.labels:
        if key.startswith(c.RESERVED_LABEL_PREFIX):
            errors.append(
                document.error(
                    ("metadata", "labels", MapKey(key)),
                    "the modelplane.ai/ label prefix is reserved for labels modelplane-render sets",
                    at_key=True,
                )
            )

    spec = replica.spec
    for i, engine in enumerate(spec.engines):
        epath: FieldPath = ("spec", "engines", i)
        if not names.DNS_1123_LABEL.match(engine.name):
            fail(epath + ("name",), "must hold only lowercase letters, digits and '-': it names the engine's LeaderWorkerSet")
        for j, member in enumerate(engine.members):
            errors.extend(_check_member(member, epath + ("members", j), document))
    if spec.model_cache_ref and not names.DNS_1123_SUBDOMAIN.match(spec.model_cache_ref.name):
        fail(("spec", "modelCacheRef", "name"), _REFERENCE_MESSAGE + " (a PersistentVolumeClaim)")
    resolved = resolve_replica(replica)
    errors.extend(_check_ports(replica, resolved, document))
    errors.extend(_check_engine_commands(resolved, document))
    errors.extend(_engine_refusals(resolved, document))
    errors.extend(_check_gpu_less_members(resolved, document))
    errors.extend(_check_kv_transfer(resolved, document))
    errors.extend(_check_picker(replica, document))
    return errors


def _check_member(member: EngineMember, mpath: FieldPath, document: Document) -> Iterator[Finding]:
    if len(member.node_pool_name) > names.LABEL_VALUE_MAX or not names.LABEL_VALUE.match(member.node_pool_name):
        yield document.error(
            mpath + ("nodePoolName",),
            "must be a valid label value (at most 63 letters, digits, '-', '_' or '.', starting and ending "
            "with a letter or digit): it becomes the pods' modelplane.ai/pool node selector",
        )
    for k, request in enumerate(member.device_requests or []):
        if not names.DNS_1123_LABEL.match(request.name):
            yield document.error(
                mpath + ("deviceRequests", k, "name"),
                "must be a DNS label (lowercase letters, digits and '-'): it names a DRA device request",
            )
        if not names.DNS_1123_SUBDOMAIN.match(request.device_class_name):
            yield document.error(mpath + ("deviceRequests", k, "deviceClassName"), _REFERENCE_MESSAGE + " (a DeviceClass)")
    spec = member.template.spec
    for k, secret in enumerate(spec.image_pull_secrets or []):
        if not names.DNS_1123_SUBDOMAIN.match(secret.name):
            yield document.error(mpath + ("template", "spec", "imagePullSecrets", k, "name"), _REFERENCE_MESSAGE + " (a Secret)")
    for k, container in enumerate(spec.containers):
        cpath = mpath + ("template", "spec", "containers", k)
        if container.name == c.ENGINE_CONTAINER:
            for n, env in enumerate(container.env or []):
                if env.name in RESERVED_ENV:
                    yield document.error(
                        cpath + ("env", n, "name"), f"{env.name} is set by modelplane-render on the engine container; remove it"
                    )


def _check_engine_commands(resolved: ResolvedReplica, document: Document) -> Iterator[Finding]:
    """An engine whose image starts no server by itself must say what to run."""
    for i, records in enumerate(resolved.records):
        for j, record in enumerate(records):
            facts = record.engine
            if record.container.command is None and not facts.image_serves:
                yield document.error(
                    ("spec", "engines", i, "members", j, "template", "spec", "containers", record.container_index, "image"),
                    f"{facts.name}'s images start no server by themselves: set the engine's command, "
                    f"e.g. [{', '.join(facts.server_command)}]",
                )


def _engine_refusals(resolved: ResolvedReplica, document: Document) -> Iterator[Finding]:
    """What each member's engine can't run as written (facts.registry: a gang it can't join, sizes its devices don't fit)."""
    for i, records in enumerate(resolved.records):
        for j, record in enumerate(records):
            cpath: FieldPath = ("spec", "engines", i, "members", j, "template", "spec", "containers", record.container_index)
            for where, message in record.refusals:
                yield document.error(cpath + tuple(where), message)  # type: ignore[arg-type]


def _check_gpu_less_members(resolved: ResolvedReplica, document: Document) -> Iterator[Finding]:
    """A gang member that claims no GPU beside members that do: the CRD allows it (a Leader that only coordinates),
    but no engine we run is such an engine. Each pod of a gang runs ranks, and the one that starts the engine needs a
    GPU to start at all: vLLM finds no platform without one ("Failed to infer device type", vllm/config/device.py),
    on the Ray backend as on mp; SGLang puts rank 0 on the Leader."""
    for i, records in enumerate(resolved.records):
        if not any(accelerators(r.member) for r in records):
            continue
        for j, record in enumerate(records):
            if accelerators(record.member) or _names_a_gpu_resource(record.member):
                continue
            yield document.error(
                ("spec", "engines", i, "members", j, "role"),
                f"this {record.position} claims no GPU (no deviceRequests of a gpu.* DeviceClass, no GPU resource) while its "
                f"engine's other members do: {record.engine.name} runs ranks on every pod of a gang, and the pod that starts "
                "it needs a GPU to start at all (vLLM stops at 'Failed to infer device type', on the Ray backend too); "
                "claim the GPUs its ranks use",
            )


def _names_a_gpu_resource(member: EngineMember) -> bool:
    """Whether a container of the member asks for GPUs the device plugin way (nvidia.com/gpu, amd.com/gpu)."""
    return any(
        "gpu" in name
        for container in member.template.spec.containers
        if container.resources
        for amounts in (container.resources.limits, container.resources.requests)
        for name in amounts or {}
    )


def _check_kv_transfer(resolved: ResolvedReplica, document: Document) -> Iterator[Finding]:
    """The prefill and decode engines must move KV blocks one way: the pd-sidecar speaks one protocol to both."""
    if not resolved.prefill_decode:
        return
    sides = [(i, r) for i, records in enumerate(resolved.records) for r in records if r.serving and r.pd_connector]
    decode = next((r.pd_connector for _, r in sides if r.pd_role == "decode"), None)
    for i, record in sides:
        if record.pd_role == "prefill" and decode and record.pd_connector != decode:
            yield document.error(
                ("spec", "engines", i),
                f"the prefill engine's KV transfer speaks {record.pd_connector}, the decode engine's {decode}: "
                "the pd-sidecar in front of decode drives one protocol for both; give both engines one connector",
            )


def _port_owner(container: Container) -> str:
    return f"container {container.name}"


def _check_ports(replica: ModelReplica, resolved: ResolvedReplica, document: Document) -> Iterator[Finding]:
    """Every pod's ports are unique by number and by name; the serving port agrees with the pool."""
    prefill_decode = resolved.prefill_decode
    serving_ports: dict[int, tuple[int, FieldPath]] = {}
    for i, records in enumerate(resolved.records):
        for j, record in enumerate(records):
            yield from _check_pod_ports(record, ("spec", "engines", i, "members", j), document)
            if record.serving:
                port = record.port
                arg_path: FieldPath = ("spec", "engines", i, "members", j, "template", "spec", "containers", record.container_index, "args")
                if port is None:
                    if record.port_arg is not None:  # else a script's port, refused with the engine's refusals
                        yield document.error(arg_path + (record.port_arg,), "--port must be a port number from 1 to 65535")
                    continue
                engine_path = arg_path + (record.port_arg,) if record.port_arg is not None else ("spec", "engines", i)
                serving_ports.setdefault(port, (i, engine_path))
                if record.pd_role == "prefill" and port != c.SERVING_PORT:
                    yield document.error(
                        engine_path,
                        f"under PrefillDecode the Prefill engine must serve on port {c.SERVING_PORT}, the port the "
                        f"InferencePool targets (the decode pod's pd-sidecar listens there too); it serves on {port}",
                    )
                if record.pd_role == "decode" and port == c.PD_SIDECAR_PORT:
                    yield document.error(
                        engine_path,
                        f"under PrefillDecode the Decode engine can't serve on port {c.PD_SIDECAR_PORT}: the pd-sidecar "
                        f"owns it (leave --port out, and modelplane-render serves it on {record.our_port})",
                    )
    if not prefill_decode and len(serving_ports) > 1:
        (first_port, (first, _)), *others = sorted(serving_ports.items(), key=lambda item: item[1][0])
        for port, (_, where_set) in others:
            yield document.error(
                where_set,
                f"serves on port {port} but engine {replica.spec.engines[first].name} serves on {first_port}: "
                "the InferencePool targets one port, so every engine of a Unified replica must serve on the same one",
            )


def _check_pod_ports(record: EngineRecord, mpath: FieldPath, document: Document) -> Iterator[Finding]:
    by_number: dict[int, str] = {}
    by_name: dict[str, str] = {}
    sidecar = record.pd_sidecar
    if record.serving:
        if record.port is not None:
            by_number[record.port] = "the engine's serving port"
        by_name[c.SERVING_PORT_NAME] = "the engine's serving port"
        if sidecar:
            by_number[c.PD_SIDECAR_PORT] = "the pd-sidecar's port"
            by_name[c.PD_SIDECAR_PORT_NAME] = "the pd-sidecar's port"
    for k, container in enumerate(record.member.template.spec.containers):
        cpath = mpath + ("template", "spec", "containers", k)
        if sidecar and container.name == c.PD_SIDECAR_CONTAINER:
            yield document.error(
                cpath + ("name",), f"{c.PD_SIDECAR_CONTAINER} is the name of the container modelplane-render adds to a decode pod"
            )
        for p, declared in enumerate(container.ports or []):
            owner = by_number.get(declared.container_port)
            if owner:
                yield document.error(cpath + ("ports", p, "containerPort"), f"port {declared.container_port} is already {owner}")
            else:
                by_number[declared.container_port] = f"used by {_port_owner(container)}"
            if declared.name:
                owner = by_name.get(declared.name)
                if owner:
                    yield document.error(cpath + ("ports", p, "name"), f'port name "{declared.name}" is already {owner}')
                else:
                    by_name[declared.name] = f"used by {_port_owner(container)}"


def _check_picker(replica: ModelReplica, document: Document) -> Iterator[Finding]:
    serving = replica.spec.serving
    if not serving or not serving.endpoint_picker:
        return
    container = serving.endpoint_picker.template.spec.containers[0]
    cpath: FieldPath = ("spec", "serving", "endpointPicker", "template", "spec", "containers", 0)
    for n, arg in enumerate(container.args or []):
        for flag, follows in PICKER_FLAGS.items():
            if has_flag([arg], flag):
                yield document.error(cpath + ("args", n), f"{flag} is set by modelplane-render ({follows}); remove it")
    for n, env in enumerate(container.env or []):
        if env.name in PICKER_ENV:
            yield document.error(cpath + ("env", n, "name"), f"{env.name} is set by modelplane-render on the picker; remove it")
    for k, secret in enumerate(serving.endpoint_picker.template.spec.image_pull_secrets or []):
        if not names.DNS_1123_SUBDOMAIN.match(secret.name):
            yield document.error(
                ("spec", "serving", "endpointPicker", "template", "spec", "imagePullSecrets", k, "name"), _REFERENCE_MESSAGE + " (a Secret)"
            )
