"""The input differential: `validate` never accepts a YAML text that kubectl and the API server refuse.

Each text of tests/yaml_mutations.py (at least 1,000, from the valid fixtures, one seed) is judged twice:
- ours: `modelplane-render validate` on the text written to a file (in process);
- the server's, on the text as kubectl sends it: kubectl's file reader drops one UTF-8 byte-order mark
  (or reads UTF-16 by its BOM), its YAMLReader (k8s.io/apimachinery/pkg/util/yaml) splits the stream at
  each line that starts with `---` (anything but a comment after it is an error) and ends each line
  with `\\n` (CRLF becomes LF); each piece that is more than comments is POSTed to kube-apiserver
  v1.37.2 as `application/yaml` with dryRun=All&fieldValidation=Strict, where sigs.k8s.io/yaml (go-yaml
  v2) reads it. The splitter is emulated here (`kubectl_pieces`, twenty lines of Go); kubectl v1.37.2
  itself (`create --dry-run=server -f`) agreed with it by hand on a directive before `---` and one after
  `...`, one and two BOMs, `--- !!map`, CR line ends, `\\/`, several documents and a duplicate key.
  One difference with kubectl itself, stated rather than emulated: kubectl converts a piece to JSON
  before it sends it, so a duplicate key reaches the server as one key (the last) and kubectl takes the
  document; sent as YAML, the server's strict reader refuses it, as we do.

The assertion: no text we accept is refused. Texts we refuse and the server takes are grouped into the
classes of REFUSED_BUT_ACCEPTED, by what our first error says (or BEYOND_CRD: our checks beyond the CRD,
which protect the output), each with its count and its reason; an unlisted class, or a changed count,
fails, so the list stays the true one.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli
from modelplane_render import crd
from modelplane_render.errors import InputError
from modelplane_render.pipeline import classify
from modelplane_render.validation import check_metadata
from modelplane_render.validation.cel import make_rule_runner
from modelplane_render.validation.structural import StructuralValidator
from modelplane_render.yamlio.loader import decode, load_documents
from yaml_mutations import Case, all_cases

pytestmark = pytest.mark.real_peers

API_VERSION, KIND = "modelplane.ai/v1alpha1", "ModelReplica"
BEYOND_CRD = "beyond-crd"

# Texts we refuse that the server takes: class -> (our first error's `path: message`, as a regex, and the
# source line it points at, as a regex; how many texts of the corpus; why we refuse it).
REFUSED_BUT_ACCEPTED: dict[str, tuple[str, str, int, str]] = {
    BEYOND_CRD: (
        "", "", 113,
        "our checks beyond the CRD (validation/beyond_crd.py, the DRA selectors, a replica defined twice in a file): a name "
        "must fit the objects rendered from it (a device request names a claim's request, nodePoolName becomes a label "
        "value, an engine's name a LeaderWorkerSet's), ports and engine flags must be ones the output can serve (a gang's "
        "size, parallel sizes within the GPUs a pod claims, a prefill/decode side), a "
        "selector must compile as the server compiles a claim template's. The server takes the replica; its output "
        "would not apply, or not work",
    ),
    "generate-name": (
        r"^metadata\.generateName: not supported", "", 2,
        "GitOps needs a fixed name: Argo CD applies the same object on every sync; the server takes generateName beside a name",
    ),
    "null-label-or-annotation": (
        r"^metadata\.(labels|annotations)\[[^]]*\]: must be a string: \S* ?reads as null", "", 4,
        "a null label or annotation value: Go's JSON leaves a map's string empty, so the server stores ''; the replica's "
        "labels and annotations are copied onto every object it renders, so we ask for '' written out",
    ),
    "tag-beyond-core": (
        r": YAML tag \S+ is not allowed", "", 12,
        "go-yaml reads a tag it does not know (`!custom x`) as the text beside it, decodes !!binary's base64 and hands "
        "!!timestamp to JSON as text; we refuse a tag that says its author meant another type than the field's",
    ),
    "non-specific-tag": (
        r": must be a string: \S+ reads as (the boolean|the number|null)", r"(^|[\s\[,-])! ", 4,
        "`! y`: libyaml resolves a scalar with the non-specific tag `!` as a plain one (the boolean true), go-yaml keeps "
        "the text; PyYAML's libyaml binding resolves it before we could see the `!`",
    ),
    "escape-beyond-libyaml": (
        r"^\.: YAML syntax: found unknown escape character", "", 5,
        "go-yaml v2 reads `\\'` in a double-quoted scalar as a quote; libyaml (and YAML itself) know no such escape",
    ),
    "directive-after-document-end": (
        r"^\.: a %YAML or %TAG directive", "", 7,
        "a directive after `...` in the middle of a file: kubectl's splitter leaves it at the end of the piece before, "
        "where go-yaml has stopped reading, so it applies to nothing; a directive before a document's `---` breaks "
        "kubectl, and we refuse every directive",
    ),
    "second-bom": (
        r"^\.: a second byte-order mark", "", 10,
        "kubectl create -f drops two (its file reader one, go-yaml the next); the API server given the text reads the "
        "second as text before the first key, and so would any reader without kubectl's BOM override",
    ),
    "integer-past-int64-in-free-config": (
        r"^spec\.serving\.endpointPicker\.config\S*: \d+ is an integer past int64", "", 2,
        "in the picker's free-form config go-yaml reads it as a uint64 or float64 and the server keeps a float64, so the "
        "picker would be given another number; we refuse it: write a string",
    ),
    "merge-key": (
        r": YAML merge keys \(<<\) are not supported", "", 84,
        "go-yaml v2 merges `<<: *anchor` into the mapping; we ask for the keys written out, so a reader sees every field "
        "where it is",
    ),
    "colon-against-flow-indicator": (
        r"^\.: YAML syntax: found unexpected ':'", r"[^\s:]:[,}\]]", 1,
        "`{cpux:, cpu: 4}`: a key whose `:` touches the `,` or `}` after it; go-yaml reads the key with a null value, "
        "libyaml (YAML 1.1) refuses the `:`. Refusing is the safe side: write `cpux: null`, or leave the key out",
    ),
}  # fmt: skip

# What the server takes with a warning (kubectl prints it), and why `validate` takes it without one.
SERVER_WARNINGS = {
    r"prefer a domain-qualified finalizer name": "advice, not a rule: `cleanup` is a qualified name",
    r"ownerReferences contains duplicate entries": "the server drops the duplicate; the replica's owner is still the one named",
}


def _unique(cases: list[Case]) -> list[Case]:
    """Each text once (two changes can write the same text): the first case that wrote it names it."""
    first: dict[bytes, Case] = {}
    for case in cases:
        first.setdefault(case.raw, case)
    return list(first.values())


CASES = _unique(all_cases())


def kubectl_text(raw: bytes) -> str:
    """The file as cli-runtime's FileVisitor reads it: unicode.BOMOverride drops one UTF-8 BOM or reads UTF-16 by its BOM."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw[2:].decode("utf-16-le" if raw.startswith(b"\xff\xfe") else "utf-16-be")
    return raw.decode("utf-8", "replace")


def kubectl_pieces(raw: bytes) -> list[str] | str:
    """The documents kubectl hands to sigs.k8s.io/yaml, or the splitter's error.

    cli-runtime's FileVisitor reads a file through unicode.BOMOverride (one UTF-8 BOM dropped, UTF-16
    read by its BOM); YAMLReader.Read (apimachinery v0.37.2 util/yaml/decoder.go) reads lines with
    bufio.ReadLine (which drops `\\n` or `\\r\\n`) and writes each back with `\\n`; a line that starts
    with `---` ends the document, and must hold nothing but blanks or a comment after it.
    """
    lines = kubectl_text(raw).split("\n")
    if lines[-1] == "":
        lines.pop()
    pieces, buffer = [], ""
    for line in lines:
        line = line.removesuffix("\r") + "\n"
        if line.startswith("---"):
            after = line[3:].strip()
            if after and not after.startswith("#"):
                return f"invalid Yaml document separator: {after}"
            if buffer:
                pieces.append(buffer)
                buffer = ""
            continue
        buffer += line
    if buffer:
        pieces.append(buffer)
    return pieces


# A piece YAMLToJSON reads as null (comments, blank lines, `~`), which kubectl skips; go-yaml breaks lines at
# \r, \x85, \u2028 and \u2029 too, so a comment ends there.
_NOTHING = re.compile(
    r"\A\ufeff?(\s*(#[^\r\n\x85\u2028\u2029]*)?[\r\n\x85\u2028\u2029])*\s*(~|null|Null|NULL)?\s*(#[^\r\n\x85\u2028\u2029]*)?\s*\Z"
)
_NAMESPACE = re.compile(r"^  namespace: (\S+)$", re.MULTILINE)


def server_verdict(api: Any, case: Case, namespace: str) -> tuple[str, str]:
    """'accept', 'warn' (accepted with a warning: SERVER_WARNINGS) or 'refuse', and the server's message."""
    pieces = kubectl_pieces(case.raw)
    if isinstance(pieces, str):
        return "refuse", "kubectl: " + pieces
    sent, warned = 0, []
    for piece in pieces:
        if _NOTHING.match(piece):
            continue  # YAMLToJSON gives null: kubectl skips the document
        sent += 1
        written = _NAMESPACE.search(piece)  # each fixture writes its namespace plainly; a piece goes where it says
        status, body, warnings = api.dry_run_create_text(piece, API_VERSION, KIND, written.group(1) if written else namespace)
        if status != 201:
            return "refuse", str(body.get("message") if isinstance(body, dict) else body)
        warned += warnings
    if not sent:
        return "refuse", "kubectl: no objects passed to create"
    return ("warn", "; ".join(warned)) if warned else ("accept", "")


def our_verdict(directory: Path, case: Case) -> tuple[str, str]:
    """'accept' or 'refuse' by `validate`, and its first error."""
    (directory / "replica.yaml").write_bytes(case.raw)
    result = run_cli("validate", "replica.yaml", cwd=directory)
    assert result.code in (0, 1), f"{case.name}: exit {result.code}: {result.stderr}"
    return ("accept", "") if result.code == 0 else ("refuse", result.stderr.splitlines()[0])


def refusal_class(case: Case, first_error: str) -> str:
    """BEYOND_CRD when every document passes what the server checks (metadata, the CRD's schema and its
    rules) and `validate` still refuses; else the class whose regexes our first error and the line it
    points at match; else `unlisted: ` and the error."""
    try:
        documents = load_documents("replica.yaml", decode("replica.yaml", case.raw))
    except InputError:
        documents = None
    if documents is not None:
        errors: list[Any] = []
        for document in documents:
            if classify(document)[0] == "replica":
                check_metadata(document, errors)
                StructuralValidator(document, errors, make_rule_runner(document)).check(document.data, crd.openapi_schema(), ())
        if not errors:
            return BEYOND_CRD
    _, line, _, error = first_error.split(":", 3)
    source = kubectl_text(case.raw).splitlines()[int(line) - 1] if line.isdigit() else ""
    for name, (message, where, _, _) in REFUSED_BUT_ACCEPTED.items():
        if name != BEYOND_CRD and re.search(message, error.strip()) and re.search(where, source):
            return name
    return "unlisted: " + first_error


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[tuple[Case, str, str, str, str]]]:
    from peer import real_apiserver

    directory = tmp_path_factory.mktemp("differential")
    started = time.monotonic()
    with real_apiserver() as api:
        api.apply_crd(crd.crd())
        for namespace in sorted({case.namespace for case in CASES}):
            api.create_namespace(namespace)
        judged = []
        for case in CASES:
            ours, our_error = our_verdict(directory, case)
            theirs, message = server_verdict(api, case, case.namespace)
            judged.append((case, ours, our_error, theirs, message))
    print(f"\n{len(CASES)} texts judged in {time.monotonic() - started:.1f} s")
    yield judged


def test_the_corpus_is_large_and_covers_every_family() -> None:
    assert len(CASES) >= 1000
    families = Counter(case.family for case in CASES)
    assert set(families) == {"string-plain", "string-written", "integer", "boolean", "int-or-string", "free", "key", "struct",
                             "document", "anchor", "flow", "quoting", "metadata"}  # fmt: skip


def test_no_text_we_accept_is_refused_by_the_server(verdicts: list[tuple[Case, str, str, str, str]]) -> None:
    table = Counter((ours, theirs) for _, ours, _, theirs, _ in verdicts)
    print("verdicts (ours, the server's):", dict(sorted(table.items())))
    wrong = [f"{case.name}: {message}" for case, ours, _, theirs, message in verdicts if ours == "accept" and theirs == "refuse"]
    assert wrong == [], f"{len(wrong)} texts we accept are refused:\n" + "\n".join(wrong)
    warned = [(case.name, message) for case, _, _, theirs, message in verdicts if theirs == "warn"]
    assert [w for w in warned if not any(re.search(pattern, w[1]) for pattern in SERVER_WARNINGS)] == []


def test_what_we_refuse_and_the_server_takes_is_listed_with_its_count(verdicts: list[tuple[Case, str, str, str, str]]) -> None:
    found: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for case, ours, our_error, theirs, _ in verdicts:
        if ours == "refuse" and theirs in ("accept", "warn"):
            name = refusal_class(case, our_error)
            found[name] += 1
            examples.setdefault(name, f"{case.name}: {our_error}")
    listed = {name: count for name, (_, _, count, _) in REFUSED_BUT_ACCEPTED.items()}
    for name in sorted(set(found) | set(listed)):
        print(f"{found[name]:5} {name}: {examples.get(name, '')}")
    assert dict(found) == listed
