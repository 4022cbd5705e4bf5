"""What is wrong with one device selector expression, as the API server would judge it, and a little more.

`problems(expression)` compiles and type-checks the expression in `environment`'s declared copy of
the API server's environment, and turns cel-expr-python's messages into ours (each at a character
offset of the expression). Beyond the API server it checks the string constants given to
`quantity()` and `semver()`: the API server compiles `quantity("80GB")` and fails only when the
scheduler evaluates it, at allocation, with every pod of the claim Pending.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Optional

from .environment import DEVICE, DEVICE_FIELDS, new_environment

# k8s.io/api resource/v1 CELSelectorExpressionMaxLength: len() of a Go string, so bytes of UTF-8.
MAX_EXPRESSION_BYTES = 10 * 1024

_ERROR = re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)' \(in container '[^']*'\)")
_NO_OVERLOAD = re.compile(r"found no matching overload for '([^']*)' applied to '\((.*)\)'")
_QUANTITY = "kubernetes.Quantity"
_ORDERING = {"_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">="}
# A call of a library function on one string literal: `quantity("80Gi")`, `semver('1.2.3')`.
_CONSTANT_CALL = re.compile(r"""(?<![\w.])(quantity|semver)\(\s*(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')\s*\)""")
# What k8s.io/apimachinery's resource.ParseQuantity reads (its quantity.go: sign, number, suffix).
_QUANTITY_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?\Z")
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
        shown = ", ".join(_type_name(t.strip()) for t in types.split(", ")) if types else ""
        operator = _ORDERING.get(function)
        if operator and _QUANTITY in types:
            return (
                f"a quantity is not compared with {operator}: use compareTo() "
                f'(e.g. q.compareTo(quantity("80Gi")) {operator} 0), isGreaterThan() or isLessThan()'
            )
        name = function.strip("_") if function.startswith("_") else function
        return f"no overload of {name!r} takes ({shown})"
    if message.startswith("Syntax error: "):
        return "syntax error: " + message.removeprefix("Syntax error: ")
    return message


def _undeclared(name: str) -> str:
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


def _constant_problems(expression: str) -> list[Problem]:
    found = []
    for match in _CONSTANT_CALL.finditer(expression):
        function = match[1]
        literal = match[2] if match[2] is not None else match[3]
        if "\\" in literal:
            continue  # an escape: left to the API server
        if function == "quantity" and not _QUANTITY_TEXT.match(literal):
            found.append(
                Problem(
                    match.start(),
                    f"quantity({json.dumps(literal)}) is not a quantity (e.g. 80Gi, 500M, 1.5): the API server "
                    "accepts it, and the claim fails when the scheduler evaluates it",
                )
            )
        elif function == "semver" and not _SEMVER.match(literal):
            found.append(
                Problem(
                    match.start(),
                    f"semver({json.dumps(literal)}) is not a semantic version (e.g. 1.2.3): the API server "
                    "accepts it, and the claim fails when the scheduler evaluates it",
                )
            )
    return found
