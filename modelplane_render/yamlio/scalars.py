"""How a scalar is read and written: the tag a plain scalar resolves to, the value and canonical text of
an int, bool or null, and the style of a string. Each is worked out once per distinct short text
(values repeat: keys, kinds, labels) by PyYAML's own resolver and constructors. A string is written
plain only where Kubernetes' Go readers read it as that string too (yamlio.kubernetes).
"""

from __future__ import annotations

from typing import Any, Optional

import yaml

from .kubernetes import reads_as_string

_T = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, MAP, SEQ = (_T + t for t in ("str", "int", "float", "bool", "null", "map", "seq"))
MERGE, VALUE = _T + "merge", _T + "value"
PLAIN = (True, False)  # a plain scalar's `implicit`

# The safe loader and dumper have no path resolvers, so a scalar's implicit tag depends only on its
# text and the resolver's fixed rules, and the class itself can stand in for a resolver.
_RESOLVER: Any = yaml.resolver.Resolver
_BASE_RESOLVE: Any = yaml.resolver.BaseResolver.resolve
RESOLVED: dict[tuple[str, Any], Any] = {}
MEMO_MAX = 200  # longer texts are rarely repeated: not remembered


def tag_of(value: str, implicit: Any) -> Any:
    """The tag a scalar with this text and `implicit` resolves to."""
    if len(value) > MEMO_MAX:
        return _BASE_RESOLVE(_RESOLVER, yaml.ScalarNode, value, implicit)
    key = (value, implicit)
    tag = RESOLVED.get(key)
    if tag is None:
        tag = RESOLVED[key] = _BASE_RESOLVE(_RESOLVER, yaml.ScalarNode, value, implicit)
    return tag


def resolve(resolver: Any, kind: Any, value: Any, implicit: Any) -> Any:
    """Resolver.resolve, remembered for scalars: the method of the loader classes."""
    if kind is yaml.ScalarNode and not resolver.yaml_path_resolvers:
        return tag_of(value, implicit)
    return _BASE_RESOLVE(resolver, kind, value, implicit)


# The tag a string that PyYAML would read back as a string, but Kubernetes' Go readers would not, resolves
# to when it is written: not STR, so the emitter quotes it (`'1e3'`, `'y'`, `'0o17'`).
NOT_A_STRING_TO_GO = "tag:modelplane.ai,2026:not-a-string-to-go"


def written_tag_of(value: str) -> Any:
    """The tag a plain scalar with this text means to every reader of the output: PyYAML's, and Go's."""
    tag = tag_of(value, PLAIN)
    return NOT_A_STRING_TO_GO if tag == STR and not reads_as_string(value) else tag


def written_resolve(resolver: Any, kind: Any, value: Any, implicit: Any) -> Any:
    """The dumper classes' Resolver.resolve: a text is written plain only where every reader reads it as what it is."""
    if kind is yaml.ScalarNode and implicit == PLAIN and not resolver.yaml_path_resolvers:
        return written_tag_of(value)
    return resolve(resolver, kind, value, implicit)


SCALARS = {tag: yaml.constructor.SafeConstructor.yaml_constructors[tag] for tag in (INT, FLOAT, BOOL, NULL)}
_CONSTRUCTOR = yaml.constructor.SafeConstructor()

# How each short plain int, bool or null goes out: (its value, its text, its event's `implicit`).
SCALAR_OUT: dict[str, tuple[Any, str, tuple[bool, bool]]] = {}


def scalar_out(tag: str, value: str) -> tuple[Any, str, tuple[bool, bool]]:
    """As SafeRepresenter writes the value a plain int, bool or null resolves to: `0x1F` becomes 31, `True` true."""
    out = SCALAR_OUT.get(value)
    if out is not None:
        return out
    data = SCALARS[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, value))
    if tag == INT:
        text = str(data)
    else:
        text = "null" if data is None else "true" if data else "false"
    out = (data, text, (tag_of(text, PLAIN) == tag, False))
    if len(value) <= MEMO_MAX:
        SCALAR_OUT[value] = out
    return out


def string_style(value: str, literal: bool) -> Optional[str]:
    """Double quotes for a string with NEL, as libyaml's emitter picks them itself (`\\N`): PyYAML's
    pure-Python one, used where libyaml is missing, would write NEL raw in a literal block or in
    single quotes, where a reader takes it for a line break. Else a literal block for a
    multi-line string when `literal`, else the emitter's choice."""
    if "\x85" in value:
        return '"'
    return "|" if literal and "\n" in value else None


# How each short string goes out: (its style, its event's `implicit`).
STRING_OUT: dict[str, tuple[Optional[str], tuple[bool, bool]]] = {}


def string_out(value: str) -> tuple[Optional[str], tuple[bool, bool]]:
    """A string's output style, and whether it may be written plain (its text resolves to a string)."""
    out = STRING_OUT.get(value)
    if out is not None:
        return out
    out = (string_style(value, True), (written_tag_of(value) == STR, True))
    if len(value) <= MEMO_MAX:
        STRING_OUT[value] = out
    return out
