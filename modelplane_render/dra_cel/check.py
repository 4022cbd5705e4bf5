"""What is wrong with one device selector expression, as the API server would judge it, and a little more.

`problems(expression)` compiles and type-checks the expression in `environment`'s declared copy of
the API server's environment, and turns cel-expr-python's messages into ours (each at a character
offset of the expression). String constants are read as the API server's literal validators read
them (`duration()`, `timestamp()`, a regex function's pattern), and, beyond the API server, those
given to `quantity()`, `semver()`, `ip()` and `cidr()`: it compiles `quantity("80GB")`, which fails
only when the scheduler evaluates it, at allocation, with every pod of the claim Pending.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from .. import names
from .environment import DEVICE, DEVICE_FIELDS, new_environment

# k8s.io/api resource/v1 CELSelectorExpressionMaxLength: len() of a Go string, so bytes of UTF-8.
MAX_EXPRESSION_BYTES = 10 * 1024

_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)' \(in container '[^']*'\)")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']*)' applied to '\((.*)\)'")
_QUANTITY = "kubernetes.Quantity"
_ORDERING = {"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">="}
# A call of a function on one string literal: `quantity("80Gi")`, `duration('90s')`, and the pattern
# of a regex function (`x.matches("^a")`, `matches(x, "^a")`, `x.find("a+")`, `x.findAll("a", 2)`).
_STRING = r"""(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')"""
_CONSTANT_CALL = re.compile(rf"(?<![\w.])(quantity|semver|duration|timestamp|ip|cidr)\(\s*{_STRING}\s*\)")
_PATTERN_CALL = re.compile(rf"(?:\.(matches|find|findAll)\(\s*|(?<![\w.])(matches)\([^,()]*,\s*){_STRING}\s*[,)]")
# A CEL string literal's one-character escapes (an octal, hex or unicode one leaves the literal unread).
_CEL_ESCAPES = {
    "\\": "\\",
    '"': '"',
    "'": "'",
    "`": "`",
    "?": "?",
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}
# What Go's time.ParseDuration reads (cel-go's duration()), and time.RFC3339 (its timestamp()).
_DURATION = re.compile(r"[-+]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)\Z")
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|([+-])(\d{2}):(\d{2}))\Z")
# RE2 syntax Python's re does not know: a pattern using it is left to the API server.
_RE2_ONLY = ("\\p", "\\P", "\\Q", "\\E", "\\z", "\\C", "\\x{", "(?U", "[[:")
# What k8s.io/apimachinery's resource.ParseQuantity reads (its quantity.go: sign, number, suffix).
# Semantic versions as the API server's semver() reads them (blang/semver v4, strict).
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\Z"
)


@dataclass(frozen=True)
class Problem:
    offset: int  # characters into the expression
    message: str


_env: Optional[Any] = None


def _environment() -> Any:
    global _env
    if _env is None:
        _env = new_environment()
    return _env


def problems(expression: str) -> list[Problem]:
    """Every problem of the expression (empty when the API server would compile it and it can run)."""
    size = len(expression.encode("utf-8"))
    if size > MAX_EXPRESSION_BYTES:
        return [Problem(0, f"is {size} bytes long: the API server compiles at most {MAX_EXPRESSION_BYTES} bytes")]
    try:
        compiled = _environment().compile(expression)
    except RuntimeError as exc:
        return _compile_problems(expression, str(exc))
    found = _constant_problems(expression)
    returns = compiled.return_type().name()
    if returns not in ("BOOL", "DYN"):
        found.insert(0, Problem(0, f"must evaluate to a bool, not {_type_name(returns)}"))
    return found


def _compile_problems(expression: str, text: str) -> list[Problem]:
    lines = expression.split("\n")
    found = []
    for match in _ERROR.finditer(text):
        line, column, message = int(match[1]), int(match[2]), match[3].strip()
        message = message.removesuffix("[INVALID_ARGUMENT]").strip()
        offset = sum(len(x) + 1 for x in lines[: line - 1]) + column - 1
        offset = min(offset, len(expression))
        undeclared = _UNDECLARED.fullmatch(message)
        if undeclared:
            offset = _name_start(expression, offset, undeclared[1])
        found.append(Problem(offset, _our_message(message)))
    return found or [Problem(0, f"does not compile: {text.strip()}")]


def _name_start(expression: str, offset: int, name: str) -> int:
    """Where an undeclared name is: at its field for `device.X`, else where it starts (CEL points at its last dot)."""
    start = offset
    while start > 0 and (expression[start - 1].isalnum() or expression[start - 1] in "_."):
        start -= 1
    if expression.startswith(name, start) and name.startswith(DEVICE + "."):
        return start + len(DEVICE) + 1
    return start if expression.startswith(name, start) else offset


def _our_message(message: str) -> str:
    undeclared = _UNDECLARED.fullmatch(message)
    if undeclared:
        return _undeclared(undeclared[1])
    overload = _NO_OVERLOAD.fullmatch(message)
    if overload:
        function, types = overload[1], overload[2]
        shown = _type_name(types)
        operator = _ORDERING.get(function)
        if operator and _QUANTITY in types:
            return (
                f"a quantity is not compared with {operator}: use compareTo() "
                f'(e.g. q.compareTo(quantity("80Gi")) {operator} 0), isGreaterThan() or isLessThan()'
            )
        name = function.strip("_").replace("[_]", "[]") if function.startswith("_") else function
        return f"no overload of {name!r} takes ({shown})"
    if message.startswith("Syntax error: "):
        return "syntax error: " + message.removeprefix("Syntax error: ")
    return message


def _undeclared(name: str) -> str:
    import difflib

    head, _, rest = name.partition(".")
    if head == DEVICE and rest:
        field = rest.split(".")[0]
        near = difflib.get_close_matches(field, DEVICE_FIELDS, n=1)
        hint = f": did you mean {near[0]!r}?" if near else f" (it has {', '.join(DEVICE_FIELDS)})"
        return f"device has no field {field!r}{hint}"
    if head == DEVICE:
        return f"{DEVICE} is used only through its fields ({', '.join(DEVICE_FIELDS)})"
    if difflib.get_close_matches(head, [DEVICE], n=1):
        return f"undeclared reference to {head!r}: the device is {DEVICE!r}"
    return f"undeclared reference to {name!r}"


def _type_name(cel_type: str) -> str:
    """cel-expr-python's type names as CEL writes them (`LIST<STRING>` as list(string))."""
    names = {
        "BOOL": "bool",
        "INT": "int",
        "UINT": "uint",
        "DOUBLE": "double",
        "STRING": "string",
        "BYTES": "bytes",
        "DYN": "dyn",
        "NULL": "null_type",
    }
    text = re.sub(r"[A-Z_]+(?=[<>,\s]|$)", lambda m: names.get(m[0], m[0].lower()), cel_type)
    return text.replace("<", "(").replace(">", ")")


def _literal(match: re.Match[str], group: int) -> Optional[str]:
    """The text of the string literal in groups `group`, `group + 1` (double- or single-quoted), or None."""
    raw = match[group] if match[group] is not None else match[group + 1]
    text, i = [], 0
    while i < len(raw):
        if raw[i] == "\\":
            decoded = _CEL_ESCAPES.get(raw[i + 1 : i + 2])
            if decoded is None:
                return None  # an octal, hex or unicode escape: left to the API server
            text.append(decoded)
            i += 2
        else:
            text.append(raw[i])
            i += 1
    return "".join(text)


def _is_ip(text: str) -> bool:
    """As the API server's ip() reads an address (library/ip.go: no zone, no IPv4-mapped IPv6)."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None)


def _is_cidr(text: str) -> bool:
    address, slash, _ = text.partition("/")
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return bool(slash) and _is_ip(address)


def _is_timestamp(text: str) -> bool:
    match = _RFC3339.match(text)
    if not match:
        return False
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    try:
        datetime.datetime(year, month, day, hour, minute, min(second, 59))
    except ValueError:
        return False
    return year >= 1 and hour < 24 and minute < 60 and second < 60 and (match[7] is None or (int(match[8]) < 24 and int(match[9]) < 60))


_ALLOCATION = "the API server accepts it, and the claim fails when the scheduler evaluates it"
# function: (does the text do, what it should be, what happens otherwise)
_CONSTANTS: dict[str, tuple[Callable[[str], bool], str, str]] = {
    "quantity": (lambda t: bool(names.QUANTITY.match(t)), "a quantity (e.g. 80Gi, 500M, 1.5)", _ALLOCATION),
    "semver": (lambda t: bool(_SEMVER.match(t)), "a semantic version (e.g. 1.2.3)", _ALLOCATION),
    "ip": (_is_ip, "an IP address (e.g. 10.0.0.1, fd00::1)", _ALLOCATION),
    "cidr": (_is_cidr, "a CIDR (e.g. 10.0.0.0/8)", _ALLOCATION),
    "duration": (lambda t: bool(_DURATION.match(t)), "a duration (e.g. 90s, 1h30m)", ""),
    "timestamp": (_is_timestamp, "an RFC 3339 timestamp (e.g. 2025-01-31T00:00:00Z)", ""),
}


def _constant_problems(expression: str) -> list[Problem]:
    found = []
    for match in _CONSTANT_CALL.finditer(expression):
        function, text = match[1], _literal(match, 2)
        holds, kind, otherwise = _CONSTANTS[function]
        if text is not None and not holds(text):
            found.append(Problem(match.start(), f"{function}({json.dumps(text)}) is not {kind}" + (f": {otherwise}" if otherwise else "")))
    for match in _PATTERN_CALL.finditer(expression):
        text = _literal(match, 3)
        if text is None or any(token in text for token in _RE2_ONLY):
            continue
        try:
            re.compile(text)
        except re.error as exc:
            at = match.start(3) if match[3] is not None else match.start(4)
            found.append(Problem(at - 1, f"{json.dumps(text)} is not a regular expression: {exc.msg}"))
    return found
