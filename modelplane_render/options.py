"""What a front end adds to the sources (the default namespace, a Gateway, the cluster to render for), and how each is read from text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from . import constants as c
from . import names
from .errors import UsageError

# (key, value or None, effect or None): a toleration as `KEY[=VALUE][:EFFECT]` says it, as kubectl taint does.
Toleration = tuple[str, Optional[str], Optional[str]]
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# What every engine pod tolerates unless told otherwise: the taint GPU node pools carry on GKE, EKS
# and AKS, and that NVIDIA's GPU operator documents.
DEFAULT_TOLERATIONS: tuple[Toleration, ...] = (("nvidia.com/gpu", None, "NoSchedule"),)
NO_TOLERATIONS = "none"


@dataclass(frozen=True)
class Options:
    namespace: Optional[str] = None
    gateway: Optional[tuple[str, str]] = None  # (namespace, name) of a Gateway for an HTTPRoute
    # Render only the replicas pinned to this InferenceCluster (spec.clusterName); the others are
    # still validated. None: every replica.
    cluster: Optional[str] = None
    # A render that yields no object from a replica is an error unless allowed: Argo CD prunes
    # every live object an app no longer renders.
    allow_empty: bool = False
    # The picker's ext-proc port serves TLS (a self-signed certificate) unless this says plaintext:
    # every common gateway speaks TLS to it; a few setups need plaintext (README: Gateways).
    picker_plaintext: bool = False
    # The node label whose value is a member's nodePoolName: the cluster's own node-pool label
    # (GKE: cloud.google.com/gke-nodepool, EKS: eks.amazonaws.com/nodegroup, AKS: kubernetes.azure.com/agentpool).
    node_pool_label: str = c.LABEL_POOL
    tolerations: tuple[Toleration, ...] = DEFAULT_TOLERATIONS

    def renders(self, cluster_name: object) -> bool:
        """Whether a replica pinned to this cluster (its spec.clusterName) renders in this run."""
        return self.cluster is None or cluster_name == self.cluster


def parse_namespace(value: str | None, source: str = "--namespace") -> str | None:
    if value is None or value == "":
        return None
    if not names.is_dns_label(value):
        raise UsageError(f"{source} {value!r} is not a namespace name (a DNS label: lowercase letters, digits and '-')")
    return value


def parse_cluster(value: str | None, source: str = "--cluster") -> str | None:
    """An InferenceCluster's name, as spec.clusterName holds it (any non-empty text without control characters)."""
    if value is None or value == "":
        return None
    if value != value.strip() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise UsageError(f"{source} {value!r} is not a cluster name: no leading or trailing space, no control character")
    return value


def parse_gateway(value: str | None, source: str = "--gateway") -> tuple[str, str] | None:
    if value is None or value == "":
        return None
    parts = value.split("/")
    if len(parts) != 2 or not all(names.is_dns_label(p) for p in parts):
        raise UsageError(f"{source} {value!r} must be NAMESPACE/NAME of a Gateway")
    return parts[0], parts[1]


def parse_node_pool_label(value: str | None, source: str = "--node-pool-label") -> str | None:
    """A node label key (None: the default)."""
    if value is None or value == "":
        return None
    if not names.QUALIFIED_NAME.match(value) or len(value) > 253 + 1 + 63:
        raise UsageError(f"{source} {value!r} is not a label key (an optional DNS-subdomain prefix and '/', then a name of at most 63)")
    return value


def parse_tolerations(values: list[str] | None, source: str = "--toleration") -> tuple[Toleration, ...] | None:
    """`KEY[=VALUE][:EFFECT]` each, or the one word `none` (None: the default)."""
    if not values:
        return None
    if values == [NO_TOLERATIONS]:
        return ()
    if NO_TOLERATIONS in values:
        raise UsageError(f"{source} {NO_TOLERATIONS} stands alone: it means no toleration at all")
    found: list[Toleration] = []
    for text in values:
        rest, _, effect = text.partition(":") if ":" in text else (text, "", "")
        key, equals, value = rest.partition("=")
        if effect and effect not in TAINT_EFFECTS:
            raise UsageError(f"{source} {text!r}: the effect must be one of {', '.join(TAINT_EFFECTS)} (or left out: every effect)")
        if not names.QUALIFIED_NAME.match(key):
            raise UsageError(f"{source} {text!r}: {key!r} is not a taint key (KEY[=VALUE][:EFFECT], e.g. amd.com/gpu:NoSchedule)")
        if equals and (not value or not names.LABEL_VALUE.match(value) or len(value) > names.LABEL_VALUE_MAX):
            raise UsageError(f"{source} {text!r}: {value!r} is not a taint value")
        found.append((key, value if equals else None, effect or None))
    return tuple(found)


def platform(node_pool_label: str | None, tolerations: tuple[Toleration, ...] | None) -> dict[str, Any]:
    """The Options fields a front end was given for the nodes (None: not given, so the default stays)."""
    given: dict[str, Any] = {}
    if node_pool_label is not None:
        given["node_pool_label"] = node_pool_label
    if tolerations is not None:
        given["tolerations"] = tolerations
    return given


def toleration_object(toleration: Toleration) -> dict[str, str]:
    """The pod's toleration: Equal for a KEY=VALUE, else Exists; the effect when one is given."""
    key, value, effect = toleration
    found = {"key": key, "operator": "Equal", "value": value} if value is not None else {"key": key, "operator": "Exists"}
    return found | ({"effect": effect} if effect else {})
