"""A seeded corpus of ModelReplica YAML texts for the input differential (tests/test_yaml_differential.py).

Each text is a valid fixture's replica.yaml with one change written as YAML TEXT, where a dumper would
have quoted it: a plain scalar of YAML 1.1 or 1.2 kin in a string, integer, boolean or int-or-string
field, a tag, a key that is not text (`y:`, `~:`, `1e3:`), a duplicate, merged or unknown key, an ObjectMeta
field, a directive, byte-order marks, document separators, anchors, flow style, another quoting style.
Where a field is comes from the parser's events (yaml.parse: every scalar's span in the text); what
type it holds comes from the project's CRD. Deterministic: one fixed seed, no clock.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from conftest import VALID
from modelplane_render import crd

SEED = 25  # issue 25
BOM = "\ufeff"


@dataclass(frozen=True)
class Site:
    """A node of a base document: its field path, its span in the text and how it is written."""

    path: tuple[Any, ...]
    role: str  # "key", "value" or "item"
    node: str  # "scalar", "map", "seq" or "alias"
    start: int
    end: int
    style: str  # a scalar's style: "" plain, "'", '"', "|", ">"; else "flow" or "block"
    value: str  # a scalar's text; for a collection, its first key (maps) or ""
    flow: bool  # inside a flow collection
    column: int  # 0-based column of the node (of the first key, for a block mapping)
    first_key: int = -1  # a mapping's first key: where a new entry is inserted


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    raw: bytes
    namespace: str  # the base's: where the server is asked to create it


def sites(text: str) -> list[Site]:
    """Every node of a one-document text with its path, from the parser's events (spans in characters)."""
    found: list[Site] = []
    stack: list[dict[str, Any]] = []  # open collections: kind, path, flow, next key or index

    def where() -> tuple[tuple[Any, ...], str]:
        if not stack:
            return (), "value"
        top = stack[-1]
        if top["kind"] == "seq":
            return top["path"] + (top["index"],), "item"
        if top["key"] is None:
            return top["path"], "key"
        return top["path"] + (top["key"],), "value"

    def done(value: Any) -> None:
        if not stack:
            return
        top = stack[-1]
        if top["kind"] == "seq":
            top["index"] += 1
        elif top["key"] is None:
            top["key"] = value
        else:
            top["key"] = None

    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        flow = any(frame["flow"] for frame in stack)
        if isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            path, role = where()
            is_scalar = isinstance(event, yaml.ScalarEvent)
            style = (event.style or "") if is_scalar else ""
            value = event.value if is_scalar else ""
            found.append(
                Site(
                    path, role, "scalar" if is_scalar else "alias", event.start_mark.index, event.end_mark.index, style, value, flow,
                    event.start_mark.column,
                )
            )  # fmt: skip
            done(value)
        elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            path, role = where()
            kind = "map" if isinstance(event, yaml.MappingStartEvent) else "seq"
            stack.append({"kind": kind, "path": path, "flow": bool(event.flow_style), "key": None, "index": 0, "role": role})
            stack[-1]["site"] = len(found)
            found.append(
                Site(
                    path, role, kind, event.start_mark.index, -1, "flow" if event.flow_style else "block", "", flow, event.start_mark.column
                )
            )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            frame = stack.pop()
            opened = found[frame["site"]]
            first = next((s for s in found[frame["site"] + 1 :] if s.role == "key" and s.path == opened.path), None)
            found[frame["site"]] = Site(
                opened.path, opened.role, opened.node, opened.start, event.end_mark.index, opened.style, first.value if first else "",
                opened.flow, first.column if first and opened.node == "map" and opened.style == "block" else opened.column,
                first.start if first else -1,
            )  # fmt: skip
            done(None)
    return found


def field_kind(path: tuple[Any, ...]) -> str:
    """What the CRD (or ObjectMeta) holds at path: string, integer, boolean, int-or-string, free, object, array, or none."""
    if path[:1] == ("metadata",):
        if len(path) == 1:
            return "object"
        if len(path) == 2:
            return {"labels": "object", "annotations": "object"}.get(path[1], "string")
        return "string" if len(path) == 3 and path[1] in ("labels", "annotations") else "none"
    node: Any = crd.openapi_schema()
    for step in path:
        if node.get("x-kubernetes-preserve-unknown-fields") and not node.get("properties"):
            return "free"
        if isinstance(step, int):
            node = node.get("items")
        else:
            node = (node.get("properties") or {}).get(step) or node.get("additionalProperties")
        if not isinstance(node, dict):
            return "none"
    if node.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    if node.get("x-kubernetes-preserve-unknown-fields") and not node.get("properties"):
        return "free"
    return str(node.get("type", "none"))


# --- what is written -------------------------------------------------------------------------------

# Plain scalars that YAML 1.1 (go-yaml v2), YAML 1.2 or PyYAML read as something other than text, and
# their neighbours that stay text. Each is written in place of a string field's value.
PLAIN_KIN = (
    "y Y n N yes Yes YES no No on On ON off Off OFF true True TRUE false False FALSE ~ null Null NULL "
    "1e3 1E3 6e+2 1e-3 .2e1 3.0e0 1e0 0o17 0O17 0755 08 09 0x1F 0X1f 0b101 -0b101 1_000 1__0 _1 1_ +1 -1 0 -0 .5 +.5 -.5 1. 1.0 "
    ".inf -.Inf +.INF .nan .NaN .NAN 1:20 190:20:30 -1:20 1:20.5 2001-12-14 2001-12-14t21:59:43.10-05:00 "
    "2001-12-14T21:59:43Z 12345678901234567890 9223372036854775807 9223372036854775808 -9223372036854775809 "
    "18446744073709551616 99999999999999999999 1e400 0x 0o 0o8 0b2 0x1G ._5 1e 1e3x yes! y2 nil None NaN Infinity "
    "+ - = <<"
).split()
# The same field written with tags, quotes, escapes, block scalars, flow collections and anchors ({i}: the
# indentation a block scalar's lines need there).
WRITTEN_KIN = (
    "''",
    '""',
    "'y'",
    '"y"',
    "'1e3'",
    '"08"',
    "'~'",
    "'it''s'",
    '"\\x41\\u00e9\\U0001F600"',
    '"a\\/b"',
    '"tab\\there"',
    '"\\N\\_\\L\\P"',
    '"line\\nbreak"',
    "!!str 1",
    "!!str y",
    "!!str ~",
    "!!str",
    "!!str .inf",
    "!!str 0o17",
    "! y",
    "!<tag:yaml.org,2002:str> 1",
    '!!int "1"',
    "!!int 1",
    "!!float 1",
    "!!bool y",
    '!!bool "true"',
    '!!null ""',
    "!!int 1:20",
    "!!float 1:20",
    "!!int 99999999999999999999",
    "!!float .inf",
    "!!float 1_0.5",
    "!!bool on",
    "!!null ~",
    "!!binary aGVsbG8=",
    "!!timestamp 2001-12-14",
    "!!timestamp x",
    '"it\\\'s"',
    "!custom x",
    "!e!x x",
    "[a]",
    "[]",
    "{a: b}",
    "{}",
    "&a y",
    "&a text",
    "*nowhere",
    "|\n{i}text",
    "|-\n{i}y",
    ">-\n{i}folded\n{i}text",
    "|2-\n{i}  two",
    "'multi\n{i}line'",
    '"multi\\\n{i}line"',
    "plain\n{i}continued",
    "",
)
# In an integer field (copies, count, nodes, containerPort, a probe's seconds).
INTEGER_KIN = (
    "0o2 0O2 02 08 09 012 1e0 1E0 2.0 2. 3.5 1_0 +1 +2 -1 0 -0 0x2 0X2 0b10 1e1 6e-1 .5e1 2e0 20e-1 "
    "9223372036854775807 9223372036854775808 -9223372036854775808 -9223372036854775809 18446744073709551615 "
    "18446744073709551616 99999999999999999999 1e20 1e400 .inf -.inf .nan ~ null true y on 1:20 2001-12-14 0x 1_ "
).split() + [
    "'1'",
    '"1"',
    '!!int "1"',
    "!!int 2",
    "!!float 1",
    '!!float "2"',
    "!!str 1",
    "!!int 0x2",
    "!!int 1_0",
    "!!int 08",
    "!!int 0o2",
    "!!int 1.0",
    "!!int 9223372036854775808",
    "!!int 99999999999999999999",
    "!!float .inf",
    "!!float 1e400",
    "!!float 2.5",
    "!!bool y",
    "!!null ''",
    "!custom 1",
    "[1]",
    "{a: 1}",
    "&n 2",
    "",
]
BOOLEAN_KIN = "y n Y N yes no on off On OFF True FALSE TRUE 1 0 ~ 'true' \"false\" [true]".split() + [
    "!!bool y",
    '!!bool "true"',
    "!!bool 1",
    "!!str true",
    "!!int 1",
    "!custom true",
    "&b on",
]
QUANTITY_KIN = (
    "1e3 1E3 0o17 08 1.5 0.5 .5 y on ~ '1' 2Gi 0x10 1_000 +1 -1 500m 1e-3 1e400 .inf .nan 9223372036854775807 "
    "9223372036854775808 18446744073709551616 1:20 2001-12-14 1Ki [1]"
).split() + ["!!float 1", "!!str 1", '!!int "2"', "{a: 1}"]
# Mapping keys: in labels and annotations, in the picker's free-form config, and as a struct's field name.
KEY_KIN = (
    "y n on off yes True 1 0 -1 +1 0o17 08 1e3 1.5 0x1F 1_000 ~ null '' '~' \"\" 2001-12-14 9223372036854775807 "
    "9223372036854775808 18446744073709551616 99999999999999999999 .inf .nan 1:20 << [a] team team2 example.com/y"
).split() + ["!!str 1", "!!int 1", '!!null ""', "{a: b}", "? [a]"]


def _indent(text: str, column: int) -> str:
    return text.replace("{i}", " " * column)


def _replace(text: str, site: Site, new: str) -> str:
    return text[: site.start] + new + text[site.end :]


def _insert_entry(text: str, mapping: Site, entry: str) -> str:
    """A new first entry of a mapping: `entry` written before its first key, on its own line when block."""
    at = mapping.first_key
    if mapping.style == "flow":
        return text[:at] + entry + ", " + text[at:]
    return text[:at] + entry.replace("\n", "\n" + " " * mapping.column) + "\n" + " " * mapping.column + text[at:]


@dataclass
class Base:
    name: str
    text: str
    sites: list[Site]
    namespace: str

    def values(self, *kinds: str) -> list[Site]:
        """Scalar values (not keys) whose field holds one of kinds, written plain or quoted on one line."""
        return [
            s
            for s in self.sites
            if s.node == "scalar" and s.role != "key" and s.path[:1] != ("apiVersion",) and s.path[:1] != ("kind",)
            and s.path != ("metadata", "namespace") and s.style in ("", "'", '"') and field_kind(s.path) in kinds
        ]  # fmt: skip

    def mappings(self) -> list[Site]:
        return [s for s in self.sites if s.node == "map" and s.first_key >= 0]

    def site(self, path: tuple[Any, ...], node: str = "map") -> Site | None:
        return next((s for s in self.sites if s.path == path and s.node == node and s.role != "key"), None)


def bases() -> list[Base]:
    """Each valid fixture's replica.yaml (one ModelReplica document each) with its nodes."""
    found = []
    for case in VALID:
        path = case / "replica.yaml"
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            found.append(Base(case.name, text, sites(text), yaml.safe_load(text)["metadata"]["namespace"]))
    assert len(found) >= 15
    return found


def _value_cases(
    rng: random.Random, all_bases: list[Base], family: str, kinds: tuple[str, ...], pool: list[str], per: int
) -> Iterator[Case]:
    candidates = [(b, s) for b in all_bases for s in b.values(*kinds)]
    for new in pool:
        for base, site in rng.sample(candidates, min(per, len(candidates))):
            if "\n" in new and site.flow:
                continue  # a block scalar can't stand in a flow collection
            yield Case(
                f"{family}/{base.name}/{'.'.join(map(str, site.path))}={new!r}",
                family,
                _replace(base.text, site, _indent(new, site.column + 2)).encode(),
                base.namespace,
            )


def value_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    yield from _value_cases(rng, all_bases, "string-plain", ("string",), PLAIN_KIN, 4)
    yield from _value_cases(rng, all_bases, "string-written", ("string",), list(WRITTEN_KIN), 4)
    yield from _value_cases(rng, all_bases, "integer", ("integer",), INTEGER_KIN, 4)
    yield from _value_cases(rng, all_bases, "boolean", ("boolean",), BOOLEAN_KIN, 2)
    yield from _value_cases(rng, all_bases, "int-or-string", ("int-or-string",), QUANTITY_KIN, 3)
    yield from _value_cases(rng, all_bases, "free", ("free",), PLAIN_KIN + list(WRITTEN_KIN), 1)


# Where a key of KEY_KIN goes: a label, an annotation, the picker's free-form config, a struct's field name.
KEY_TARGETS = (
    ("metadata",),
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("spec", "engines", 0, "members", 0, "template", "metadata", "labels"),
    ("spec", "serving", "endpointPicker", "config"),
    ("spec", "engines", 0, "members", 0, "deviceRequests", 0),
)


def _put(base: Base, path: tuple[Any, ...], entry: str) -> str | None:
    """base's text with `entry` (`key: value`) in the mapping at path, the mapping made where it is missing or null."""
    mapping = base.site(path)
    if mapping is not None:
        return _insert_entry(base.text, mapping, entry)
    null = base.site(path, "scalar")
    if null is not None and null.value in ("", "null", "~"):
        return (
            _replace(base.text, null, "{" + entry + "}")
            if null.value
            else base.text[: null.start] + " {" + entry + "}" + base.text[null.end :]
        )
    if path and base.site(path[:-1]) is not None:
        return _put(base, path[:-1], f"{path[-1]}: {{{entry}}}")
    return None


def key_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    for key in KEY_KIN:
        for target in KEY_TARGETS:
            for base in rng.sample(all_bases, 2 if target[-1] in ("labels", "annotations") else 1):
                value = "v" if target[0] == "metadata" or "labels" in target else "1"
                text = _put(base, target, f"{key}: {value}")
                if text is not None:
                    yield Case(f"key/{base.name}/{'.'.join(map(str, target))}/{key!r}", "key", text.encode(), base.namespace)


def _first_key(base: Base, mapping: Site) -> Site:
    return next(s for s in base.sites if s.role == "key" and s.path == mapping.path and s.start == mapping.first_key)


def _value_of(base: Base, mapping: Site, key: Site) -> Site | None:
    return next((s for s in base.sites if s.role == "value" and s.path == mapping.path + (key.value,)), None)


def struct_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    """Keys of the CRD's own objects: duplicated, null, merged, unknown with a null value, spelled otherwise."""
    for base in all_bases:
        maps = [m for m in base.mappings() if field_kind(m.path) == "object" or m.path in ((), ("metadata",))]
        for mapping in rng.sample(maps, min(6, len(maps))):
            key = _first_key(base, mapping)
            value = _value_of(base, mapping, key)
            scalar = value is not None and value.node == "scalar" and value.style in ("", "'", '"')
            same = base.text[value.start : value.end] if value is not None and scalar else "~"
            name = f"struct/{base.name}/{'.'.join(map(str, mapping.path))}.{key.value}"
            entries = {
                "duplicate": f"{key.value}: {same}",
                "duplicate-quoted": f'"{key.value}": {same}',
                "null-key": "~: x",
                "null-word-key": "null: x",
                "empty-key": '"": x',
                "explicit-null-key": "? ~\n: x",
                "merge-self": f"<<: {{{key.value}: {same}}}",
                "merge-unknown": "<<: {zzz: 1}",
                "merge-null": "<<: ~",
                "unknown-null": f"{key.value}x:",
                "unknown-tilde": f"{key.value[:-1]}: ~",
                "unknown-null-word": f"{key.value}X: null",
                "unknown-value": f"{key.value}x: 1",
                "case": f"{key.value[:1].upper()}{key.value[1:]}: {same}",
                "case-null": f"{key.value.upper()}: ~",
            }
            for label in rng.sample(sorted(entries), 5):
                yield Case(f"{name}/{label}", "struct", _insert_entry(base.text, mapping, entries[label]).encode(), base.namespace)
            for label, new in (
                ("explicit", f"? {key.value}\n{' ' * key.column}"),
                ("quoted", f"'{key.value}'"),
                ("tagged", f"!!str {key.value}"),
            ):
                if mapping.style == "block" or label != "explicit":
                    yield Case(f"{name}/{label}", "struct", _replace(base.text, key, new).encode(), base.namespace)
            if value is not None and scalar:  # the entry given only through a merge key: `<<: {count: 1}`
                moved = base.text[: key.start] + f"<<: {{{key.value}: {same}}}" + base.text[value.end :]
                yield Case(f"{name}/merge-moved", "struct", moved.encode(), base.namespace)


def document_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    """What only the whole text shows: directives, byte-order marks, separators, several documents, line ends, encodings."""
    for base in all_bases:
        t, other = base.text, rng.choice([b for b in all_bases if b is not base]).text
        body = "\n".join(line for line in t.splitlines() if not line.startswith("#")) + "\n"
        wrapped = {
            "directive-yaml-1.1": "%YAML 1.1\n---\n" + t,
            "directive-yaml-1.2": "%YAML 1.2\n--- # c\n" + t,
            "directive-tag": "%TAG !e! tag:example.com,2000:\n---\n" + t,
            "directive-reserved": "%FOO bar\n---\n" + t,
            "directive-second-document": t + "...\n%YAML 1.1\n---\n" + other,
            "bom": BOM + t,
            "bom-2": BOM * 2 + t,
            "bom-3": BOM * 3 + t,
            "bom-directive": BOM + "%YAML 1.1\n---\n" + t,
            "bom-separator": BOM + "---\n" + t,
            "bom-second-document": t + "---\n" + BOM + other,
            "separator-first": "---\n" + t,
            "separator-comment": "--- # c\n" + t,
            "separator-twice": "---\n---\n" + t,
            "separator-last": t + "---\n",
            "separator-tag": "--- !!map\n" + body,
            "separator-four-dashes": "----\n" + t,
            "end-marker": t + "...\n",
            "end-marker-comment": t + "...\n# c\n",
            "comment-document": t + "---\n# only a comment\n",
            "null-document": t + "---\n~\n",
            "null-word-document": t + "---\nnull\n",
            "blank-document": t + "\n---\n\n",
            "same-twice": t + "---\n" + t,
            "two-replicas": t + "---\n" + other,
            "two-replicas-end-marker": t + "...\n---\n" + other,
            "crlf": t.replace("\n", "\r\n"),
            "crlf-two-replicas": (t + "---\n" + other).replace("\n", "\r\n"),
            "cr": t.replace("\n", "\r"),
            "no-final-break": t.rstrip("\n"),
            "trailing-spaces": t.replace("\n", "  \n"),
            "tab-after-colon": t.replace("kind: ", "kind:\t", 1),
            "nel-in-comment": "# a\x85b: c\n" + t,
            "line-separator-in-comment": "# a\u2028b: c\n" + t,
        }
        for label in rng.sample(sorted(wrapped), 12):
            yield Case(f"document/{base.name}/{label}", "document", wrapped[label].encode(), base.namespace)
        for codec in rng.sample(["utf-16", "utf-16-le-bom", "utf-16-be-bom", "utf-16-le"], 2):
            if codec == "utf-16-le-bom":
                raw = b"\xff\xfe" + t.encode("utf-16-le")
            elif codec == "utf-16-be-bom":
                raw = b"\xfe\xff" + t.encode("utf-16-be")
            else:
                raw = t.encode(codec)
            yield Case(f"document/{base.name}/{codec}", "document", raw, base.namespace)


def _key_of(base: Base, node: Site) -> Site | None:
    """The key whose value is node (a block mapping value)."""
    if node.role != "value" or not node.path:
        return None
    return next((s for s in base.sites if s.role == "key" and s.path == node.path[:-1] and s.value == node.path[-1]), None)


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def anchor_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    """An anchored scalar or collection repeated by an alias elsewhere, merged with `<<: *a`, or left unused."""
    for base in all_bases:
        by_field: dict[Any, list[Site]] = {}
        for site in base.values("string", "integer"):
            by_field.setdefault(site.path[-1], []).append(site)
        pairs = [(a, b) for group in by_field.values() for a, b in zip(group, group[1:], strict=False)]
        for first, second in rng.sample(pairs, min(2, len(pairs))):
            text = _replace(base.text, second, "*a")
            text = text[: first.start] + "&a " + text[first.start :]
            yield Case(f"anchor/{base.name}/scalar/{'.'.join(map(str, second.path))}", "anchor", text.encode(), base.namespace)
        blocks = [s for s in base.sites if s.node in ("map", "seq") and s.style == "block" and _key_of(base, s) is not None]
        by_name: dict[Any, list[Site]] = {}
        for site in blocks:
            by_name.setdefault(site.path[-1], []).append(site)
        for group in by_name.values():
            if len(group) < 2:
                continue
            first, second = group[0], group[1]
            key1, key2 = _key_of(base, first), _key_of(base, second)
            assert key1 is not None and key2 is not None
            colon2 = base.text.index(":", key2.end) + 1
            text = (
                base.text[:colon2]
                + " *a\n"
                + base.text[_line_start(base.text, second.end) if second.end < len(base.text) else len(base.text) :]
            )
            colon1 = base.text.index(":", key1.end) + 1
            text = text[:colon1] + " &a" + text[colon1:]
            yield Case(f"anchor/{base.name}/collection/{'.'.join(map(str, second.path))}", "anchor", text.encode(), base.namespace)
            if first.node == "map" and second.node == "map":
                merged = _insert_entry(base.text, second, "<<: *a")
                merged = merged[:colon1] + " &a" + merged[colon1:]
                yield Case(f"anchor/{base.name}/merge/{'.'.join(map(str, second.path))}", "anchor", merged.encode(), base.namespace)
        unused = rng.choice(blocks)
        key = _key_of(base, unused)
        assert key is not None
        colon = base.text.index(":", key.end) + 1
        yield Case(
            f"anchor/{base.name}/unused/{'.'.join(map(str, unused.path))}",
            "anchor",
            (base.text[:colon] + " &unused" + base.text[colon:]).encode(),
            base.namespace,
        )


def flow_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    """Block collections of scalars written in flow style, as they are and with an item of PLAIN_KIN."""
    for base in all_bases:
        for node in [s for s in base.sites if s.style == "block" and s.node in ("seq", "map") and _key_of(base, s) is not None]:
            inside = [s for s in base.sites if node.start <= s.start < node.end and s is not node]
            if not inside or any(s.node != "scalar" or s.style not in ("", "'", '"') for s in inside):
                continue
            texts = [base.text[s.start : s.end] for s in inside]
            if any(c in t for t in texts for c in ",[]{}#") and not all(t[:1] in "'\"" for t in texts if any(c in t for c in ",[]{}#")):
                continue
            if node.node == "seq":
                items = texts
                odd = rng.choice(PLAIN_KIN)
                variants = {"flow": "[" + ", ".join(items) + "]", "flow-trailing-comma": "[" + ", ".join(items) + ",]",
                            "flow-kin": "[" + ", ".join(items + [odd]) + "]", "flow-empty-entry": "[" + ", , ".join(items) + "]"}  # fmt: skip
            else:
                pairs = [f"{k}: {v}" for k, v in zip(texts[::2], texts[1::2], strict=True)]
                variants = {
                    "flow": "{" + ", ".join(pairs) + "}",
                    "flow-no-space": "{" + ",".join(p.replace(": ", ":") for p in pairs) + "}",
                }
            key = _key_of(base, node)
            assert key is not None
            colon = base.text.index(":", key.end) + 1
            end = _line_start(base.text, node.end) if node.end < len(base.text) else len(base.text)
            for label, flow in variants.items():
                text = base.text[:colon] + " " + flow + "\n" + base.text[end:]
                yield Case(f"flow/{base.name}/{'.'.join(map(str, node.path))}/{label}", "flow", text.encode(), base.namespace)


def quoting_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    """A string field's own value written in another style: quoted, plain, escaped, as a block scalar, tagged."""
    for base in all_bases:
        for site in rng.sample(base.values("string"), 4):
            value = site.value
            styles = {
                "single": "'" + value.replace("'", "''") + "'",
                "double": '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"',
                "double-escaped": '"' + "".join(f"\\x{ord(c):02x}" if ord(c) < 128 else c for c in value[:1]) + value[1:].replace("\\", "\\\\").replace('"', '\\"') + '"',
                "plain": value,
                "tagged": "!!str " + base.text[site.start : site.end],
                "literal": "|-\n{i}" + value,
                "folded": ">-\n{i}" + value,
            }  # fmt: skip
            for label in rng.sample(sorted(styles), 3):
                new = styles[label]
                if "\n" in new and site.flow:
                    continue
                yield Case(
                    f"quoting/{base.name}/{'.'.join(map(str, site.path))}/{label}",
                    "quoting",
                    _replace(base.text, site, _indent(new, site.column + 2)).encode(),
                    base.namespace,
                )


OWNER = "{apiVersion: v1, kind: ConfigMap, name: c, uid: 6f1c0d8e-1d2a-4c1e-9a9e-0f3f3c2b1a00"
OWNER_2 = "{apiVersion: apps/v1, kind: Deployment, name: d, uid: 7a2d1e9f-2e3b-4d2f-8b8f-1e4e4d3c2b11"
METADATA = {
    "owner": f"ownerReferences: [{OWNER}}}]",
    "owner-block": "ownerReferences:\n- apiVersion: apps/v1\n  kind: Deployment\n  name: d\n  uid: u\n  controller: true\n  blockOwnerDeletion: y",
    "owner-no-api-version": "ownerReferences: [{kind: ConfigMap, name: c, uid: u}]",
    "owner-no-kind": "ownerReferences: [{apiVersion: v1, name: c, uid: u}]",
    "owner-no-name": "ownerReferences: [{apiVersion: v1, kind: ConfigMap, uid: u}]",
    "owner-no-uid": "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c}]",
    "owner-empty-uid": "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: ''}]",
    "owner-null-name": "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: ~, uid: u}]",
    "owner-api-version-three-parts": "ownerReferences: [{apiVersion: a/b/v1, kind: ConfigMap, name: c, uid: u}]",
    "owner-api-version-no-version": "ownerReferences: [{apiVersion: apps/, kind: Deployment, name: c, uid: u}]",
    "owner-api-version-slash": "ownerReferences: [{apiVersion: /, kind: Deployment, name: c, uid: u}]",
    "owner-api-version-no-group": "ownerReferences: [{apiVersion: /v1, kind: ConfigMap, name: c, uid: u}]",
    "owner-event": "ownerReferences: [{apiVersion: v1, kind: Event, name: c, uid: u}]",
    "owner-event-group": "ownerReferences: [{apiVersion: events.k8s.io/v1, kind: Event, name: c, uid: u}]",
    "owner-two-controllers": f"ownerReferences: [{OWNER}, controller: true}}, {OWNER_2}, controller: y}}]",
    "owner-one-controller": f"ownerReferences: [{OWNER}, controller: true}}, {OWNER_2}, controller: false}}]",
    "owner-controller-string": f"ownerReferences: [{OWNER}, controller: 'true'}}]",
    "owner-uid-number": "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c, uid: 1e3}]",
    "owner-unknown-field": f"ownerReferences: [{OWNER}, namespace: x}}]",
    "owner-unknown-null": f"ownerReferences: [{OWNER}, namespace: ~}}]",
    "owner-not-a-list": f"ownerReferences: {OWNER}}}",
    "owner-item-not-a-map": "ownerReferences: [c]",
    "owner-null": "ownerReferences: ~",
    "owner-empty": "ownerReferences: []",
    "owner-null-item": "ownerReferences: [~]",
    "owner-duplicate": f"ownerReferences: [{OWNER}}}, {OWNER}}}]",
    "finalizers": "finalizers: [example.com/cleanup]",
    "finalizers-no-domain": "finalizers: [cleanup]",
    "finalizers-invalid": "finalizers: [Bad Name]",
    "finalizers-three-parts": "finalizers: [a/b/c]",
    "finalizers-number": "finalizers: [1]",
    "finalizers-y": "finalizers: [y]",
    "finalizers-orphan-and-foreground": "finalizers: [orphan, foregroundDeletion]",
    "finalizers-not-a-list": "finalizers: example.com/x",
    "generation": "generation: 1",
    "generation-negative": "generation: -1",
    "generation-string": "generation: '1'",
    "generation-float": "generation: 1.5",
    "generation-octal": "generation: 0o17",
    "uid": "uid: 6f1c0d8e-1d2a-4c1e-9a9e-0f3f3c2b1a00",
    "uid-number": "uid: 1",
    "resource-version": "resourceVersion: '1'",
    "resource-version-number": "resourceVersion: 1",
    "self-link": "selfLink: /apis/x",
    "creation-timestamp": "creationTimestamp: '2001-12-14T21:59:43Z'",
    "creation-timestamp-plain": "creationTimestamp: 2001-12-14T21:59:43Z",
    "creation-timestamp-null": "creationTimestamp: null",
    "creation-timestamp-date": "creationTimestamp: 2001-12-14",
    "creation-timestamp-spaced": "creationTimestamp: 2001-12-14 21:59:43.10 -5",
    "creation-timestamp-text": "creationTimestamp: yesterday",
    "creation-timestamp-number": "creationTimestamp: 1",
    "deletion-timestamp": "deletionTimestamp: '2001-12-14T21:59:43Z'",
    "deletion-grace": "deletionGracePeriodSeconds: 30",
    "deletion-grace-negative": "deletionGracePeriodSeconds: -1",
    "deletion-grace-string": "deletionGracePeriodSeconds: '30'",
    "managed-fields": "managedFields: [{manager: m, operation: Apply, apiVersion: modelplane.ai/v1alpha1, fieldsType: FieldsV1, fieldsV1: {}}]",
    "managed-fields-operation": "managedFields: [{manager: m, operation: Patch, fieldsType: FieldsV1}]",
    "managed-fields-no-operation": "managedFields: [{manager: m}]",
    "managed-fields-type": "managedFields: [{manager: m, operation: Update, fieldsType: FieldsV2}]",
    "managed-fields-unknown": "managedFields: [{manager: m, operation: Update, extra: 1}]",
    "managed-fields-time": "managedFields: [{manager: m, operation: Update, time: '2001-12-14T21:59:43Z'}]",
    "managed-fields-time-date": "managedFields: [{manager: m, operation: Update, time: 2001-12-14}]",
    "generate-name-and-name": "generateName: x-",
    "labels/null-value": "team: ~",
    "labels/empty-value": "team: ''",
    "annotations/null-value": "example.com/a: ~",
    "annotations/number": "example.com/a: 1",
    "unknown-null": "nam:",
    "case": "Name: x",
}


def metadata_cases(rng: random.Random, all_bases: list[Base]) -> Iterator[Case]:
    """ObjectMeta fields beyond name and namespace, as the API server checks them on create."""
    for label, entry in METADATA.items():
        for base in rng.sample(all_bases, 2):
            text = _put(base, ("metadata", label.split("/")[0]) if "/" in label else ("metadata",), entry)
            if text is not None:
                yield Case(f"metadata/{base.name}/{label}", "metadata", text.encode(), base.namespace)


def all_cases() -> list[Case]:
    """The corpus: the same every run (one seed), each case named for its base, field and change."""
    rng = random.Random(SEED)
    all_bases = bases()
    cases: list[Case] = []
    for family in (value_cases, key_cases, struct_cases, document_cases, anchor_cases, flow_cases, quoting_cases, metadata_cases):
        cases.extend(family(rng, all_bases))
    return cases
