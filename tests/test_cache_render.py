"""The render cache: a hit prints exactly what a render prints, every input is in the key, and a hit stays light."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conftest import ROOT, VALID, imported_by_us, run_cli
from modelplane_render.cache import render as cache
from modelplane_render.cache.directory import TEMP_SUFFIX
from modelplane_render.options import Options

SINGLE = ROOT / "fixtures" / "valid" / "single-gpu-standalone"
# Fixtures whose replicas can be rendered together (each names its own replica).
SEVERAL = [
    str(p)
    for p in VALID
    if p.name in ("multi-node-leader-worker", "prefill-decode-kimi-k2", "objects-passed-through", "endpoint-picker-overrides", SINGLE.name)
]


def _env(cache_dir: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != cache.ENV_CACHE_DIR}
    if cache_dir is not None:
        env[cache.ENV_CACHE_DIR] = str(cache_dir)
    return env


def _render(*args: str, cache_dir: Path | None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(ROOT / "plugin.py"), "render", *args], env=_env(cache_dir), cwd=cwd, capture_output=True, timeout=120
    )


def _entries(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob(f"*{cache.SUFFIX}"))


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    """A copy of one fixture, free to change."""
    target = tmp_path / "sources"
    shutil.copytree(SINGLE, target)
    return target


# --- the output is the render's, byte for byte ---------------------------------------------------


def test_output_with_and_without_the_cache_is_byte_identical(tmp_path: Path) -> None:
    paths = SEVERAL
    plain = _render(*paths, cache_dir=None)
    miss = _render(*paths, cache_dir=tmp_path / "c")
    hit = _render(*paths, cache_dir=tmp_path / "c")
    assert plain.returncode == miss.returncode == hit.returncode == 0, (miss.stderr, hit.stderr)
    assert plain.stdout and plain.stdout == miss.stdout == hit.stdout
    assert miss.stderr == hit.stderr == b""
    assert len(_entries(tmp_path / "c")) == 1


def test_options_reach_the_output_through_the_cache(tmp_path: Path, sources: Path) -> None:
    for args in (["--gateway", "gw/main"], ["--namespace", "other"], []):
        plain = _render(*args, str(sources), cache_dir=None)
        _render(*args, str(sources), cache_dir=tmp_path / "c")
        hit = _render(*args, str(sources), cache_dir=tmp_path / "c")
        assert hit.stdout == plain.stdout, args
    assert len(_entries(tmp_path / "c")) == 3


def test_a_changed_source_is_rendered_again(tmp_path: Path, sources: Path) -> None:
    first = _render(str(sources), cache_dir=tmp_path / "c")
    replica = sources / "replica.yaml"
    replica.write_text(replica.read_text().replace("count: 1", "count: 2"))
    second = _render(str(sources), cache_dir=tmp_path / "c")
    assert second.stdout != first.stdout
    assert second.stdout == _render(str(sources), cache_dir=None).stdout


def test_errors_are_reported_every_time_and_never_stored(tmp_path: Path, sources: Path) -> None:
    (sources / "replica.yaml").write_text((sources / "replica.yaml").read_text().replace("count: 1", "count: 0"))
    runs = [_render(str(sources), cache_dir=tmp_path / "c") for _ in range(2)]
    for run in runs:
        assert run.returncode == 1 and run.stdout == b""
        assert b"count" in run.stderr
    assert runs[0].stderr == runs[1].stderr
    assert not (tmp_path / "c").exists() or _entries(tmp_path / "c") == []


def test_the_command_line_does_not_cache_unless_asked(tmp_path: Path, sources: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cache.ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert run_cli("render", str(sources)).code == 0
    assert not any(p.suffix == cache.SUFFIX for p in tmp_path.rglob("*"))


# --- the key -------------------------------------------------------------------------------------


def _key(sources: Path, options: Options | None = None, extra: dict[str, str] | None = None) -> str:
    key = cache.cache_key([str(sources)], cache.render_key(options or Options()) | (extra or {}))
    assert key is not None
    return key


def test_one_byte_of_one_file_changes_the_key(sources: Path) -> None:
    before = _key(sources)
    replica = sources / "replica.yaml"
    data = replica.read_bytes()
    replica.write_bytes(data.replace(b"gpu-l4", b"gpu-l5", 1))
    assert _key(sources) != before
    replica.write_bytes(data)
    assert _key(sources) == before
    replica.write_bytes(data + b"\n")  # a trailing newline changes no object, but the bytes differ
    assert _key(sources) != before


def test_a_new_file_changes_the_key_as_the_walk_reads_it(sources: Path) -> None:
    before = _key(sources)
    for skipped in ("notes.md", ".hidden.yaml"):  # the walk of `render` skips these
        (sources / skipped).write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
        assert _key(sources) == before, skipped
    # Not a source either, but it decides whether the directory is read at all (sources.kustomize_builds).
    (sources / "kustomization.yaml").write_text("resources: [replica.yaml]\n")
    assert _key(sources) != before
    (sources / "kustomization.yaml").unlink()
    (sources / "extra.yml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with_new = _key(sources)
    assert with_new != before
    (sources / "extra.yml").rename(sources / "extra2.yml")  # a rename changes the shown name
    assert _key(sources) not in (before, with_new)


def test_every_option_and_every_part_of_the_key_changes_it(sources: Path) -> None:
    keys = {
        _key(sources),
        _key(sources, Options(namespace="a")),
        _key(sources, Options(namespace="b")),
        _key(sources, Options(gateway=("gw", "main"))),
        _key(sources, Options(gateway=("gw", "other"))),
        _key(sources, extra={"front": "argocd generate"}),
        _key(sources, extra={"parameter": "x"}),
    }
    assert len(keys) == 7


def test_render_without_options_is_keyed_as_the_command_line_fast_path_keys_it() -> None:
    assert cache.render_key(Options()) == cache.RENDER_WITHOUT_OPTIONS  # a new option must be added to both


def test_argocd_is_keyed_by_what_it_reads_of_its_environment_and_nothing_else() -> None:
    from modelplane_render.frontends import argocd

    read: set[str] = set()

    class Recording(dict[str, str]):
        def get(self, name: str, default: object = None) -> object:  # type: ignore[override]
            read.add(name)
            return super().get(name, default)

        def __getitem__(self, name: str) -> str:
            read.add(name)
            return super().__getitem__(name)

    env = Recording(
        ARGOCD_APP_PARAMETERS='[{"name": "gateway", "string": "gw/main"}]',
        ARGOCD_APP_NAMESPACE="ml",
        ARGOCD_APP_SOURCE_PATH="apps/a",
        KUBE_API_VERSIONS="v1",
        ARGOCD_ENV_MODELPLANE_NAMESPACE="ml",
        ARGOCD_APP_REVISION="0123abc",
        ARGOCD_APP_NAME="a",
    )
    argocd.settings_from_env(env)
    assert read, "the recording saw nothing"
    for name in read:
        assert name in cache.ARGOCD_ENV_NAMES or name.startswith(cache.ARGOCD_ENV_PREFIX), name
    key = cache.argocd_key(env)
    assert cache.argocd_key(env | {"ARGOCD_APP_REVISION": "4567def"}) == key  # a new commit alone is no miss
    for name, value in (("ARGOCD_APP_NAMESPACE", "other"), ("KUBE_API_VERSIONS", ""), ("ARGOCD_ENV_MODELPLANE_GATEWAY", "a/b")):
        assert cache.argocd_key(env | {name: value}) != key, name
    assert cache.argocd_key({k: v for k, v in env.items() if k != "KUBE_API_VERSIONS"}) != cache.argocd_key(env | {"KUBE_API_VERSIONS": ""})


def test_the_version_and_the_tool_s_own_files_change_the_key(sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _key(sources)
    monkeypatch.setattr(cache, "__version__", "0.0.0-other")
    assert _key(sources) != before
    monkeypatch.undo()
    assert _key(sources) == before

    package = tmp_path / "package"
    package.mkdir()
    (package / "render.py").write_text("a")
    monkeypatch.setattr(cache, "_PACKAGE_DIR", str(package))
    first = _key(sources)
    (package / "render.py").write_text("ab")  # an edited module or template of a checkout
    assert _key(sources) != first


def test_the_paths_given_are_part_of_the_key(sources: Path, tmp_path: Path) -> None:
    (sources / "sub").mkdir()
    shutil.copy(sources / "replica.yaml", sources / "sub" / "replica.yaml")
    (sources / "replica.yaml").unlink()
    assert cache.cache_key([str(sources)], {}) != cache.cache_key([str(sources / "sub")], {})


def test_sources_the_walk_refuses_are_never_keyed(tmp_path: Path) -> None:
    assert cache.cache_key([str(tmp_path / "missing")], {}) is None


# --- entries -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data.replace(b"ServiceAccount", b"ServiceAccounT"),  # a changed byte of the body
        lambda data: b"some other tool's file\n",  # foreign
        lambda data: b"",
        lambda data: b"\xff\xfe" + data,
    ],
)
def test_a_corrupt_or_foreign_entry_is_ignored_and_replaced(tmp_path: Path, sources: Path, damage) -> None:  # type: ignore[no-untyped-def]
    good = _render(str(sources), cache_dir=tmp_path / "c")
    (entry,) = _entries(tmp_path / "c")
    stored = entry.read_bytes()
    entry.write_bytes(damage(stored))
    again = _render(str(sources), cache_dir=tmp_path / "c")
    assert again.returncode == 0 and again.stdout == good.stdout
    assert entry.read_bytes() == stored


def test_writes_are_atomic_and_leave_no_temporary_file(tmp_path: Path) -> None:
    cache.store(str(tmp_path), "a" * 64, "text\n")
    assert [p.name for p in tmp_path.iterdir()] == ["a" * 64 + cache.SUFFIX]
    assert cache.lookup(str(tmp_path), "a" * 64) == "text\n"
    assert cache.lookup(str(tmp_path), "b" * 64) is None
    stale = tmp_path / f"{'c' * 64}{cache.SUFFIX}.123.abcd{TEMP_SUFFIX}"
    stale.write_text("half")
    os.utime(stale, (0, 0))  # left by a process that died long ago
    fresh = tmp_path / f"{'d' * 64}{cache.SUFFIX}.456.abcd{TEMP_SUFFIX}"
    fresh.write_text("half")  # a concurrent writer's
    cache.store(str(tmp_path), "e" * 64, "more\n")
    assert not stale.exists() and fresh.exists()


def test_the_cache_keeps_at_most_max_entries_least_recently_used_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    for i, key in enumerate("abcd"):
        cache.store(str(tmp_path), key * 64, f"{key}\n")
        os.utime(tmp_path / f"{key * 64}{cache.SUFFIX}", ns=(i * 10**9, i * 10**9))
    assert cache.lookup(str(tmp_path), "a" * 64) is None  # evicted when d came
    assert cache.lookup(str(tmp_path), "b" * 64) == "b\n"  # a hit makes b the most recent
    cache.store(str(tmp_path), "e" * 64, "e\n")
    assert sorted(p.name[0] for p in _entries(tmp_path)) == ["b", "d", "e"]


def test_the_cache_keeps_at_most_max_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_BYTES", 1000)
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 400)
    for i, key in enumerate("abcdef"):
        cache.store(str(tmp_path), key * 64, key * 200)
        os.utime(tmp_path / f"{key * 64}{cache.SUFFIX}", ns=(i * 10**9, i * 10**9))
    assert sum(p.stat().st_size for p in _entries(tmp_path)) <= 1000
    assert cache.lookup(str(tmp_path), "f" * 64) == "f" * 200
    cache.store(str(tmp_path), "g" * 64, "g" * 500)  # bigger than one entry may be: rendered each time instead
    assert cache.lookup(str(tmp_path), "g" * 64) is None


def test_a_directory_others_may_write_to_is_not_used(tmp_path: Path, sources: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert _render(str(sources), cache_dir=shared).returncode == 0
    assert _entries(shared) == []


def test_concurrent_renders_agree(tmp_path: Path) -> None:
    paths = SEVERAL
    processes = [
        subprocess.Popen([sys.executable, str(ROOT / "plugin.py"), "render", *paths], env=_env(tmp_path / "c"), stdout=subprocess.PIPE)
        for _ in range(4)
    ]
    outputs = {p.communicate(timeout=120)[0] for p in processes}
    assert len(outputs) == 1 and outputs.pop() == _render(*paths, cache_dir=None).stdout
    assert len(_entries(tmp_path / "c")) == 1 and not list((tmp_path / "c").glob(f"*{TEMP_SUFFIX}"))


# --- a hit is light ------------------------------------------------------------------------------

HEAVY = (
    "modelplane_render.validation",
    "modelplane_render.model",
    "modelplane_render.render",
    "modelplane_render.pipeline",
    "jinja2",
    "pydantic",
)

_PROBE = """
import json, sys
from modelplane_render.main import main
code = main(sys.argv[2:])
json.dump({"code": code, "modules": sorted(sys.modules)}, open(sys.argv[1], "w"))
"""


def _modules_of_a_run(tmp_path: Path, cache_dir: Path, *argv: str, cwd: Path = ROOT, extra_env: dict[str, str] | None = None) -> set[str]:
    """The modules one run of main(argv), which must succeed, imports beyond those a bare interpreter has."""
    report = tmp_path / "modules.json"
    env = _env(cache_dir) | (extra_env or {})
    run = subprocess.run([sys.executable, "-c", _PROBE, str(report), *argv], env=env, cwd=cwd, capture_output=True, timeout=120)
    assert run.returncode == 0, run.stderr
    result = json.loads(report.read_text())
    assert result["code"] == 0
    return imported_by_us(result["modules"], env, cwd)


def test_a_hit_imports_neither_the_validator_nor_the_templates(tmp_path: Path) -> None:
    paths = SEVERAL
    miss = _modules_of_a_run(tmp_path, tmp_path / "c", "render", *paths)
    assert {"modelplane_render.validation", "modelplane_render.render", "jinja2"} <= miss  # the probe sees what a render imports
    hit = _modules_of_a_run(tmp_path, tmp_path / "c", "render", *paths)
    assert not {m for m in hit if m in HEAVY or m.split(".")[0] in HEAVY}
    # `render PATH...` is answered before the command line is parsed: not even YAML or argparse.
    assert not {m for m in hit if m.split(".")[0] in ("yaml", "argparse", "dataclasses")}
    assert "modelplane_render.sources" not in hit


def test_a_hit_with_options_is_found_after_the_command_line_is_parsed(tmp_path: Path, sources: Path) -> None:
    stored = _render("--namespace", "other", str(sources), cache_dir=tmp_path / "c")
    modules = _modules_of_a_run(tmp_path, tmp_path / "c", "render", "-n", "other", str(sources))
    assert "modelplane_render.validation" not in modules and "jinja2" not in modules
    assert _render("-n", "other", str(sources), cache_dir=tmp_path / "c").stdout == stored.stdout
    assert len(_entries(tmp_path / "c")) == 1


def test_argocd_generate_is_answered_from_what_its_key_stored(tmp_path: Path, sources: Path) -> None:
    """The contract for the Argo CD front end: cached(["."], ..., key=argocd_key(env)) in the app directory."""
    env = _env(tmp_path / "c") | {"ARGOCD_APP_NAMESPACE": "ml", "ARGOCD_APP_PARAMETERS": "null", "ARGOCD_APP_REVISION": "abc"}
    old = os.getcwd()
    os.chdir(sources)
    try:
        text = cache.cached(["."], lambda: "--- stored by the Argo CD front end\n", key=cache.argocd_key(env), env=env)
    finally:
        os.chdir(old)
    run = subprocess.run(
        [sys.executable, str(ROOT / "plugin.py"), "argocd", "generate"],
        env=env | {"ARGOCD_APP_REVISION": "def"},
        cwd=sources,
        capture_output=True,
    )
    assert run.returncode == 0 and run.stdout.decode() == text, run.stderr


def _generate(sources: Path, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, str(ROOT / "plugin.py"), "argocd", "generate"], env=env, cwd=sources, capture_output=True)


def test_argocd_generate_stores_what_it_renders_and_the_next_commit_is_a_hit(tmp_path: Path, sources: Path) -> None:
    argo = {"ARGOCD_APP_NAMESPACE": "ml", "ARGOCD_APP_PARAMETERS": "null", "ARGOCD_APP_SOURCE_PATH": "apps/qwen"}
    plain = _generate(sources, _env(None) | argo | {"ARGOCD_APP_REVISION": "abc"})
    first = _generate(sources, _env(tmp_path / "c") | argo | {"ARGOCD_APP_REVISION": "abc"})
    assert first.returncode == 0 and first.stdout == plain.stdout and first.stdout.startswith(b"---"), first.stderr
    assert len(_entries(tmp_path / "c")) == 1
    # A commit elsewhere in the repository: a new revision, the same files; the stored text, by the light path.
    modules = _modules_of_a_run(tmp_path, tmp_path / "c", "argocd", "generate", cwd=sources, extra_env=argo)
    assert "modelplane_render.validation" not in modules and "jinja2" not in modules
    assert _generate(sources, _env(tmp_path / "c") | argo | {"ARGOCD_APP_REVISION": "def"}).stdout == plain.stdout
    # The Application's plugin env asks for another output: another entry.
    other = _generate(sources, _env(tmp_path / "c") | argo | {"ARGOCD_ENV_MODELPLANE_GATEWAY": "infra/inference"})
    assert other.returncode == 0 and b"kind: HTTPRoute" in other.stdout and b"kind: HTTPRoute" not in plain.stdout
    assert len(_entries(tmp_path / "c")) == 2


def test_argocd_generate_stores_no_failure(tmp_path: Path, sources: Path) -> None:
    (sources / "broken.yaml").write_text("apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\nmetadata: {name: x}\n")
    env = _env(tmp_path / "c") | {"ARGOCD_APP_NAMESPACE": "ml", "ARGOCD_APP_PARAMETERS": "null"}
    runs = [_generate(sources, env) for _ in range(2)]
    assert [(r.returncode, r.stdout) for r in runs] == [(1, b""), (1, b"")]
    assert runs[0].stderr == runs[1].stderr and runs[0].stderr == b"broken.yaml:1:1: spec: required field is missing\n"
    assert _entries(tmp_path / "c") == []


# --- the key covers every setting a render reads ------------------------------------------------


class RecordingEnv(dict[str, str]):
    """An environment that remembers every name read from it (get, [], in)."""

    def __init__(self, values: dict[str, str]):
        super().__init__(values)
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.read.add(name)
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        self.read.add(name)
        return super().get(name, default)

    def __contains__(self, name: object) -> bool:
        self.read.add(str(name))
        return super().__contains__(name)


class RecordingOptions(Options):
    """Options that remember every setting read of them (a method is not one; the fields it reads are recorded)."""

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("__") and not callable(getattr(type(self), name, None)):
            object.__getattribute__(self, "__dict__").setdefault("_read", set()).add(name)
        return super().__getattribute__(name)


def left_out(read: set[str], key: dict[str, str], prefix: str) -> set[str]:
    """The names read that are neither in the key (as `prefix NAME`) nor known to leave the output alone."""
    keyed = {name[len(prefix) :] for name in key if name.startswith(prefix)}
    return read - keyed - set(cache.NOT_IN_KEY)


def test_the_render_key_holds_every_option_and_environment_variable_a_render_reads(tmp_path: Path, monkeypatch: Any, capfd: Any) -> None:
    from modelplane_render.commands import render as render_command

    environ = RecordingEnv(dict(os.environ) | {cache.ENV_CACHE_DIR: str(tmp_path / "c")})
    monkeypatch.setattr(os, "environ", environ)
    options = RecordingOptions(namespace="ml", gateway=("infra", "gw"))
    monkeypatch.setattr(render_command, "options_from_args", lambda args, command: options)
    args = SimpleNamespace(paths=SEVERAL, namespace="ml", gateway="infra/gw")
    assert render_command.run(args) == 0  # type: ignore[arg-type]
    assert capfd.readouterr().out.startswith("---\n")
    key = cache.render_key(options)
    read_options = {name for name in options.__dict__.get("_read", set()) if not name.startswith("_")}
    assert read_options >= {"namespace", "gateway"}  # the recorder sees the render read them
    assert left_out(read_options, key, "option ") == set()
    assert left_out(environ.read, {}, "") == set(), "read by a render, but not in render_key"
    assert environ.read & set(cache.NOT_IN_KEY)  # the recorder sees environment reads


def test_the_argocd_key_holds_every_variable_generate_reads(tmp_path: Path, sources: Path, monkeypatch: Any) -> None:
    from modelplane_render.frontends import argocd

    path = os.environ.get("PATH", "")
    environ = RecordingEnv(dict(os.environ))
    monkeypatch.setattr(os, "environ", environ)
    env = RecordingEnv(
        {
            cache.ENV_CACHE_DIR: str(tmp_path / "c"),
            "ARGOCD_APP_NAMESPACE": "ml",
            "ARGOCD_APP_PARAMETERS": '[{"name": "gateway", "string": "infra/gw"}]',
            "ARGOCD_APP_SOURCE_PATH": "apps/qwen",
            "ARGOCD_APP_REVISION": "abc",
            "ARGOCD_ENV_MODELPLANE_CHECK_CLUSTER_APIS": "false",
            "KUBE_API_VERSIONS": "v1,apps/v1",
            "PATH": path,
        }
    )
    assert argocd.generate(env, str(sources)).startswith("---\n")
    assert {"ARGOCD_APP_PARAMETERS", "ARGOCD_ENV_MODELPLANE_CHECK_CLUSTER_APIS"} <= env.read
    assert left_out(env.read, cache.argocd_key(env), "env ") == set(), "read by generate, but not in argocd_key"
    assert left_out(environ.read, {}, "") == set()
    # The check itself: a key that left the destination namespace out would be caught.
    short = {k: v for k, v in cache.argocd_key(env).items() if k != "env ARGOCD_APP_NAMESPACE"}
    assert left_out(env.read, short, "env ") == {"ARGOCD_APP_NAMESPACE"}
