"""The ModelReplica CRD that ships with the package: the one truth for what a replica may say."""

from __future__ import annotations

import functools
import marshal
import os
import sys
from hashlib import blake2b
from typing import Any

from .cache.compiled import compiled_dir
from .yamlio.libyaml import PYYAML_VERSION, load_one

GROUP = "modelplane.ai"
VERSION = "v1alpha1"
KIND = "ModelReplica"
API_VERSION = f"{GROUP}/{VERSION}"
CRD_FILE = "modelreplicas.modelplane.ai.yaml"


_CRD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crds", CRD_FILE)


def crd_text() -> str:
    try:
        with open(_CRD_PATH, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:  # installed without files on disk (a zip): ask the loader
        import importlib.resources as resources  # deferred (startup.DEFERRED): only a zip install needs it

        return resources.files(__package__).joinpath("crds", CRD_FILE).read_text(encoding="utf-8")


@functools.cache
def crd() -> dict[str, Any]:
    """The CRD as data; parsed once and kept (marshal keeps the anchors' shared objects shared) per CRD text."""
    text = crd_text()
    kept = _kept_path(text)
    if kept:
        try:
            with open(kept, "rb") as handle:
                stored = marshal.load(handle)
            if isinstance(stored, dict):
                return stored
        except (OSError, EOFError, ValueError, TypeError):
            pass
    document: dict[str, Any] = load_one(text)
    if kept:
        _keep(kept, document)
    return document


def _kept_path(text: str) -> str | None:
    directory = compiled_dir("crd")
    if directory is None:
        return None
    # The parse depends on the text, PyYAML's version and the interpreter's marshal format.
    digest = blake2b(f"{PYYAML_VERSION}\0{sys.version}\0{text}".encode(), digest_size=16).hexdigest()
    return os.path.join(directory, f"{digest}.marshal")


def _keep(path: str, document: dict[str, Any]) -> None:
    temp = f"{path}.{os.getpid()}.partial"
    try:
        with open(temp, "wb") as handle:
            marshal.dump(document, handle)
        os.replace(temp, path)
    except (OSError, ValueError):
        try:
            os.unlink(temp)
        except OSError:
            pass


def openapi_schema() -> dict[str, Any]:
    """The openAPIV3Schema of the one served version."""
    (version,) = [v for v in crd()["spec"]["versions"] if v["name"] == VERSION]
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def iter_rules(schema: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every x-kubernetes-validations rule in the schema, in document order (aliases seen once)."""
    found: list[dict[str, Any]] = []
    seen: set[int] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if id(node) in seen:
                return
            seen.add(id(node))
            found.extend(node.get("x-kubernetes-validations", []))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema if schema is not None else openapi_schema())
    return found
