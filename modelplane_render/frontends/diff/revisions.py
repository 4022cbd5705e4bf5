"""git: read a revision's files without touching the checkout or the index, by the walk `render` uses."""

from __future__ import annotations

import io
import os
import posixpath
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Optional

from ...errors import Finding, InputError, RenderFailure, UsageError
from ...sources import built_kustomization_error, kustomize_builds
from ...walk import KUSTOMIZE_FILE_NAMES, MAX_FILE_BYTES, directory_link_problem, display_path, is_source_file, is_walked_directory
from ...yamlio.document import Document
from ...yamlio.loader import decode, load_documents

# Symlinks inside a tree are followed at most this often, as the kernel's ELOOP limit.
MAX_SYMLINK_HOPS = 40


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
                    full = os.path.join(shown_dir, name)
                    shown = display_path(full)
                    if entry.mode == "120000":
                        leads = tree.resolve(real)
                        # A link to a directory, as the walk on disk meets it; one out of the repository
                        # can't be told from a link to a file there, and can't be read at a revision anyway.
                        if leads.kind == "tree" or (leads.kind == "outside" and not is_source_file(name)):
                            if is_walked_directory(name):
                                inside = leads.kind == "tree" and (not root or leads.path == root or leads.path.startswith(root + "/"))
                                linked = leads.path if leads.kind == "outside" else absolute(leads.path)
                                holds = inside and _tree_holds_sources(tree, leads.path)
                                problem = directory_link_problem(display_path(absolute(root)), display_path(linked), inside, holds)
                                if problem:
                                    errors.append(Finding(shown, 1, 1, ".", problem))
                            continue
                    if not is_source_file(name):
                        continue
                    if entry.mode != "120000":
                        found.append(_Found(shown, entry))
                        continue
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
            errors.append(Finding(given, 1, 1, ".", f"symlink leads outside the git repository: can't read {target.path} at a revision"))
        elif target.kind == "submodule":
            errors.append(Finding(given, 1, 1, ".", "a git submodule: its files can't be read at a revision"))
        else:
            errors.append(Finding(given, 1, 1, ".", "no such file or directory"))
    return found, sorted(errors)  # as InputError reports them


def _tree_holds_sources(tree: RevisionTree, directory: str) -> bool:
    """Whether the walk of a directory of the revision would read a file (links in it not followed)."""
    stack = [directory]
    while stack:
        current = stack.pop()
        for name in tree.children.get(current, ()):
            real = f"{current}/{name}" if current else name
            entry = tree.entries.get(real)
            if entry is None:
                if is_walked_directory(name):
                    stack.append(real)
            elif entry.mode != "120000" and entry.type == "blob" and is_source_file(name):
                return True
    return False


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


def built_kustomizations_at(tree: RevisionTree, git: Git, paths: list[str]) -> list[Finding]:
    """`sources.built_kustomizations` over a revision: a kustomization below a given directory that only kustomize builds."""
    found: list[tuple[str, str]] = []  # (shown, oid)
    for given in paths:
        target = tree.resolve(git.repo_path(given))
        if target.kind != "tree":
            continue
        prefix = f"{target.path}/" if target.path else ""
        for path, entry in sorted(tree.entries.items()):
            if path.startswith(prefix) and posixpath.basename(path) in KUSTOMIZE_FILE_NAMES and entry.type == "blob":
                inner = path[len(prefix) :]
                if any(part.startswith(".") for part in inner.split("/")[:-1]):
                    continue
                found.append((display_path(os.path.join(os.path.abspath(given), *inner.split("/"))), entry.oid))
    blobs = tree.read([oid for _, oid in found])
    return [built_kustomization_error(shown, reasons) for shown, oid in found if (reasons := kustomize_builds(shown, blobs[oid]))]


def holds_kustomization_at(tree: RevisionTree, git: Git, given: str) -> bool:
    """Whether a given path is, at this revision, a directory holding a kustomization."""
    target = tree.resolve(git.repo_path(given))
    return target.kind == "tree" and any(tree.resolve(posixpath.join(target.path, n)).kind == "blob" for n in KUSTOMIZE_FILE_NAMES)


def check_out(tree: RevisionTree, git: Git, into: str) -> None:
    """The revision's files written under `into` (`git archive`), so kustomize can build from them: relative bases
    and the function's files resolve as in a checkout. The repository's checkout and index are not touched."""
    archive = git.run("archive", "--format=tar", tree.revision)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
