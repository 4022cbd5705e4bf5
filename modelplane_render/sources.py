"""Stage 1, sources: the documents of the files a run reads, each with its positions (yamlio.loader).

Which files are read is walk's (a render-cache hit walks them too, without YAML); how a file is
read as kubectl reads it, with the line and column of every node, is yamlio's. Here: the run's
documents in order, within the run's limits, and which files are kustomize patches, not sources.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from .errors import Finding, InputError
from .walk import KUSTOMIZE_FILE_NAMES, STDIN, _read, _reason, find_files, kustomization_files, kustomization_in, read_file
from .yamlio.document import Document
from .yamlio.libyaml import YAMLError, load_all
from .yamlio.loader import _Budget, _load, decode

MAX_TOTAL_BYTES = 64 * 1024 * 1024  # all files of one run together (the per-file and per-node limits: yamlio.loader)


def kustomize_patch_files(files: list[tuple[str, str]]) -> set[str]:
    """The real paths of the files that a kustomization beside them, or above them, lists as patches.

    A patch is a fragment of an object (a ModelReplica with only the fields it changes), not a
    source: kustomize merges it into a base before the function sees it. Read from every
    kustomization in the files' directories and their parents (`patches[].path`,
    `patchesStrategicMerge[]`, `patchesJson6902[].path`); one that can't be read lists none:
    kustomize reports it.
    """
    directories: set[str] = set()
    for _, real in files:
        if real == STDIN:
            continue
        directory = os.path.dirname(os.path.realpath(real))
        while directory not in directories:
            directories.add(directory)
            directory = os.path.dirname(directory)
    patches: set[str] = set()
    for directory in sorted(directories):
        for name in sorted(KUSTOMIZE_FILE_NAMES):
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            try:
                documents = load_all(decode(path, read_file(path, path)))
            except (OSError, InputError, YAMLError):
                continue
            kustomization = documents[0] if documents and isinstance(documents[0], dict) else {}
            listed = [*(kustomization.get("patches") or []), *(kustomization.get("patchesJson6902") or [])]
            named = [entry.get("path") for entry in listed if isinstance(entry, dict)]
            named += [entry for entry in kustomization.get("patchesStrategicMerge") or [] if isinstance(entry, str)]
            patches.update(os.path.realpath(os.path.join(directory, p)) for p in named if isinstance(p, str) and "\n" not in p)
    return patches


# A kustomization of these fields alone, listing files of its own directory, builds what a walk reads
# anyway (a plain base: kustomize/base, fixtures/valid/objects-passed-through): its files are read.
PLAIN_KUSTOMIZATION_FIELDS = frozenset({"apiVersion", "kind", "metadata", "resources", "openapi", "sortOptions", "buildMetadata"})


def kustomize_builds(name: str, data: bytes) -> list[str]:
    """What kustomize makes of a kustomization that its directory's files alone don't say: its other
    fields (patches, transformers, namespace, ...) and resources from elsewhere. Empty for a plain base.

    Such a directory is an app only kustomize builds: given as a PATH it is built (frontends.kustomize_app),
    and a walk refuses it rather than read its files without what the kustomization does to them.
    One that can't be read is kustomize's to report: it counts as built.
    """
    try:
        documents = load_all(decode(name, data))
    except (InputError, YAMLError):
        return ["a kustomization that can't be read"]
    kustomization = documents[0] if len(documents) == 1 and isinstance(documents[0], dict) else None
    if kustomization is None:
        return ["a kustomization that is not one mapping"]
    reasons = sorted(str(key) for key in kustomization if key not in PLAIN_KUSTOMIZATION_FIELDS)
    resources = kustomization.get("resources") or []
    elsewhere = [
        r
        for r in (resources if isinstance(resources, list) else [resources])
        if not (
            isinstance(r, str) and r.endswith((".yaml", ".yml")) and not r.startswith("/") and ".." not in r.split("/") and "://" not in r
        )
    ]
    if elsewhere:
        reasons.append(f"resources from elsewhere ({', '.join(map(str, elsewhere[:3]))}{', ...' if len(elsewhere) > 3 else ''})")
    return reasons


def is_built(directory: str) -> bool:
    """Whether a PATH is a directory only kustomize builds (its kustomization does more than list its own files)."""
    path = kustomization_in(directory)
    if path is None:
        return False
    try:
        return bool(kustomize_builds(path, read_file(path, path)))
    except (InputError, OSError):  # unreadable: kustomize says why
        return True


def built_kustomization_error(shown: str, reasons: list[str]) -> Finding:
    """A walk met a kustomization only kustomize builds (kustomize_builds)."""
    directory = os.path.dirname(shown) or "."
    return Finding(
        shown,
        1,
        1,
        ".",
        f"kustomize builds {directory} ({', '.join(reasons)}): its files alone are not what it makes, so a directory walk "
        f"doesn't read them; give {directory} as a PATH of its own, and kustomize builds it with the function, as Argo CD does",
    )


def built_kustomizations(paths: list[str]) -> list[Finding]:
    """An error for each kustomization below the given directories that only kustomize builds."""
    errors = []
    for shown, real in kustomization_files(paths):
        try:
            reasons = kustomize_builds(shown, read_file(shown, real))
        except (InputError, OSError):
            reasons = ["a kustomization that can't be read"]
        if reasons:
            errors.append(built_kustomization_error(shown, reasons))
    return errors


def iter_documents(paths: list[str]) -> Iterator[Document | Finding]:
    """Every document of every file, or an error per file that can't be read.

    The limits on bytes and nodes hold for the whole run: a directory of many big files is
    as bounded as one. Once the bytes are spent, the remaining files are not read. Files a
    kustomization lists as patches are not sources (kustomize_patch_files).
    """
    files, errors = find_files(paths)
    errors = sorted([*errors, *built_kustomizations(paths)])
    patches = kustomize_patch_files(files)
    if patches:
        files = [(shown, real) for shown, real in files if real == STDIN or os.path.realpath(real) not in patches]
    yield from errors
    budget = _Budget()
    bytes_left = MAX_TOTAL_BYTES
    for shown, real in files:
        try:
            raw = _read(shown, real, bytes_left)
            bytes_left -= len(raw)
            if bytes_left < 0:
                yield Finding(
                    shown,
                    1,
                    1,
                    ".",
                    f"the files read hold more than {MAX_TOTAL_BYTES // (1024 * 1024)} MiB of YAML in all: that is the limit",
                )
                return
            yield from _load(shown, decode(shown, raw), budget)
        except InputError as exc:
            yield from exc.errors
        except OSError as exc:
            yield Finding(shown, 1, 1, ".", f"cannot read: {_reason(exc)}")
