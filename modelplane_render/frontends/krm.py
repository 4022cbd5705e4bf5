"""The KRM function front end: a `config.kubernetes.io/v1` ResourceList in, one out.

kustomize runs `modelplane-render krm` as an exec KRM function (`kustomize build
--enable-alpha-plugins --enable-exec`). As in kyaml's fn framework, the steps are separate:
`parse_input` (read the ResourceList), `read_function_config` (validate our RenderConfig),
`render` (the one pipeline every front end uses) and `write_output` (items and results).

What a run does:
- every ModelReplica among the `items` is rendered and its objects take its place (a
  transformer); every other item passes through untouched: it is the node ruamel's round-trip
  loader read, written back, so comments, key order, quoting and the orchestrator's
  annotations (`internal.config.kubernetes.io/*`, `config.k8s.io/id`, ...) are kept;
- the function config's `spec.sources` (files or directories, relative to the directory the
  function runs in: kustomize runs it in the kustomization's directory) are read as the
  command line reads its paths, and their objects are added (a generator).
Both are rendered in one pass, so a replica defined twice is an error either way.

Errors: kustomize ignores `results` of severity error when a function exits 0, and when it
exits non-zero it shows only `exit status 1` and the function's stderr. So on invalid input the
function exits 1, writes the input items unchanged with the `results`, and prints every error
on stderr as `location: field.path: message`. Nothing is printed on stderr on success:
kustomize passes a function's stderr through even then.
"""

from __future__ import annotations

import copy
import io
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString, SingleQuotedScalarString

from .. import constants as c
from ..errors import (
    EXIT_INVALID,
    EXIT_OK,
    FieldPath,
    Finding,
    InputError,
    InternalError,
    RenderFailure,
    UsageError,
    error_line,
    format_path,
)
from ..facts.flags import small_decimal
from ..options import CONFIG_SETTINGS, LIST, SWITCH, Options, Setting, options_with, read
from ..pipeline import classify, render_documents
from ..sources import iter_documents
from ..validation.structural import describe, unknown_field
from ..walk import read_file
from ..yamlio.document import Document, Positions
from ..yamlio.loader import decode, load_documents

PROG = "modelplane-render"
STDIN = "<stdin>"
RESOURCE_LIST_API_VERSION = "config.kubernetes.io/v1"
RESOURCE_LIST_KIND = "ResourceList"
CONFIG_API_VERSION = c.RENDER_CONFIG_API
CONFIG_KIND = c.RENDER_CONFIG_KIND
CONFIG_FIELDS = ("apiVersion", "kind", "metadata", "spec")
CONFIG_SPEC_FIELDS = tuple(s.config_key for s in CONFIG_SETTINGS if s.config_key is not None)

# Where an orchestrator says an item was read from: kyaml's current keys first, then the legacy ones.
PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")
INDEX_ANNOTATIONS = ("internal.config.kubernetes.io/index", "config.kubernetes.io/index")
# kustomize's `buildMetadata: [originAnnotations]`: a YAML string with `path:` (and `repo:`/`ref:`
# for a remote base, or `configuredIn:` for an object a generator made).
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"

# Annotations kustomize, kpt and kyaml put on items to track them through a pipeline. They say
# where the replica sits in the stream, not what it means: copied onto its objects (a replica's
# annotations reach every object it becomes) they would give several new objects the replica's
# id, and kustomize would take them for the replica. So they are dropped before rendering.
_ORCHESTRATION_PREFIXES = (
    "internal.config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
    "alpha.config.kubernetes.io/",
    "kyaml.kustomize.dev/",
)
_ORCHESTRATION_KEYS = frozenset({"config.kubernetes.io/path", "config.kubernetes.io/index", ORIGIN_ANNOTATION})


def is_orchestration_annotation(key: str) -> bool:
    return key in _ORCHESTRATION_KEYS or key.startswith(_ORCHESTRATION_PREFIXES)


# ---------------------------------------------------------------------------------------------
# Findings: each error a line on stderr and a KRM result, written from the one record.


def result(finding: Finding) -> dict[str, Any]:
    """A kyaml `framework.Result` of a finding: message, severity, resourceRef, field, file."""
    written: dict[str, Any] = {"message": finding.message, "severity": finding.severity}
    if finding.resource:
        written["resourceRef"] = dict(finding.resource)
    if finding.path is not None and finding.path != ".":
        written["field"] = {"path": finding.path}
    if finding.origin is not None:
        written["file"] = {"path": finding.origin} if finding.index is None else {"path": finding.origin, "index": finding.index}
    return written


def in_result_order(findings: Iterable[Finding]) -> list[Finding]:
    """Each finding once: those at a line of a file (stdin's too) by file, line and column, then those
    placed by their object, then those with no place."""

    def order(finding: Finding) -> tuple[Any, ...]:
        rank = 0 if finding.line else 1 if finding.path is not None else 2
        return (rank, finding.file, finding.line, finding.column, str(finding))

    unique = {order(f): f for f in findings}
    return [unique[key] for key in sorted(unique)]


def _general(message: str) -> Finding:
    return Finding(PROG, 0, 0, None, message)


def _ref(ref: Optional[dict[str, str]]) -> Optional[tuple[tuple[str, str], ...]]:
    return tuple(ref.items()) if ref else None


# ---------------------------------------------------------------------------------------------
# Places: what the orchestrator tells about where an object came from.


@dataclass
class Place:
    """An item's identity and, as far as it can be known here, its file and document."""

    ref: dict[str, str]
    file: Optional[str] = None
    index: Optional[int] = None
    # The object's own document in `file`, when that file can be read from here: gives line:col.
    document: Optional[Document] = None

    @property
    def label(self) -> str:
        kind = self.ref.get("kind", "object")
        name = self.ref.get("name", "?")
        shown = f"{self.ref['namespace']}/{name}" if self.ref.get("namespace") else name
        return f"{kind} {shown}" + (f" ({self.file})" if self.file else "")

    def problem(self, path: FieldPath, message: str, *, at_key: bool = False) -> Finding:
        if self.document is not None:
            return _in_its_file(self.document.error(path, message, at_key=at_key), self.ref, self.document.index)
        return Finding(self.label, 0, 0, format_path(path), message, resource=_ref(self.ref), origin=self.file, index=self.index)


def _in_its_file(finding: Finding, ref: Optional[dict[str, str]], index: Optional[int]) -> Finding:
    """A finding at a line of a file, with the object it is about."""
    return finding.replace(resource=_ref(ref), origin=finding.file, index=index)


def resource_ref(data: Any) -> dict[str, str]:
    """apiVersion, kind, name and namespace of an object, those that are strings."""
    if not isinstance(data, dict):
        return {}
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    found = {"apiVersion": data.get("apiVersion"), "kind": data.get("kind"), "name": meta.get("name"), "namespace": meta.get("namespace")}
    return {key: value for key, value in found.items() if isinstance(value, str) and value}


def _annotations(data: Any) -> dict[str, Any]:
    meta = data.get("metadata") if isinstance(data, dict) else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def locate(data: Any, files: Optional[dict[str, Optional[list[Document]]]] = None) -> Place:
    """Where an item came from: its path annotation (kpt, `kustomize fn`), else kustomize's origin.

    Items reach a kustomize function without `config.kubernetes.io/path`: then only the object
    and, with `buildMetadata: [originAnnotations]`, the file it was read from are known (no line
    or column: kustomize re-serialises every object). An item that does carry a path (and
    index) is looked up in that file, relative to the working directory, for line and column
    (`files` keeps each file's documents for the run, read once).
    """
    place = Place(resource_ref(data))
    annotations = _annotations(data)
    path = next((v for k in PATH_ANNOTATIONS if isinstance(v := annotations.get(k), str) and v), None)
    if path:
        place.file = path
        indexes = (small_decimal(v) for k in INDEX_ANNOTATIONS if isinstance(v := annotations.get(k), str))
        place.index = next((i for i in indexes if i is not None), None)
        if files is None:
            files = {}
        if path not in files:
            files[path] = _documents_of(path)
        place.document = _own_document(files[path] or [], place.index, place.ref)
        if place.document is not None:
            place.index = place.document.index
        return place
    place.file = _origin_file(annotations.get(ORIGIN_ANNOTATION))
    return place


def _origin_file(origin: Any) -> Optional[str]:
    if not isinstance(origin, str):
        return None
    try:
        data = yaml.safe_load(origin)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    path = data.get("path") or data.get("configuredIn")
    if not isinstance(path, str) or not path:
        return None
    repo, ref = data.get("repo"), data.get("ref")
    if isinstance(repo, str) and repo:
        # kustomize's own spelling of a file in a remote base.
        return f"{repo}//{path}" + (f"?ref={ref}" if isinstance(ref, str) and ref else "")
    return path


def _documents_of(path: str) -> Optional[list[Document]]:
    """The documents of a regular file, or None when it can't be read or isn't valid YAML."""
    if not os.path.isfile(path):
        return None
    try:
        return load_documents(path, decode(path, read_file(path, path)))
    except (InputError, OSError):
        return None


def _own_document(documents: list[Document], index: Optional[int], ref: dict[str, str]) -> Optional[Document]:
    """The document that holds this object (same apiVersion, kind and name), the one at `index` first."""
    same = [d for d in documents if all(resource_ref(d.data).get(k) == ref.get(k) for k in ("apiVersion", "kind", "name"))]
    return next((d for d in same if d.index == index), same[0] if same else None)


# ---------------------------------------------------------------------------------------------
# Step 1: parse the input.


@dataclass
class Request:
    """The ResourceList twice: ruamel's round-trip nodes (written back) and our strict reading."""

    root: Any
    items: list[Any]
    data: list[Any]
    function_config: Any


def _yaml() -> Any:
    # kustomize's own style: two spaces, sequences not indented under their key; never fold.
    handler = YAML(typ="rt")
    handler.preserve_quotes = True
    handler.indent(mapping=2, sequence=2, offset=0)
    handler.width = 1 << 30
    return handler


def parse_input(raw: bytes) -> Request:
    """The ResourceList on stdin, read as the command line reads a file (YAML 1.1, strict)."""
    try:
        text = decode(STDIN, raw)
        documents = load_documents(STDIN, text)
    except InputError as exc:
        raise InputError(_in_its_file(e, None, None) for e in exc.errors) from None
    if not documents:
        raise InputError([_stdin(1, 1, ".", f"no input: a KRM function reads a {RESOURCE_LIST_API_VERSION} {RESOURCE_LIST_KIND} on stdin")])
    if len(documents) > 1:
        line, col = documents[1].positions.of_value(())
        raise InputError([_stdin(line, col, ".", f"more than one YAML document: the input must be one {RESOURCE_LIST_KIND}")])
    document = documents[0]
    data = document.data
    problems = []
    if not isinstance(data, dict):
        raise InputError([_in_its_file(document.error((), f"the input must be a {RESOURCE_LIST_KIND} (a mapping)"), None, None)])
    if (data.get("apiVersion"), data.get("kind")) != (RESOURCE_LIST_API_VERSION, RESOURCE_LIST_KIND):
        got = f"{data.get('apiVersion')} {data.get('kind')}"
        problems.append(document.error(("kind",), f"the input must be a {RESOURCE_LIST_API_VERSION} {RESOURCE_LIST_KIND}, not {got}"))
    items = data.get("items")
    if items is None:
        items = []
    elif not isinstance(items, list):
        problems.append(document.error(("items",), "must be a list of objects"))
    if problems:
        raise InputError(_in_its_file(e, None, None) for e in problems)
    try:
        root = _yaml().load(text)
    except Exception as exc:  # ruamel reads what our loader read; this is the last line of defence
        raise InputError([_stdin(1, 1, ".", f"cannot read the input back for output: {str(exc).splitlines()[0]}")]) from None
    nodes = root.get("items") if root.get("items") is not None else []
    if len(nodes) != len(items):
        raise InternalError("the input's items were read differently by the two YAML readers")
    return Request(root, list(nodes), list(items), data.get("functionConfig"))


def _stdin(line: int, col: int, path: str, message: str) -> Finding:
    return Finding(STDIN, line, col, path, message)


# ---------------------------------------------------------------------------------------------
# Step 2: the function config.


@dataclass(frozen=True)
class FunctionConfig:
    """What the RenderConfig asks for: the renderer's options and the sources to generate from."""

    options: Options = field(default_factory=Options)
    sources: tuple[str, ...] = ()


def read_function_config(config: Any) -> FunctionConfig:
    """Validate the RenderConfig strictly (unknown fields, types, values), all errors at once.

    No function config at all means the defaults: render the replicas among the items as they are.
    """
    if config is None:
        return FunctionConfig()
    place = locate(config)
    if not isinstance(config, dict):
        raise InputError([place.problem((), f"functionConfig must be a {CONFIG_API_VERSION} {CONFIG_KIND} (a mapping)")])
    if place.ref.get("kind") is None:
        place.ref["kind"] = CONFIG_KIND
    problems: list[Finding] = []
    if (config.get("apiVersion"), config.get("kind")) != (CONFIG_API_VERSION, CONFIG_KIND):
        got = f"{config.get('apiVersion')} {config.get('kind')}"
        raise InputError([place.problem(("kind",), f"functionConfig must be a {CONFIG_API_VERSION} {CONFIG_KIND}, not {got}")])
    for key in config:
        if key not in CONFIG_FIELDS:
            problems.append(place.problem((key,), _unknown(key, CONFIG_FIELDS), at_key=True))
    if config.get("metadata") is not None and not isinstance(config.get("metadata"), dict):
        problems.append(place.problem(("metadata",), "must be a mapping"))
    spec = config.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise InputError([*problems, place.problem(("spec",), f"must be a mapping, not {describe(spec)}")])
    for key in spec:
        if key not in CONFIG_SPEC_FIELDS:
            problems.append(place.problem(("spec", key), _unknown(key, CONFIG_SPEC_FIELDS), at_key=True))
    values = {s.name: _setting(place, spec, s, problems) for s in CONFIG_SETTINGS if s.field is not None}
    sources = _sources(place, spec.get("sources"), problems)
    if problems:
        raise InputError(problems)
    return FunctionConfig(options_with(values), sources)


def _unknown(key: str, known: Iterable[str]) -> str:
    return unknown_field(key, sorted(known))


def _fits(setting: Setting, value: Any) -> bool:
    """Whether value has the form a RenderConfig gives the setting's kind (options' docstring: how a value travels)."""
    if setting.kind == SWITCH:
        return isinstance(value, bool)
    if setting.kind == LIST:
        return isinstance(value, list) and all(isinstance(entry, str) for entry in value)
    return isinstance(value, str)


def _form(setting: Setting) -> str:
    if setting.kind == SWITCH:
        return "true or false"
    if setting.kind == LIST:
        return f"a list of {setting.metavar} strings" if setting.metavar else "a list of strings"
    return "a string"


def _setting(place: Place, spec: dict[str, Any], setting: Setting, problems: list[Finding]) -> Any:
    """The setting's value from spec (None: absent, or wrong and reported in problems)."""
    assert setting.config_key is not None
    value = spec.get(setting.config_key)
    if value is None:
        return None
    path = ("spec", setting.config_key)
    if not _fits(setting, value):
        problems.append(place.problem(path, f"must be {_form(setting)}, not {describe(value)}"))
        return None
    try:
        return read(setting, value, "")
    except UsageError as exc:
        problems.append(place.problem(path, str(exc).strip()))
        return None


def _sources(place: Place, value: Any, problems: list[Finding]) -> tuple[str, ...]:
    """Source paths: relative, inside the directory the function runs in (kustomize's own rule).

    kustomize refuses to read a file outside the kustomization's directory (its default load
    restrictor); a function config in a shared or remote base must not reach further either.
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(place.problem(("spec", "sources"), f"must be a list of paths, not {describe(value)}"))
        return ()
    root = os.path.realpath(".")
    found = []
    for i, entry in enumerate(value):
        path: FieldPath = ("spec", "sources", i)
        if not isinstance(entry, str) or not entry:
            problems.append(place.problem(path, f"must be a path (a non-empty string), not {describe(entry)}"))
        elif os.path.isabs(entry):
            problems.append(place.problem(path, "must be relative to the kustomization's directory, where the function runs"))
        elif os.path.commonpath([root, os.path.realpath(entry)]) != root:
            problems.append(
                place.problem(path, "must stay inside the kustomization's directory (kustomize's load restrictor does the same)")
            )
        else:
            found.append(entry)
    return tuple(found)


# ---------------------------------------------------------------------------------------------
# Step 3: render.


@dataclass
class Outcome:
    """The text for stdout, the findings for stderr, and the exit code."""

    text: str
    problems: list[Finding]
    code: int

    @property
    def stderr_lines(self) -> list[str]:
        """What the krm command prints on stderr: each finding's one line, as every front end prints it."""
        return [error_line(p) for p in self.problems]

    @property
    def stderr(self) -> str:
        return "".join(f"{line}\n" for line in self.stderr_lines)


def strip_orchestration(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a replica without the annotations that track the item itself (see above)."""
    clean = copy.deepcopy(data)
    meta = clean.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(meta, dict) and isinstance(annotations, dict):
        kept = {k: v for k, v in annotations.items() if not is_orchestration_annotation(k)}
        if kept:
            meta["annotations"] = kept
        else:
            del meta["annotations"]
    return clean


def render(request: Request, config: FunctionConfig) -> list[Any]:
    """The output items: the input's, with each replica's objects in place of the replicas."""
    labelled: dict[str, Place] = {}  # Document.file of an item with no readable file -> its place
    in_files: dict[str, list[Document]] = {}  # real file -> its documents, to name the object of an error
    documents: list[Document | Finding] = []
    replicas: list[int] = []
    kept: set[int] = set()
    files: dict[str, Optional[list[Document]]] = {}
    for i, data in enumerate(request.data):
        place = locate(data, files)
        if place.document is not None:
            document = replace(place.document, data=data)
            in_files.setdefault(document.file, []).append(document)
        else:
            document = Document(place.label, i, data, Positions())
            labelled[document.file] = place
        role, _ = classify(document)
        if role == "replica":
            replicas.append(i)
            document = replace(document, data=strip_orchestration(data))
        elif role == "passthrough":
            kept.add(id(data))
        documents.append(document)
    for item in iter_documents(list(config.sources)):
        if isinstance(item, Document):
            in_files.setdefault(item.file, []).append(item)
        documents.append(item)
    try:
        rendered = render_documents(documents, config.options)
    except InputError as exc:
        raise InputError(_place_error(e, labelled, in_files) for e in exc.errors) from None
    except RenderFailure as exc:
        raise InputError([_general(str(exc))]) from None
    new = [obj for obj in rendered.objects if id(obj) not in kept]
    if not new and not replicas:
        return request.items
    nodes = [to_node(obj) for obj in new]
    # The new objects take the place of the first replica (or come last, from sources only).
    at = replicas[0] if replicas else len(request.items)
    gone = set(replicas)
    return request.items[:at] + nodes + [node for i, node in enumerate(request.items[at:], start=at) if i not in gone]


def to_node(value: Any) -> Any:
    """A rendered object as ruamel nodes, printed as the command line prints it.

    Multi-line strings become literal blocks (as `output.serialise` writes them), and a string
    that a YAML 1.1 reader (kubectl, PyYAML) would take for something else (`yes`, `0755`,
    `1:20`) is quoted, as PyYAML quotes it: ruamel judges by YAML 1.2 alone. (Building the
    nodes is much faster than having ruamel parse the command line's text.)
    """
    if isinstance(value, dict):
        return CommentedMap((_scalar(k), to_node(v)) for k, v in value.items())
    if isinstance(value, list):
        return CommentedSeq(to_node(v) for v in value)
    return _scalar(value)


def _scalar(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if "\n" in value:
        return LiteralScalarString(value)
    tag = yaml.resolver.Resolver().resolve(yaml.ScalarNode, value, (True, False))  # type: ignore[no-untyped-call]
    if tag != "tag:yaml.org,2002:str":
        return SingleQuotedScalarString(value)
    return value


def _place_error(error: Finding, labelled: dict[str, Place], in_files: dict[str, list[Document]]) -> Finding:
    place = labelled.get(error.file)
    if place is not None:  # an item with no file of its own: the error is at its object, not at a line
        return error.replace(line=0, column=0, resource=_ref(place.ref), origin=place.file, index=place.index)
    # The document of the file that holds the error: the last one starting at or before its line.
    owner = None
    for document in in_files.get(error.file, []):
        if document.positions.of_value(())[0] <= error.line:
            owner = document
    return _in_its_file(error, resource_ref(owner.data) if owner else None, owner.index if owner else None)


# ---------------------------------------------------------------------------------------------
# Step 4: write the output.


def write_output(request: Optional[Request], items: Optional[list[Any]], problems: list[Finding]) -> str:
    """The ResourceList to print: the input's own nodes, the new items, and the results if any."""
    if request is None:
        root: Any = {"apiVersion": RESOURCE_LIST_API_VERSION, "kind": RESOURCE_LIST_KIND}
    else:
        root = request.root
        if items is not None and items is not request.items:
            sequence = root["items"] if root.get("items") is not None else None
            if sequence is None:
                sequence = root["items"] = CommentedSeq()
            _replace_in_place(sequence, items)
    if problems:
        root["results"] = [result(p) for p in problems]
    out = io.StringIO()
    _yaml().dump(root, out)
    return out.getvalue()


def _replace_in_place(sequence: Any, items: list[Any]) -> None:
    """Make `sequence` hold `items`, deleting and inserting so comments stay with their items."""
    keep = {id(node) for node in items}
    for i in reversed(range(len(sequence))):
        if id(sequence[i]) not in keep:
            del sequence[i]
    for i, node in enumerate(items):
        if i >= len(sequence) or sequence[i] is not node:
            sequence.insert(i, node)


# ---------------------------------------------------------------------------------------------
# The whole run.


def run_function(raw: bytes) -> Outcome:
    """Run the function on the bytes of a ResourceList; paths are relative to the working directory."""
    request: Optional[Request] = None
    try:
        request = parse_input(raw)
        config = read_function_config(request.function_config)
        items = render(request, config)
    except InputError as exc:
        problems = in_result_order(exc.errors)
        return Outcome(write_output(request, None, problems), problems, EXIT_INVALID)
    except RenderFailure as exc:
        problems = [_general(str(exc))]
        return Outcome(write_output(request, None, problems), problems, EXIT_INVALID)
    return Outcome(write_output(request, items, []), [], EXIT_OK)
