"""The render cache: a render whose inputs are byte-identical to an earlier one prints the stored output.

A commit to a monorepo makes Argo CD run `generate` for every app, though most apps' sources did
not change; each run is a new process, so without a cache each pays for the interpreter, the
validator and the templates again. With MODELPLANE_RENDER_CACHE_DIR set (the Argo CD plugin
sets it to a directory in the sidecar's own /tmp; the command line leaves it unset, so the
cache is off there), a hit reads the sources, hashes them and prints what was stored, without
importing the validator, Jinja, YAML or the templates. For `render PATH...` and `argocd
generate`, main() asks the cache (`answer`) before it even builds its argument parser.

The key is a BLAKE2b-256 digest over everything that can change the output:
- this tool: its version, and the size and mtime of each of its own files (modules, templates,
  the CRD), so an edited checkout never serves output of the code before the edit;
- the Python version, and the names of the distributions installed beside PyYAML and Jinja
  (their versions: an upgraded YAML dumper may print differently);
- every input file, walked by the same rules as the render (`walk.find_files`, which
  `sources` uses): its shown name, real path and bytes, so one changed byte, a renamed or a new
  file is a miss;
- what the front end reads besides the files (`key`): for `render` every option
  (`render_key`), for `argocd generate` the parameters, namespace, app path, cluster APIs and
  Application env as Argo CD passed them (`argocd_key`).

Only a successful run is stored (errors are re-reported every time, never replayed). Entries
are written to a temporary file and renamed into place (readers see a whole entry or none);
each carries its key and the digest of its body, so a corrupt, truncated or foreign file is
ignored as a miss and replaced. At most MAX_ENTRIES entries and MAX_BYTES bytes are kept: the
least recently used go first. A cache directory that another user owns or may write to is not
used at all (its entries could be planted). Any fault of the cache itself is a miss, never a
failed render.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder

from .. import __version__
from ..errors import InputError
from ..walk import find_files, kustomization_files, read_file
from .directory import ENV_CACHE_DIR, evict, usable_directory, write_whole

try:  # CPython's own BLAKE2: a hit does not pay for loading OpenSSL (hashlib's first import, ~5 ms)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

# No typing or collections imports at run time: a hit must stay close to the interpreter's own start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Optional

    from ..options import Options

MAX_ENTRIES = 1000
MAX_BYTES = 256 * 1024 * 1024
MAX_ENTRY_BYTES = MAX_BYTES // 8  # a bigger output is rendered each time rather than pushing out 8 others
MAX_INPUT_BYTES = 64 * 1024 * 1024  # what hashing reads before giving up (the render refuses more anyway)
SUFFIX = ".render"
MAGIC = "modelplane-render-cache/1"
# Distributions whose version can change the output: the YAML reader and writer, the template engine.
DEPENDENCIES = ("yaml", "jinja2")

# The package's root (this file is in its cache/ room): every module, template and CRD of the tool.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def render_key(options: Options) -> dict[str, str]:
    """What of a `render` command line, besides its paths, can change its output: every Options field.

    Options at their defaults (every render setting left out) are keyed as RENDER_WITHOUT_OPTIONS,
    which `answer` can use before anything is parsed; the defaults themselves are in the tool's
    files, which the key covers already.
    """
    if options == type(options)():
        return RENDER_WITHOUT_OPTIONS
    return {"front": "render", **{f"option {name}": repr(value) for name, value in sorted(vars(options).items())}}


RENDER_WITHOUT_OPTIONS = {"front": "render", "options": "the defaults"}

# What `argocd generate` reads from its environment, besides the app's files: the plugin
# parameters, the destination namespace, the app's path, the cluster's APIs, and the
# Application's plugin env (ARGOCD_ENV_*). Not the revision or the app's name, which change on
# every commit while the output does not.
ARGOCD_ENV_NAMES = ("ARGOCD_APP_PARAMETERS", "ARGOCD_APP_NAMESPACE", "ARGOCD_APP_SOURCE_PATH", "KUBE_API_VERSIONS")
ARGOCD_ENV_PREFIX = "ARGOCD_ENV_"
_UNSET = "\0unset"

# What a render reads from the environment that is not in the key, because it can't change the
# output (tests/test_cache_render.py records every name a render reads and fails on any other):
NOT_IN_KEY = {
    ENV_CACHE_DIR: "where the render cache is",
    "XDG_CACHE_HOME": "where compiled templates and the parsed CRD are kept, each checked against its source",
    "HOME": "the same, by default under ~/.cache",
    "MODELPLANE_RENDER_DEBUG": "read only after an internal error, and a failed run is never stored",
}


def argocd_key(env: Mapping[str, str]) -> dict[str, str]:
    """What of Argo CD's environment can change the output of `argocd generate`, as it was given."""
    key = {"front": "argocd generate"}
    for name in ARGOCD_ENV_NAMES:
        key[f"env {name}"] = env.get(name, _UNSET)
    for name in sorted(env):
        if name.startswith(ARGOCD_ENV_PREFIX):
            key[f"env {name}"] = env[name]
    return key


def cached(paths: Sequence[str], produce: Callable[[], str], *, key: Mapping[str, str], env: Optional[Mapping[str, str]] = None) -> str:
    """produce()'s text, or the text a successful produce() gave for byte-identical inputs.

    `paths` are what produce() renders (walked as the render walks them); `key` is everything
    else produce() reads that can change its text, as text: the options, the environment (name
    it all: a thing left out is a stale hit). `env` is where MODELPLANE_RENDER_CACHE_DIR is read
    (default os.environ). When the cache is off, the sources can't be walked or read, or the
    directory is not safe to use, this is produce(). An exception of produce() goes through and
    nothing is stored.
    """
    directory = (env if env is not None else os.environ).get(ENV_CACHE_DIR, "")
    if not directory or not usable_directory(directory):
        return produce()
    digest = cache_key(paths, key)
    if digest is None:
        return produce()  # a fault in the sources: the render reports it
    hit = lookup(directory, digest)
    if hit is not None:
        return hit
    text = produce()
    if cache_key(paths, key) == digest:  # the sources did not change while rendering
        store(directory, digest, text)
    return text


def answer(argv: Sequence[str], env: Mapping[str, str]) -> Optional[str]:
    """The stored output of a command line the cache can answer before it is even parsed, or None.

    main() asks this first, so that a hit imports neither argparse nor anything it would load.
    Two shapes only, whose meaning needs no parser: `render PATH...` without options (no
    argument starting with `-`), and Argo CD's `argocd generate`. Their keys are the ones
    `render` and the Argo CD front end store under, so what one stored the other finds.
    Anything else, and any fault here, is None: the command then runs as always.
    """
    try:
        directory = env.get(ENV_CACHE_DIR, "")
        if not directory or not usable_directory(directory):
            return None
        arguments = list(argv)
        if arguments[:1] == ["render"] and not any(a.startswith("-") for a in arguments[1:]):
            paths, key = arguments[1:] or ["."], RENDER_WITHOUT_OPTIONS
        elif arguments == ["argocd", "generate"]:
            paths, key = ["."], argocd_key(env)
        else:
            return None
        digest = cache_key(paths, key)
        return lookup(directory, digest) if digest else None
    except Exception:  # the cache only ever saves time; the command itself reports any real fault
        return None


# --- the key -------------------------------------------------------------------------------------


class _Digest:
    """A digest over length-prefixed parts, so no two different sequences of parts collide by concatenation."""

    def __init__(self) -> None:
        self._hash = blake2b(digest_size=32)

    def part(self, *items: str | bytes) -> None:
        for item in items:
            data = item.encode("utf-8", "surrogateescape") if isinstance(item, str) else item
            self._hash.update(len(data).to_bytes(8, "little"))
            self._hash.update(data)

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


def cache_key(paths: Sequence[str], key: Mapping[str, str]) -> Optional[str]:
    """The digest of a render of `paths` with `key`, or None when a source can't be walked or read."""
    digest = _Digest()
    digest.part(MAGIC, __version__, tool_fingerprint())
    digest.part("key", str(len(key)))
    for name in sorted(key):
        digest.part(name, key[name])
    digest.part("paths", str(len(paths)), *paths)
    files, errors = find_files(list(paths))
    if errors:
        return None
    total = 0
    for shown, real in files:
        try:
            data = read_file(shown, real)
        except (InputError, OSError):
            return None
        total += len(data)
        if total > MAX_INPUT_BYTES:
            return None
        digest.part("file", shown, real, data)
    # Not sources, but they decide what a directory means (a plain base is read, anything more refused).
    for shown, real in kustomization_files(list(paths)):
        try:
            digest.part("kustomization", shown, real, read_file(shown, real))
        except (InputError, OSError):
            return None
    return digest.hexdigest()


def tool_fingerprint() -> str:
    """This tool's files (size and mtime) and the versions of what renders with it, as one string."""
    parts = [sys.version, sys.implementation.cache_tag or ""]
    roots = [_PACKAGE_DIR]  # modules, the CRD, and the templates of an installed wheel
    if not os.path.isdir(os.path.join(_PACKAGE_DIR, "templates")):
        roots.append(os.path.join(os.path.dirname(_PACKAGE_DIR), "templates"))  # a checkout's, as render.templates_dir finds them
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
    parts.extend(_dependency_versions())
    return "\n".join(parts)


def _dependency_versions() -> list[str]:
    """Where each dependency is, and every distribution installed beside it (dist-info names carry versions)."""
    found: list[str] = []
    sites: set[str] = set()
    for name in DEPENDENCIES:
        spec = PathFinder.find_spec(name)
        origin = spec.origin if spec is not None else None
        found.append(f"{name}={origin}")
        if origin:
            sites.add(os.path.dirname(os.path.dirname(origin)))
    for site in sorted(sites):
        try:
            found.extend(sorted(n for n in os.listdir(site) if n.endswith((".dist-info", ".egg-info"))))
        except OSError:
            found.append(f"{site}: unreadable")
    return found


# --- entries -------------------------------------------------------------------------------------


def _entry_path(directory: str, key: str) -> str:
    return os.path.join(directory, key + SUFFIX)


def _header(key: str, body: bytes) -> bytes:
    return f"{MAGIC} {key} {blake2b(body, digest_size=32).hexdigest()} {len(body)}\n".encode("ascii")


def lookup(directory: str, key: str) -> Optional[str]:
    """The stored text of key, or None (no entry, or one that is not whole and ours)."""
    path = _entry_path(directory, key)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_ENTRY_BYTES + 4096)
    except OSError:
        return None
    header, newline, body = data.partition(b"\n")
    if not newline or header + b"\n" != _header(key, body):
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        os.utime(path)  # recently used: evicted last
    except OSError:
        pass
    return text


def store(directory: str, key: str, text: str) -> None:
    """Keep text under key (atomically), then trim the cache to its bounds; a fault only means no entry."""
    body = text.encode("utf-8")
    if len(body) > MAX_ENTRY_BYTES:
        return
    path = _entry_path(directory, key)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return
    if usable_directory(directory) and write_whole(path, _header(key, body) + body):
        evict(directory, SUFFIX, max_entries=MAX_ENTRIES, max_bytes=MAX_BYTES, keep=path)
