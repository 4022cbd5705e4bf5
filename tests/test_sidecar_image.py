"""The repo-server sidecar image (issue 33).

argocd/image.toml says what goes in; argocd/Containerfile (for a registry) and argocd/build-image.sh
(Debian's tools, no daemon: what CI builds) both build it, and the unmarked tests keep the Containerfile
equal to the manifest. The `sidecar_image` tests start argocd-cmp-server inside the built image exactly
as the repo-server pod starts its sidecar container (the Component's kustomize build: command, env,
volumes, securityContext), under podman, and drive it over its socket as the repo-server does.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from argocd_install import PLUGIN_SOCKETS, SIDECAR, build_install, load_all, pod_filesystem, repo_server
from test_argocd import (
    ARGOCD_DIR,
    NOT_KUSTOMIZATIONS,
    SOCKET_NAME,
    CmpServer,
    build_repository,
    manifests,
    objects_of,
)

from conftest import ROOT, run_cli
from modelplane_render.cache.directory import ENV_CACHE_DIR

MANIFEST = tomllib.loads((ARGOCD_DIR / "image.toml").read_text())
BUILD_IMAGE = "bash argocd/build-image.sh"
# The OCI layout and tag (DIR:TAG) the sidecar_image tests run; build-image.sh's output by default.
IMAGE_VARIABLE = "MODELPLANE_SIDECAR_IMAGE"


# --- the Containerfile, against image.toml ----------------------------------------------------------------


def containerfile_instructions() -> list[tuple[str, str]]:
    text = (ARGOCD_DIR / "Containerfile").read_text().replace("\\\n", " ")
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(" ", 1)[0].upper(), line.split(" ", 1)[1]) for line in lines]


def build_args() -> dict[str, str]:
    """The global ARGs' defaults (those before the first FROM), each expanded by the ones before it."""
    args: dict[str, str] = {}
    for op, value in containerfile_instructions():
        if op == "FROM":
            break
        if op == "ARG":
            name, _, default = value.partition("=")
            args[name] = expand(default, args)
    return args


def expand(text: str, args: dict[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], text)


def stages() -> list[list[tuple[str, str]]]:
    """The instructions of each stage, FROM first, with the global ARGs expanded."""
    args = build_args()
    result: list[list[tuple[str, str]]] = []
    for op, value in containerfile_instructions():
        if op == "FROM":
            result.append([])
        if result:
            result[-1].append((op, expand(value, args)))
    return result


def apt_installs(stage: list[tuple[str, str]]) -> list[list[str]]:
    """The package lists of a stage's `apt-get install` commands (options dropped), each checked to skip Recommends."""
    installs = []
    for op, value in stage:
        for command in value.split("&&") if op == "RUN" else []:
            words = command.split()
            if words[:2] == ["apt-get", "install"]:
                assert "--no-install-recommends" in words, command
                installs.append([w for w in words[2:] if not w.startswith("-")])
    return installs


def test_containerfile_copies_only_what_the_package_is_built_from() -> None:
    steps = containerfile_instructions()
    copied = [src for op, args in steps if op == "COPY" and not args.startswith("--from") for src in args.split()[:-1]]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    needed = [
        "pyproject.toml",
        project["project"]["readme"],
        *(f"{p}/" for p in wheel["packages"]),
        *(f"{p}/" for p in wheel["force-include"]),
        MANIFEST["python"]["constraints"],
    ]
    assert sorted(copied) == sorted(needed)
    for path in copied:
        assert (ROOT / path).exists(), path


def test_containerfile_installs_the_package_and_runs_as_999() -> None:
    kustomize, wheels, final = stages()
    assert [s[0] for s in (kustomize, wheels, final)] == [
        ("FROM", "golang:1.26-bookworm AS kustomize"),
        ("FROM", "debian:bookworm-slim AS wheels"),
        ("FROM", "debian:bookworm-slim"),
    ]
    # The wheels are built by the final image's python3 (binary wheels must fit it), pinned; the final stage
    # installs only those, from the wheels stage, into the venv, and links the console script onto PATH.
    assert ("RUN", f"/build/bin/pip wheel --no-cache-dir --wheel-dir /wheels -c {MANIFEST['python']['constraints']} .") in wheels
    runs = [value for op, value in final if op == "RUN"]
    venv = MANIFEST["python"]["venv"]
    assert runs[1] == (
        f"--mount=type=bind,from=wheels,source=/wheels,target=/wheels python3 -m venv {venv} "
        f"&& {venv}/bin/pip install --no-cache-dir --no-index --find-links=/wheels modelplane-render "
        f"&& ln -s {venv}/bin/modelplane-render /usr/local/bin/modelplane-render"
    )
    copies = [value for op, value in final if op in ("COPY", "ADD", "ENTRYPOINT")]
    assert copies == ["--from=kustomize /out/kustomize /usr/local/bin/kustomize"]  # and the installed wheels
    assert [op for op, _ in final][-1] == "CMD"
    # The image must serve plugin.yaml's commands: the console script the package declares.
    assert "modelplane-render" in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]


def test_containerfile_builds_what_image_toml_says() -> None:
    """The Containerfile can't read the manifest, so it repeats it: release, packages, kustomize, venv, user, env, command."""
    args = build_args()
    debian, kustomize, python, image = MANIFEST["debian"], MANIFEST["kustomize"], MANIFEST["python"], MANIFEST["image"]
    assert args["DEBIAN_RELEASE"] == debian["release"]
    assert args["DEBIAN_IMAGE"] == f"debian:{debian['release']}-slim"
    assert args["GO_IMAGE"].endswith(f"-{debian['release']}")
    assert args["KUSTOMIZE_VERSION"] == kustomize["version"]
    assert args["VENV"] == python["venv"]
    kustomize_stage, wheels, final = stages()
    assert apt_installs(final) == [debian["packages"]]
    [wheels_packages] = apt_installs(wheels)
    assert set(wheels_packages) <= set(debian["packages"])  # the same python3 as the final image's
    assert ("RUN", f"CGO_ENABLED=0 GOBIN=/out go install {kustomize['module']}@{kustomize['version']}") in kustomize_stage
    assert ("ARG", "VENV") in final and ("ARG", "KUSTOMIZE_VERSION") in kustomize_stage
    assert ("USER", image["user"]) in final
    assert ("ENV", " ".join(f"{k}={v}" for k, v in image["env"].items())) in final
    assert ("CMD", json.dumps(image["cmd"])) in final


def test_the_images_kustomize_is_the_one_the_tests_run() -> None:
    script = (ROOT / "tests" / "peers" / "build-kustomize.sh").read_text()
    built = re.search(r'^KUSTOMIZE_VERSION="\$\{KUSTOMIZE_VERSION:-(v[0-9.]+)\}"$', script, re.M)
    assert built and built[1] == MANIFEST["kustomize"]["version"]


def test_the_pods_user_is_the_images() -> None:
    sidecar = (ARGOCD_DIR / "repo-server-sidecar.yaml").read_text()
    assert f"runAsUser: {MANIFEST['image']['user'].split(':')[0]}\n" in sidecar


# --- argocd-cmp-server inside the built image -------------------------------------------------------------


def image_reference() -> tuple[Path, str]:
    """The OCI layout and tag to run: $MODELPLANE_SIDECAR_IMAGE (DIR:TAG), else where build-image.sh puts it."""
    given = os.environ.get(IMAGE_VARIABLE, "").removeprefix("oci:")
    if given:
        layout, _, tag = given.rpartition(":")
        return Path(layout), tag
    cache = Path(os.environ.get("MODELPLANE_IMAGE_CACHE", Path.home() / ".cache" / "modelplane-render" / "image"))
    return Path(os.environ.get("MODELPLANE_IMAGE_OUT", cache / "oci")), version("modelplane-render")


def config_digest(layout: Path, tag: str) -> str | None:
    """The image's config digest (podman's image ID) for the tag in the layout, None when it isn't there."""
    with contextlib.suppress(OSError, ValueError, KeyError, StopIteration):
        index = json.loads((layout / "index.json").read_text())
        [digest] = [m["digest"] for m in index["manifests"] if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag]
        manifest = json.loads((layout / "blobs" / "sha256" / digest.removeprefix("sha256:")).read_text())
        return str(manifest["config"]["digest"].removeprefix("sha256:"))
    return None


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert result.returncode == 0, f"podman {' '.join(args)}: {result.stderr}"
    return result


def run_options() -> list[str]:
    """What every container here gets beside the pod's own settings.

    runc, not podman's default crun: crun refuses a host whose cgroups are in hybrid mode. Resource limits a
    pod would have, no higher than this machine's: without CAP_SYS_RESOURCE (a CI job in a container) runc
    can't raise a limit above what podman started with, and podman's defaults are higher (nofile 1048576,
    nproc 4194304; podman runs conmon with nproc 32768). No network: the plugin needs none (the repo-server
    streams it the repository).
    """
    options = ["--runtime", "runc"] if shutil.which("runc") else []
    for name, limit, most in (("nofile", resource.RLIMIT_NOFILE, 65536), ("nproc", resource.RLIMIT_NPROC, 4096)):
        hard = resource.getrlimit(limit)[1]
        value = most if hard == resource.RLIM_INFINITY else min(hard, most)
        options += ["--ulimit", f"{name}={value}:{value}"]
    return [*options, "--network", "none"]


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    """The built image, copied into podman's storage (skopeo: podman names an oci: image after its path, and
    build-image.sh's default path has a `.cache` in it, which no image name may); removed after unless it was there."""
    from peer import peer_missing

    for tool in ("podman", "skopeo"):
        if shutil.which(tool) is None:
            peer_missing(tool)
    layout, tag = image_reference()
    image_id = config_digest(layout, tag)
    if image_id is None:
        reason = f"the sidecar image oci:{layout}:{tag} is not there: build it with `{BUILD_IMAGE}` (or name one in {IMAGE_VARIABLE})"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI builds it; a skip in CI is a failure)")
        pytest.skip(reason)
    had_it = podman("image", "exists", image_id, check=False).returncode == 0
    name = f"localhost/modelplane-render-sidecar-test:{tag}"
    copy = subprocess.run(["skopeo", "copy", "-q", f"oci:{layout}:{tag}", f"containers-storage:{name}"], capture_output=True, text=True)
    assert copy.returncode == 0, copy.stderr
    try:
        yield image_id
    finally:
        podman("untag", image_id, name, check=False)
        if not had_it:
            podman("rmi", image_id, check=False)


@dataclass
class Sidecar:
    server: CmpServer
    container: str  # podman's name of the running sidecar
    pod_container: dict[str, Any]  # the pod's container it runs as
    mounts: dict[str, Path]  # the pod's volumes as host paths, by mount path in the container


def podman_run_arguments(pod: dict[str, Any], container: dict[str, Any], mounts: dict[str, Path]) -> tuple[list[str], list[str]]:
    """The pod's sidecar container as `podman run`: the options (its environment, volumes, securityContext and
    command) and the arguments after the image."""
    security = container["securityContext"]
    uid = security["runAsUser"]
    gid = security.get("runAsGroup", int(MANIFEST["image"]["user"].split(":")[1]))  # Kubernetes: the image's group
    assert security["runAsNonRoot"] and uid != 0
    arguments = ["--user", f"{uid}:{gid}"]
    if security.get("readOnlyRootFilesystem"):
        arguments += ["--read-only", "--read-only-tmpfs=false"]  # podman's own tmpfs mounts are no pod's
    for capability in security.get("capabilities", {}).get("drop", []):
        arguments += ["--cap-drop", capability]
    for capability in security.get("capabilities", {}).get("add", []):
        arguments += ["--cap-add", capability]
    if security.get("allowPrivilegeEscalation") is False:
        arguments += ["--security-opt", "no-new-privileges"]
    assert security.get("seccompProfile", {}).get("type", "RuntimeDefault") == "RuntimeDefault"  # podman's default profile
    # The container's resources as the kubelet sets its cgroup: the memory limit, and the CPU request as shares.
    resources = container.get("resources", {})
    assert "cpu" not in resources.get("limits", {}), "a CPU limit would need --cpus here"
    if "memory" in resources.get("limits", {}):
        arguments += ["--memory", str(binary_bytes(resources["limits"]["memory"]))]
    if "cpu" in resources.get("requests", {}):
        arguments += ["--cpu-shares", str(max(2, millicores(resources["requests"]["cpu"]) * 1024 // 1000))]
    for variable in container.get("env", []):
        arguments += ["-e", f"{variable['name']}={variable['value']}"]  # a valueFrom would need its source here
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container["volumeMounts"]:
        read_only = mount.get("readOnly") or "configMap" in volumes[mount["name"]]  # the kubelet mounts a ConfigMap read-only
        arguments += ["-v", f"{mounts[mount['mountPath']]}:{mount['mountPath']}{':ro' if read_only else ''}"]
    # Kubernetes' command replaces the image's entrypoint and drops its CMD; args replace CMD.
    command = container["command"]
    return [*arguments, "--entrypoint", json.dumps(command[:1])], [*command[1:], *container.get("args", [])]


def binary_bytes(quantity: str) -> int:
    """A Kubernetes quantity with a binary suffix (512Mi, 1Gi) or none, as a number."""
    for suffix, factor in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30)):
        if quantity.endswith(suffix):
            return int(quantity[: -len(suffix)]) * factor
    return int(quantity)


def millicores(quantity: str) -> int:
    return int(quantity[:-1]) if quantity.endswith("m") else int(float(quantity) * 1000)


def as_the_kubelet_mounts(pod: dict[str, Any], container: dict[str, Any], mounts: dict[str, Path]) -> None:
    """What pod_filesystem's directories lack to be bind-mounted into a container as the kubelet mounts volumes:
    an emptyDir is writable by every user (the sidecar runs as 999), and a file is there, not a symlink to this
    machine's path (copyutil's argocd binary), which the container could not follow."""
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container["volumeMounts"]:
        host = mounts[mount["mountPath"]]
        if "emptyDir" in volumes[mount["name"]]:
            host.chmod(0o777)
        for entry in host.iterdir() if host.is_dir() else []:
            if entry.is_symlink():
                target = entry.resolve()
                entry.unlink()
                try:
                    os.link(target, entry)  # the argocd binary is 150 MB: a hard link where it can be
                except OSError:
                    shutil.copy2(target, entry)


@pytest.fixture(scope="module")
def sidecar(image: str) -> Iterator[Sidecar]:
    from peer import require_peer

    client = require_peer("modelplane-cmpclient")
    base = Path(tempfile.mkdtemp(prefix="mpr-img-"))  # short: a unix socket path has at most 107 bytes
    name = f"mpr-sidecar-{uuid.uuid4().hex[:8]}"
    try:
        (base / "install").mkdir()
        objects = build_install(base / "install")
        files = pod_filesystem(objects, base / "pod", require_peer("argocd-cmp-server"))[SIDECAR]
        pod = repo_server(objects)
        as_the_kubelet_mounts(pod, files.container, files.mounts)
        options, command_args = podman_run_arguments(pod, files.container, files.mounts)
        repo = base / "repo"
        build_repository(repo)
        try:
            podman("run", "--detach", "--name", name, *run_options(), *options, image, *command_args)
            socket = files.mounts[PLUGIN_SOCKETS] / SOCKET_NAME
            deadline = time.monotonic() + 60  # a hang guard, not a speed expectation
            while not socket.exists():
                state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
                if state != "running" or time.monotonic() > deadline:
                    logs = podman("logs", name, check=False)
                    pytest.fail(f"argocd-cmp-server in the image did not open {socket} ({state}):\n{(logs.stdout + logs.stderr)[-3000:]}")
                time.sleep(0.1)
            yield Sidecar(CmpServer(socket, client, repo), name, files.container, files.mounts)
        finally:
            podman("rm", "--force", "--time", "0", name, check=False)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.sidecar_image
@pytest.mark.parametrize("fixture", NOT_KUSTOMIZATIONS, ids=lambda p: p.name)
def test_image_generate_returns_what_render_prints(sidecar: Sidecar, fixture: Path) -> None:
    rendered = run_cli("render", cwd=fixture)
    assert rendered.code == 0
    assert manifests(sidecar.server.generate(f"valid/{fixture.name}")) == objects_of(rendered.stdout)


@pytest.mark.sidecar_image
def test_image_builds_a_kustomize_app_with_its_own_kustomize_and_function(sidecar: Sidecar) -> None:
    """The image's kustomize builds the overlay, and runs the exec function (modelplane-render krm) inside it:
    the same objects as this machine's kustomize with this checkout's function."""
    from peer import require_peer

    overlay = ROOT / "kustomize" / "overlays" / "prod"
    local = subprocess.run(
        [str(require_peer("kustomize")), "build", "--enable-alpha-plugins", "--enable-exec", str(overlay)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert local.returncode == 0, local.stderr
    built = manifests(sidecar.server.generate("kustomize/overlays/prod"))
    assert built == load_all(local.stdout)
    assert not [o for o in built if o["kind"] in ("ModelReplica", "RenderConfig")]


@pytest.mark.sidecar_image
def test_image_runs_as_999_on_a_read_only_root(sidecar: Sidecar) -> None:
    uid, gid = MANIFEST["image"]["user"].split(":")
    status = dict(line.split(":\t", 1) for line in podman("exec", sidecar.container, "cat", "/proc/1/status").stdout.splitlines())
    assert status["Name"] == "argocd-cmp-serv"  # the kernel keeps 15 characters
    assert status["Uid"].split() == [uid] * 4 and status["Gid"].split() == [gid] * 4
    assert int(status["CapEff"], 16) == 0 and status["NoNewPrivs"].strip() == "1"
    refused = podman("exec", sidecar.container, "touch", f"{MANIFEST['python']['venv']}/written", check=False)
    assert refused.returncode != 0 and "Read-only file system" in refused.stderr
    # The plugin ran as that user with the pod's environment: its render cache is in the pod's /tmp volume, the user's.
    assert sidecar.server.generate(f"valid/{NOT_KUSTOMIZATIONS[0].name}").returncode == 0
    cache = Path({v["name"]: v["value"] for v in sidecar.pod_container["env"]}[ENV_CACHE_DIR])
    [(mount_path, host)] = [(m, h) for m, h in sidecar.mounts.items() if cache.is_relative_to(m)]
    on_host = host / cache.relative_to(mount_path)
    assert on_host.is_dir() and on_host.stat().st_uid == int(uid)


@pytest.mark.sidecar_image
def test_image_serves_within_the_pods_memory_limit(sidecar: Sidecar) -> None:
    """The container's cgroup holds the pod's memory limit, and a generate of every fixture, one at a time,
    stays far under it: the limit is sized for 20 at once (repo-server-sidecar.yaml)."""
    limit = binary_bytes(sidecar.pod_container["resources"]["limits"]["memory"])
    files = {  # cgroup v1 (this machine's), then v2
        "/sys/fs/cgroup/memory/memory.limit_in_bytes": "/sys/fs/cgroup/memory/memory.max_usage_in_bytes",
        "/sys/fs/cgroup/memory.max": "/sys/fs/cgroup/memory.peak",
    }
    reads = {path: podman("exec", sidecar.container, "cat", path, check=False) for path in files}
    found = [(path, read) for path, read in reads.items() if read.returncode == 0]
    assert found, f"the container's cgroup holds no memory limit: {[r.stderr for r in reads.values()]}"
    [(limit_file, read), *_] = found
    peak_file = files[limit_file]
    assert int(read.stdout) == limit
    for fixture in NOT_KUSTOMIZATIONS:  # once more each, whatever ran before
        assert sidecar.server.generate(f"valid/{fixture.name}").returncode == 0
    peak = int(podman("exec", sidecar.container, "cat", peak_file).stdout)
    assert peak < limit / 4, f"peak {peak / 2**20:.0f} MiB of a {limit / 2**20:.0f} MiB limit, one generate at a time"
    print(f"sidecar peak memory, one generate at a time: {peak / 2**20:.0f} MiB of {limit / 2**20:.0f} MiB")


@pytest.mark.sidecar_image
def test_image_has_git_kustomize_and_our_version(image: str) -> None:
    def run(*command: str) -> str:
        user = MANIFEST["image"]["user"]
        result = podman("run", "--rm", *run_options(), "--user", user, "--read-only", image, *command)
        return result.stdout

    assert run("git", "--version").startswith("git version ")
    assert run("kustomize", "version").strip() == MANIFEST["kustomize"]["version"]
    assert run() == f"modelplane-render {version('modelplane-render')}\n"  # the image's CMD
