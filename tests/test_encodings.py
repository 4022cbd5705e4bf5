"""Bytes and encodings, as kubectl takes them: UTF-8 or UTF-16 with a BOM; anything else fails where it is.

kubectl (cli-runtime) decodes with a BOM override: UTF-8 by default, UTF-16 LE or BE when the
file starts with that BOM, a UTF-8 BOM dropped. Its YAML parser (go-yaml, a port of libyaml)
takes CR LF and CR as line ends and refuses control characters. The same file must give the same
objects whichever of those forms it is in, and a bad byte is reported at its line and column.
"""

from __future__ import annotations

import pytest

from conftest import ROOT, VALID, run_cli
from hostile import check_outcome, run_source

REPLICA = (VALID[0] / "replica.yaml").read_text()
REFERENCE = run_cli("render", str(ROOT / "fixtures" / "valid")).stdout


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(lambda t: b"\xef\xbb\xbf" + t.encode(), id="utf8-bom"),
        pytest.param(lambda t: t.encode("utf-16"), id="utf16-native-bom"),
        pytest.param(lambda t: b"\xff\xfe" + t.encode("utf-16-le"), id="utf16-le-bom"),
        pytest.param(lambda t: b"\xfe\xff" + t.encode("utf-16-be"), id="utf16-be-bom"),
        pytest.param(lambda t: t.replace("\n", "\r\n").encode(), id="crlf"),
        pytest.param(lambda t: t.replace("\n", "\r").encode(), id="cr"),
        pytest.param(lambda t: b"\xff\xfe" + t.replace("\n", "\r\n").encode("utf-16-le"), id="utf16-crlf"),
    ],
)
def test_every_valid_fixture_renders_the_same_in_every_encoding_kubectl_reads(transform, tmp_path):  # type: ignore[no-untyped-def]
    """Every file of every valid fixture re-encoded: the same bytes out as from the UTF-8 LF originals."""
    for case in VALID:
        target = tmp_path / case.name
        target.mkdir()
        for source in case.iterdir():
            text = source.read_text(encoding="utf-8")
            (target / source.name).write_bytes(transform(text) if source.suffix in (".yaml", ".yml") else text.encode())
    result = run_cli("render", str(tmp_path))
    assert (result.code, result.stderr) == (0, "")
    assert result.stdout == REFERENCE


def error(tmp_path, raw: bytes) -> str:  # type: ignore[no-untyped-def]
    result = run_source(tmp_path, raw)
    check_outcome(result.code, result.stdout, result.stderr, raw)
    assert result.code == 1
    (line,) = result.stderr.splitlines()
    return line


def test_invalid_utf8_is_reported_at_its_line_and_column_in_characters(tmp_path):  # type: ignore[no-untyped-def]
    # "b: é" is 4 characters (5 bytes): the bad byte is the 5th character of line 2.
    assert error(tmp_path, "a: 1\nb: é".encode() + b"\xff\n") == "case.yaml:2:5: .: invalid UTF-8 (byte 0xff): files must be UTF-8 text"
    # a truncated sequence, after a CR line end (a line end to YAML too)
    assert error(tmp_path, b"a: 1\rb: \xc3") == "case.yaml:2:4: .: invalid UTF-8 (byte 0xc3): files must be UTF-8 text"
    # an encoded surrogate is not UTF-8
    assert error(tmp_path, b"a: \xed\xa0\x80\n") == "case.yaml:1:4: .: invalid UTF-8 (byte 0xed): files must be UTF-8 text"


def test_latin1_text_is_not_guessed(tmp_path):  # type: ignore[no-untyped-def]
    raw = REPLICA.replace("clusterName: ", "clusterName: café-").encode("latin-1")
    line = error(tmp_path, raw)
    assert line.endswith(".: invalid UTF-8 (byte 0xe9): files must be UTF-8 text")


def test_bad_utf16_is_reported_where_it_goes_wrong(tmp_path):  # type: ignore[no-untyped-def]
    odd = b"\xff\xfe" + "a: 1\nb: 2\n".encode("utf-16-le") + b"x"
    assert error(tmp_path, odd) == "case.yaml:3:1: .: invalid UTF-16 text (an odd number of bytes)"
    lone = b"\xfe\xff" + "a: 1\nb: ".encode("utf-16-be") + b"\xd8\x00" + "\n".encode("utf-16-be")
    assert error(tmp_path, lone) == "case.yaml:2:4: .: invalid UTF-16 text (a lone surrogate)"


def test_utf16_without_a_bom_is_refused_with_a_hint(tmp_path):  # type: ignore[no-untyped-def]
    assert error(tmp_path, "a: 1\n".encode("utf-16-le")) == (
        "case.yaml:1:2: .: NUL byte in text: this looks like a binary file, or UTF-16 without a byte order mark"
    )


def test_nul_and_control_characters_are_reported_where_they_are(tmp_path):  # type: ignore[no-untyped-def]
    assert error(tmp_path, b"a: 1\nb: x\x00y\n").startswith("case.yaml:2:5: .: NUL byte in text")
    assert error(tmp_path, b"a: 1\r\nb: 2\r\nc: \x07\r\n") == "case.yaml:3:4: .: control character U+0007 is not allowed in YAML text"
    assert error(tmp_path, "a: \x9b\n".encode()) == "case.yaml:1:4: .: control character U+009B is not allowed in YAML text"
    assert error(tmp_path, "a: \ufffe\n".encode()) == "case.yaml:1:4: .: control character U+FFFE is not allowed in YAML text"


def test_a_binary_file_with_a_yaml_name_is_refused_at_its_first_bad_byte(tmp_path):  # type: ignore[no-untyped-def]
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    assert error(tmp_path, png) == "case.yaml:1:1: .: invalid UTF-8 (byte 0x89): files must be UTF-8 text"
    gzip = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"
    assert error(tmp_path, gzip) == "case.yaml:1:2: .: invalid UTF-8 (byte 0x8b): files must be UTF-8 text"
    elf = b"\x7fELF\x02\x01\x01\x00"
    assert error(tmp_path, elf) == "case.yaml:1:1: .: control character U+007F is not allowed in YAML text"


def test_a_bom_inside_the_text_is_a_syntax_error_at_its_place(tmp_path):  # type: ignore[no-untyped-def]
    line = error(tmp_path, "a: 1\n\ufeffb: 2\n".encode())
    assert line.startswith("case.yaml:2:") and ": .: YAML syntax:" in line


@pytest.mark.parametrize(
    "raw",
    [b"", b"\n\n", b"   \n", b"# only a comment\n# and another\n", b"---\n", b"---\n...\n", b"--- \n---\n", b"\xef\xbb\xbf", b"\xff\xfe"],
    ids=["empty", "blank-lines", "spaces", "comments", "document-marker", "start-and-end", "two-markers", "bom-only", "utf16-bom-only"],
)
def test_files_without_objects_are_skipped_as_kubectl_skips_empty_documents(raw, tmp_path):  # type: ignore[no-untyped-def]
    alone = run_source(tmp_path, raw)
    assert (alone.code, alone.stdout, alone.stderr) == (0, "", "")
    (tmp_path / "replica.yaml").write_text(REPLICA)
    beside = run_cli("render", ".", cwd=tmp_path)
    assert (beside.code, beside.stderr) == (0, "")
    assert beside.stdout == run_cli("render", str(VALID[0])).stdout


def test_tabs_indent_nothing_but_are_kept_inside_values(tmp_path):  # type: ignore[no-untyped-def]
    line = error(tmp_path, b"a:\n\tb: 1\n")
    assert line.startswith("case.yaml:2:1: .: YAML syntax:")
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name:\tc\ndata:\n  k: "a\\tb"\n  j: "x\ty"\n'
    result = run_source(tmp_path, text)
    (obj,) = check_outcome(result.code, result.stdout, result.stderr, text)
    assert obj["metadata"]["name"] == "c" and obj["data"] == {"k": "a\tb", "j": "x\ty"}


def test_an_error_in_a_crlf_file_is_on_the_same_line_as_in_the_lf_file(tmp_path):  # type: ignore[no-untyped-def]
    broken = REPLICA.replace("role: Standalone", "role: Standalon")
    lf = run_source(tmp_path, broken.encode())
    crlf = run_source(tmp_path, broken.replace("\n", "\r\n").encode())
    utf16 = run_source(tmp_path, broken.encode("utf-16"))
    assert lf.code == 1 and lf.stderr == crlf.stderr == utf16.stderr
