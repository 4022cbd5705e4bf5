"""yamlio reads and writes YAML as PyYAML (on libyaml) does: `fast` byte for byte, `libyaml`'s dumpers as SafeRepresenter.

`fast` exists for speed only: the output must stay byte-identical, and a text it takes must mean to
it exactly what it means to libyaml. So every answer it gives is compared with PyYAML
(libyaml-backed) on the templates' own output, on generated data written the way the templates
write it, and on YAML it must refuse; where it hands back, libyaml's Dumper writes what PyYAML's
SafeRepresenter writes.
"""

from __future__ import annotations

import datetime
import random
import re
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_render.errors import MapKey, RenderFailure
from modelplane_render.render import to_json
from modelplane_render.yamlio import fast, libyaml
from modelplane_render.yamlio.kubernetes import reads_as_string
from modelplane_render.yamlio.scalars import PLAIN, STR, tag_of

_SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _GoAware(_SAFE_DUMPER):  # type: ignore[misc]
    """PyYAML's safe dumper, no memo, writing a string plain only where Go's reader reads it as a string too (yamlio.kubernetes)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        tag = super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode and implicit == (True, False) and tag == STR and not reads_as_string(value):
            return "tag:example,not-a-string-to-go"
        return tag


class _Reference(_GoAware):
    """The dumper as it was: SafeRepresenter with literal blocks for multi-line strings, no fast path."""


_Reference.add_representer(str, libyaml._represent_str)


def reference_dump(data: Any) -> str:
    return "---\n" + yaml.dump(data, Dumper=_Reference, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)


def reference_load(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


TRICKY = ["yes", "No", "on", "0755", "0x1f", "1:20", "~", "null", "", "- a", "a: b", "#x", "x #y", "'", '"', "\n", "a\nb", "a\n",
          " lead", "trail ", "2024-01-01", "2001-12-14t21:59:43.10-05:00", "=", "<<", "1e3", ".inf", "-.INF", ".NaN", "{a: 1}",
          "[1]", "&a", "*a", "!tag", "%x", "@x", "`x", "|", ">", "?", ":", "-", "---", "...", "é", "\u2028", "\x85", "\ufeff",
          "\t", "a\tb", "x" * 300, "1_000", "+1", "0b101", "0o17", "190:20:30", "Y", "n", "NULL", "True"]  # fmt: skip
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12), st.sampled_from(TRICKY))
keys = st.one_of(st.text(max_size=8), st.sampled_from(TRICKY), st.integers(), st.booleans(), st.none())
data = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=25)


@settings(max_examples=200, deadline=None)
@given(data)
def test_serialise_writes_what_pyyaml_writes(value: Any) -> None:
    assert libyaml.write_document(value) == reference_dump(value)


SHARED = [1, 2]


@pytest.mark.parametrize(
    "value",
    [
        {"a": SHARED, "b": SHARED},  # one object twice: an anchor and an alias, as PyYAML writes them
        {"when": datetime.date(2024, 1, 1), "at": datetime.datetime(2024, 1, 1, 12, 0)},
        {"f": 1.5, "g": 1e17, "h": float("inf")},
        {"bytes": b"\x00\x01"},
        [],
        {},
        "text",
        None,
    ],
)
def test_values_the_fast_path_leaves_to_pyyaml_come_out_the_same(value: Any) -> None:
    assert libyaml.write_document(value) == reference_dump(value)


def _outcome(dump: Any, value: Any) -> str:
    try:
        return str(dump(value))
    except yaml.YAMLError as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("value", [{"t": (1, 2)}, {"s": {1, 2}}, {"k": RenderFailure}, {"m": MapKey("a/b")}, {MapKey("k"): 1}])
def test_other_types_are_pyyaml_s_to_write_or_refuse(value: Any) -> None:
    assert _outcome(libyaml.write_document, value) == _outcome(reference_dump, value)


@settings(max_examples=200, deadline=None)
@given(data)
def test_the_plain_dumper_writes_what_pyyaml_s_safe_dumper_writes(value: Any) -> None:
    """plan embeds the picker's config as text written by PyYAML's safe dumper (width 80, no literal blocks)."""
    expected = yaml.dump(value, Dumper=_GoAware, sort_keys=False, default_flow_style=False, allow_unicode=True)
    assert yaml.dump(value, Dumper=libyaml.PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True) == expected


class _PurePython(yaml.SafeDumper):
    """libyaml.Dumper as it is where libyaml is missing: the same choices, PyYAML's pure-Python emitter."""

    represent = libyaml.Dumper.represent
    literal_blocks = True


_PurePython.add_representer(str, libyaml._represent_str)


@pytest.mark.parametrize("value", ["a\x85b", "two\nlines\x85", "tail\x85", "p\u2028q", "m\nn\u2029o", "two\nlines"])
def test_line_break_characters_read_back_exactly_from_either_emitter(value: str) -> None:
    """NEL: libyaml escapes it (`\\N`); PyYAML's own emitter wrote it raw, read back as a line break."""
    for dumper in (libyaml.Dumper, _PurePython):
        text = yaml.dump({"k": value}, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
        assert yaml.safe_load(text) == {"k": value}, (dumper.__name__, text)


def _plain_key(key: Any) -> bool:
    return isinstance(key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", key) is not None and tag_of(key, PLAIN) == STR


def _template_like(value: dict[str, Any], rnd: random.Random) -> str:
    """value as a template writes it: block mappings of plain keys and block sequences, some collections and every leaf as `tojson`.

    A root key that isn't plain is written as JSON (`"a b": 1`), which read hands back.
    """
    lines: list[str] = []

    def flow(item: Any) -> bool:
        if not isinstance(item, (dict, list)) or not item:
            return True
        return (isinstance(item, dict) and not all(_plain_key(k) for k in item)) or rnd.random() < 0.4

    def mapping(items: dict[Any, Any], pad: str, first: str) -> None:
        start = first
        for key, item in items.items():
            key_text = key if _plain_key(key) else to_json(key)
            if flow(item):
                lines.append(f"{start}{key_text}: {to_json(item)}")
            elif isinstance(item, dict):
                lines.append(f"{start}{key_text}:")
                mapping(item, pad + "  ", pad + "  ")
            else:
                lines.append(f"{start}{key_text}:")
                sequence(item, pad if rnd.random() < 0.5 else pad + "  ")
            start = pad

    def sequence(items: list[Any], pad: str) -> None:
        for item in items:
            if not flow(item) and isinstance(item, dict):
                mapping(item, pad + "  ", pad + "- ")
            else:
                lines.append(f"{pad}- {to_json(item)}")

    mapping(value, "", "")
    return "\n" + "\n".join(lines) + "\n"


def _taken_or_handed_back(text: str) -> Any:
    """read's answer, which must be libyaml's; None when read hands the text back."""
    got = fast.read(text)
    if got is not None:
        expected = reference_load(text)
        assert len(expected) == 1 and got == expected[0] and repr(got) == repr(expected[0]), text
    return got


# What tojson can write: hostile strings, big ints, int keys (JSON makes them strings). Floats, which
# the templates never hold and read hands back, are the unit tests' (below); here they would leave
# almost no example taken.
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12), st.sampled_from(TRICKY))
keys = st.one_of(st.text(max_size=8), st.sampled_from(TRICKY), st.integers())
data = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=25)
plain_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True)
# Mostly keys a template could write plainly; now and then one only JSON can (read hands those back).
objects = st.dictionaries(
    st.one_of(plain_keys, plain_keys, plain_keys, st.text(max_size=8), st.sampled_from(TRICKY)), data, min_size=1, max_size=5
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(plain_keys.filter(_plain_key), data, min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_what_read_takes_it_reads_as_libyaml_does(value: dict[str, Any], rnd: random.Random) -> None:
    text = _template_like(value, rnd)
    try:
        reference_load(text)
    except Exception:  # not YAML at all (a float's JSON is fine; an escaped surrogate pair is not)
        assert fast.read(text) is None
        return
    _taken_or_handed_back(text)


@settings(max_examples=300, deadline=None)
@given(objects)
def test_what_write_writes_is_what_libyaml_writes(value: dict[str, Any]) -> None:
    written = fast.write(value)
    if written is not None:
        assert written == reference_dump(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,12}", fullmatch=True).filter(_plain_key), st.recursive(st.text() | st.integers() | st.booleans() | st.none(), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3), max_leaves=15), min_size=1, max_size=4))  # fmt: skip
def test_plain_data_of_strings_and_ints_is_taken_and_written_exactly(value: dict[str, Any]) -> None:
    """What the plan holds (strings, ints, bools, nulls) is fast's to write, except the rare string it can't be sure of."""
    written = fast.write(value)
    assert written is None or written == reference_dump(value)
    text = _template_like(value, random.Random(0))
    if "\\u" not in text:  # an escaped surrogate pair is libyaml's to read
        assert _taken_or_handed_back(text) == value, text


def test_every_fixture_s_objects_take_the_fast_path_and_come_out_the_same() -> None:
    from conftest import rendered_fixture_objects

    for planned, text in rendered_fixture_objects():
        obj = _taken_or_handed_back(text)
        assert obj is not None, f"{planned.template} rendered what fast does not take:\n{text}"
        assert fast.write(obj) == reference_dump(obj)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1 # a comment\n",
        "# a comment\na: 1\n",
        "a:\tb\n",
        "a: b\r\nc: d\n",
        'a: "x\x85y"\n',
        "a: 1.5\n",
        "a: [1.0]\n",
        "a: [NaN]\n",
        "on: 1\n",
        "true: 1\n",
        "a: 1\na: 2\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a:\n- - 1\n",
        "a:\nb: 1\n",
        "a: 2024-01-01\n",
        'a: "\\ud83d\\ude00"\n',
        'a: {"' + "k" * 200 + '": 1}\n',
        "  a: 1\n",
        "a: 1\n  b: 2\n",
        "a:\n  b: 1\n c: 2\n",
        "a: b: c\n",
        "a: 'single'\n",
        "a: plain words\n",
        "a: {b: 1}\n",
        "- a\n",
        "a: 1\nstray\n",
        'a:\n  b: 1\n  "c"\n',
        "a:\n- 1\nb\n",
        "a:\n  - 1\n - 2\n",
        "a:\n  b:\n  - 1\n    c: 2\n",
        "\n\n",
        "---\na: 1\n",
        "a: 1\n---\nb: 2\n",
        'a: "unterminated\n',
        "a:   \n",
    ],
)
def test_read_hands_back_what_is_not_the_templates_yaml(text: str) -> None:
    assert fast.read(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "a: 0x1F\nb: 010\nc: yes\ne: Null\nf: 1_000\ng: -0\nh: 1e3\n",
        "a:\n- b: 1\n  c:\n  - 2\n  d:\n    e: 3\n- [4]\n",
        'a:\n  - 1\n  - {"b": []}\n',
        'data: {"k": "v\\u2028w", "e": {}, "l": [], "n": null, "t": true, "s": "\\n"}\n',
        "\n\nkind: X\n\nspec: {}\n",
        'a: {"k":1}\nb: [1,2]\nc: {"k" : 1}\nd: {"a": 1, "a": 2}\n',  # JSON's spacing and repeats, as libyaml reads them
    ],
)
def test_read_takes_the_templates_yaml_as_libyaml_reads_it(text: str) -> None:
    assert _taken_or_handed_back(text) is not None


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.5},
        {"a": "x" * 1001},
        {"k" * 129: 1},
        {"a": "kept\n\n"},
        {"a": "trailing \nspace"},
        {"a": "line\r\nbreak"},
        {1: "int key"},
        {"a": b"bytes"},
    ],
)
def test_write_hands_back_what_it_can_t_be_sure_of(value: dict[Any, Any]) -> None:
    assert fast.write(value) is None
    assert libyaml.write_document(value) == reference_dump(value)


@pytest.mark.parametrize(
    "value",
    [
        {"a": "two\nlines", "b": ["  leading\nspace", "x\n"], "c": {"d": [{"e": "tw\no"}]}},
        {"yes": "no", "": "", "8000": "1", "a: b": "#c", "- x": "? y"},
        {"a": [[1, [2, {}]], [], {"b": [{}]}]},
        {"---x": "...y", "-c": "--a=b", "$(X)": "a:b", "k": "a #b", "a,b": "x,y", "-": "- a", "q": '{"j": [1]}'},
        {"é": "ü\u00a0", "tab": "a\tb", "bell": "\x07"},
    ],
)
def test_write_writes_strings_and_nesting_as_libyaml_does(value: dict[str, Any]) -> None:
    assert fast.write(value) == reference_dump(value)


# Every character libyaml's emitter weighs when it chooses a style for printable ASCII.
_INDICATORS = "ab1:#-? ,[]{}'\"%@`|>*&!/=.~^$()_;<+\\"


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(_INDICATORS, max_size=8), st.text(_INDICATORS, max_size=10) | st.lists(st.text(_INDICATORS, max_size=6), max_size=3), min_size=1, max_size=4))  # fmt: skip
def test_keys_and_strings_it_writes_without_asking_libyaml_are_what_libyaml_writes(value: dict[str, Any]) -> None:
    fast._KEY_FORM.clear()  # each text is new: its form comes from the rules, not from libyaml
    fast._STRING_FORM.clear()
    assert fast.write(value) == reference_dump(value)


_KEYS = ["a", "b", "c.d", "x_1", "y-2"]
_LEAVES = ["1", "x", '"s"', '[1, {"k": []}]', "{}", "[]", "-2", "null", "0x1F", "010", '"a: b"', "true"]
_ODD = ["1.5", "~", "a: b", "# c", "|", '"a" # c', "*x", "!!str 1"]  # read hands these back


def _leaf(rnd: random.Random, odd: list[str]) -> str:
    if rnd.random() < 0.03:
        odd.append(rnd.choice(_ODD))
        return odd[-1]
    return rnd.choice(_LEAVES)


def _block_lines(rnd: random.Random, odd: list[str], depth: int = 0) -> list[tuple[int, str]]:
    """A random block mapping as (indentation, text) lines: every width of indentation, indentless and
    indented sequences, compact `- key:` items, leaves from the templates' literals and JSON (and a few
    that are not: a float, `~`, a comment, each recorded in odd), so that most of it is the templates'
    YAML and some of it only nearly."""
    lines: list[tuple[int, str]] = []
    keys = rnd.sample(_KEYS, rnd.randint(1, 3))
    if rnd.random() < 0.02:
        keys = ["on"]  # a bool key in YAML 1.1
        odd.append("on")
    for key in keys:
        shape = rnd.random() if depth < 3 else 0.0
        if shape < 0.5:
            lines.append((0, f"{key}: {_leaf(rnd, odd)}"))
        elif shape < 0.75:
            step = rnd.randint(1, 3)
            lines.append((0, f"{key}:"))
            lines += [(step + i, t) for i, t in _block_lines(rnd, odd, depth + 1)]
        else:
            step = rnd.choice([0, 2, 3])  # 0: a mapping's sequence at its key's column
            lines.append((0, f"{key}:"))
            for _ in range(rnd.randint(1, 3)):
                if rnd.random() < 0.5:
                    lines.append((step, f"- {_leaf(rnd, odd)}"))
                else:
                    (first_indent, first), *rest = _block_lines(rnd, odd, depth + 1)
                    lines.append((step + first_indent, f"- {first}"))
                    lines += [(step + 2 + i, t) for i, t in rest]
    return lines


@settings(max_examples=3000, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 3))
def test_any_arrangement_of_lines_is_read_as_libyaml_reads_it_or_handed_back(seed: int, mutations: int) -> None:
    """Block structures of every indentation, with up to 3 lines moved in or out, repeated or dropped:
    valid YAML or not, read never disagrees with libyaml. (A plain Random from a drawn seed: Hypothesis's
    own randoms lean to small choices, which leave most structures shallow.)"""
    rnd = random.Random(seed)
    odd: list[str] = []
    lines = _block_lines(rnd, odd)
    for _ in range(mutations):
        # Half the time the line after a `key:`, where its value's indentation is decided.
        after_keys = [i + 1 for i, (_, line) in enumerate(lines[:-1]) if line.endswith(":")]
        at = rnd.choice(after_keys) if after_keys and rnd.random() < 0.5 else rnd.randrange(len(lines))
        indent, line = lines[at]
        change = rnd.choice(["shift", "shift", "repeat", "drop"])
        if change == "shift":
            lines[at] = (max(0, indent + rnd.choice([-2, -1, 1, 2])), line)
        elif change == "repeat":
            lines.insert(at, (indent, line))
        elif len(lines) > 1:
            del lines[at]
    text = "".join(" " * indent + line + "\n" for indent, line in lines)
    got = fast.read(text)
    if got is None:
        # Only what is not the templates' YAML is handed back: an odd leaf or key, or a moved line.
        assert odd or mutations, text
        return
    expected = reference_load(text)  # raises if libyaml refuses what read took
    assert len(expected) == 1 and repr(got) == repr(expected[0]), text


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.data())
def test_a_render_of_mutated_replicas_is_the_same_bytes_as_through_libyaml(data: st.DataObject) -> None:
    """The fuzzer's mutated replicas (hostile strings, extreme numbers, odd shapes): where they render, the
    fast path's output is byte for byte what the libyaml path alone prints."""
    from test_fuzz import mutated_replicas

    from modelplane_render import pipeline
    from modelplane_render.errors import InputError, RenderFailure
    from modelplane_render.options import Options
    from modelplane_render.yamlio.loader import load_documents

    text = data.draw(mutated_replicas())

    def rendered() -> str | None:
        try:
            return pipeline.render_documents(load_documents("case.yaml", text), Options(namespace="default")).text
        except (InputError, RenderFailure):
            return None

    quick = rendered()
    real_read = fast.read
    fast.read = lambda text: None  # type: ignore[assignment]
    try:
        through_libyaml = rendered()
    finally:
        fast.read = real_read
    assert quick == through_libyaml


_EDGES = ["...k", "---k", "..", "--", "- k", "-k", ":k", "?k", "k:", "k: v", "k ", " k", "k  v", "k #c", "k#c", "@k", "`k", "%k", "!k"]
_EDGES += ["&k", "*k", "|k", ">k", "'k", '"k', "k,l", "[k", "{k", "k]", "$(K)", "~", "~k", ".k", "+1", "0x1F", "1_0", "y", "on"]


@pytest.mark.parametrize("text", _EDGES)
def test_a_text_at_the_edge_of_plain_is_written_as_libyaml_writes_it(text: str) -> None:
    fast._KEY_FORM.clear()  # the rules decide, not a form libyaml gave earlier
    fast._STRING_FORM.clear()
    value = {text: text, "list": [text]}
    assert fast.write(value) == reference_dump(value)
