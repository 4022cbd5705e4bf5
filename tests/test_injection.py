"""Injection: a value is data, never code or YAML structure; it comes out as exactly the string that went in.

Helm's lesson (STYLE.md): text templates that splice values into YAML break on the first odd
value, or worse, let a value add keys or objects. Here every value goes through `tojson` and the
output is parsed back, so template syntax, shell syntax, YAML markers, tags, anchors, quotes and
Unicode line separators must come out unchanged and unevaluated. Tags beyond YAML's core ones
are refused at the source, wherever they appear.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import VALID
from hostile import check_outcome, run_source
from modelplane_render.yamlio.kubernetes import reads_as_string

PAYLOADS = [
    "{{ 7 * 7 }}",
    "{{ v }}",
    "{{ config.__class__.__init__.__globals__['os'].system('id') }}",
    "{% for x in range(3) %}x{% endfor %}",
    "{# comment #}",
    "${HOME}",
    "$(id)",
    "$(MODELPLANE_RANK)",
    "`id`",
    "a: b",
    "- x",
    "---",
    "---\napiVersion: v1\nkind: Secret\nmetadata: {name: injected}",
    "...",
    "... ---",
    "!!python/object/apply:os.system ['id']",
    "!!python/name:os.system",
    "!custom x",
    "&anchor",
    "*alias",
    "<<: *alias",
    "# not a comment",
    "key: value # trailing",
    "line one\nline two\n",
    "trailing newline\n",
    "\n leading newline",
    "  indented",
    'double "quotes"',
    "single 'quotes'",
    "back\\slash \\n \\u2028 \\x00",
    "tab\there",
    "crlf\r\nline",
    "line\u2028separator",
    "paragraph\u2029separator",
    "next\x85line",
    "bom\ufeffinside",
    "emoji \U0001f680\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "İstanbul ıi",
    "yes",
    "null",
    "~",
    "0755",
    "1e3",
    ".inf",
    "",
    " ",
    "}",
    "]",
    '", "injected": "',
]

REPLICA: dict[str, Any] = yaml.safe_load((VALID[0] / "replica.yaml").read_text())


def source_with(values: list[str]) -> str:
    """The first valid fixture carrying each value as an annotation, an arg and an env value, plus a
    ConfigMap passed through with them as data."""
    replica = yaml.safe_load(yaml.safe_dump(REPLICA))
    replica["metadata"]["annotations"] = {f"example.com/v{i}": v for i, v in enumerate(values)}
    container = replica["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0]
    container["args"] = list(container.get("args", [])) + values
    container["env"] = [{"name": f"V{i}", "value": v} for i, v in enumerate(values)]
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "payloads", "namespace": "ml-team"}}
    config["data"] = {f"v{i}": v for i, v in enumerate(values)}
    # libyaml's emitter: PyYAML's pure-Python one writes NEL raw inside single quotes, where YAML
    # folds it to a space; libyaml escapes it as \N. Quoted as kubectl needs them: `1e3` plain is a number there.
    return yaml.dump_all([replica, config], Dumper=KubernetesSafeDumper, sort_keys=False, allow_unicode=True)


class KubernetesSafeDumper(yaml.CSafeDumper):  # type: ignore[misc]
    """PyYAML's safe dumper on libyaml, quoting what Kubernetes' YAML reader would not read as a string."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        tag = super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode and implicit == (True, False) and tag == "tag:yaml.org,2002:str" and not reads_as_string(value):
            return "tag:example.com,2026:not-a-string-to-go"
        return tag


def check_values_come_out_exactly(directory, values: list[str]) -> None:  # type: ignore[no-untyped-def]
    text = source_with(values)
    result = run_source(directory, text)
    objects = check_outcome(result.code, result.stdout, result.stderr, text)
    assert result.code == 0, result.stderr
    assert not any(o["metadata"]["name"] == "injected" for o in objects)
    expected = {f"example.com/v{i}": v for i, v in enumerate(values)}
    rendered = [o for o in objects if o["kind"] != "ConfigMap" or o["metadata"]["name"] != "payloads"]
    for obj in rendered:
        annotations = obj["metadata"].get("annotations", {})
        assert {k: annotations.get(k) for k in expected} == expected, obj["kind"]
    (lws,) = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    pod = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    (engine,) = [c for c in pod["containers"] if c["name"] == "engine"]
    # The user's args as given, then the flags we add (none of which is one of theirs).
    given = len(REPLICA["spec"]["engines"][0]["members"][0]["template"]["spec"]["containers"][0].get("args", []))
    assert engine["args"][given : given + len(values)] == values
    env = {e["name"]: e.get("value") for e in engine["env"]}
    assert [env[f"V{i}"] for i in range(len(values))] == values
    (config,) = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "payloads"]
    assert config["data"] == {f"v{i}": v for i, v in enumerate(values)}


def test_hostile_strings_come_out_exactly_and_unevaluated(tmp_path):  # type: ignore[no-untyped-def]
    check_values_come_out_exactly(tmp_path, PAYLOADS)


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(values=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"])), min_size=1, max_size=4))
def test_any_unicode_string_comes_out_exactly(tmp_path_factory, values):  # type: ignore[no-untyped-def]
    """Any string YAML can carry (its printable set) survives; others are refused at the source."""
    text = source_with(values)
    directory = tmp_path_factory.mktemp("unicode")
    result = run_source(directory, text)
    check_outcome(result.code, result.stdout, result.stderr, text)
    if result.code == 0:
        check_values_come_out_exactly(directory, values)
    else:
        assert "control character" in result.stderr or "NUL byte" in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("text", "where", "tag"),
    [
        ("a: !!binary aGVsbG8=\n", "1:4: a", "!!binary"),
        ("a: !!python/name:os.system x\n", "1:4: a", "!!python/name:os.system"),
        ("a: !!python/object/apply:os.system [id]\n", "1:4: a", "tag:yaml.org,2002:python/object/apply:os.system"),
        ("a: !!set {x: null}\n", "1:4: a", "tag:yaml.org,2002:set"),
        ("a: !!omap [x: 1]\n", "1:4: a", "tag:yaml.org,2002:omap"),
        ("a: !custom x\n", "1:4: a", "!custom"),
        ("a: !custom {x: 1}\n", "1:4: a", "!custom"),
        ("a:\n  b: !Ref x\n", "2:6: a.b", "!Ref"),
        ("!custom\na: 1\n", "1:1: .", "!custom"),
        ("a: !<tag:yaml.org,2002:python/object:x> {}\n", "1:4: a", "tag:yaml.org,2002:python/object:x"),
    ],
)
def test_a_tag_other_than_the_core_ones_is_an_error_at_its_place(text, where, tag, tmp_path):  # type: ignore[no-untyped-def]
    for source in (text, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n" + text.replace("\n", "\n  ").rstrip(" ")):
        if source is not text and text.startswith(("%", "!custom\n")):
            continue  # a directive or a document tag can't be indented into a mapping
        result = run_source(tmp_path, source)
        check_outcome(result.code, result.stdout, result.stderr, source)
        assert result.code == 1
        (line,) = result.stderr.splitlines()
        assert f"YAML tag {tag} is not allowed" in line, line
        if source is text:
            assert line.startswith(f"case.yaml:{where}: "), line


def test_core_tags_written_out_are_read_as_kubectl_reads_them(tmp_path):  # type: ignore[no-untyped-def]
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: !!str 123\n  b: !!str yes\n  c: !!int '0755'\n"
    result = run_source(tmp_path, text)
    (obj,) = check_outcome(result.code, result.stdout, result.stderr, text)
    assert obj["data"] == {"a": "123", "b": "yes", "c": 493}


def test_an_unquoted_alias_or_anchor_is_yaml_not_text(tmp_path):  # type: ignore[no-untyped-def]
    """The same characters unquoted are YAML syntax, read as YAML (an alias to nothing is an error)."""
    result = run_source(tmp_path, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: *nothing\n")
    assert result.code == 1 and result.stderr == "case.yaml:5:6: .: YAML syntax: found undefined alias\n"
