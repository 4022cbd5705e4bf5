"""What a front end adds to the sources (the default namespace, a Gateway, the cluster to render for), and how each is read from text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from . import names
from .errors import UsageError


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
