"""Finding the source files and reading their bytes: the walk every front end (and the render cache) shares.

Kept apart from sources.py so that it imports nothing but os: a render-cache hit walks the
sources exactly as a render does, and must not pay for YAML to do it.
"""

from __future__ import annotations

import os
import stat
import sys

from .errors import Finding, InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_FILE_BYTES = 16 * 1024 * 1024

YAML_SUFFIXES = (".yaml", ".yml")
# kustomize's own files sit beside the manifests in a kustomize base; they are not objects.
KUSTOMIZE_FILE_NAMES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})


def is_walked_directory(name: str) -> bool:
    """Whether a directory met in a walk is entered: not `.git` or any other hidden one."""
    return not name.startswith(".")


def is_source_file(name: str) -> bool:
    """Whether a file met in a walk is read: `*.yaml`/`*.yml`, not hidden, not a kustomization file."""
    return not name.startswith(".") and name.endswith(YAML_SUFFIXES) and name not in KUSTOMIZE_FILE_NAMES


def display_path(path: str) -> str:
    """A found file's path relative to the current directory, or absolute when it is elsewhere."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


# The path `-` is standard input, as kubectl's `-f -` is; errors name it <stdin>.
STDIN = "-"
STDIN_NAME = "<stdin>"


def find_files(paths: list[str]) -> tuple[list[tuple[str, str]], list[Finding]]:
    """Expand command-line paths into (display name, real path) pairs, in a stable order.

    Directories are walked recursively in sorted order; only `*.yaml`/`*.yml` files are
    read, names starting with `.` are skipped (`.git`, editor files) and so are
    kustomization files. A symlink may only lead to a regular file inside the directory
    that was given: Argo CD refuses out-of-bounds symlinks, and so do we. A symlink to a
    directory is not followed (as kubectl's and Argo CD's walks don't), and rather than be
    skipped in silence it is an error when it leads outside the directory given or to YAML
    the walk would read (directory_link_problem). A directory that can't be listed is an
    error: skipping it would silently drop the objects inside.
    """
    found: list[tuple[str, str]] = []
    errors: list[Finding] = []
    for given in paths:
        if given == STDIN:
            if (STDIN_NAME, STDIN) not in found:  # standard input can be read once
                found.append((STDIN_NAME, STDIN))
            continue
        if not os.path.lexists(given):
            errors.append(Finding(given, 1, 1, ".", "no such file or directory"))
            continue
        if os.path.isdir(given):
            root = os.path.realpath(given)

            for dirpath, dirnames, filenames in os.walk(given, onerror=_walk_error(given, errors), followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if is_walked_directory(d))
                for name in dirnames:
                    link = os.path.join(dirpath, name)
                    if os.path.islink(link):
                        real = os.path.realpath(link)
                        inside = _inside(root, real)
                        problem = directory_link_problem(display_path(root), display_path(real), inside, inside and _holds_sources(real))
                        if problem:
                            errors.append(Finding(display_path(link), 1, 1, ".", problem))
                for name in sorted(filenames):
                    if not is_source_file(name):
                        continue
                    full = os.path.join(dirpath, name)
                    shown = given if full == given else display_path(full)
                    problem = _unsafe_file(full, root)
                    if problem:
                        errors.append(Finding(shown, 1, 1, ".", problem))
                    else:
                        found.append((shown, full))
        else:
            problem = _unsafe_file(given, None)
            if problem:
                errors.append(Finding(given, 1, 1, ".", problem))
            else:
                found.append((given, given))
    return found, sorted(errors)  # as InputError reports them


def kustomization_in(directory: str) -> str | None:
    """The kustomization file a directory holds, or None."""
    if not os.path.isdir(directory):
        return None
    return next((os.path.join(directory, n) for n in sorted(KUSTOMIZE_FILE_NAMES) if os.path.lexists(os.path.join(directory, n))), None)


def kustomization_files(paths: list[str]) -> list[tuple[str, str]]:
    """(display name, path) of every kustomization file a walk of `paths` passes, by the walk's rules.

    Never read as sources, they still decide what a directory means (sources.kustomize_builds), so
    the render cache keys on them too.
    """
    found: list[tuple[str, str]] = []
    for given in paths:
        if given == STDIN or not os.path.isdir(given):
            continue
        for dirpath, dirnames, filenames in os.walk(given, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if is_walked_directory(d) and not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(KUSTOMIZE_FILE_NAMES & set(filenames)):
                full = os.path.join(dirpath, name)
                found.append((display_path(full), full))
    return found


def directory_link_problem(root: str, target: str, inside: bool, holds_sources: bool) -> str | None:
    """Why a symlink to a directory met in a walk is refused, or None when skipping it loses nothing.

    It is never followed (Argo CD's and kubectl's walks don't follow one either); skipped in
    silence, it would drop the replicas a user put behind it.
    """
    if not inside:
        return f"symlink to a directory leads outside {root} (to {target}): refusing it, as Argo CD refuses links that leave the repository"
    if holds_sources:
        return f"symlink to a directory is not followed, and its target holds YAML: give {target} as a path instead of the link"
    return None


def _holds_sources(directory: str) -> bool:
    """Whether a walk of directory would read a file (the walk's own rules; links in it not followed)."""
    for _, dirnames, filenames in os.walk(directory, followlinks=False):
        dirnames[:] = [d for d in dirnames if is_walked_directory(d)]
        if any(is_source_file(name) for name in filenames):
            return True
    return False


def _walk_error(given: str, errors: list[Finding]) -> Callable[[OSError], None]:
    def unreadable(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else given
        shown = where if where == given else display_path(where)
        errors.append(Finding(shown, 1, 1, ".", f"cannot read directory: {_reason(exc)}"))

    return unreadable


def _reason(exc: OSError) -> str:
    return (exc.strerror or str(exc)).lower()


def _inside(root: str, real: str) -> bool:
    return os.path.commonpath([root, real]) == root


def _unsafe_file(path: str, root: str | None) -> str | None:
    real = os.path.realpath(path)
    if root is not None and not _inside(root, real):
        return f"symlink leads outside {display_path(root)}: refusing to read {real}"
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return f"cannot read: {_reason(exc)}"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, FIFO or socket): refusing to read it"
    return None


def read_file(shown: str, path: str) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES; a bigger one is an error."""
    return _read(shown, path, MAX_FILE_BYTES)


def _read(shown: str, path: str, limit: int) -> bytes:
    """A regular file's bytes, never more than `limit` + 1 of them (the caller sees it went over).

    The file is opened without blocking and checked again once open, so a file swapped for
    a FIFO or a device after `find_files` looked at it is refused rather than read forever.
    Standard input (`-`) is read as it comes, to its end, within the same limits.
    """
    if path == STDIN:
        data = sys.stdin.buffer.read(min(limit, MAX_FILE_BYTES) + 1)
        if len(data) > MAX_FILE_BYTES:
            raise InputError([Finding(shown, 1, 1, ".", f"standard input holds more than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")])
        return data
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError([Finding(shown, 1, 1, ".", "not a regular file (a device, FIFO or socket): refusing to read it")])
        data = handle.read(min(limit, MAX_FILE_BYTES) + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InputError([Finding(shown, 1, 1, ".", f"file is larger than the {MAX_FILE_BYTES // (1024 * 1024)} MiB limit")])
    return data
