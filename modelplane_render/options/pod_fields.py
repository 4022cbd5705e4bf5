"""The pod fields a render setting gives every engine pod (the settings' parsers, and their checks), checked as the API server checks a pod (and, for a
capability, as the container runtime does), so a wrong setting fails the render instead of every pod the
LeaderWorkerSet controller later asks for.

The API server does not validate a LeaderWorkerSet's pod templates as pods: the CRD's schema checks
their shape only, and a pod's own rules (an operator's values, a weight's range, a topology key) are
first met when the controller creates a pod, long after Argo CD said Synced. So the rules are here,
from k8s v1.37.2 pkg/apis/core/validation/validation.go (validateAffinity and what it calls) and
apimachinery's ValidateLabelSelector; tests/test_platform_settings.py holds them to the real API
server's dry run of a pod.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .. import names
from ..errors import FieldPath, MapKey, UsageError, describe, did_you_mean, format_path, unknown_field

# Linux capabilities (include/uapi/linux/capability.h, up to CAP_CHECKPOINT_RESTORE), as a pod names
# them: without `CAP_`. containerd's CRI plugin prefixes `CAP_` and refuses a name it does not know
# ("unknown capability ... to add"), so a misspelt one would stop every engine container at its start.
CAPABILITIES = (
    "AUDIT_CONTROL AUDIT_READ AUDIT_WRITE BLOCK_SUSPEND BPF CHECKPOINT_RESTORE CHOWN DAC_OVERRIDE DAC_READ_SEARCH "
    "FOWNER FSETID IPC_LOCK IPC_OWNER KILL LEASE LINUX_IMMUTABLE MAC_ADMIN MAC_OVERRIDE MKNOD NET_ADMIN "
    "NET_BIND_SERVICE NET_BROADCAST NET_RAW PERFMON SETFCAP SETGID SETPCAP SETUID SYSLOG SYS_ADMIN SYS_BOOT "
    "SYS_CHROOT SYS_MODULE SYS_NICE SYS_PACCT SYS_PTRACE SYS_RAWIO SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG WAKE_ALARM"
).split()

Problem = tuple[FieldPath, str]


def capability_problem(name: str) -> str | None:
    """Why `name` is not a capability a pod can add (None: it is one)."""
    if name in CAPABILITIES:
        return None
    if name.upper().removeprefix("CAP_") in CAPABILITIES:
        return f"{name!r} is written {name.upper().removeprefix('CAP_')!r} in a pod (upper case, without CAP_)"
    if name.upper() == "ALL":
        return "ALL is every capability, as good as privileged: name the ones the engine needs (e.g. IPC_LOCK)"
    return f"{name!r} is not a Linux capability{did_you_mean(name, CAPABILITIES)}"


def affinity_problems(value: Any) -> list[Problem]:
    """Every problem of an Affinity (core/v1), with its path inside it; [] when the API server would take it."""
    return list(_object(value, (), _AFFINITY))


# --- the shape: each object's fields, and what checks each field's value ---------------------------


def _object(value: Any, path: FieldPath, fields: dict[str, Any]) -> Iterator[Problem]:
    if not isinstance(value, dict):
        yield path, f"must be a mapping, not {describe(value)}"
        return
    for key, item in value.items():
        if key not in fields:
            yield path + (key,), unknown_field(str(key), sorted(fields))
        elif item is not None:
            yield from fields[key](item, path + (key,))


def _fields(fields: dict[str, Any]) -> Any:
    return lambda value, path: _object(value, path, fields)


def _list(item: Any) -> Any:
    def check(value: Any, path: FieldPath) -> Iterator[Problem]:
        if not isinstance(value, list):
            yield path, f"must be a list, not {describe(value)}"
            return
        for index, entry in enumerate(value):
            yield from item(entry, path + (index,))

    return check


def _string(value: Any, path: FieldPath) -> Iterator[Problem]:
    if not isinstance(value, str):
        yield path, f"must be a string, not {describe(value)}"


def _label_key(value: Any, path: FieldPath) -> Iterator[Problem]:
    if not isinstance(value, str):
        yield path, f"must be a string, not {describe(value)}"
    elif not value:
        yield path, "must be given"
    elif not names.is_qualified_name(value):
        yield path, f"{value!r} is not a label key (an optional DNS-subdomain prefix and '/', then a name of at most 63)"


def _label_value(value: Any, path: FieldPath) -> Iterator[Problem]:
    if not isinstance(value, str):
        yield path, f"must be a string, not {describe(value)}"
    elif len(value) > names.LABEL_VALUE_MAX or not names.LABEL_VALUE.match(value):
        yield path, f"{value!r} is not a label value (at most 63 letters, digits, '-', '_' and '.', alphanumeric at both ends)"


def _weight(value: Any, path: FieldPath) -> Iterator[Problem]:
    if isinstance(value, bool) or not isinstance(value, int):
        yield path, f"must be an integer, not {describe(value)}"
    elif not 1 <= value <= 100:
        yield path, f"must be in the range 1-100, not {value}"


def _required(value: dict[str, Any], path: FieldPath, *keys: str) -> Iterator[Problem]:
    for key in keys:
        if value.get(key) in (None, "", []):
            yield path + (key,), "must be given"


# Node selectors (NodeSelectorRequirement): Gt and Lt compare a node label's value as an integer.
NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
INTEGER = re.compile(r"^[-+]?[0-9]+\Z")


def _requirement(operators: tuple[str, ...], value_check: Any, key_check: Any) -> Any:
    def check(value: Any, path: FieldPath) -> Iterator[Problem]:
        shape = {"key": key_check, "operator": _string, "values": _list(value_check)}
        yield from _object(value, path, shape)
        if not isinstance(value, dict):
            return
        yield from _required(value, path, "key", "operator")
        operator, values = value.get("operator"), value.get("values") or []
        if not isinstance(operator, (str, type(None))) or not isinstance(values, list):
            return  # said above
        if operator and operator not in operators:
            yield path + ("operator",), f"{operator!r} is not an operator here: one of {', '.join(operators)}"
        elif operator in ("In", "NotIn") and not values:
            yield path + ("values",), f"must be given when the operator is {operator}"
        elif operator in ("Exists", "DoesNotExist") and values:
            yield path + ("values",), f"must be left out when the operator is {operator}"
        elif operator in ("Gt", "Lt"):
            if len(values) != 1:
                yield path + ("values",), f"must be a single integer when the operator is {operator}"
            elif not INTEGER.match(str(values[0])) or not -(2**63) <= int(values[0]) < 2**63:
                yield path + ("values", 0), f"{values[0]!r} is not a 64-bit integer, which {operator} compares a node label's value as"

    return check


def _node_name(value: Any, path: FieldPath) -> Iterator[Problem]:
    if not isinstance(value, str):
        yield path, f"must be a string, not {describe(value)}"
    elif not names.is_dns_subdomain(value):
        yield path, f"{value!r} is not a node name (a DNS subdomain)"


def _field_requirement(value: Any, path: FieldPath) -> Iterator[Problem]:
    """A node field selector: metadata.name only, In or NotIn exactly one node name."""
    yield from _object(value, path, {"key": _string, "operator": _string, "values": _list(_node_name)})
    if not isinstance(value, dict):
        return
    if value.get("key") != "metadata.name":
        yield path + ("key",), f"{value.get('key')!r} is not a node field selector key: only metadata.name"
    if value.get("operator") not in ("In", "NotIn"):
        yield path + ("operator",), f"{value.get('operator')!r} is not an operator here: In or NotIn"
    elif not isinstance(value.get("values"), list) or len(value["values"]) != 1:
        yield path + ("values",), "must be exactly one node name when the operator is In or NotIn"


def _node_selector_term(value_check: Any) -> Any:
    return _fields(
        {"matchExpressions": _list(_requirement(NODE_OPERATORS, value_check, _label_key)), "matchFields": _list(_field_requirement)}
    )


# A required term's values are label values, as a node's are (k8s v1.37.2 ValidateNodeSelectorRequirement:
# AllowInvalidLabelValueInRequiredNodeAffinity is false for a new pod); a preference's are not (a warning only).
_REQUIRED_NODE_SELECTOR_TERM = _node_selector_term(_label_value)
_NODE_SELECTOR_TERM = _node_selector_term(_string)


def _node_selector(value: Any, path: FieldPath) -> Iterator[Problem]:
    yield from _object(value, path, {"nodeSelectorTerms": _list(_REQUIRED_NODE_SELECTOR_TERM)})
    if isinstance(value, dict) and not value.get("nodeSelectorTerms"):
        yield path + ("nodeSelectorTerms",), "must have at least one node selector term"


def _weighted(term_key: str, term: Any) -> Any:
    def check(value: Any, path: FieldPath) -> Iterator[Problem]:
        yield from _object(value, path, {"weight": _weight, term_key: term})
        if isinstance(value, dict):
            yield from _required(value, path, "weight", term_key)

    return check


def _label_selector(value: Any, path: FieldPath) -> Iterator[Problem]:
    yield from _object(
        value,
        path,
        {
            "matchLabels": lambda labels, at: _labels(labels, at),
            "matchExpressions": _list(_requirement(LABEL_OPERATORS, _label_value, _label_key)),
        },
    )


def _labels(value: Any, path: FieldPath) -> Iterator[Problem]:
    if not isinstance(value, dict):
        yield path, f"must be a mapping, not {describe(value)}"
        return
    for key, item in value.items():
        yield from _label_key(key, path + (MapKey(key),))
        yield from _label_value(item, path + (MapKey(key),))


def _namespace(value: Any, path: FieldPath) -> Iterator[Problem]:
    if not isinstance(value, str) or not names.is_dns_label(value):
        yield path, f"{value!r} is not a namespace name (a DNS label)"


def _selector_keys(selector: Any) -> set[Any]:
    """The keys a label selector names (in matchLabels and matchExpressions)."""
    if not isinstance(selector, dict):
        return set()
    labels, expressions = selector.get("matchLabels"), selector.get("matchExpressions")
    keys = set(labels) if isinstance(labels, dict) else set()
    return keys | {e.get("key") for e in expressions if isinstance(e, dict)} if isinstance(expressions, list) else keys


def _pod_affinity_term(value: Any, path: FieldPath) -> Iterator[Problem]:
    shape = {
        "labelSelector": _label_selector,
        "namespaceSelector": _label_selector,
        "namespaces": _list(_namespace),
        "topologyKey": _label_key,
        "matchLabelKeys": _list(_label_key),
        "mismatchLabelKeys": _list(_label_key),
    }
    yield from _object(value, path, shape)
    if not isinstance(value, dict):
        return
    if not value.get("topologyKey"):
        yield path + ("topologyKey",), "must be given (e.g. kubernetes.io/hostname, topology.kubernetes.io/zone)"
    keyed = [k for k in ("matchLabelKeys", "mismatchLabelKeys") if value.get(k)]
    if keyed and value.get("labelSelector") is None:
        yield path + (keyed[0],), "needs a labelSelector, which the pod's own values of these keys are added to"
    keys: list[set[str]] = []
    for field in ("matchLabelKeys", "mismatchLabelKeys"):
        given = value.get(field)
        keys.append({k for k in given if isinstance(k, str)} if isinstance(given, list) else set())
    # The API server adds `key In (the pod's value)` to the labelSelector for each matchLabelKeys key the pod
    # has (pod strategy, mutatePodAffinity), then refuses one the selector already had, or that came twice
    # (validateMatchLabelKeysAndMismatchLabelKeys).
    selected = _selector_keys(value.get("labelSelector"))
    match_keys = value.get("matchLabelKeys")
    for index, key in enumerate(match_keys if isinstance(match_keys, list) else []):
        if isinstance(key, str) and key in selected:
            yield (
                path + ("matchLabelKeys", index),
                f"{key!r} is in the labelSelector already (or twice here): the pod's own value of it is added there",
            )
        selected.add(key)
    both = keys[0] & keys[1]
    for key in sorted(both):
        yield path + ("mismatchLabelKeys",), f"{key!r} is in matchLabelKeys too: a key can be in one of them only"


def _pod_affinity(value: Any, path: FieldPath) -> Iterator[Problem]:
    yield from _object(
        value,
        path,
        {
            "requiredDuringSchedulingIgnoredDuringExecution": _list(_pod_affinity_term),
            "preferredDuringSchedulingIgnoredDuringExecution": _list(_weighted("podAffinityTerm", _pod_affinity_term)),
        },
    )


_AFFINITY = {
    "nodeAffinity": _fields(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": _node_selector,
            "preferredDuringSchedulingIgnoredDuringExecution": _list(_weighted("preference", _NODE_SELECTOR_TERM)),
        }
    ),
    "podAffinity": _pod_affinity,
    "podAntiAffinity": _pod_affinity,
}


def problem_lines(source: str, problems: list[Problem]) -> list[str]:
    """The problems as the command line says them: `SOURCE: path: message`, a line each."""
    return [f"{source}: {format_path(path)}: {message}" if path else f"{source}: {message}" for path, message in problems]


# --- the settings' parsers (options.SETTINGS) ---------------------------------------------------------


def parse_capabilities(values: list[str] | None, source: str = "--capability") -> tuple[str, ...] | None:
    """Linux capability names as a pod gives them (IPC_LOCK), each once."""
    if values is None:
        return None
    found: list[str] = []
    for value in values:
        problem = capability_problem(value)
        if problem:
            raise UsageError(f"{source} {problem}")
        if value not in found:
            found.append(value)
    return tuple(found)


class SettingProblems(UsageError):
    """A structured setting's problems, each at its path inside the value (a RenderConfig shows each at its line)."""

    def __init__(self, source: str, problems: list[tuple[Any, str]]) -> None:
        self.lines = problem_lines(source, problems)
        super().__init__("\n".join(self.lines))
        self.problems = problems


def parse_affinity(value: str | dict[str, Any] | None, source: str = "--affinity") -> str | None:
    """A pod's affinity: JSON text (a flag, a parameter) or the mapping itself (a RenderConfig); canonical JSON text."""
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise UsageError(f"{source} is not JSON ({exc}): give the pod's affinity as a JSON object") from None
    if value == {}:
        return None  # an empty affinity says nothing: the render writes none
    problems = affinity_problems(value)
    if problems:
        raise SettingProblems(source, problems)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
