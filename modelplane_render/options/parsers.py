"""How each setting's value is read from text (or a RenderConfig's value): one parser per setting of options.SETTINGS,
and the defaults the table and Options share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from .. import names
from ..errors import UsageError

# The one word a LIST setting takes for "no entry at all" (an empty list says the same).
NONE = "none"

# (key, value or None, effect or None): a toleration as `KEY[=VALUE][:EFFECT]` says it, as kubectl taint does.
Toleration = tuple[str, Optional[str], Optional[str]]
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
# What every engine pod tolerates unless told otherwise: the taint GPU node pools carry on GKE, EKS
# and AKS, and that NVIDIA's GPU operator documents.
DEFAULT_TOLERATIONS: tuple[Toleration, ...] = (("nvidia.com/gpu", None, "NoSchedule"),)

# (resource name, quantity): what each endpoint picker pod requests. KServe's LLMInferenceService gives
# llm-d's picker cpu 1 and memory 2Gi (llm-d's own chart asks 8 CPUs for a picker a whole gateway shares);
# without a request it runs BestEffort, first evicted under pressure while it scrapes every pod 20 times a second.
Request = tuple[str, str]
DEFAULT_PICKER_REQUESTS: tuple[Request, ...] = (("cpu", "1"), ("memory", "2Gi"))
REQUEST_NAMES = ("cpu", "memory", "ephemeral-storage")

# The hub cache's size limit (constants.HUB_CACHE_VOLUME): past it the kubelet evicts the pod rather than
# fill the node's disk. 1Ti holds DeepSeek-R1 (about 700 GB); raise it for larger checkpoints.
DEFAULT_HUB_CACHE_SIZE = "1Ti"


# --- parsers: (the value in its kind's form, where it came from) -> the value, or None for the default ---


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
    if not names.is_qualified_name(value):
        raise UsageError(f"{source} {value!r} is not a label key (an optional DNS-subdomain prefix and '/', then a name of at most 63)")
    return value


def _no_entry(values: list[str]) -> bool:
    """Whether a LIST setting's entries say none at all: an empty list, or the one word `none`."""
    return values == [] or values == [NONE]


def parse_tolerations(values: list[str] | None, source: str = "--toleration") -> tuple[Toleration, ...] | None:
    """`KEY[=VALUE][:EFFECT]` each, or the one word `none` (None: the default); an empty list: none at all."""
    if values is None or _no_entry(values):
        return None if values is None else ()
    if NONE in values:
        raise UsageError(f"{source} {NONE} stands alone: it means no toleration at all")
    found: list[Toleration] = []
    for text in values:
        rest, _, effect = text.partition(":") if ":" in text else (text, "", "")
        key, equals, value = rest.partition("=")
        if effect and effect not in TAINT_EFFECTS:
            raise UsageError(f"{source} {text!r}: the effect must be one of {', '.join(TAINT_EFFECTS)} (or left out: every effect)")
        if not names.is_qualified_name(key):
            raise UsageError(f"{source} {text!r}: {key!r} is not a taint key (KEY[=VALUE][:EFFECT], e.g. amd.com/gpu:NoSchedule)")
        if equals and (not value or not names.LABEL_VALUE.match(value) or len(value) > names.LABEL_VALUE_MAX):
            raise UsageError(f"{source} {text!r}: {value!r} is not a taint value")
        found.append((key, value if equals else None, effect or None))
    return tuple(found)


def parse_object_name(what: str) -> Callable[[str | None, str], str | None]:
    """A parser of the name of an object of the cluster's (a DNS subdomain, as the API server checks a pod's reference)."""

    def parse(value: str | None, source: str) -> str | None:
        if value is None or value == "":
            return None
        if not names.is_dns_subdomain(value):
            raise UsageError(f"{source} {value!r} is not a {what} name (a DNS subdomain: lowercase letters, digits, '-' and '.')")
        return value

    return parse


def parse_requests(values: list[str] | None, source: str = "--picker-request") -> tuple[Request, ...] | None:
    """`NAME=QUANTITY` each (cpu, memory, ephemeral-storage), or the one word `none`; an empty list: none at all."""
    if values is None or _no_entry(values):
        return None if values is None else ()
    found: dict[str, str] = {}
    for text in values:
        name, equals, quantity = text.partition("=")
        if not equals or name not in REQUEST_NAMES:
            raise UsageError(f"{source} {text!r} must be NAME=QUANTITY, NAME one of {', '.join(REQUEST_NAMES)} (e.g. cpu=500m)")
        if not names.QUANTITY.match(quantity) or quantity.startswith("-"):
            raise UsageError(f"{source} {text!r}: {quantity!r} is not a quantity a pod can request (e.g. 500m, 2, 4Gi)")
        if name in found:
            raise UsageError(f"{source} {text!r}: {name} is given twice")
        found[name] = quantity
    return tuple(found.items())


def parse_size(value: str | None, source: str = "--hub-cache-size") -> str | None:
    """A storage size, as a Kubernetes quantity (None: the default)."""
    if value is None or value == "":
        return None
    if not names.QUANTITY.match(value) or value.startswith("-") or value.strip("+0.") == "":
        raise UsageError(f"{source} {value!r} is not a size (a Kubernetes quantity above 0, e.g. 500Gi or 2Ti)")
    return value


def request_text(request: Request) -> str:
    return f"{request[0]}={request[1]}"


def parse_switch(value: bool | str | None, source: str) -> bool | None:
    """A switch: a flag's or a RenderConfig's boolean as it is; a parameter's text, "true" or "false"."""
    if value is None or isinstance(value, bool):
        return value
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise UsageError(f'{source} {value!r} must be "true" or "false"')


def toleration_text(toleration: Toleration) -> str:
    """A toleration as the command line takes it: `KEY[=VALUE][:EFFECT]`."""
    key, value, effect = toleration
    return key + (f"={value}" if value is not None else "") + (f":{effect}" if effect else "")


def toleration_object(toleration: Toleration) -> dict[str, str]:
    """The pod's toleration: Equal for a KEY=VALUE, else Exists; the effect when one is given."""
    key, value, effect = toleration
    found = {"key": key, "operator": "Equal", "value": value} if value is not None else {"key": key, "operator": "Exists"}
    return found | ({"effect": effect} if effect else {})
