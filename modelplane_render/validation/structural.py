"""Judge a document against the CRD's structural schema as the API server does, but say it plainly.

What the API server does and this mirrors: nulls in fields that are not nullable are dropped
before defaulting; defaults are applied; unknown fields are rejected (strict field validation);
types are strict (`"1"` is not an integer, `yes` is a boolean, not a string); integral floats
are integers (YAML `1.0` reaches the API server as JSON `1`); `x-kubernetes-int-or-string`;
list-map keys are unique. CEL rules run on a node only when nothing under it failed, so a
message about a rule never hides the simpler fault beneath it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from ..errors import FieldPath, Finding, MapKey, describe, did_you_mean, quoted, unknown_field
from ..yamlio.document import Document

# How a pattern of the CRD reads in a message.
PATTERN_NAMES = {
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$": "a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit",
}
QUANTITY_HINT = "a Kubernetes quantity such as 500m, 2, 16Gi or 1e3"

# Every schema keyword this validator applies, and those that only describe. A keyword of the CRD
# outside this set fails tests/test_validation.py: a CRD change can't be half-supported in silence.
KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "default",
        "nullable",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
        "description",
    }
)


def unknown_keywords(schema: dict[str, Any], path: str = "") -> list[str]:
    """`path: keyword` of every keyword of schema (and the schemas inside it) not in KEYWORDS."""
    found = [f"{path or '.'}: {key}" for key in schema if key not in KEYWORDS]
    for name, inner in (schema.get("properties") or {}).items():
        found += unknown_keywords(inner, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += unknown_keywords(schema[key], f"{path}.{key}")
    return found


RuleChecker = Callable[[FieldPath, Any, dict[str, Any], list[Finding]], None]


class StructuralValidator:
    """Walks one document against one schema, collecting errors and returning the defaulted value."""

    def __init__(self, document: Document, errors: list[Finding], run_rules: RuleChecker):
        self.document = document
        self.errors = errors
        self.run_rules = run_rules

    def fail(self, path: FieldPath, message: str, *, at_key: bool = False) -> None:
        self.errors.append(self.document.error(path, message, at_key=at_key))

    def check(self, value: Any, schema: dict[str, Any], path: FieldPath) -> Any:
        before = len(self.errors)
        value = self._check_node(value, schema, path)
        rules = schema.get("x-kubernetes-validations")
        if rules and len(self.errors) == before:
            self.run_rules(path, value, schema, self.errors)
        return value

    def _check_node(self, value: Any, schema: dict[str, Any], path: FieldPath) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            self.fail(path, f"must be a finite number, not {value}")
            return value
        if schema.get("x-kubernetes-int-or-string"):
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                if _is_int64(value):
                    return int(value)
                self.fail(path, f"must be an integer or a string, not {describe(value)}{_past_int64(value)}")
            elif isinstance(value, str):
                self._check_string(value, schema, path)
            return value
        kind = schema.get("type")
        if kind == "object":
            if not isinstance(value, dict):
                self.fail(path, f"must be a mapping, not {describe(value)}")
                return value
            return self._check_object(value, schema, path)
        if kind == "array":
            if not isinstance(value, list):
                self.fail(path, f"must be a list, not {describe(value)}")
                return value
            return self._check_array(value, schema, path)
        if kind == "string":
            if not isinstance(value, str):
                why = self.document.reads_as(path)
                if why is not None:
                    self.fail(path, f"must be a string: {why}")
                else:
                    hint = ": quote the value" if isinstance(value, (bool, int, float)) else ""
                    self.fail(path, f"must be a string, not {describe(value)}{hint}")
                return value
            self._check_string(value, schema, path)
            return value
        if kind == "integer":
            if _is_int64(value):
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                hint = _past_int64(value)
                if isinstance(value, str) and re.fullmatch(r"[-+]?[0-9]+", value):
                    # Digits past what Go parses (uint64, then float64) are text to Kubernetes YAML however they are written.
                    hint = " (remove the quotes)" if len(value.lstrip("+-")) <= 20 else ": a number this long is text to Kubernetes YAML"
                self.fail(path, f"must be an integer, not {describe(value)}{hint}")
                return value
            self._check_number(value, schema, path)
            return value
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(path, f"must be a number, not {describe(value)}")
                return value
            self._check_number(value, schema, path)
            return value
        if kind == "boolean":
            if not isinstance(value, bool):
                self.fail(path, f"must be a boolean (true or false), not {describe(value)}")
            return value
        return value

    def _check_object(self, value: dict[str, Any], schema: dict[str, Any], path: FieldPath) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields")
        if path == ("metadata",):
            return value  # ObjectMeta: the API server's own rules, checked by check_metadata
        # Nulls in non-nullable fields are dropped before defaulting, as the API server does; an unknown
        # field is refused even when null (`templat:` beside `template:`), as strict field validation does.
        if not isinstance(extra, dict) and not preserve:
            for key in value:
                if key not in properties and value[key] is None:
                    self.fail(path + (key,), unknown_field(key, properties), at_key=True)
        nulls = {k for k, v in value.items() if v is None and not schema.get("nullable")}
        value = {k: v for k, v in value.items() if k not in nulls}
        result: dict[str, Any] = {}
        for key, child in value.items():
            if key in properties:
                result[key] = self.check(child, properties[key], path + (key,))
            elif isinstance(extra, dict):
                result[key] = self.check(child, extra, path + (MapKey(key),))
            elif preserve:
                result[key] = self._check_free(child, path + (MapKey(key),))
            else:
                self.fail(path + (key,), unknown_field(key, properties), at_key=True)
        for key in schema.get("required", []):
            if key in nulls:
                self.fail(path + (key,), "must have a value (it is empty)")
            elif key not in value:
                self.fail(path + (key,), "required field is missing")
        for key, child_schema in properties.items():
            if key not in result and "default" in child_schema:
                result[key] = child_schema["default"]
        count = len(value)
        if properties and schema.get("maxProperties") == 1 and schema.get("minProperties") == 1 and count != 1:
            names = list(properties)
            self.fail(path, f"must set exactly one of {', '.join(names[:-1])} or {names[-1]} (it sets {count})")
            return result
        if "minProperties" in schema and count < schema["minProperties"]:
            self.fail(
                path, "must not be empty" if schema["minProperties"] == 1 else f"must have at least {schema['minProperties']} entries"
            )
        if "maxProperties" in schema and count > schema["maxProperties"]:
            self.fail(path, f"must have at most {schema['maxProperties']} entries (it has {count})")
        # Keep the field order of the source, defaults after.
        return result

    def _check_free(self, value: Any, path: FieldPath) -> Any:
        """Under x-kubernetes-preserve-unknown-fields anything JSON can say is kept."""
        if isinstance(value, dict):
            return {k: self._check_free(v, path + (MapKey(k),)) for k, v in value.items()}
        if isinstance(value, list):
            return [self._check_free(v, path + (i,)) for i, v in enumerate(value)]
        if isinstance(value, float) and not math.isfinite(value):
            self.fail(path, f"must be a finite number, not {value}")
        return value

    def _check_array(self, value: list[Any], schema: dict[str, Any], path: FieldPath) -> list[Any]:
        items = schema.get("items", {})
        result = [self.check(item, items, path + (i,)) for i, item in enumerate(value)]
        count = len(value)
        if "minItems" in schema and count < schema["minItems"]:
            self.fail(path, "must not be empty" if schema["minItems"] == 1 else f"must have at least {schema['minItems']} items")
        if "maxItems" in schema and count > schema["maxItems"]:
            noun = "item" if schema["maxItems"] == 1 else "items"
            self.fail(path, f"must have at most {schema['maxItems']} {noun} (it has {count})")
        keys = schema.get("x-kubernetes-list-map-keys")
        if schema.get("x-kubernetes-list-type") == "map" and keys:
            seen: dict[tuple[Any, ...], int] = {}
            for i, item in enumerate(result):
                if not isinstance(item, dict):
                    continue
                key = tuple(item.get(k) for k in keys)
                if not all(isinstance(part, (str, int, bool, type(None))) for part in key):
                    continue  # a key of the wrong type is already reported where it stands
                if key in seen:
                    shown = ", ".join(f"{k}={quoted(str(v))}" for k, v in zip(keys, key, strict=True))
                    self.fail(
                        path + (i, keys[0]),
                        f"duplicate entry {shown}: {path_noun(path)} must have unique {'/'.join(keys)}s (first at [{seen[key]}])",
                    )
                else:
                    seen[key] = i
        return result

    def _check_string(self, value: str, schema: dict[str, Any], path: FieldPath) -> None:
        length = len(value)
        if "minLength" in schema and length < schema["minLength"]:
            self.fail(path, "must not be empty" if schema["minLength"] == 1 else f"must be at least {schema['minLength']} characters long")
        if "maxLength" in schema and length > schema["maxLength"]:
            self.fail(path, f"must be at most {schema['maxLength']} characters long (it is {length})")
        if "enum" in schema and value not in schema["enum"]:
            self.fail(path, "must be one of " + ", ".join(schema["enum"]) + did_you_mean(value, schema["enum"]))
        pattern = schema.get("pattern")
        if pattern and value and not _compiled(pattern).search(value):
            if schema.get("x-kubernetes-int-or-string"):
                self.fail(path, f"must be {QUANTITY_HINT}, not {quoted(value)}")
            else:
                self.fail(path, f"must be {PATTERN_NAMES.get(pattern, 'matched by ' + pattern)}, not {quoted(value)}")

    def _check_number(self, value: float, schema: dict[str, Any], path: FieldPath) -> None:
        if "minimum" in schema and value < schema["minimum"]:
            self.fail(path, f"must be at least {schema['minimum']} (it is {value})")
        if "maximum" in schema and value > schema["maximum"]:
            self.fail(path, f"must be at most {schema['maximum']} (it is {value})")


_INT64 = 1 << 63


def _is_int64(value: Any) -> bool:
    """An integral float the API server gets as an integer: Go writes it as a JSON integer, which the server
    reads as an int64 while it fits; past int64 it stays a float64, and a schema's integer refuses that."""
    return isinstance(value, float) and value.is_integer() and abs(value) < _INT64


def _past_int64(value: Any) -> str:
    return ": past int64 the API server reads it as a number, not an integer" if isinstance(value, float) and value.is_integer() else ""


def path_noun(path: FieldPath) -> str:
    last = next((p for p in reversed(path) if isinstance(p, str)), "list")
    return str(last)


_PATTERNS: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        # The API server's Go regexp reads `$` as the end of the text; Python's `$` also matches
        # before a final line break (`engine\n` would pass a name pattern): read it as `\Z`.
        compiled = _PATTERNS[pattern] = re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))
    return compiled
