"""Argo CD as a team installs it with our Component, built by the real kustomize, and its pods' containers run by hand.

build_install: examples/argocd-install (Argo CD's release manifest, from Go's module cache, plus the argocd/
Component) built by the real kustomize. pod_filesystem: one container of the built repo-server pod as the
kubelet would mount it, a directory per volume and, per container, a tree of symlinks at its mount paths; so
the loop (tests/argocd_loop.py) and the image test (tests/test_sidecar_image.py) start argocd-cmp-server with
the command, env and mounts the Component renders, and a mount that moves fails them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
ARGOCD_DIR = ROOT / "argocd"
INSTALL_EXAMPLE = ROOT / "examples" / "argocd-install"
ARGOCD_VERSION = "v3.2.11"  # the release build-argocd.sh builds and examples/argocd-install installs
UPSTREAM_INSTALL = f"https://raw.githubusercontent.com/argoproj/argo-cd/{ARGOCD_VERSION}/manifests/install.yaml"
SIDECAR = "modelplane-render"
REPO_SERVER = "argocd-repo-server"
# Where Argo CD v3.2.11's programs look when nothing says otherwise (common/common.go): the plugin sockets
# (DefaultPluginSockFilePath, both the repo-server and argocd-cmp-server) and argocd-cmp-server's config
# directory (DefaultPluginConfigFilePath).
PLUGIN_SOCKETS = "/home/argocd/cmp-server/plugins"
PLUGIN_CONFIG_DIR = "/home/argocd/cmp-server/config"


def upstream_install() -> Path:
    """Argo CD's own install.yaml of the release we test, from the Go module cache build-argocd.sh fills."""
    from peer import peer_missing, require_peer

    require_peer("argocd-cmp-server")  # its build downloads the module
    go = shutil.which("go")
    cache = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True).stdout.strip() if go else ""
    cache = cache or str(Path.home() / "go" / "pkg" / "mod")
    path = Path(cache) / "github.com" / "argoproj" / "argo-cd" / f"v3@{ARGOCD_VERSION}" / "manifests" / "install.yaml"
    if not path.is_file():
        peer_missing("argocd-cmp-server", str(path))
    return path


def build_install(work: Path, kustomization: str | None = None) -> list[dict[str, Any]]:
    """examples/argocd-install built by the real kustomize, the release's install.yaml standing in for its URL.

    kustomization: other text for the example's kustomization.yaml (a team's own settings), same URL."""
    from peer import require_peer

    kustomize = require_peer("kustomize")
    component = work / "argocd"
    component.mkdir()
    for name in ("kustomization.yaml", "plugin.yaml", "repo-server-sidecar.yaml"):
        shutil.copy(ARGOCD_DIR / name, component / name)
    shutil.copytree(ARGOCD_DIR / "health", component / "health")
    example = work / "examples" / "argocd-install"
    example.mkdir(parents=True)
    shutil.copy(upstream_install(), example / "install.yaml")
    text = kustomization if kustomization is not None else (INSTALL_EXAMPLE / "kustomization.yaml").read_text()
    assert text.count(f"- {UPSTREAM_INSTALL}\n") == 1, "the example installs another Argo CD release than the tests run"
    (example / "kustomization.yaml").write_text(text.replace(UPSTREAM_INSTALL, "install.yaml"))
    result = subprocess.run([str(kustomize), "build", str(example)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return load_all(result.stdout)


def load_all(text: str) -> list[dict[str, Any]]:
    """Argo CD's install manifest is 3 MB: libyaml's loader when it's there."""
    return [o for o in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if o]


def repo_server_deployment(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [deployment] = [o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"] == REPO_SERVER]
    return deployment


def repo_server(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The repo-server's pod spec."""
    return dict(repo_server_deployment(objects)["spec"]["template"]["spec"])


def container(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    pod = repo_server(objects)
    [found] = [c for c in pod["containers"] + pod.get("initContainers", []) if c["name"] == name]
    return dict(found)


@dataclass
class ContainerFiles:
    """One container of the repo-server pod as its mounts make it, rooted in a host directory."""

    container: dict[str, Any]
    root: Path  # the container's mount paths, as symlinks to the volumes' directories and files
    mounts: dict[str, Path]  # mountPath -> the host directory or file the kubelet would mount there

    def path(self, container_path: str) -> Path:
        """The host path of a path inside the container; only what a mount provides exists there."""
        assert container_path.startswith("/"), container_path
        return self.root / container_path.lstrip("/")

    def env(self) -> dict[str, str]:
        """The container's env, a value naming a path under a mount given as the host path."""
        out = {}
        for entry in self.container.get("env", []):
            value = entry["value"]
            if any(value == m or value.startswith(m.rstrip("/") + "/") for m in self.mounts):
                value = str(self.path(value))
            out[entry["name"]] = value
        return out


def pod_filesystem(objects: list[dict[str, Any]], root: Path, argocd_binary: Path) -> dict[str, ContainerFiles]:
    """The repo-server pod's volumes made as the kubelet would (emptyDir: a directory; configMap: its keys as
    files), its copyutil init container's one job done (the argocd binary put where its command says), and,
    for the repo-server and our sidecar, each mount linked at its path under a root of the container's own."""
    pod = repo_server(objects)
    config_maps = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ConfigMap"}
    volumes: dict[str, Path] = {}
    for volume in pod["volumes"]:
        directory = root / "volumes" / volume["name"]
        directory.mkdir(parents=True)
        if "configMap" in volume:
            for key, value in (config_maps[volume["configMap"]["name"]].get("data") or {}).items():
                (directory / key).write_text(value)
        volumes[volume["name"]] = directory

    def files_of(spec: dict[str, Any]) -> ContainerFiles:
        own = root / "containers" / spec["name"]
        mounts = {}
        for mount in spec.get("volumeMounts", []):
            source = volumes[mount["name"]] / mount.get("subPath", "")
            target = own / mount["mountPath"].lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source)
            mounts[mount["mountPath"]] = source
        return ContainerFiles(spec, own, mounts)

    # copyutil: `/bin/cp -n /usr/local/bin/argocd /var/run/argocd/argocd-cmp-server` in Argo CD's image. A
    # symlink keeps the name the multi-call binary reads its role from.
    copyutil = files_of(container(objects, "copyutil"))
    target = copyutil.path(copyutil.container["command"][-1])
    os.symlink(argocd_binary, target)
    return {name: files_of(container(objects, name)) for name in (REPO_SERVER, SIDECAR)}
