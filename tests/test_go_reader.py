"""Go reads what we write as we read it: kubectl's YAML reader, and kustomize's, against PyYAML.

kubectl, Argo CD and the API server read YAML with Go's sigs.k8s.io/yaml over go-yaml v2, which types
plain scalars by YAML 1.1 rules (`y`, `on` are booleans; `1e3`, `0o17`, `08`, `1_000` numbers; `.inf`
fails the whole document); kustomize (kyaml) reads with go-yaml v3. Our own checks read the output
back with PyYAML, which agrees with itself. So these tests hand the output to a Go program of ours,
tests/peers/goyaml (kubectl's reader: cli-runtime's file visitor, apimachinery's YAMLOrJSONDecoder,
sigs.k8s.io/yaml; with -v3, kyaml's splitter and go-yaml v3), and ask that every value Go reads equals
what PyYAML reads, and has the same type: a str is a JSON string, an int a JSON integer (within int64,
as Kubernetes decodes integers), a float a JSON number of that value, a bool a boolean, None null.

- every fixture in fixtures/valid, rendered;
- `kustomize build --enable-alpha-plugins --enable-exec` of each example overlay in kustomize/overlays;
- a corpus of strings Go might read as something else, each in a replica of its own (env value,
  args, annotation value, label value and annotation key where Kubernetes allows the string there),
  rendered together and read by one Go process: each must come back as the same string;
- the reader's own contract: what kubectl does with `.inf`, a directive, two byte-order marks.

Run (marker `real_peers`; without the reader built the tests skip, and under CI=true they fail):

    bash tests/peers/build-goyaml.sh     # ~20 s cold; go.mod and go.sum pin every version
    .venv/bin/pytest tests/test_go_reader.py

The reader is named for its sources (modelplane-goyaml-<digest>), so after a change to
tests/peers/goyaml these tests ask for a rebuild rather than run an old one. The kustomize test also
needs kustomize (`bash tests/peers/build-kustomize.sh`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT, VALID, run_cli
from modelplane_render import names
from modelplane_render.constants import LABEL_REPLICA

GOYAML = ROOT / "tests" / "peers" / "goyaml"
OVERLAYS = sorted(p for p in (ROOT / "kustomize" / "overlays").iterdir() if p.is_dir())
# The readers the output meets: kubectl (and Argo CD, and the API server's YAML) and kustomize's kyaml.
READERS = {"kubectl": [], "kyaml": ["-v3"]}
INT64 = range(-(2**63), 2**63)


# --- the reader ---------------------------------------------------------------------------------


def source_digest() -> str:
    """build-goyaml.sh's name for a build of these sources: sha256 of `sha256sum go.mod go.sum main.go`, 16 digits."""
    listing = "".join(f"{hashlib.sha256((GOYAML / n).read_bytes()).hexdigest()}  {n}\n" for n in ("go.mod", "go.sum", "main.go"))
    return hashlib.sha256(listing.encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def go_reader() -> Path:
    from peer import require_peer

    return require_peer(f"modelplane-goyaml-{source_digest()}")


class Number(str):
    """A JSON number as Go wrote it, kept as text so an integer and a float stay apart."""


def go_json(text: str) -> Any:
    return json.loads(text, parse_int=Number, parse_float=Number)


def go_read(reader: Path, stream: str, *flags: str) -> tuple[int, list[str], str]:
    """The reader's exit code, its output lines and its error output."""
    result = subprocess.run([str(reader), *flags], input=stream.encode(), capture_output=True, timeout=60)
    # Split on "\n" alone: str.splitlines also splits on U+0085, which Go's JSON leaves unescaped.
    return result.returncode, result.stdout.decode().split("\n")[:-1], result.stderr.decode()


def go_documents(reader: Path, stream: str, *flags: str) -> list[Any]:
    """The documents Go reads from a stream it must read without an error."""
    code, lines, stderr = go_read(reader, stream, *flags)
    assert (code, stderr) == (0, "")
    return [go_json(line) for line in lines]


# --- value for value, type for type -------------------------------------------------------------


def kind_of(value: Any) -> str:
    if isinstance(value, Number):
        return "integer" if re.fullmatch(r"-?[0-9]+", value) else "number"
    return {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "mapping"}.get(
        type(value), type(value).__name__
    )


def shown(value: Any) -> str:
    return str(value) if isinstance(value, Number) else repr(value)


def differences(ours: Any, go: Any, path: str = "") -> list[str]:
    """Where Go's reading (JSON, numbers as Number) differs from ours (PyYAML's) in value or in type."""
    where = path or "."
    if isinstance(ours, dict) and isinstance(go, dict):
        found = [
            f"{where}: we read the key {key!r} as {kind_of(key)}, not string; Go's JSON spells every key as a string"
            for key in ours
            if not isinstance(key, str)
        ]
        found += [f"{where}: Go has no key {key!r}" for key in ours if isinstance(key, str) and key not in go]
        found += [f"{where}: Go has a key {key!r} we don't" for key in go if key not in ours]
        for key in ours:
            if key in go:
                found += differences(ours[key], go[key], f"{path}.{key}")
        return found
    if isinstance(ours, list) and isinstance(go, list):
        if len(ours) != len(go):
            return [f"{where}: {len(ours)} items to us, {len(go)} to Go"]
        return [d for i, (o, g) in enumerate(zip(ours, go, strict=True)) for d in differences(o, g, f"{path}[{i}]")]
    if isinstance(ours, bool) or ours is None or isinstance(ours, str):
        same = type(go) is type(ours) and go == ours
    elif isinstance(ours, int):
        same = kind_of(go) == "integer" and int(go) == ours and ours in INT64
    elif isinstance(ours, float):
        # Go writes a float in its shortest form, an integral one without a fraction: JSON (and so
        # Kubernetes) cannot tell 2.0 from 2.
        same = isinstance(go, Number) and float(go) == ours
    else:
        same = False  # a date, a time, bytes: nothing JSON holds
    if same:
        return []
    note = (
        " (past int64: Kubernetes decodes it as a float)"
        if isinstance(ours, int) and not isinstance(ours, bool) and ours not in INT64
        else ""
    )
    return [f"{where}: we read {ours!r} ({kind_of(ours)}), Go reads {shown(go)} ({kind_of(go)}){note}"]


def our_documents(stream: str) -> list[Any]:
    """PyYAML's safe reading (libyaml's parser when PyYAML has it, as our own read-back), null documents left out."""
    return [d for d in yaml.load_all(stream, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d is not None]


def assert_go_reads_as_we_do(reader: Path, stream: str, flags: list[str]) -> None:
    ours = our_documents(stream)
    go = go_documents(reader, stream, *flags)
    assert len(go) == len(ours)
    found = [f"{o.get('kind')} {o.get('metadata', {}).get('name')}: {d}" for o, g in zip(ours, go, strict=True) for d in differences(o, g)]
    assert found == []


def test_differences_sees_type_as_well_as_value() -> None:
    assert differences({"a": ["1e3", 1, 2.0, True, None]}, go_json('{"a":["1e3",1,2,true,null]}')) == []
    assert differences(
        {"a": "1e3", "b": "y", "c": 1, "d": 2**64, "e": 1.5}, go_json('{"a":1000,"b":true,"c":1.0,"d":18446744073709551616,"e":"1.5"}')
    ) == [
        ".a: we read '1e3' (string), Go reads 1000 (integer)",
        ".b: we read 'y' (string), Go reads True (boolean)",
        ".c: we read 1 (integer), Go reads 1.0 (number)",
        ".d: we read 18446744073709551616 (integer), Go reads 18446744073709551616 (integer) (past int64: Kubernetes decodes it as a float)",
        ".e: we read 1.5 (number), Go reads '1.5' (string)",
    ]
    assert differences({1: "a", "y": "b"}, go_json('{"1":"a","true":"b"}')) == [
        ".: we read the key 1 as integer, not string; Go's JSON spells every key as a string",
        ".: Go has no key 'y'",
        ".: Go has a key '1' we don't",
        ".: Go has a key 'true' we don't",
    ]


# --- what we render, as Go reads it -------------------------------------------------------------


@pytest.mark.real_peers
@pytest.mark.parametrize("flags", list(READERS.values()), ids=list(READERS))
@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_go_reads_every_rendered_fixture_as_we_do(go_reader: Path, case: Path, flags: list[str]) -> None:
    result = run_cli("render", str(case.relative_to(ROOT)), cwd=ROOT)
    assert (result.code, result.stderr) == (0, "")
    assert_go_reads_as_we_do(go_reader, result.stdout, flags)


@pytest.mark.real_peers
@pytest.mark.parametrize("flags", list(READERS.values()), ids=list(READERS))
@pytest.mark.parametrize("overlay", OVERLAYS, ids=[p.name for p in OVERLAYS])
def test_go_reads_the_kustomize_build_of_each_example_overlay_as_we_do(go_reader: Path, overlay: Path, flags: list[str]) -> None:
    from peer import require_peer

    kustomize = require_peer("kustomize")
    # The example's exec function is kustomize/bin/modelplane-render-krm; point it at this checkout's command.
    script = shutil.which("modelplane-render", path=str(Path(sys.executable).parent))
    env = {**os.environ, **({"MODELPLANE_RENDER": script} if script else {})}
    built = subprocess.run(
        [str(kustomize), "build", "--enable-alpha-plugins", "--enable-exec", str(overlay)], capture_output=True, env=env, timeout=120
    )
    assert (built.returncode, built.stderr.decode()) == (0, "")
    assert b"kind: LeaderWorkerSet" in built.stdout
    assert_go_reads_as_we_do(go_reader, built.stdout.decode(), flags)


# --- strings Go might read as something else ----------------------------------------------------

CORPUS = [
    # YAML 1.1 booleans (go-yaml v2 reads every one of them) and YAML 1.2's
    *"y Y n N yes Yes YES no No NO on On ON off Off OFF true True TRUE false False FALSE".split(),
    # null in every spelling, and nothing
    *"~ null Null NULL".split(),
    "",
    # floats: exponents, a dot at either end, signs
    *"1e3 1E3 1e-3 6e+2 1e0 .2e1 3.0e0 1. .5 -.5 +.5 1.5 -1.5 +1.5e3".split(),
    # integers in every base and spelling YAML 1.1 or 1.2 knows, and past int64
    *"0o17 0O17 08 09 0755 0x1F 0X1f 0b101 -0b101 +0b101 1_000 1_0.5 +1 -1 0 -0 +0".split(),
    *"9223372036854775807 9223372036854775808 12345678901234567890 99999999999999999999999".split(),
    # infinities and NaN: a plain one breaks the whole document for Go's JSON
    *".inf -.inf +.inf .Inf .INF .NaN .nan .NAN".split(),
    # YAML 1.1 sexagesimal numbers, and timestamps
    *"1:20 190:20:30 -1:20 1:20.5".split(),
    *"2001-12-14 2001-12-14t21:59:43.10-05:00 2002-12-14T21:59:43Z".split(),
    "2001-12-14 21:59:43.10 -5",
    # indicators and the rest of YAML's syntax
    *"<< = - : ? | > ' \" % @a `a !a !!str &a *a %x #x [a] ]a {a} }a , a,b --- ... a:".split(),
    *["- a", "a: b", "x #y", "? a", "{a: b}", "--- a", "a #", ": a"],
    # white space and line breaks, leading, trailing and inside
    *["a\tb", "\t", " lead", "trail ", " ", "a\nb", "a\n", "\n", "a\r\nb", "\r"],
    # characters YAML treats as line breaks or marks that JSON does not
    *["\u2028", "\u2029", "\x85", "\ufeff", "\ufeffa", "a\u00a0", "\x7f"],
    # beyond ASCII
    *["é", "日本", "\U0001f600"],
]
CORPUS_KEY = "modelplane.test/corpus"
KEY_VALUE = "as-a-key"


def fits_a_label(text: str) -> bool:
    return len(text) <= names.LABEL_VALUE_MAX and names.LABEL_VALUE.match(text) is not None


def fits_a_key(text: str) -> bool:
    return len(text) <= names.LABEL_VALUE_MAX and names.QUALIFIED_NAME.match(text) is not None


def corpus_replica(index: int, text: str) -> dict[str, Any]:
    """A replica with the string in every place it may go: env value, args, and the metadata fields that allow it."""
    annotations = {CORPUS_KEY: text, **({text: KEY_VALUE} if fits_a_key(text) else {})}
    labels = {CORPUS_KEY: text} if fits_a_label(text) else {}
    container = {"name": "engine", "image": "vllm/vllm-openai:v0.23.0", "args": [text], "env": [{"name": "CORPUS", "value": text}]}
    member = {
        "role": "Standalone",
        "nodePoolName": "gpu-l4",
        "deviceRequests": [{"name": "gpu", "count": 1, "deviceClassName": "gpu.nvidia.com"}],
        "template": {"spec": {"containers": [container]}},
    }
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": f"corpus-{index}", "namespace": "ml-team", "labels": labels, "annotations": annotations},
        "spec": {"clusterName": "eks-l4", "engines": [{"name": "corpus", "members": [member]}]},
    }


def double_quoted(document: Any) -> str:
    """The document as JSON, which is YAML: every string double-quoted, as a careful author writes it.

    JSON spells a character past U+FFFF as a surrogate pair, which YAML refuses; it becomes \\U.
    """

    def one_character(pair: re.Match[str]) -> str:
        high, low = int(pair[1], 16), int(pair[2], 16)
        return f"\\U{0x10000 + ((high - 0xD800) << 10) + low - 0xDC00:08x}"

    return re.sub(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", one_character, json.dumps(document))


@pytest.fixture(scope="module")
def corpus_rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Any]]:
    """The corpus's replicas, one stream, rendered together: one render and one Go process read them all."""
    assert len(CORPUS) == len(set(CORPUS)) >= 60
    source = "\n---\n".join(double_quoted(corpus_replica(i, text)) for i, text in enumerate(CORPUS))
    assert [d["metadata"]["annotations"][CORPUS_KEY] for d in yaml.safe_load_all(source)] == CORPUS
    path = tmp_path_factory.mktemp("go-corpus") / "corpus.yaml"
    path.write_text(source, encoding="utf-8")
    result = run_cli("render", str(path))
    assert (result.code, result.stderr) == (0, "")
    return result.stdout, our_documents(result.stdout)


def corpus_places(document: Any, text: str) -> list[tuple[str, Any]]:
    """(where, value) for each place corpus_replica put the string, found in a reading of a rendered object."""
    found: list[tuple[str, Any]] = []
    if isinstance(document, dict):
        for field in ("annotations", "labels"):
            entries = document.get(field)
            if isinstance(entries, dict) and CORPUS_KEY in entries:
                found.append((f"{field[:-1]} value", entries[CORPUS_KEY]))
                if field == "annotations" and fits_a_key(text):
                    keys = [key for key, value in entries.items() if value == KEY_VALUE]
                    found.append(("annotation key", keys[0] if len(keys) == 1 else keys))
        if document.get("name") == "engine" and "args" in document:
            found.append(("args[0]", document["args"][0]))
            found += [("env value", e.get("value")) for e in document.get("env") or [] if e.get("name") == "CORPUS"]
        for value in document.values():
            found += corpus_places(value, text)
    elif isinstance(document, list):
        for item in document:
            found += corpus_places(item, text)
    return found


def expected_places(kind: str, text: str) -> set[str]:
    places = {"annotation value"} | ({"label value"} if fits_a_label(text) else set()) | ({"annotation key"} if fits_a_key(text) else set())
    return places | {"args[0]", "env value"} if kind == "LeaderWorkerSet" else places


@pytest.mark.real_peers
@pytest.mark.parametrize("flags", list(READERS.values()), ids=list(READERS))
def test_go_reads_every_string_of_the_corpus_back_as_that_string(
    go_reader: Path, corpus_rendered: tuple[str, list[Any]], flags: list[str]
) -> None:
    stream, ours = corpus_rendered
    code, lines, stderr = go_read(go_reader, stream, "-each", *flags)
    assert stderr == ""
    go = [go_json(line) for line in lines]
    assert len(go) == len(ours)

    # For each string: what Go reads instead -> the places it reads it there.
    failures: dict[str, dict[str, set[str]]] = {}
    for our_reading, go_reading in zip(ours, go, strict=True):
        text = CORPUS[int(our_reading["metadata"]["labels"][LABEL_REPLICA].removeprefix("corpus-"))]
        for problem, places in corpus_problems(our_reading, go_reading, text).items():
            failures.setdefault(text, {}).setdefault(problem, set()).update(places)
    report = [
        f"{text!r}: " + "; ".join(f"{problem} ({', '.join(sorted(places))})" if places else problem for problem, places in problems.items())
        for text, problems in failures.items()
    ]
    assert not report, f"{len(report)} of {len(CORPUS)} strings do not come back as themselves:\n" + "\n".join(report)
    assert code == 0


def corpus_problems(ours: Any, go: Any, text: str) -> dict[str, set[str]]:
    """Where Go's reading of one rendered object (a line of -each) does not give the string back: what it reads -> where."""
    kind = ours["kind"]
    if "error" in go:
        return {f"Go cannot read the {kind}: {go['error']}": set()}
    places = corpus_places(go["value"], text)
    problems: dict[str, set[str]] = {}
    for where, value in places:
        if not (type(value) is str and value == text):
            problems.setdefault(f"Go reads {shown(value)} ({kind_of(value)})", set()).add(where)
    if missing := expected_places(kind, text) - {where for where, _ in places}:
        problems[f"the {kind} as Go reads it has no {', '.join(sorted(missing))}"] = set()
    # Anywhere else in the object, Go must still read what we read.
    return problems or {f"{kind}: {d}": set() for d in differences(ours, go["value"])}


# --- the reader's contract, as kubectl behaves ---------------------------------------------------

OBJECT = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n"
PLAIN = "  a: y\n  b: 1e3\n  c: 0o17\n  d: 08\n  e: 1_000\n  f: 99999999999999999999999\n  g: 2001-12-14\n  h: '1e3'\n  on: 1\n"
READ_AB = '{"apiVersion":"v1","data":{"a":"b"},"kind":"ConfigMap","metadata":{"name":"a"}}'
INF = "error converting YAML to JSON: json: unsupported value: +Inf"


@pytest.mark.real_peers
@pytest.mark.parametrize(
    ("flags", "stream", "code", "lines", "stderr"),
    [
        pytest.param([], OBJECT + "  a: .inf\n", 1, [], INF + "\n", id="a plain .inf fails the document"),
        pytest.param([], OBJECT + "  a: -.inf\n", 1, [], INF.replace("+", "-") + "\n", id="-.inf"),
        pytest.param([], OBJECT + "  a: .NaN\n", 1, [], INF.replace("+Inf", "NaN") + "\n", id=".NaN"),
        pytest.param(["-v3"], OBJECT + "  a: .inf\n", 1, [], "json: unsupported value: +Inf\n", id="kyaml-.inf"),
        pytest.param(
            ["-each"],
            OBJECT + "  a: .inf\n---\n" + OBJECT + "  a: b\n",
            1,
            [json.dumps({"error": INF}, separators=(",", ":")), '{"value":' + READ_AB + "}"],
            "",
            id="-each reads on past a failing document",
        ),
        pytest.param(
            [],
            OBJECT + PLAIN,
            0,
            [
                '{"apiVersion":"v1","data":{"a":true,"b":1000,"c":15,"d":8,"e":1000,"f":1e+23,"g":"2001-12-14","h":"1e3","true":1},'
                '"kind":"ConfigMap","metadata":{"name":"a"}}'
            ],
            "",
            id="kubectl types plain scalars by YAML 1.1",
        ),
        pytest.param(
            ["-v3"],
            OBJECT + PLAIN,
            0,
            [
                '{"apiVersion":"v1","data":{"a":"y","b":1000,"c":15,"d":8,"e":1000,"f":1e+23,"g":"2001-12-14T00:00:00Z","h":"1e3","on":1},'
                '"kind":"ConfigMap","metadata":{"name":"a"}}'
            ],
            "",
            id="kyaml types plain scalars by YAML 1.2 mostly",
        ),
        pytest.param(
            [],
            "%YAML 1.1\n---\n" + OBJECT + "  a: b\n",
            1,
            [],
            "error converting YAML to JSON: yaml: line 1: did not find expected <document start>\n",
            id="kubectl's splitter cuts a directive from its document",
        ),
        pytest.param(
            [], "\ufeff\ufeff" + OBJECT + "  a: b\n", 0, [READ_AB], "", id="kubectl drops one byte-order mark and go-yaml another"
        ),
        pytest.param(
            [], "---\n# nothing\n---\nnull\n---\n" + OBJECT + "  a: b\n---\n", 0, [READ_AB], "", id="empty and null documents are skipped"
        ),
    ],
)
def test_the_go_reader_reads_as_kubectl_does(
    go_reader: Path, flags: list[str], stream: str, code: int, lines: list[str], stderr: str
) -> None:
    """The peer's contract, checked against kubectl v1.37.2 (`kubectl annotate --local -f`) when it was written."""
    assert go_read(go_reader, stream, *flags) == (code, lines, stderr)


@pytest.mark.real_peers
@pytest.mark.parametrize("flags", list(READERS.values()), ids=list(READERS))
def test_a_tag_against_a_comma_is_read_otherwise_by_go_so_we_refuse_it(go_reader: Path, flags: list[str]) -> None:
    """go-yaml takes the `,` into the tag: `[!, x]` is one item to it, two to libyaml (yamlio.kubectl_text)."""
    from modelplane_render.errors import InputError
    from modelplane_render.yamlio.loader import load_documents

    assert go_documents(go_reader, "a: [!, x]\n", *flags) == [{"a": ["x"]}]
    assert len(go_documents(go_reader, "a: [! , x]\n", *flags)[0]["a"]) == 2  # with a space: two items to every reader
    assert [d.data for d in load_documents("f", "a: [! , x]\n")] == [{"a": ["", "x"]}]
    with pytest.raises(InputError, match="a tag right against `,`"):
        load_documents("f", "a: [!, x]\n")
