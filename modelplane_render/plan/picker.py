"""The endpoint picker: its Deployment's values and its EndpointPickerConfig."""

from __future__ import annotations

import hashlib
from typing import Any, Optional

from .. import constants as c
from .. import names
from ..facts.picker import (
    DECODE_ACTIVE_WEIGHT,
    DECODE_PREFIX_WEIGHT,
    KV_CACHE_WEIGHT,
    LIVENESS_SERVICE,
    PARSERS,
    PICKER_MAX_SURGE,
    PICKER_MAX_UNAVAILABLE,
    PICKER_MIN_READY_SECONDS,
    PREFIX_WEIGHT,
    QUEUE_WEIGHT,
    READINESS_SERVICE,
    TERMINATION_GRACE_SECONDS,
    TRACING_FLAG,
    prefix_block_tokens,
)
from ..facts.registry import EngineRecord
from ..model import ModelReplica, PickerContainer, to_plain
from ..yamlio.libyaml import write_plain
from .pods import env_list


def _picker_config(replica: ModelReplica, pool_member: EngineRecord) -> dict[str, Any]:
    """The EndpointPickerConfig: the user's whole config, or llm-d's defaults for the mode.

    The prefix blocks follow the block size of the engine the pool sends to (pool_member).

    Every parameter written here takes effect at llm-d-router v0.9.0 (facts.picker says why each is
    what it is); the rest are the picker's own defaults, left out so they can't mislead.
    """
    serving = replica.spec.serving
    if serving and serving.endpoint_picker and serving.endpoint_picker.config is not None:
        return serving.endpoint_picker.config
    pd = pool_member.pd_role is not None
    plugins: list[dict[str, Any]] = [
        {
            "type": "approx-prefix-cache-producer",
            "parameters": {"autoTune": True, "blockSizeTokens": prefix_block_tokens(pool_member.block_size)},
        },
        {"type": "prefix-cache-scorer"},
        {"type": "queue-scorer"},
        {"type": "kv-cache-utilization-scorer"},
        {"type": "max-score-picker"},
    ]
    # The loader's own weights (pkg/epp/config/loader/defaults.go), which llm-d's chart writes too.
    scorers = [
        {"pluginRef": "max-score-picker"},
        {"pluginRef": "queue-scorer", "weight": QUEUE_WEIGHT},
        {"pluginRef": "kv-cache-utilization-scorer", "weight": KV_CACHE_WEIGHT},
        {"pluginRef": "prefix-cache-scorer", "weight": PREFIX_WEIGHT},
    ]
    if not pd:
        profiles = [{"name": "default", "plugins": scorers}]
    else:
        plugins += [
            {"type": "active-request-scorer"},
            {"type": "prefill-filter"},
            {"type": "decode-filter"},
            {"type": "prefix-based-pd-decider", "parameters": {"nonCachedTokens": 16}},
            {"type": "disagg-profile-handler", "parameters": {"deciders": {"prefill": "prefix-based-pd-decider"}}},
        ]
        decode = [
            {"pluginRef": "max-score-picker"},
            {"pluginRef": "active-request-scorer", "weight": DECODE_ACTIVE_WEIGHT},
            {"pluginRef": "prefix-cache-scorer", "weight": DECODE_PREFIX_WEIGHT},
        ]
        profiles = [
            {"name": "prefill", "plugins": [{"pluginRef": "prefill-filter"}] + scorers},
            {"name": "decode", "plugins": [{"pluginRef": "decode-filter"}] + decode},
        ]
    plugins += [{"type": parser} for parser in PARSERS]
    return {
        "apiVersion": c.PICKER_CONFIG_API,
        "kind": "EndpointPickerConfig",
        "plugins": plugins,
        "schedulingProfiles": profiles,
        "requestHandler": {"parsers": [{"pluginRef": parser} for parser in PARSERS]},
    }


def picker_config_text(replica: ModelReplica, pool_member: EngineRecord) -> str:
    return _config_yaml(_picker_config(replica, pool_member))


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
        text = _CONFIG_TEXT[key] = write_plain(config)
    return text


def picker_deployment(
    replica: ModelReplica, picker: str, pool: str, config_text: str, plaintext: bool, requests: tuple[tuple[str, str], ...]
) -> dict[str, Any]:
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
        f"--secure-serving={'false' if plaintext else 'true'}",
    ]
    user_args = list(user.args or [] if user else [])
    if not any(arg.startswith(TRACING_FLAG) for arg in user_args):
        args.append(f"{TRACING_FLAG}=false")
    args += user_args
    # The pool's namespace comes from the downward API, not a literal, so a kustomize
    # `namespace:` overlay can never leave the picker watching the old one.
    env = [
        {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
    ] + env_list(user.env if user else None)
    container: dict[str, Any] = {
        "name": user.name if user else c.PICKER_CONTAINER,
        "image": user.image if user else c.PICKER_IMAGE,
        "args": args,
        "env": env,
        "resources": to_plain(user.resources) if user and user.resources else ({"requests": dict(requests)} if requests else {}),
    }
    if user and user.command is not None:
        container["command"] = list(user.command)
    checksum = hashlib.sha256(config_text.encode("utf-8")).hexdigest()
    return {
        "replicas": c.PICKER_REPLICAS,
        "rolling_update": {"maxSurge": PICKER_MAX_SURGE, "maxUnavailable": PICKER_MAX_UNAVAILABLE},
        "min_ready_seconds": PICKER_MIN_READY_SECONDS,
        "selector": {c.LABEL_PICKER_APP: picker},
        "pod_labels": {c.LABEL_PICKER_APP: picker, c.LABEL_REPLICA: names.label_value(replica.metadata.name)},
        "pod_annotations": {c.ANNOTATION_PICKER_CHECKSUM: checksum},
        "service_account": picker,
        "config_map": picker,
        "container": container,
        "image_pull_secrets": pull_secrets,
        "termination_grace_period": TERMINATION_GRACE_SECONDS,
        "probe_services": {"liveness": LIVENESS_SERVICE, "readiness": READINESS_SERVICE},
        "ports": {"grpc": c.PICKER_GRPC_PORT, "health": c.PICKER_HEALTH_PORT, "metrics": c.PICKER_METRICS_PORT},
        "config_dir": c.PICKER_CONFIG_DIR,
    }
