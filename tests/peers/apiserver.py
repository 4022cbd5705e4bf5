"""Run a real etcd + kube-apiserver pair for tests (stdlib only).

Binaries come from ``tests/peers/build-etcd.sh`` and
``tests/peers/build-kube-apiserver.sh`` (``$MODELPLANE_PEERS_DIR/bin``).

    with running_apiserver() as api:
        api.create_namespace("ml-team")
        status, body, warnings = api.dry_run_create(obj, namespace="ml-team")
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["ApiServer", "ApiServerError", "find_peer", "peers_bin_dir", "running_apiserver"]

ADMIN_TOKEN = "modelplane-render-test-admin-token"
_WARNING_RE = re.compile(r'^\d{3} \S+ "((?:[^"\\]|\\.)*)"')


class ApiServerError(RuntimeError):
    pass


def peers_bin_dir() -> Path:
    root = os.environ.get("MODELPLANE_PEERS_DIR") or Path.home() / ".cache" / "modelplane-render" / "peers"
    return Path(root) / "bin"


def find_peer(name: str) -> Path | None:
    """Path of the built peer binary ``name`` (e.g. "kube-apiserver"), or None."""
    path = peers_bin_dir() / name
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _free_ports(n: int) -> list[int]:
    # Hold all sockets open together so the n ports are distinct.
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent() -> None:
    # Linux: SIGKILL the peer if the Python process dies without cleaning up.
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _tail(path: Path, limit: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def _start(cmd: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )


def _stop(proc: subprocess.Popen | None, grace: float = 5.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _openssl(*args: str) -> None:
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ApiServerError("openssl is required to generate the service-account key")
    subprocess.run([openssl, *args], check=True, capture_output=True)


class ApiServer:
    """A running kube-apiserver reachable as an admin (system:masters) over HTTPS."""

    def __init__(self, host: str, port: int, token: str, ca_file: Path | None, workdir: Path):
        self.host, self.port, self.token, self.workdir = host, port, token, workdir
        self.url = f"https://{host}:{port}"
        self.ca_file = ca_file
        self.kubeconfig = workdir / "kubeconfig"
        if ca_file is not None:
            self._ssl = ssl.create_default_context(cafile=str(ca_file))
        else:
            self._ssl = ssl._create_unverified_context()
        self._discovery: dict[str, dict[str, tuple[str, bool]]] = {}
        self.startup_seconds = 0.0  # etcd + apiserver start to /readyz

    # -- raw HTTP ---------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, Any] | None = None,
        timeout: float = 60.0,
        content_type: str = "application/json",
    ) -> tuple[int, Any, list[str]]:
        """Return (status, decoded JSON body or text or None, warning messages).

        A dict or list body is sent as JSON; bytes or text as they are, labelled content_type
        (`application/yaml`: the server decodes it with sigs.k8s.io/yaml, as kubectl reads a file)."""
        if params:
            path += ("&" if "?" in path else "?") + urllib.parse.urlencode(params)
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers["Content-Type"] = content_type
        conn = http.client.HTTPSConnection(self.host, self.port, context=self._ssl, timeout=timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
            warnings = []
            for value in resp.headers.get_all("Warning") or []:
                m = _WARNING_RE.match(value)
                warnings.append(re.sub(r"\\(.)", r"\1", m.group(1)) if m else value)
            status = resp.status
        finally:
            conn.close()
        if not raw:
            return status, None, warnings
        try:
            return status, json.loads(raw), warnings
        except ValueError:
            return status, raw.decode("utf-8", "replace"), warnings

    def _check(self, method: str, path: str, body: Any = None, ok=(200, 201)) -> Any:
        status, data, _ = self.request(method, path, body)
        if status not in ok:
            raise ApiServerError(f"{method} {path} -> {status}: {data}")
        return data

    # -- discovery --------------------------------------------------------
    @staticmethod
    def _gv_path(api_version: str) -> str:
        return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"

    def _load_discovery(self, api_version: str) -> dict[str, tuple[str, bool]]:
        status, data, _ = self.request("GET", self._gv_path(api_version))
        kinds: dict[str, tuple[str, bool]] = {}
        if status == 200:
            for res in data.get("resources", []):
                if "/" not in res["name"]:  # skip subresources like pods/status
                    kinds[res["kind"]] = (res["name"], bool(res.get("namespaced")))
        self._discovery[api_version] = kinds
        return kinds

    def resource_for(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural, namespaced) for apiVersion/kind; refreshes discovery once on a miss."""
        kinds = self._discovery.get(api_version)
        if kinds is None or kind not in kinds:
            kinds = self._load_discovery(api_version)
        if kind not in kinds:
            raise ApiServerError(f"{api_version} {kind} is not served by the apiserver")
        return kinds[kind]

    def collection_path(self, api_version: str, kind: str, namespace: str | None = None) -> str:
        plural, namespaced = self.resource_for(api_version, kind)
        if namespaced:
            return f"{self._gv_path(api_version)}/namespaces/{namespace or 'default'}/{plural}"
        return f"{self._gv_path(api_version)}/{plural}"

    def wait_for_api(self, api_version: str, kind: str | None = None, timeout: float = 60.0) -> None:
        """Wait until group/version (and optionally kind) shows up in discovery."""
        deadline = time.monotonic() + timeout
        while True:
            kinds = self._load_discovery(api_version)
            if kinds and (kind is None or kind in kinds):
                return
            if time.monotonic() > deadline:
                raise ApiServerError(f"{api_version} {kind or ''} not served after {timeout}s")
            time.sleep(0.2)

    # -- helpers ----------------------------------------------------------
    def create_namespace(self, name: str) -> None:
        """Create a namespace plus its `default` ServiceAccount (no controller-manager runs here)."""
        self._check("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, ok=(201, 409))
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": name}}
        self._check("POST", f"/api/v1/namespaces/{name}/serviceaccounts", sa, ok=(201, 409))

    def apply_crd(self, manifest: dict, timeout: float = 60.0) -> None:
        """Create a CRD (409 is fine) and wait until it is Established and in discovery."""
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        self._check("POST", base, manifest, ok=(201, 409))
        name = manifest["metadata"]["name"]
        deadline = time.monotonic() + timeout
        while True:
            crd = self._check("GET", f"{base}/{name}", ok=(200,))
            conds = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
            if conds.get("Established") == "True":
                break
            if time.monotonic() > deadline:
                raise ApiServerError(f"CRD {name} not Established after {timeout}s: {conds}")
            time.sleep(0.1)
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served", True):
                self.wait_for_api(
                    f"{spec['group']}/{version['name']}", spec["names"]["kind"], timeout=max(1.0, deadline - time.monotonic())
                )

    def dry_run_create(self, obj: dict, namespace: str | None = None) -> tuple[int, Any, list[str]]:
        """POST obj with dryRun=All&fieldValidation=Strict; returns (status, body, warnings)."""
        namespace = namespace or obj.get("metadata", {}).get("namespace")
        path = self.collection_path(obj["apiVersion"], obj["kind"], namespace)
        return self.request("POST", path, obj, params={"dryRun": "All", "fieldValidation": "Strict"})

    def dry_run_create_text(
        self, text: str | bytes, api_version: str, kind: str, namespace: str | None = None
    ) -> tuple[int, Any, list[str]]:
        """POST YAML text as it is (Content-Type: application/yaml) with dryRun=All&fieldValidation=Strict.

        The server reads it with sigs.k8s.io/yaml (go-yaml v2) and, under Strict, again with its strict
        reader for duplicate keys. Only the first document of the text is read: split a stream first."""
        path = self.collection_path(api_version, kind, namespace)
        data = text.encode("utf-8") if isinstance(text, str) else text
        return self.request("POST", path, data, params={"dryRun": "All", "fieldValidation": "Strict"}, content_type="application/yaml")

    def _write_kubeconfig(self) -> None:
        cluster = {"server": self.url}
        if self.ca_file is not None:
            cluster["certificate-authority"] = str(self.ca_file)
        else:
            cluster["insecure-skip-tls-verify"] = True
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "peer",
            "clusters": [{"name": "peer", "cluster": cluster}],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [{"name": "peer", "context": {"cluster": "peer", "user": "admin"}}],
        }
        self.kubeconfig.write_text(json.dumps(cfg, indent=1))  # JSON is valid YAML


def _wait_until(check, proc: subprocess.Popen, log: Path, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        if proc.poll() is not None:
            raise ApiServerError(f"{what} exited with {proc.returncode}; output tail:\n{_tail(log)}")
        try:
            if check():
                return
        except (OSError, http.client.HTTPException, ValueError) as exc:
            last = repr(exc)
        if time.monotonic() > deadline:
            raise ApiServerError(f"{what} not ready after {timeout}s ({last}); output tail:\n{_tail(log)}")
        time.sleep(0.2)


@contextlib.contextmanager
def running_apiserver(
    bin_dir: str | os.PathLike | None = None,
    *,
    startup_timeout: float = 60.0,
    authorization_mode: str = "AlwaysAllow",
    extra_args: tuple[str, ...] | list[str] = (),
) -> Iterator[ApiServer]:
    """Start etcd + kube-apiserver on free 127.0.0.1 ports; stop both and clean up on exit."""
    bin_dir = Path(bin_dir) if bin_dir is not None else peers_bin_dir()
    etcd_bin, apiserver_bin = bin_dir / "etcd", bin_dir / "kube-apiserver"
    for b in (etcd_bin, apiserver_bin):
        if not b.exists():
            raise FileNotFoundError(f"{b} missing: run tests/peers/build-{b.name}.sh")

    workdir = Path(tempfile.mkdtemp(prefix="modelplane-apiserver-"))
    etcd = apiserver = None
    try:
        t0 = time.monotonic()
        client_port, peer_port, secure_port = _free_ports(3)
        etcd_url, peer_url = f"http://127.0.0.1:{client_port}", f"http://127.0.0.1:{peer_port}"
        etcd_log = workdir / "etcd.log"
        etcd = _start(
            [
                str(etcd_bin),
                "--name=default",
                f"--data-dir={workdir / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=default={peer_url}",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            etcd_log,
        )

        def etcd_healthy() -> bool:
            with urllib.request.urlopen(f"{etcd_url}/health", timeout=2) as r:
                return json.loads(r.read()).get("health") == "true"

        _wait_until(etcd_healthy, etcd, etcd_log, "etcd", 30.0)

        sa_key = workdir / "sa.key"
        _openssl("genrsa", "-out", str(sa_key), "2048")
        tokens = workdir / "tokens.csv"
        tokens.write_text(f'{ADMIN_TOKEN},admin,admin-uid,"system:masters"\n')
        cert_dir = workdir / "certs"
        apiserver_log = workdir / "kube-apiserver.log"
        apiserver = _start(
            [
                str(apiserver_bin),
                f"--etcd-servers={etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={secure_port}",
                f"--cert-dir={cert_dir}",
                # No controller-manager runs, so nothing may try to maintain the
                # kubernetes Service endpoints.
                "--endpoint-reconciler-type=none",
                "--service-cluster-ip-range=10.0.0.0/24",
                f"--token-auth-file={tokens}",
                f"--authorization-mode={authorization_mode}",
                f"--service-account-key-file={sa_key}",
                f"--service-account-signing-key-file={sa_key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--allow-privileged=true",
                *extra_args,
            ],
            apiserver_log,
        )

        # Poll /readyz without verification; --cert-dir makes the apiserver
        # write a self-signed CA + serving cert (apiserver.crt holds both),
        # which the returned client then trusts.
        probe = ApiServer("127.0.0.1", secure_port, ADMIN_TOKEN, None, workdir)
        remaining = startup_timeout - (time.monotonic() - t0)
        _wait_until(
            lambda: probe.request("GET", "/readyz", timeout=5)[0] == 200,
            apiserver,
            apiserver_log,
            "kube-apiserver /readyz",
            max(remaining, 5.0),
        )
        api = ApiServer("127.0.0.1", secure_port, ADMIN_TOKEN, cert_dir / "apiserver.crt", workdir)
        api._write_kubeconfig()
        api.startup_seconds = time.monotonic() - t0
        yield api
    finally:
        _stop(apiserver)
        _stop(etcd)
        shutil.rmtree(workdir, ignore_errors=True)
