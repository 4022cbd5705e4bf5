"""How Kubernetes' YAML readers type a plain scalar, so what we write means the same to them as to us.

kubectl, Argo CD and the API server read YAML with Go's `sigs.k8s.io/yaml` over go-yaml v2 (into
interface{}, then JSON); kustomize's kyaml reads it with go-yaml v3. Both type a plain (unquoted)
scalar by rules PyYAML does not share: `y`, `n`, `on` and `off` are booleans to go-yaml v2, `1e3`,
`0o17`, `08` and `1_000` are numbers, while PyYAML reads the first four and `1e3` as strings. The
rules below are go-yaml v2's `resolve()` (resolve.go) for an untagged plain scalar, with Go's own
strconv.ParseInt/ParseUint (base 0) and ParseFloat, as they type a value decoded into interface{}
(timestamps stay strings there, "for backward compatibility"). go-yaml v3 reads a subset of these
as non-strings (true/false, null, numbers, 0o octals; not y/n/on/off), so a string that v2 and
PyYAML both read as a string is one to v3 too.
"""

from __future__ import annotations

import math
import re
from typing import Any

# go-yaml v2's resolveMap: the plain scalars it reads by name.
_BY_NAME: dict[str, tuple[str, Any]] = {}
for _names, _kind, _value in (
    (("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), "bool", True),
    (("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), "bool", False),
    (("", "~", "null", "Null", "NULL"), "null", None),
    ((".nan", ".NaN", ".NAN"), "float", math.nan),
    ((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), "float", math.inf),
    (("-.inf", "-.Inf", "-.INF"), "float", -math.inf),
):
    for _name in _names:
        _BY_NAME[_name] = (_kind, _value)

# strconv.ParseInt/ParseUint with base 0 (underscores already removed, as resolve() removes them).
_GO_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
# resolve()'s yamlStyleFloat, before it asks strconv.ParseFloat.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
# ParseFloat of a plain scalar starting with '.' (no base prefix there, so no underscores either).
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")
_INT64, _UINT64 = 1 << 63, 1 << 64
_UINT64_DIGITS = len(str(_UINT64 - 1))


def _go_int(text: str) -> int | None:
    match = _GO_INT.match(text)
    if match is None:
        return None
    sign, digits = match.groups()
    if digits[0] != "0" and len(digits) > _UINT64_DIGITS:
        return None  # past uint64, and Python's int() refuses more than 4300 decimal digits
    if digits[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
        value = int(digits[2:], {"x": 16, "o": 8, "b": 2}[digits[1].lower()])
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)  # a leading 0: octal, as C and Go read it
    else:
        value = int(digits)
    value = -value if sign == "-" else value
    if -_INT64 <= value < _INT64 or (sign == "" and 0 <= value < _UINT64):  # ParseInt, else ParseUint (no sign)
        return value
    return None


def _go_float(text: str) -> float | None:
    """strconv.ParseFloat of text the caller has matched as a decimal: None where Go says out of range."""
    value = float(text)
    return None if math.isinf(value) else value


def plain_scalar(text: str) -> tuple[str, Any]:
    """What go-yaml v2 makes of a plain scalar decoded into interface{}: (kind, value), kind one of
    str, bool, null, int, float (`.inf` and `.nan` too: JSON can't hold those, so sigs.k8s.io/yaml fails)."""
    hint = text[:1]
    if hint == "" or hint in "yYnNtTfFoO~+-.":
        known = _BY_NAME.get(text)
        if known is not None:
            return known
    if hint and hint in "+-0123456789":
        plain = text.replace("_", "")
        integer = _go_int(plain)
        if integer is not None:
            return "int", integer
        if _YAML_STYLE_FLOAT.match(plain):
            value = _go_float(plain)
            if value is not None:
                return "float", value
    elif hint == "." and _DOT_FLOAT.match(text):
        value = _go_float(text)
        if value is not None:
            return "float", value
    return "str", text


def reads_as_string(text: str) -> bool:
    """Whether go-yaml v2 (and so v3) reads this text, written plain, as this same string."""
    return plain_scalar(text)[0] == "str"


def json_key(key: str | bool | int | float) -> str:
    """A mapping key as sigs.k8s.io/yaml writes it into JSON: `true`, `1000`, `1.5`, `1e+06`."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return _go_float_text(key)
    return str(key)


def _go_float_text(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 64), as sigs.k8s.io/yaml writes a float key: 1000, 1e+06, 0.0001, 1e-05.

    The shortest digits that read back (Python's repr finds the same), written %e when the
    exponent is below -4 or at least 6 (Go's choice for the shortest form), else as a decimal.
    """
    from decimal import Decimal  # only a float key (`1.5: x`) needs it

    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    shown = "".join(map(str, digits))
    point = len(shown) + exponent  # digits before the decimal point
    exp = point - 1
    minus = "-" if value < 0 else ""
    if exp < -4 or exp >= 6:
        mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{shown}"
    if point >= len(shown):
        return f"{minus}{shown}{'0' * (point - len(shown))}"
    return f"{minus}{shown[:point]}.{shown[point:]}"
