"""What is compiled once and kept between runs (the parsed CRD, Jinja bytecode) is used only when it is right."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from modelplane_render import crd
from modelplane_render.cache import compiled
from modelplane_render.cache.directory import ENV_CACHE_DIR


def _parse_crd() -> object:
    return yaml.load(crd.crd_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _shared(node: object, seen: list[int]) -> list[int]:
    if isinstance(node, (dict, list)):
        seen.append(id(node))
        for child in node.values() if isinstance(node, dict) else node:
            _shared(child, seen)
    return seen


def test_the_kept_crd_equals_the_parsed_one_anchors_included(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = crd.crd.__wrapped__()  # type: ignore[attr-defined]
    (kept,) = (tmp_path / "modelplane-render" / "crd").iterdir()
    second = crd.crd.__wrapped__()  # type: ignore[attr-defined]
    parsed = _parse_crd()
    assert first == second == parsed
    ids = _shared(second, [])
    assert len(set(ids)) == len(set(_shared(parsed, []))) < len(ids)  # the CRD's aliases stay one object each

    kept.write_bytes(b"\x00garbage")
    assert crd.crd.__wrapped__() == parsed  # type: ignore[attr-defined]
    kept.write_bytes(kept.read_bytes()[:3])
    assert crd.crd.__wrapped__() == parsed  # type: ignore[attr-defined]


def test_compiled_things_go_to_the_render_cache_where_home_is_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/dev/null/not-a-directory")  # as in the Argo CD sidecar: nothing under home
    monkeypatch.delenv(ENV_CACHE_DIR, raising=False)
    assert compiled.compiled_dir("x") is None
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "render-cache"))
    assert compiled.compiled_dir("x") == str(tmp_path / "render-cache" / "compiled" / "x")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(ENV_CACHE_DIR, str(shared))
    assert compiled.compiled_dir("x") is None  # others could plant bytecode there


def test_a_home_that_is_not_known_is_never_a_relative_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(ENV_CACHE_DIR, raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # HOME unset, uid not in /etc/passwd: `~` stays `~`
    monkeypatch.chdir(tmp_path)
    assert compiled.compiled_dir("x") is None
    assert list(tmp_path.iterdir()) == []
