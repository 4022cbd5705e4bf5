"""Argo CD v3.2.11 run whole, as local processes, for the tests that sync through it (tests/test_argocd_sync.py).

As Argo CD's own Procfile runs it for development (`make start-local`): the multi-call binary built by
tests/peers/build-argocd.sh as argocd-repo-server, argocd-application-controller and
argocd-applicationset-controller (ARGOCD_BINARY_NAME picks the role), with ARGOCD_FAKE_IN_CLUSTER=true so
the in-cluster destination is the kubeconfig's API server; redis-server from Debian; `git daemon` as the
repository; and our plugin in argocd-cmp-server, its socket where the repo-server looks
(ARGOCD_PLUGINSOCKFILEPATH), `modelplane-render` first on its PATH as in the sidecar image.

The cluster is a real etcd + kube-apiserver v1.37.2 with kube-controller-manager v1.37.2 running the
controllers the loop needs: the garbage collector (Argo CD prunes with foreground deletion, which only the
collector finishes), Deployments, ReplicaSets, namespaces and ServiceAccounts. There is no kubelet and no
LeaderWorkerSet or Gateway controller: tests write pod readiness and those objects' status as their
programs would (mark_pods_ready, set_status).

Argo CD is installed as a team would: its install (tests/argocd_install.py builds examples/argocd-install), then
the same with our Component, server-side applied onto it. Its programs run as processes, argocd-cmp-server and
the repo-server as the built pod says (command, env, mounts as directories: argocd_install.pod_filesystem).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parent / "peers"))

from argocd_install import PLUGIN_CONFIG_DIR, PLUGIN_SOCKETS, REPO_SERVER, SIDECAR, ContainerFiles, pod_filesystem  # noqa: E402

from apiserver import ApiServer, _free_ports, _start, _stop, _tail, _wait_until  # noqa: E402

NAMESPACE = "argocd"
PLUGIN_SOCKET = "modelplane-render-v1.sock"
REDIS_PASSWORD = "modelplane-render-loop"
# Only what the loop needs (kube-controller-manager --controllers): no node, job or endpoint controllers.
CONTROLLERS = (
    "garbage-collector-controller",
    "deployment-controller",
    "replicaset-controller",
    "namespace-controller",
    "serviceaccount-controller",
)
HARD_REFRESH = "argocd.argoproj.io/refresh"
PROJECT = "modelplane-render"  # as argocd/appproject.yaml names it


class LoopError(RuntimeError):
    pass


@dataclass
class Process:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def tail(self) -> str:
        return _tail(self.log)


@dataclass
class ArgoLoop:
    api: ApiServer
    repo: Path  # the work tree `git daemon` serves
    repo_url: str
    work: Path
    processes: dict[str, Process] = field(default_factory=dict)

    # -- the repository ---------------------------------------------------------------------------
    def git(self, *args: str) -> str:
        done = subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise LoopError(f"git {' '.join(args)}: {done.stderr}")
        return done.stdout.strip()

    def commit(self, message: str, write: dict[str, str | None] | None = None, copy: dict[str, Path] | None = None) -> str:
        """Write (text) or delete (None) files, copy directories in, commit everything: the new revision."""
        for relative, source in (copy or {}).items():
            target = self.repo / relative
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
        for relative, text in (write or {}).items():
            target = self.repo / relative
            if text is None:
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    # -- objects ----------------------------------------------------------------------------------
    def path(self, api_version: str, kind: str, namespace: str | None, name: str = "") -> str:
        base = self.api.collection_path(api_version, kind, namespace)
        return f"{base}/{name}" if name else base

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        status, body, _ = self.api.request("GET", self.path(api_version, kind, namespace, name))
        if status == 404:
            return None
        if status != 200:
            raise LoopError(f"GET {kind} {namespace}/{name}: {status} {body}")
        return dict(body)

    def list(self, api_version: str, kind: str, namespace: str | None = None, selector: str = "") -> list[dict[str, Any]]:
        params = {"labelSelector": selector} if selector else None
        if namespace is None:
            plural, _ = self.api.resource_for(api_version, kind)
            path = f"{self.api._gv_path(api_version)}/{plural}"
        else:
            path = self.path(api_version, kind, namespace)
        status, body, _ = self.api.request("GET", path, params=params)
        if status != 200:
            raise LoopError(f"LIST {kind}: {status} {body}")
        return list(body["items"])

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        status, body, _ = self.api.request("POST", self.path(obj["apiVersion"], obj["kind"], meta.get("namespace")), obj)
        if status not in (200, 201):
            raise LoopError(f"create {obj['kind']} {meta.get('namespace')}/{meta['name']}: {status} {body}")
        return dict(body)

    def merge_patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: dict[str, Any],
        subresource: str = "",
        gone_ok: bool = False,
    ) -> None:
        """gone_ok: an object deleted meanwhile is no error (a controller writing status ignores NotFound)."""
        path = self.path(api_version, kind, namespace, name) + (f"/{subresource}" if subresource else "")
        status, body, _ = self.api.request("PATCH", path, json.dumps(patch), content_type="application/merge-patch+json")
        if status == 404 and gone_ok:
            return
        if status != 200:
            raise LoopError(f"patch {kind} {namespace}/{name} {subresource}: {status} {body}")

    def delete(self, api_version: str, kind: str, namespace: str | None, name: str) -> None:
        status, body, _ = self.api.request("DELETE", self.path(api_version, kind, namespace, name))
        if status not in (200, 202, 404):
            raise LoopError(f"delete {kind} {namespace}/{name}: {status} {body}")

    # -- Argo CD ----------------------------------------------------------------------------------
    def application(self, name: str) -> dict[str, Any]:
        app = self.get("argoproj.io/v1alpha1", "Application", NAMESPACE, name)
        if app is None:
            raise LoopError(f"no Application {name}")
        return app

    def hard_refresh(self, name: str, timeout: float = 60.0) -> dict[str, Any]:
        """Ask for a hard refresh (the repo-server's caches skipped) and wait until the controller has done it.

        The controller clears the annotation when it has compared; setting it again before that is lost."""
        self.merge_patch("argoproj.io/v1alpha1", "Application", NAMESPACE, name, {"metadata": {"annotations": {HARD_REFRESH: "hard"}}})
        return self.wait_app(name, lambda app: HARD_REFRESH not in (app["metadata"].get("annotations") or {}), "the hard refresh", timeout)

    def wait_app(self, name: str, done: Callable[[dict[str, Any]], bool], what: str, timeout: float = 120.0) -> dict[str, Any]:
        """Poll the Application until done(app); a hang guard, not a speed expectation."""
        deadline = time.monotonic() + timeout
        app: dict[str, Any] | None = None
        while True:
            app = self.get("argoproj.io/v1alpha1", "Application", NAMESPACE, name)
            if app is not None and done(app):
                return app
            self.check_alive()
            if time.monotonic() > deadline:
                raise LoopError(
                    f"Application {name}: not {what} after {timeout:.0f}s; status:\n{json.dumps((app or {}).get('status'), indent=1)[:6000]}"
                )
            time.sleep(0.25)

    def check_alive(self) -> None:
        for process in self.processes.values():
            if process.proc.poll() is not None:
                raise LoopError(f"{process.name} exited with {process.proc.returncode}:\n{process.tail()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.tail()}" for p in self.processes.values())


def sync_revision(app: dict[str, Any]) -> str:
    return str(((app.get("status") or {}).get("sync") or {}).get("revision") or "")


def sync_status(app: dict[str, Any]) -> str:
    return str(((app.get("status") or {}).get("sync") or {}).get("status") or "")


def health_status(app: dict[str, Any]) -> str:
    return str(((app.get("status") or {}).get("health") or {}).get("status") or "")


def conditions(app: dict[str, Any]) -> list[dict[str, Any]]:
    return list((app.get("status") or {}).get("conditions") or [])


def operation_phase(app: dict[str, Any]) -> str:
    return str(((app.get("status") or {}).get("operationState") or {}).get("phase") or "")


# -- starting it -------------------------------------------------------------------------------------


def _install_argocd(api: ApiServer, install: list[dict[str, Any]]) -> None:
    """A kustomize build of an Argo CD install, server-side applied as `kubectl apply --server-side -k` does.

    Its workloads are created too (they never run: there is no scheduler or kubelet; the loop runs Argo CD as
    processes), so the repo-server Deployment the tests read is the one the build made."""
    api.create_namespace(NAMESPACE)
    for obj in install:
        if obj["kind"] == "CustomResourceDefinition":
            api.apply_crd(obj)
    for obj in install:
        if obj["kind"] != "CustomResourceDefinition":
            server_side_apply(api, obj)


def server_side_apply(api: ApiServer, obj: dict[str, Any], manager: str = "kubectl") -> dict[str, Any]:
    """One object applied as `kubectl apply --server-side --force-conflicts` applies it."""
    meta = obj["metadata"]
    path = f"{api.collection_path(obj['apiVersion'], obj['kind'], meta.get('namespace'))}/{meta['name']}"
    status, body, _ = api.request(
        "PATCH", path, json.dumps(obj), params={"fieldManager": manager, "force": "true"}, content_type="application/apply-patch+yaml"
    )
    if status not in (200, 201):
        raise LoopError(f"apply {obj['kind']} {meta.get('namespace')}/{meta['name']}: {status} {body}")
    return dict(body)


def _install_loop_only_objects(loop: ArgoLoop, sidecar_path: str, allow_kinds: tuple[str, ...]) -> None:
    """What Argo CD's redis secret-init Job would have made, and the AppProject every app of the loop is in,
    made by `modelplane-render argocd appproject` as argocd/appproject.yaml says: this repository only, the
    cluster and the two names the ApplicationSet test gives it, the kinds we render and `allow_kinds`."""
    loop.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "argocd-redis", "namespace": NAMESPACE},
            "stringData": {"auth": REDIS_PASSWORD},
        }
    )
    servers = ("https://kubernetes.default.svc", f"https://127.0.0.1:{loop.api.port}", f"https://localhost:{loop.api.port}")
    args = ["--name", PROJECT, "--src", loop.repo_url, *(f"--dest={server},*" for server in servers), "--create-namespace"]
    loop.create(
        generated_project(str(shutil.which("modelplane-render", path=sidecar_path)), *args, *(f"--allow-kind={k}" for k in allow_kinds))
    )


def generated_project(command: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The AppProject `COMMAND argocd appproject ARGS` prints, as a team makes its own."""
    done = subprocess.run([command, "argocd", "appproject", *args], capture_output=True, text=True, timeout=60, env=env)
    if done.returncode != 0:
        raise LoopError(f"modelplane-render argocd appproject: {done.stderr}")
    return dict(yaml.safe_load(done.stdout))


def _mounted(files: ContainerFiles, container_path: str) -> Path:
    """The host directory a container's mounts put at a path (resolved: a unix socket path has at most 107 bytes)."""
    try:
        return files.path(container_path).resolve(strict=True)
    except FileNotFoundError:
        raise LoopError(f"container {files.container['name']} mounts nothing at {container_path}: {sorted(files.mounts)}") from None


def _wait_port(port: int, process: Process, timeout: float = 60.0) -> None:
    import socket

    def open_() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True

    _wait_until(open_, process.proc, process.log, process.name, timeout)


@contextlib.contextmanager
def running_loop(
    api: ApiServer,
    bin_dir: Path,
    existing_install: list[dict[str, Any]],
    install: list[dict[str, Any]],
    sidecar_path: str,
    allow_kinds: tuple[str, ...] = (),
) -> Iterator[ArgoLoop]:
    """Everything but the API server, started against `api`; stopped (and its files removed) on exit.

    existing_install: a team's Argo CD install without our Component, applied first; install: the same with it
    (tests/argocd_install.build_install), applied onto it. argocd-cmp-server and the repo-server run as
    install's repo-server pod says: its sidecar's command, env and mounts, each mount a directory of the loop.
    sidecar_path: the image's PATH, as the host has it (modelplane-render's console script first). allow_kinds:
    the kinds the apps pass through, which the loop's AppProject (PROJECT) allows besides those we render."""
    work = Path(tempfile.mkdtemp(prefix="mpr-loop-"))  # short: a unix socket path has at most 107 bytes
    loop: ArgoLoop | None = None
    try:
        kubeconfig = api.kubeconfig  # the admin's, trusting the server's own certificate
        (redis_port, git_port, repo_port, repo_metrics, ctl_metrics, appset_metrics, appset_probe, appset_webhook) = _free_ports(8)
        repo = work / "git" / "serving"
        repo.mkdir(parents=True)
        loop = ArgoLoop(api, repo, f"git://127.0.0.1:{git_port}/serving", work)
        for command in (["init", "-q", "-b", "main"], ["config", "user.email", "ci@example.com"], ["config", "user.name", "CI"]):
            loop.git(*command)

        def start(name: str, command: list[str], env: dict[str, str] | None = None) -> Process:
            log = work / f"{name}.log"
            if env is None:
                proc = _start(command, log)
            else:
                with open(log, "wb") as out:
                    from apiserver import _die_with_parent

                    proc = subprocess.Popen(
                        command, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
                    )
            process = loop.processes[name] = Process(name, proc, log)  # type: ignore[union-attr]
            return process

        # The controllers of a cluster that Argo CD's sync depends on.
        start(
            "kube-controller-manager",
            [
                str(bin_dir / "kube-controller-manager"),
                f"--kubeconfig={kubeconfig}",
                f"--controllers={','.join(CONTROLLERS)}",
                "--use-service-account-credentials=false",
                "--leader-elect=false",
                "--secure-port=0",
                "--concurrent-gc-syncs=5",
            ],
        )
        _install_argocd(api, existing_install)
        _install_argocd(api, install)
        _install_loop_only_objects(loop, sidecar_path, allow_kinds)

        redis = start(
            "redis-server",
            [
                shutil.which("redis-server") or "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--requirepass",
                REDIS_PASSWORD,
            ],
        )
        _wait_port(redis_port, redis)
        git = start(
            "git-daemon",
            [
                "git",
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--informative-errors",
                f"--base-path={work / 'git'}",
                "--listen=127.0.0.1",
                f"--port={git_port}",
                str(work / "git"),
            ],
        )
        _wait_port(git_port, git)

        home = work / "home"
        home.mkdir()
        pod = pod_filesystem(install, work / "pod", bin_dir / "argocd-cmp-server")
        sidecar, repo_server_files = pod[SIDECAR], pod[REPO_SERVER]
        # Each program's own default socket directory, through its own container's mounts: if the two
        # containers mounted the plugins volume at different paths, the repo-server would find no plugin.
        sockets = _mounted(sidecar, PLUGIN_SOCKETS)
        cmp = start(
            "argocd-cmp-server",
            [str(sidecar.path(sidecar.container["command"][0])), *sidecar.container["command"][1:], *sidecar.container.get("args", [])]
            + ["--config-dir-path", str(sidecar.path(PLUGIN_CONFIG_DIR))],
            {
                **sidecar.env(),
                "PATH": sidecar_path,
                "HOME": str(home),
                "ARGOCD_PLUGINSOCKFILEPATH": str(sockets),
                "TMPDIR": str(_mounted(sidecar, "/tmp")),  # the plugin's work directory (ARGOCD_CMP_WORKDIR unset: os.TempDir())
            },
        )
        _wait_until(lambda: (sockets / PLUGIN_SOCKET).exists(), cmp.proc, cmp.log, "argocd-cmp-server", 60)

        argocd = str(bin_dir / "argocd-cmp-server")  # the multi-call binary; ARGOCD_BINARY_NAME picks the role
        common = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "ARGOCD_FAKE_IN_CLUSTER": "true",
            "KUBECONFIG": str(kubeconfig),
            "REDIS_PASSWORD": REDIS_PASSWORD,
            "TMPDIR": str(work / "tmp"),
        }
        (work / "tmp").mkdir()
        for name in ("tls", "ssh", "gnupg", "gpg-keys"):
            (work / name).mkdir()
        repo_server = start(
            "argocd-repo-server",
            [
                argocd,
                "--address",
                "127.0.0.1",
                "--port",
                str(repo_port),
                "--metrics-address",
                "127.0.0.1",
                "--metrics-port",
                str(repo_metrics),
                "--redis",
                f"127.0.0.1:{redis_port}",
                "--disable-tls",
            ],
            {
                **common,
                "ARGOCD_BINARY_NAME": "argocd-repo-server",
                "ARGOCD_PLUGINSOCKFILEPATH": str(_mounted(repo_server_files, PLUGIN_SOCKETS)),
                "ARGOCD_GPG_ENABLED": "false",
                "ARGOCD_TLS_DATA_PATH": str(work / "tls"),
                "ARGOCD_SSH_DATA_PATH": str(work / "ssh"),
                "ARGOCD_GNUPGHOME": str(work / "gnupg"),
                "ARGOCD_GPG_DATA_PATH": str(work / "gpg-keys"),
            },
        )
        _wait_port(repo_port, repo_server)
        start(
            "argocd-application-controller",
            [
                argocd,
                f"--kubeconfig={kubeconfig}",
                f"--namespace={NAMESPACE}",
                f"--redis=127.0.0.1:{redis_port}",
                f"--repo-server=127.0.0.1:{repo_port}",
                "--repo-server-plaintext",
                f"--metrics-port={ctl_metrics}",
                "--app-resync=30",
                "--self-heal-timeout-seconds=1",
                # Each resource's health in the Application's status, as Argo CD 2.x kept it (v3 keeps it only
                # in redis for the UI): the tests read what our Lua said of each object. It changes no verdict.
                "--persist-resource-health",
            ],
            # The controller takes its shard from the ordinal of a StatefulSet pod's name.
            {**common, "ARGOCD_BINARY_NAME": "argocd-application-controller", "HOSTNAME": "argocd-application-controller-0"},
        )
        start(
            "argocd-applicationset-controller",
            [
                argocd,
                f"--namespace={NAMESPACE}",
                f"--argocd-repo-server=127.0.0.1:{repo_port}",
                "--repo-server-plaintext",
                f"--metrics-addr=127.0.0.1:{appset_metrics}",
                f"--probe-addr=127.0.0.1:{appset_probe}",
                f"--webhook-addr=127.0.0.1:{appset_webhook}",
                "--enable-leader-election=false",
            ],
            {**common, "ARGOCD_BINARY_NAME": "argocd-applicationset-controller"},
        )
        time.sleep(0.5)
        loop.check_alive()
        yield loop
    finally:
        if loop is not None:
            for process in reversed(list(loop.processes.values())):
                if process.name == "argocd-cmp-server":
                    process.proc.kill()  # it ignores SIGTERM
                    process.proc.wait()
                else:
                    _stop(process.proc)
        if os.environ.get("MODELPLANE_LOOP_KEEP"):  # the processes' logs and the repository, to read after a failure
            print(f"argocd loop files kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
