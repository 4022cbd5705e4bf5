"""Front end `diff`: render the sources at two git revisions and compare the objects, for review.

Each side is read exactly as `render` reads it (the same `sources` rules and loader, the same
pipeline), but a revision is read from git's objects (`git ls-tree`, `git cat-file --batch`):
the user's checkout and index are never touched, so a diff can run in a dirty tree or in CI.
The work tree side (no HEAD given) is `render`'s own reading of the files on disk.

Objects are matched by API group, kind, namespace and name (a version bump is a change, not a
removal and an addition), and compared as the exact YAML `render` prints for each.
"""

from __future__ import annotations

import difflib
import html
import os
import posixpath
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from ... import constants, names
from ...errors import Finding, InputError, RenderFailure, UsageError
from ...kinds import WORKLOAD_KINDS
from ...options import Options
from ...output import serialise, sort_key
from ...pipeline import classify, render_documents
from ...sources import MAX_FILE_BYTES, Document, decode, display_path, iter_documents, load_documents
from ...walk import is_source_file, is_walked_directory

WORK_TREE = "work tree"
# Symlinks inside a tree are followed at most this often, as the kernel's ELOOP limit.
MAX_SYMLINK_HOPS = 40

# (API group, kind, namespace, name): how the API server tells two objects apart.
Key = tuple[str, str, str, str]


def object_key(obj: dict[str, Any]) -> Key:
    api_version = str(obj.get("apiVersion", ""))
    meta = obj.get("metadata") or {}
    group = api_version.split("/")[0] if "/" in api_version else ""
    return (group, str(obj.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", "")))


def object_title(key: Key) -> str:
    """`Kind namespace/name` (`Kind name` for a cluster-scoped object)."""
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def object_text(obj: dict[str, Any]) -> str:
    """The object exactly as `render` prints it, without the `---` that starts it."""
    return serialise([obj])[len("---\n") :]


# ---------------------------------------------------------------------------------------------
# git: read a revision's files without touching the checkout or the index


class Git:
    """git commands run in the current directory; none of them writes the index or the work tree."""

    def __init__(self) -> None:
        self.env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        self.toplevel = os.fsdecode(self.run("rev-parse", "--show-toplevel", usage=True)).rstrip("\n")

    def run(self, *args: str, input: Optional[bytes] = None, usage: bool = False) -> bytes:
        try:
            done = subprocess.run(["git", *args], input=input, capture_output=True, env=self.env, check=False)
        except FileNotFoundError:
            raise RenderFailure("git is not installed (diff reads the revisions from git)") from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            text = message[-1] if message else f"git {args[0]} failed with exit code {done.returncode}"
            text = text.removeprefix("fatal: ")
            raise (UsageError if usage else RenderFailure)(text)
        return done.stdout

    def repo_path(self, given: str) -> str:
        """A command-line path as a path inside the repository ('' for its top)."""
        rel = os.path.relpath(os.path.abspath(given), self.toplevel)
        if rel == ".":
            return ""
        if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
            raise UsageError(f"{given} is outside the git repository {display_path(self.toplevel)}")
        return rel.replace(os.sep, "/")


@dataclass(frozen=True)
class _Entry:
    mode: str
    type: str  # blob, tree or commit (a submodule)
    oid: str
    size: int


@dataclass
class _Resolved:
    """Where a path leads in a tree after its symlinks: a blob, a tree, nothing, or outside the repository."""

    kind: str  # "blob", "tree", "missing", "outside", "submodule"
    path: str
    entry: Optional[_Entry] = None


class RevisionTree:
    """One revision's files, listed once, read in one `git cat-file --batch`."""

    def __init__(self, git: Git, revision: str):
        if revision.startswith("-"):
            raise UsageError(f"{revision!r} is not a revision")
        try:
            oid = git.run("rev-parse", "--verify", "--quiet", f"{revision}^{{tree}}").decode().strip()
        except RenderFailure:
            raise UsageError(f"unknown revision {revision!r} (not a commit or tree in this repository)") from None
        self.git = git
        self.revision = revision
        self.entries: dict[str, _Entry] = {}
        self.children: dict[str, set[str]] = {"": set()}
        listing = git.run("ls-tree", "-r", "-l", "-z", "--full-tree", oid)
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, kind, object_id, size = meta.decode().split()
            path = os.fsdecode(raw_path)
            self.entries[path] = _Entry(mode, kind, object_id, int(size) if size.isdigit() else 0)
            parent, _, name = path.rpartition("/")
            while True:
                self.children.setdefault(parent, set()).add(name)
                if not parent:
                    break
                parent, _, name = parent.rpartition("/")
        self._links: dict[str, str] = {}

    def is_dir(self, path: str) -> bool:
        return path in self.children

    def read(self, oids: list[str]) -> dict[str, bytes]:
        """The content of every blob named, in one git process."""
        if not oids:
            return {}
        unique = list(dict.fromkeys(oids))
        data = self.git.run("cat-file", "--batch", input="".join(f"{o}\n" for o in unique).encode())
        found: dict[str, bytes] = {}
        at = 0
        for oid in unique:
            end = data.index(b"\n", at)
            header = data[at:end].split()
            if len(header) != 3:
                raise RenderFailure(f"git cat-file could not read {oid} at {self.revision}")
            size = int(header[2])
            found[oid] = data[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return found

    def _link_target(self, path: str) -> str:
        if path not in self._links:
            oid = self.entries[path].oid
            self._links[path] = os.fsdecode(self.read([oid])[oid])
        return self._links[path]

    def resolve(self, path: str) -> _Resolved:
        """Follow symlinks along path as the kernel would, inside this revision's tree."""
        hops = 0
        pending = [p for p in path.split("/") if p and p != "."]
        current = ""
        while pending:
            part = pending.pop(0)
            if part == "..":
                if not current:
                    return _Resolved("outside", posixpath.normpath(posixpath.join(current, part, *pending)))
                current = posixpath.dirname(current)
                continue
            candidate = f"{current}/{part}" if current else part
            entry = self.entries.get(candidate)
            if entry is None:
                if candidate in self.children:
                    current = candidate
                    continue
                return _Resolved("missing", posixpath.join(candidate, *pending))
            if entry.mode == "120000":
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    return _Resolved("missing", candidate)
                target = self._link_target(candidate)
                if target.startswith("/"):
                    return _Resolved("outside", posixpath.normpath(posixpath.join(target, *pending)))
                pending = [p for p in target.split("/") if p and p != "."] + pending
                continue
            if entry.type == "commit":
                return _Resolved("submodule", candidate) if not pending else _Resolved("missing", candidate)
            if pending:
                return _Resolved("missing", posixpath.join(candidate, *pending))  # a file used as a directory
            return _Resolved("blob", candidate, entry)
        return _Resolved("tree", current)


@dataclass
class _Found:
    shown: str
    entry: _Entry


def find_files_at(tree: RevisionTree, git: Git, paths: list[str]) -> tuple[list[_Found], list[Finding]]:
    """`sources.find_files` over a revision's tree: the same walk, order, skips and symlink rule."""
    found: list[_Found] = []
    errors: list[Finding] = []

    def absolute(repo_path: str) -> str:
        return os.path.join(git.toplevel, *repo_path.split("/")) if repo_path else git.toplevel

    for given in paths:
        rel = git.repo_path(given)
        target = tree.resolve(rel)
        if target.kind == "tree":
            root = target.path
            stack = [(given, root)]
            while stack:
                shown_dir, real_dir = stack.pop()
                names_here = sorted(tree.children.get(real_dir, ()))
                subdirs = []
                for name in names_here:
                    real = f"{real_dir}/{name}" if real_dir else name
                    entry = tree.entries.get(real)
                    if entry is None:  # a directory
                        if is_walked_directory(name):
                            subdirs.append(name)
                        continue
                    if entry.type == "commit":
                        continue  # a submodule: its files are not in this repository's objects
                    if not is_source_file(name):
                        continue
                    full = os.path.join(shown_dir, name)
                    shown = display_path(full)
                    if entry.mode != "120000":
                        found.append(_Found(shown, entry))
                        continue
                    leads = tree.resolve(real)
                    if leads.kind == "tree":
                        continue  # os.walk lists a symlink to a directory among the directories, and doesn't follow it
                    inside = leads.kind != "outside" and (not root or leads.path == root or leads.path.startswith(root + "/"))
                    if not inside:
                        where = leads.path if leads.kind == "outside" else absolute(leads.path)
                        errors.append(
                            Finding(shown, 1, 1, ".", f"symlink leads outside {display_path(absolute(root))}: refusing to read {where}")
                        )
                    elif leads.kind == "blob" and leads.entry is not None:
                        found.append(_Found(shown, leads.entry))
                    else:
                        errors.append(Finding(shown, 1, 1, ".", "cannot read: no such file or directory"))
                # os.walk goes depth first, subdirectories in sorted order
                for name in reversed(subdirs):
                    stack.append((os.path.join(shown_dir, name), f"{real_dir}/{name}" if real_dir else name))
        elif target.kind == "blob" and target.entry is not None:
            found.append(_Found(given, target.entry))
        elif target.kind == "outside":
            errors.append(
                Finding(given, 1, 1, ".", f"symlink leads outside the git repository: can't read {target.path} at a revision")
            )
        elif target.kind == "submodule":
            errors.append(Finding(given, 1, 1, ".", "a git submodule: its files can't be read at a revision"))
        else:
            errors.append(Finding(given, 1, 1, ".", "no such file or directory"))
    return found, errors


def iter_revision_documents(tree: RevisionTree, git: Git, paths: list[str]) -> Iterator[Document | Finding]:
    """`sources.iter_documents`, with each file read from the revision instead of the disk."""
    files, errors = find_files_at(tree, git, paths)
    yield from errors
    small = [f.entry.oid for f in files if f.entry.size <= MAX_FILE_BYTES]
    contents = tree.read(small)
    for item in files:
        if item.entry.size > MAX_FILE_BYTES:
            yield Finding(item.shown, 1, 1, ".", f"file is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")
            continue
        try:
            yield from load_documents(item.shown, decode(item.shown, contents[item.entry.oid]))
        except InputError as exc:
            yield from exc.errors


# ---------------------------------------------------------------------------------------------
# one side: render, and remember where each object came from


@dataclass
class Side:
    """The rendered objects of one revision, with the source file of each and of each replica."""

    label: str
    objects: dict[Key, dict[str, Any]] = field(default_factory=dict)
    files: dict[Key, str] = field(default_factory=dict)
    replicas: dict[tuple[str, str], str] = field(default_factory=dict)  # (namespace, name) -> file


def render_side(label: str, documents: Iterable[Document | Finding], options: Options) -> Side:
    side = Side(label)
    passthrough: dict[Key, str] = {}
    replica_labels: dict[tuple[str, str], str] = {}

    def remember(items: Iterable[Document | Finding]) -> Iterator[Document | Finding]:
        for item in items:
            if isinstance(item, Document):
                role, error = classify(item)
                if error is None and role == "replica":
                    meta = item.data.get("metadata") or {}
                    if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                        namespace = str(meta.get("namespace") or options.namespace or "")
                        side.replicas.setdefault((namespace, meta["name"]), item.file)
                        replica_labels.setdefault((namespace, names.label_value(meta["name"])), item.file)
                elif error is None and role == "passthrough":
                    passthrough.setdefault(object_key(item.data), item.file)
            yield item

    rendered = render_documents(remember(documents), options)
    for obj in rendered.objects:
        key = object_key(obj)
        side.objects[key] = obj
        labels = (obj.get("metadata") or {}).get("labels") or {}
        file = passthrough.get(key) or replica_labels.get((key[2], str(labels.get(constants.LABEL_REPLICA, ""))))
        side.files[key] = file or "(unknown source)"
    return side


def _with_revision(error: Finding, revision: Optional[str]) -> Finding:
    if revision is None:
        return error
    return Finding(f"{revision}:{error.file}", error.line, error.column, error.path, error.message)


def render_both(base: str, head: Optional[str], paths: list[str], options: Options) -> tuple[Side, Side]:
    """Both sides, or every error of both (each named with its revision) and no diff."""
    git = Git()
    base_tree = RevisionTree(git, base)
    head_tree = RevisionTree(git, head) if head is not None else None

    # A path may be new in the change (or deleted by it): it need only exist on one side.
    present: tuple[list[str], list[str]] = ([], [])
    missing: list[Finding] = []
    for given in paths:
        rel = git.repo_path(given)
        at_base = base_tree.resolve(rel).kind != "missing"
        at_head = os.path.lexists(given) if head_tree is None else head_tree.resolve(rel).kind != "missing"
        if not at_base and not at_head:
            missing.append(Finding(given, 1, 1, ".", f"no such file or directory at {base} or {head or 'the ' + WORK_TREE}"))
        if at_base:
            present[0].append(given)
        if at_head:
            present[1].append(given)
    if missing:
        raise InputError(missing)

    errors: list[Finding] = []
    failures: list[str] = []
    sides: list[Side] = []
    for revision, tree, given_paths in ((base, base_tree, present[0]), (head, head_tree, present[1])):
        label = revision if revision is not None else WORK_TREE
        documents = iter_documents(given_paths) if tree is None else iter_revision_documents(tree, git, given_paths)
        try:
            sides.append(render_side(label, documents, options))
        except InputError as exc:
            errors.extend(_with_revision(e, revision) for e in exc.errors)
        except RenderFailure as exc:
            failures.append(f"at {label}: {exc}")
    if errors:
        raise InputError(errors)
    if failures:
        raise RenderFailure("; ".join(failures))
    return sides[0], sides[1]


# ---------------------------------------------------------------------------------------------
# the comparison


@dataclass
class Change:
    key: Key
    status: str  # "added", "removed" or "changed"
    file: str
    hunks: list[str]  # unified diff lines after the ---/+++ header, each ending in a newline
    added: int
    removed: int

    @property
    def title(self) -> str:
        return object_title(self.key)


@dataclass
class Comparison:
    base: str
    head: str
    changes: list[Change]
    notes: list[str]
    unchanged: int

    def count(self, status: str) -> int:
        return sum(1 for c in self.changes if c.status == status)

    @property
    def lines_added(self) -> int:
        return sum(c.added for c in self.changes)

    @property
    def lines_removed(self) -> int:
        return sum(c.removed for c in self.changes)


def compare(base: Side, head: Side, context: int = 3) -> Comparison:
    changes: list[Change] = []
    unchanged = 0
    keys = set(base.objects) | set(head.objects)

    def order(key: Key) -> tuple[Any, ...]:
        obj = head.objects.get(key) or base.objects[key]
        return (*sort_key(obj), key)

    for key in sorted(keys, key=order):
        before = object_text(base.objects[key]).splitlines(keepends=True) if key in base.objects else []
        after = object_text(head.objects[key]).splitlines(keepends=True) if key in head.objects else []
        if before == after:
            unchanged += 1
            continue
        status = "added" if key not in base.objects else "removed" if key not in head.objects else "changed"
        lines = list(difflib.unified_diff(before, after, n=context))[2:]  # the ---/+++ header is written per format
        lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        plus = sum(1 for line in lines if line.startswith("+"))
        minus = sum(1 for line in lines if line.startswith("-"))
        file = head.files.get(key) or base.files[key]
        changes.append(Change(key, status, file, lines, plus, minus))
    return Comparison(base.label, head.label, changes, _notes(base, head, changes), unchanged)


def _notes(base: Side, head: Side, changes: list[Change]) -> list[str]:
    """What a reviewer must not miss: a removed workload deletes live pods, and a rename is a removal."""
    notes = []
    gone = [r for r in base.replicas if r not in head.replicas]
    new = [r for r in head.replicas if r not in base.replicas]
    for namespace, name in sorted(gone):
        same_ns = [r for r in new if r[0] == namespace]
        same_file = [r for r in same_ns if head.replicas[r] == base.replicas[(namespace, name)]]
        match = same_file if len(same_file) == 1 else same_ns if len(same_ns) == 1 else []
        if match:
            new.remove(match[0])
            notes.append(
                f"ModelReplica {namespace}/{name} is renamed to {match[0][0]}/{match[0][1]}: its objects are removed and new ones added, "
                "so Argo CD will replace the live pods (the old ones are deleted and the new ones start from scratch on free GPUs), "
                "not roll them"
            )
        else:
            notes.append(f"ModelReplica {namespace}/{name} is removed: Argo CD (with pruning) will delete its objects and its live pods")
    kept = {(ns, names.label_value(name)) for ns, name in head.replicas if (ns, name) in base.replicas}

    def replica_of(side: Side, key: Key) -> tuple[str, str]:
        labels = (side.objects[key].get("metadata") or {}).get("labels") or {}
        return key[2], str(labels.get(constants.LABEL_REPLICA, ""))

    workloads = [c for c in changes if c.key[1] in WORKLOAD_KINDS and c.status != "changed"]
    for change in workloads:
        if change.status != "removed" or replica_of(base, change.key) not in kept:
            continue
        successors = [
            c.title
            for c in workloads
            if c.status == "added" and c.key[1] == change.key[1] and replica_of(head, c.key) == replica_of(base, change.key)
        ]
        if successors:
            notes.append(
                f"{change.title} is replaced by {' and '.join(successors)}: its live pods are deleted and the new ones start "
                "from scratch on free GPUs (a new name is not a rolling update)"
            )
        else:
            notes.append(f"{change.title} is removed: Argo CD (with pruning) will delete its live pods")
    return notes


# ---------------------------------------------------------------------------------------------
# output formats

NO_CHANGE = "no change to the rendered output"
# GitHub refuses a comment longer than 65,536 characters; keep room for what a workflow adds.
MARKDOWN_LIMIT = 60_000
MARKDOWN_MARKER = "<!-- modelplane-render diff -->"
_FOOTER_ROOM = 300

_RESET, _BOLD, _RED, _GREEN, _YELLOW, _CYAN = "\033[0m", "\033[1m", "\033[31m", "\033[32m", "\033[33m", "\033[36m"
_STATUS_COLOUR = {"added": _GREEN, "removed": _RED, "changed": _YELLOW}


def _counts(change: Change) -> str:
    if change.status == "added":
        return f"+{change.added}"
    if change.status == "removed":
        return f"-{change.removed}"
    return f"+{change.added} -{change.removed}"


def _summary(comparison: Comparison) -> str:
    c = comparison
    return (
        f"{c.count('added')} added, {c.count('removed')} removed, {c.count('changed')} changed (+{c.lines_added} -{c.lines_removed} lines)"
    )


def _file_header(comparison: Comparison, change: Change) -> tuple[str, str]:
    before = "/dev/null" if change.status == "added" else comparison.base
    after = "/dev/null" if change.status == "removed" else comparison.head
    return f"--- {before}\n", f"+++ {after}\n"


def format_text(comparison: Comparison, *, colour: bool = False) -> str:
    """The summary, the notes, then one unified diff per object, headed `Kind namespace/name`."""

    def paint(code: str, line: str) -> str:
        if not colour:
            return line
        body = line.rstrip("\n")
        return f"{code}{body}{_RESET}" + line[len(body) :]

    c = comparison
    if not c.changes:
        return f"{c.base} -> {c.head}: {NO_CHANGE} ({c.unchanged} objects)\n"
    out = [paint(_BOLD, f"{c.base} -> {c.head}: {_summary(c)}\n"), "\n"]
    width = max(len(change.title) for change in c.changes)
    for change in c.changes:
        out.append(paint(_STATUS_COLOUR[change.status], f"  {change.status:<8} {change.title:<{width}}  {_counts(change)}\n"))
    if c.notes:
        out.append("\n")
        out.extend(paint(_YELLOW, f"note: {note}\n") for note in c.notes)
    for change in c.changes:
        out.append("\n")
        out.append(paint(_BOLD, f"{change.title}\n"))
        out.extend(paint(_BOLD, line) for line in _file_header(c, change))
        for line in change.hunks:
            code = _CYAN if line.startswith("@@") else _GREEN if line.startswith("+") else _RED if line.startswith("-") else ""
            out.append(paint(code, line) if code else line)
    return "".join(out)


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in the text, so an object can't close it."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def format_markdown(comparison: Comparison, *, limit: int = MARKDOWN_LIMIT) -> str:
    """A pull-request comment: the summary, then a collapsible section per source file (as argocd-diff-preview)."""
    c = comparison
    head = [MARKDOWN_MARKER + "\n", "### modelplane-render diff\n", "\n"]
    if not c.changes:
        head.append(f"`{c.base}` → `{c.head}`: {NO_CHANGE} ({c.unchanged} objects).\n")
        return "".join(head)
    head.append(f"`{c.base}` → `{c.head}`: **{_summary(c)}**\n\n")
    head.append("| change | object | source | lines |\n| --- | --- | --- | --- |\n")
    # The table may take half of the comment; the diffs fill what is left, the footer has its room.
    budget = limit - _FOOTER_ROOM
    rows = [f"| {change.status} | {_cell(change.title)} | {_cell(change.file)} | {_counts(change)} |\n" for change in c.changes]
    for index, row in enumerate(rows):
        if sum(map(len, head)) + len(row) > budget // 2:
            head.append(f"| … | {len(rows) - index} more objects | | |\n")
            break
        head.append(row)
    if c.notes:
        head.append("\n> [!WARNING]\n")
        head.append("> \n".join(f"> {html.escape(note, quote=False)}\n" for note in c.notes))
    out = ["".join(head)]
    size = len(out[0])
    omitted = 0
    by_file: dict[str, list[Change]] = {}
    for change in c.changes:
        by_file.setdefault(change.file, []).append(change)
    for file in sorted(by_file):
        changes = by_file[file]
        counts = ", ".join(f"{n} {s}" for s in ("added", "removed", "changed") if (n := sum(1 for x in changes if x.status == s)))
        opening = f"\n<details>\n<summary>{html.escape(file)} ({counts})</summary>\n\n"
        closing = "</details>\n"
        shown: list[str] = []
        for change in changes:
            body = "".join(change.hunks)  # the heading says which object and whether it is added or removed
            fence = _fence(body)
            block = f"#### {change.title} ({change.status})\n\n{fence}diff\n{body}{fence}\n\n"
            if size + len(opening) + len(closing) + sum(map(len, shown)) + len(block) > budget:
                omitted += 1
            else:
                shown.append(block)
        if shown:
            section = opening + "".join(shown) + closing
            out.append(section)
            size += len(section)
    if omitted:
        out.append(
            f"\n_{omitted} more object diffs are not shown (a comment holds at most {limit} characters): "
            "run the same `modelplane-render diff` without `--format markdown` to see them all._\n"
        )
    return "".join(out)
