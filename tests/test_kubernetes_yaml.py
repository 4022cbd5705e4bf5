"""A source is judged as Kubernetes' YAML reader (sigs.k8s.io/yaml over go-yaml v2: kubectl, Argo CD) reads it.

Plain scalars are typed by go-yaml v2's rules (`y` is a boolean, `1e3` and `0o17` numbers, `1:20` text),
integral floats are integers as JSON gives them to the API server, and what that reader refuses
(`.inf`, a null key, a directive, a second byte-order mark, an integer past int64) is refused here at
its line. The real Go reader agrees with these rules: tests/test_go_reader.py.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli
from modelplane_render.yamlio.kubernetes import json_key, plain_scalar, reads_as_string

BASE = (FIXTURES / "valid" / "single-gpu-standalone" / "replica.yaml").read_text()


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        *[(t, "bool", True) for t in ("y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE")],
        *[(t, "bool", False) for t in ("n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE")],
        *[(t, "null", None) for t in ("", "~", "null", "Null", "NULL")],
        ("1e3", "float", 1000.0),
        ("1E3", "float", 1000.0),
        ("1e0", "float", 1.0),
        (".2e1", "float", 2.0),
        ("3.0e0", "float", 3.0),
        ("1e-3", "float", 0.001),
        ("6e+2", "float", 600.0),
        ("1.", "float", 1.0),
        ("08", "float", 8.0),
        ("09", "float", 9.0),
        ("99999999999999999999", "float", 1e20),
        ("0o17", "int", 15),
        ("0O17", "int", 15),
        ("0755", "int", 493),
        ("0x1F", "int", 31),
        ("0b101", "int", 5),
        ("-0b101", "int", -5),
        ("1_000", "int", 1000),
        ("+1", "int", 1),
        ("12345678901234567890", "int", 12345678901234567890),
        ("1" * 5000, "str", "1" * 5000),  # past float64 too: Go's ParseFloat fails, so it is text (int() would raise)
        ("1:20", "str", "1:20"),
        ("190:20:30", "str", "190:20:30"),
        ("2001-12-14", "str", "2001-12-14"),
        ("1e400", "str", "1e400"),
        ("0x", "str", "0x"),
        ("._5", "str", "._5"),
        ("<<", "str", "<<"),
        ("abc", "str", "abc"),
    ],
)
def test_a_plain_scalar_is_typed_as_go_yaml_v2_types_it(text: str, kind: str, value: object) -> None:
    assert plain_scalar(text) == (kind, value)
    assert reads_as_string(text) is (kind == "str")


def test_infinity_and_not_a_number_are_floats_json_cannot_hold() -> None:
    assert plain_scalar(".inf") == ("float", math.inf) and plain_scalar("-.INF") == ("float", -math.inf)
    kind, value = plain_scalar(".NaN")
    assert kind == "float" and math.isnan(value)


@pytest.mark.parametrize(("key", "text"), [(True, "true"), (1, "1"), (1000, "1000"), (1.5, "1.5"), (1e6, "1e+06"), (1e-5, "1e-05")])
def test_a_key_is_written_as_go_writes_it_into_json(key: object, text: str) -> None:
    assert json_key(key) == text  # type: ignore[arg-type]


def _validate(tmp_path: Path, text: str | bytes) -> tuple[int, str]:
    path = tmp_path / "replica.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    result = run_cli("validate", "replica.yaml", cwd=tmp_path)
    return result.code, result.stderr


def _render(tmp_path: Path, text: str) -> str:
    (tmp_path / "replica.yaml").write_text(text)
    result = run_cli("render", "replica.yaml", cwd=tmp_path)
    assert result.code == 0, result.stderr
    return result.stdout


ARGS = "            args:\n"


@pytest.mark.parametrize(
    ("plain", "reads"),
    [("y", "the boolean true"), ("off", "the boolean false"), ("1e3", "the number 1000"), ("0o17", "the number 15"), ("~", "null")],
)
def test_a_plain_scalar_that_is_not_text_to_kubectl_is_not_a_string_here(tmp_path: Path, plain: str, reads: str) -> None:
    code, err = _validate(tmp_path, BASE.replace(ARGS, f"{ARGS}            - {plain}\n", 1))
    assert code == 1
    assert err == (
        f"replica.yaml:28:15: spec.engines[0].members[0].template.spec.containers[0].args[0]: must be a string: {plain} reads as "
        f"{reads} in Kubernetes YAML (kubectl, Argo CD, the API server); quote it\n"
    )


def test_quoted_it_is_text_and_comes_out_quoted(tmp_path: Path) -> None:
    out = _render(tmp_path, BASE.replace(ARGS, f"{ARGS}            - 'y'\n            - \"1e3\"\n", 1))
    assert "          - 'y'\n          - '1e3'\n" in out


def test_numbers_in_go_s_spelling_are_the_numbers_the_api_server_gets(tmp_path: Path) -> None:
    """`count: 1e0` is the JSON number 1, and `0o2` the integer 2, to the API server: here too."""
    out = _render(tmp_path, BASE.replace("count: 1\n", "count: 1e0\n", 1))
    assert out == _render(tmp_path, BASE)


def test_a_label_key_on_is_the_key_true_as_kubectl_makes_it(tmp_path: Path) -> None:
    out = _render(tmp_path, BASE.replace("  namespace: ml-team\n", "  namespace: ml-team\n  labels:\n    on: x\n", 1))
    assert "    'true': x\n" in out


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (
            lambda t: t.replace(ARGS, f"{ARGS}            - .inf\n", 1),
            "28:15: spec.engines[0].members[0].template.spec.containers[0].args[0]",
            ".inf reads as infinity in Kubernetes YAML, which JSON can't hold: kubectl refuses the whole document; quote it for text",
        ),
        (
            lambda t: t.replace("  namespace: ml-team\n", "  namespace: ml-team\n  labels:\n    ~: x\n", 1),
            "9:5: metadata.labels",
            "a null mapping key: Kubernetes YAML refuses it; quote it for text",
        ),
        (
            lambda t: t.replace("count: 1\n", "count: 9223372036854775808\n", 1),
            "17:16: spec.engines[0].members[0].deviceRequests[0].count",
            "9223372036854775808 is an integer past int64, which no Kubernetes field holds",
        ),
        (
            lambda t: t.replace("count: 1\n", "count: 18446744073709551616\n", 1),
            "17:16: spec.engines[0].members[0].deviceRequests[0].count",
            "must be an integer, not a number (1.8446744073709552e+19): past int64 the API server reads it as a number, not an integer",
        ),
        (
            lambda t: t.replace("count: 1\n", "count: 1e20\n", 1),
            "17:16: spec.engines[0].members[0].deviceRequests[0].count",
            "must be an integer, not a number (1e+20): past int64 the API server reads it as a number, not an integer",
        ),
        (
            lambda t: "%YAML 1.1\n---\n" + t,
            "1:1: .",
            "a %YAML or %TAG directive: kubectl does not read it with its document (it splits the stream at ---); remove it",
        ),
        (
            lambda t: "--- !!map\n" + t,
            "1:1: .",
            "`---` followed by !!map: kubectl splits a file into documents at each line that starts with ---, and refuses one with more "
            "than a comment after it; put the rest on the next line",
        ),
        (
            lambda t: t.replace(ARGS, f'{ARGS}            - "models\\/qwen"\n', 1),
            "28:22: .",
            "\\/ is no escape to Kubernetes YAML (go-yaml v2 refuses the document): write / alone",
        ),
        (
            lambda t: t.replace(ARGS, f"{ARGS}            - [!, x]\n", 1),
            "28:16: .",
            "a tag right against `,`: Kubernetes YAML (go-yaml v2, as kubectl and the API server read it) takes the character into the "
            "tag and reads what follows as this value; put a space after the tag",
        ),
        (
            lambda t: "%TAG !e! tag:example.com,2000:\n---\n" + t,
            "1:1: .",
            "a %YAML or %TAG directive: kubectl does not read it with its document (it splits the stream at ---); remove it",
        ),
        (
            lambda t: t.replace("    members:\n", "    templat:\n    members:\n", 1),
            "12:5: spec.engines[0].templat",
            'unknown field "templat"',
        ),
    ],
)
def test_what_kubernetes_refuses_is_refused_at_its_place(tmp_path: Path, change, where: str, message: str) -> None:  # type: ignore[no-untyped-def]
    code, err = _validate(tmp_path, change(BASE))
    assert code == 1
    assert err.splitlines()[0].startswith(f"replica.yaml:{where}: {message}"), err


def test_a_second_byte_order_mark_is_refused(tmp_path: Path) -> None:
    code, err = _validate(tmp_path, b"\xef\xbb\xbf\xef\xbb\xbf" + BASE.encode())
    assert (code, err) == (
        1,
        "replica.yaml:1:1: .: a second byte-order mark at the start: the API server, given this text, reads it as text before the first key; remove it\n",
    )


def test_a_tagged_scalar_is_typed_as_go_yaml_v2_resolves_it() -> None:
    """`!!bool y` is true and `!!float 1` the integer 1 to the API server, as go-yaml v2's resolve() reads them."""
    from modelplane_render.yamlio.loader import load_documents

    text = "a: !!bool y\nb: !!float 1\nc: !!int 0o17\nd: !!int '1_000'\ne: !!null ''\nf: !!str 1e3\ng: !!float 2.5\n"
    (document,) = load_documents("t.yaml", text)
    assert document.data == {"a": True, "b": 1, "c": 15, "d": 1000, "e": None, "f": "1e3", "g": 2.5}


@pytest.mark.parametrize(
    ("tagged", "message"),
    [
        ("!!int 1:20", '"1:20" is not an integer, but is tagged !!int'),
        ("!!float x", '"x" is not a number, but is tagged !!float'),
        ("!!bool 1", '"1" is not a boolean, but is tagged !!bool'),
        ("!!int 08", '"08" is not an integer, but is tagged !!int'),
        (
            "!!float .inf",
            ".inf reads as infinity in Kubernetes YAML, which JSON can't hold: kubectl refuses the whole document; quote it for text",
        ),
        ("!!int 9223372036854775808", "9223372036854775808 is an integer past int64, which no Kubernetes field holds"),
        ("!!timestamp 2001-12-14", "YAML tag !!timestamp is not allowed: only the core tags (str, int, float, bool, null, map, seq) are"),
    ],
)
def test_a_tagged_scalar_go_yaml_refuses_is_refused(tmp_path: Path, tagged: str, message: str) -> None:
    code, err = _validate(tmp_path, BASE.replace(ARGS, f"{ARGS}            - {tagged}\n", 1))
    assert (code, err) == (1, f"replica.yaml:28:15: spec.engines[0].members[0].template.spec.containers[0].args[0]: {message}\n")


def test_digits_past_what_go_parses_are_text_and_the_error_says_so_not_to_remove_quotes(tmp_path: Path) -> None:
    code, err = _validate(tmp_path, BASE.replace("count: 1\n", f"count: {'9' * 400}\n", 1))
    assert (code, err) == (
        1,
        "replica.yaml:17:16: spec.engines[0].members[0].deviceRequests[0].count: must be an integer, not a string: "
        "a number this long is text to Kubernetes YAML\n",
    )
