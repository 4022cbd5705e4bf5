"""Every name pattern Kubernetes holds names to, and every name the output gives an object, by one rule.

The rule is upstream Modelplane's `child_name`: join the parts with `-`, keep a head, strip a
trailing `-`, append `-` and the first five hex digits of the SHA-256 of the whole joined
string. The hash is always there for hashed names (so a name never changes shape when an
input grows), and it comes from the inputs only, so output is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

HASH_LENGTH = 5
# A Service, and so the picker's and any DNS-1035 name, is at most 63 characters.
DNS_LABEL_MAX = 63
# LWS makes a StatefulSet per group named `<lws>-<group>` (groups up to 63, since copies <= 64),
# and a StatefulSet's name feeds its pods' `controller-revision-hash` label, `<sts>-<10 chars>`,
# which must stay <= 63; so a StatefulSet name stays <= 52 and an LWS name <= 49.
LWS_NAME_MAX = 49
LABEL_VALUE_MAX = 63

# `\Z`, not `$`: Python's `$` also matches before a final line break, which Kubernetes' Go regexps
# (and CEL's RE2) never do, so `team\n` would pass as a label key.
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?\Z")
DNS_1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
DNS_1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
# A label or annotation key: an optional DNS-subdomain prefix and `/`, then a name of at most 63.
QUALIFIED_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z"
)
DNS_SUBDOMAIN_MAX = 253
# A resource.Quantity as the API server reads one (apimachinery's quantity.go: a number, then a binary
# or decimal suffix or an exponent), e.g. 500m, 2, 16Gi, 1e3.
QUANTITY = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?\Z")


def is_qualified_name(value: str) -> bool:
    """A label, annotation or taint key: QUALIFIED_NAME, its prefix (a DNS subdomain) at most 253 characters."""
    prefix, slash, _ = value.rpartition("/")
    return (not slash or len(prefix) <= DNS_SUBDOMAIN_MAX) and QUALIFIED_NAME.match(value) is not None


def is_dns_subdomain(value: str) -> bool:
    """A DNS-1123 subdomain (most object names, e.g. a ServiceAccount's or a PriorityClass's): at most 253."""
    return len(value) <= DNS_SUBDOMAIN_MAX and DNS_1123_SUBDOMAIN.match(value) is not None


def is_dns_label(value: str) -> bool:
    """A DNS-1123 label (a namespace name): at most 63 lowercase letters, digits and '-'."""
    return len(value) <= DNS_LABEL_MAX and DNS_1123_LABEL.match(value) is not None


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def hashed_name(*parts: str, limit: int = DNS_LABEL_MAX) -> str:
    joined = "-".join(parts)
    head = joined[: limit - HASH_LENGTH - 1].rstrip("-")
    return f"{head}-{short_hash(joined)}"


def suffixed_name(replica: str, suffix: str) -> str:
    """`<replica>-<suffix>` as upstream names the pool and the picker, hashed only when too long."""
    name = f"{replica}-{suffix}"
    return name if len(name) <= DNS_LABEL_MAX else hashed_name(replica, suffix)


def workload_name(replica: str, engine: str) -> str:
    """The LeaderWorkerSet of an engine. Always hashed, so it never equals a Service name we make."""
    return hashed_name(replica, engine, limit=LWS_NAME_MAX)


# A name that changes with its object's spec carries a longer hash, as Kubernetes' pod-template-hash does: two
# revisions of an immutable spec under one name would make the second apply fail.
CONTENT_HASH_LENGTH = 10


def content_name(*parts: str, content: str, limit: int = DNS_LABEL_MAX) -> str:
    """A name for an object whose spec can't be changed in place: its identity and a hash of its spec (`content`).

    A changed spec is a new object under a new name, which whatever refers to it moves to; the
    same spec keeps its name, so an edit elsewhere renames nothing.
    """
    joined = "-".join(parts)
    head = joined[: limit - CONTENT_HASH_LENGTH - 1].rstrip("-")
    digest = hashlib.sha256(f"{joined}\0{content}".encode()).hexdigest()[:CONTENT_HASH_LENGTH]
    return f"{head}-{digest}"


def claim_template_name(replica: str, engine: str, role: str, spec: Any) -> str:
    """A ResourceClaimTemplate's name: its `spec` is immutable (k8s pkg/apis/resource/validation
    ValidateResourceClaimTemplateUpdate), so what it claims is part of the name."""
    return content_name(replica, engine, role.lower(), "devices", content=json.dumps(spec, sort_keys=True, separators=(",", ":")))


def pool_name(replica: str) -> str:
    return suffixed_name(replica, "pool")


def picker_name(replica: str) -> str:
    """ServiceAccount, Role, RoleBinding, ConfigMap, Deployment, PDB and Service of the picker."""
    return suffixed_name(replica, "epp")


def route_name(replica: str) -> str:
    return suffixed_name(replica, "route")


def label_value(name: str) -> str:
    """A name used as a label value (the serving and replica labels), shortened by the same rule."""
    return name if len(name) <= LABEL_VALUE_MAX else hashed_name(name, limit=LABEL_VALUE_MAX)
