"""output's fast YAML paths build exactly what PyYAML's own safe constructor and representer build.

The render's output must stay byte-identical; these paths exist for speed only, so they are
compared with PyYAML itself on generated data and on YAML they hand back to PyYAML.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_render import output
from modelplane_render.errors import MapKey


class _Reference(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The dumper as it was: SafeRepresenter with literal blocks for multi-line strings, no fast path."""


_Reference.add_representer(str, output._represent_str)


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
    assert output.serialise([value]) == reference_dump(value)


@settings(max_examples=200, deadline=None)
@given(data)
def test_the_parse_back_reads_what_pyyaml_reads(value: Any) -> None:
    text = reference_dump(value)
    assert output._load_all(text) == reference_load(text)


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
    assert output.serialise([value]) == reference_dump(value)


def _outcome(dump: Any, value: Any) -> str:
    try:
        return str(dump(value))
    except yaml.YAMLError as exc:
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("value", [{"t": (1, 2)}, {"s": {1, 2}}, {"k": output.RenderFailure}, {"m": MapKey("a/b")}, {MapKey("k"): 1}])
def test_other_types_are_pyyaml_s_to_write_or_refuse(value: Any) -> None:
    assert _outcome(lambda v: output.serialise([v]), value) == _outcome(reference_dump, value)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, 2]\nb: *x\n",
        "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
        "when: 2024-01-01\nat: 2001-12-14t21:59:43.10-05:00\n",
        "data: !!binary aGVsbG8=\n",
        "s: !!set {a, b}\n",
        "o: !!omap [{a: 1}, {b: 2}]\n",
        "=: value key\n",
        "a: 1\n---\nb: 2\n---\n",
        "---\n",
        "",
        "dup: 1\ndup: 2\n",
        "? [a, b]\n: complex key\n",
        "n: ~\nb: yes\ni: 0755\nf: 1e3\nsexagesimal: 1:20\n",
        "s: !!str 12\ni: !!int '7'\n",
    ],
)
def test_the_parse_back_of_yaml_beyond_plain_data_is_pyyaml_s(text: str) -> None:
    try:
        expected: Any = reference_load(text)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            output._load_all(text)
        return
    assert output._load_all(text) == expected
    assert repr(output._load_all(text)) == repr(expected)


# --- one parse for the check and the output ------------------------------------------------------


def _both_ways(text: str) -> tuple[Any, Any]:
    """(what _parse_and_emit gives, what the long way gives: the one mapping and its serialised text)."""
    try:
        documents = reference_load(text)
    except yaml.YAMLError:
        documents = []
    expected = (documents[0], reference_dump(documents[0])) if len(documents) == 1 and isinstance(documents[0], dict) else None
    return output._parse_and_emit(text), expected


def _styles(value: Any) -> list[str]:
    """value as YAML in several styles: block, flow, JSON, and the templates' own (block, JSON values)."""
    import json

    texts = [
        yaml.dump(value, Dumper=_Reference, sort_keys=False, default_flow_style=False, allow_unicode=True),
        yaml.dump(value, Dumper=_Reference, sort_keys=False, default_flow_style=True, allow_unicode=False, width=20),
    ]
    try:
        texts.append(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError):
        pass
    return texts


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, data, max_size=5))
def test_one_parse_gives_what_parse_and_serialise_give(value: Any) -> None:
    for text in _styles(value):
        fast, expected = _both_ways(text)
        if fast is not None:  # None: it leaves the text to the long way
            assert fast == expected, text
            assert repr(fast[0]) == repr(expected[0])


@pytest.mark.parametrize(
    "text",
    [
        "a: &x [1, 2]\nb: *x\n",
        "base: &b {x: 1}\nmerged:\n  <<: *b\n",
        "when: 2024-01-01\n",
        "f: 1.5\n",
        "s: !!str 12\n",
        "dup: 1\ndup: 2\n",
        "? [a, b]\n: complex key\n",
        "=: value key\n",
        "a: 1\n---\nb: 2\n",
        "[1, 2]\n",
        "just a scalar\n",
        "",
        "a: [\n",
    ],
)
def test_what_one_parse_does_not_take_is_left_to_the_long_way(text: str) -> None:
    assert output._parse_and_emit(text) is None


def test_every_fixture_s_objects_come_out_the_same_from_one_parse() -> None:
    from conftest import rendered_fixture_objects

    for planned, text in rendered_fixture_objects():
        obj = output.parse_checked(planned, text)
        assert output.parse_checked_and_serialised(planned, text) == (obj, output.serialise([obj]))
        assert output._parse_and_emit(text) is not None  # the libyaml path, where template_yaml hands back, takes them too


@pytest.mark.parametrize(
    "text",
    [
        "a: 0x1F\nb: 0o17\nc: +5\nd: 1_000\ne: 010\nf: -0\n",
        "e: yes\nf: ~\ng: Null\nh: 'yes'\ni: \"0x1F\"\nj: ''\nk:\n",
        "l: |\n  two\n  lines\nm: \"one\\nbreak\"\nn: ' lead'\no: 'a: b'\n",
        '{"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v\\u2028w", "e": {}, "l": []}}',
        "1: int key\nfalse: bool key\n~: null key\n",
    ],
)
def test_scalars_come_out_as_safe_representer_writes_them(text: str) -> None:
    fast, expected = _both_ways(text)
    assert fast is not None and fast == expected


@settings(max_examples=200, deadline=None)
@given(data)
def test_the_plain_dumper_writes_what_pyyaml_s_safe_dumper_writes(value: Any) -> None:
    """plan embeds the picker's config as text written by PyYAML's safe dumper (width 80, no literal blocks)."""
    pyyaml = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    expected = yaml.dump(value, Dumper=pyyaml, sort_keys=False, default_flow_style=False, allow_unicode=True)
    assert yaml.dump(value, Dumper=output.PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True) == expected


class _PurePython(yaml.SafeDumper):
    """_Dumper as it is where libyaml is missing: the same choices, PyYAML's pure-Python emitter."""

    represent = output._Dumper.represent
    literal_blocks = True


_PurePython.add_representer(str, output._represent_str)


@pytest.mark.parametrize("value", ["a\x85b", "two\nlines\x85", "tail\x85", "p\u2028q", "m\nn\u2029o", "two\nlines"])
def test_line_break_characters_read_back_exactly_from_either_emitter(value: str) -> None:
    """NEL: libyaml escapes it (`\\N`); PyYAML's own emitter wrote it raw, read back as a line break."""
    for dumper in (output._Dumper, _PurePython):
        text = yaml.dump({"k": value}, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096)
        assert yaml.safe_load(text) == {"k": value}, (dumper.__name__, text)
