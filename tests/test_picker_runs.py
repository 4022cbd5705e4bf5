"""The real endpoint picker runs what we render: one replica, rolled with a surge, our ServiceAccount's token, Role and config.

Opt-in (`pytest -m picker_binary`), and left out of `.ci/run`: it needs the llm-d-router v0.9.0
`epp` binary, which no registry this project's CI reaches serves (the Go module proxy does not
carry llm-d-router). Build it from its source yourself and name it in MODELPLANE_EPP_BIN; the
gRPC health client needs `pip install grpcio grpcio-health-checking`. This is the one test CI
does not run; docs/proofs.md says what it showed.

For a Unified and a PrefillDecode fixture, against kube-apiserver with RBAC on and every CRD the
picker looks for, as the Deployment runs it: the one picker answers SERVING on the readiness and
liveness probes' services and is still up after MODELPLANE_EPP_SECONDS (180); a second one started
beside it (a rolling update's surge pod) serves too, with no Lease taken and nothing forbidden; once
the first is stopped (gracefully, SIGTERM, as the Deployment controller stops it; or SIGKILL, a crash)
the second still serves.

How long each step takes is not asserted (each wait has a hang guard of HANG_GUARD seconds): the
benchmark measures it against what the README states (`benchmarks/run.py --picker`, which runs this
test with MODELPLANE_EPP_TIMINGS naming a file for the times).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import VALID
from modelplane_render import constants as c
from modelplane_render.options import Options
from modelplane_render.pipeline import render_paths

pytestmark = [pytest.mark.picker_binary, pytest.mark.real_peers]

ENV_BINARY = "MODELPLANE_EPP_BIN"
ENV_TIMINGS = "MODELPLANE_EPP_TIMINGS"  # a file each case appends its times to, as a JSON line (the benchmark's)
# Each wait has this hang guard, not a speed expectation; docs/design.md has the measured times.
HANG_GUARD = 60.0
STAYS_UP = float(os.environ.get("MODELPLANE_EPP_SECONDS", "180"))
CASES = [("single-gpu-standalone", signal.SIGTERM), ("prefill-decode-kimi-k2", signal.SIGKILL)]


@pytest.fixture(scope="module")
def epp() -> str:
    binary = os.environ.get(ENV_BINARY)
    if not binary or not os.access(binary, os.X_OK):
        pytest.fail(f"{ENV_BINARY} must name a built llm-d-router v0.9.0 epp binary (this marker is opt-in)")
    return binary


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _health(port: int, service: str) -> str:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service), timeout=2.0)
        except grpc.RpcError as error:
            return error.code().name
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


class Picker:
    """One copy of the picker, started as the Deployment's container would be (ports moved apart)."""

    def __init__(self, binary: str, container: dict[str, Any], config: Path, kubeconfig: Path, namespace: str, name: str, log: Path):
        self.health_port = _free_port()
        ours = {"--config-file": str(config), "--grpc-port": str(_free_port()), "--grpc-health-port": str(self.health_port)}
        ours["--metrics-port"] = str(_free_port())
        args = [f"{a.split('=', 1)[0]}={ours[a.split('=', 1)[0]]}" if a.split("=", 1)[0] in ours else a for a in container["args"]]
        env = {"PATH": os.environ.get("PATH", ""), "KUBECONFIG": str(kubeconfig), "NAMESPACE": namespace, "POD_NAME": name}
        self.log = log
        with open(log, "wb") as out:
            self.process = subprocess.Popen([binary, *args], env=env, stdout=out, stderr=subprocess.STDOUT)

    def status(self, service: str) -> str:
        return "EXITED" if self.process.poll() is not None else _health(self.health_port, service)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def _wait(what: str, check: Any, timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


@pytest.mark.parametrize("fixture,stop", CASES, ids=[name for name, _ in CASES])
def test_the_real_picker_serves_what_we_render(epp, rbac_api, tmp_path, fixture, stop):  # type: ignore[no-untyped-def]
    objects = render_paths([str(next(p for p in VALID if p.name == fixture))], Options()).objects
    for obj in objects:
        namespace = obj["metadata"]["namespace"]
        rbac_api.create_namespace(namespace)
        status, body, _ = rbac_api.request("POST", rbac_api.collection_path(obj["apiVersion"], obj["kind"], namespace), obj)
        assert status == 201, body
    (deployment,) = [o for o in objects if o["kind"] == "Deployment"]
    (config_map,) = [o for o in objects if o["kind"] == "ConfigMap"]
    namespace, account = deployment["metadata"]["namespace"], deployment["spec"]["template"]["spec"]["serviceAccountName"]
    token_request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}}
    status, token, _ = rbac_api.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token", token_request)
    assert status == 201, token
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "picker",
                "clusters": [{"name": "test", "cluster": {"server": rbac_api.url, "certificate-authority": str(rbac_api.ca_file)}}],
                "users": [{"name": "picker", "user": {"token": token["status"]["token"]}}],
                "contexts": [{"name": "picker", "context": {"cluster": "test", "user": "picker", "namespace": namespace}}],
            }
        )
    )
    config = tmp_path / c.PICKER_CONFIG_KEY
    config.write_text(config_map["data"][c.PICKER_CONFIG_KEY])
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    liveness, readiness = container["livenessProbe"]["grpc"]["service"], container["readinessProbe"]["grpc"]["service"]
    assert deployment["spec"]["replicas"] == 1

    def start(i: int) -> Picker:
        name = f"{deployment['metadata']['name']}-{i}"
        return Picker(epp, container, config, kubeconfig, namespace, name, tmp_path / f"epp-{i}.log")

    pickers = [start(0)]
    try:
        (old,) = pickers
        ready_after = _wait("the picker SERVING on readiness", lambda: old.status(readiness) == "SERVING", HANG_GUARD)
        time.sleep(max(0.0, STAYS_UP - ready_after))
        assert old.status(liveness) == old.status(readiness) == "SERVING", "still serving: the kubelet neither restarts it nor drops it"
        pickers.append(start(1))  # the rolling update's surge pod
        new = pickers[1]
        surge_ready = _wait("the surge picker SERVING beside the first", lambda: new.status(readiness) == "SERVING", HANG_GUARD)
        assert old.status(readiness) == "SERVING", "two pickers without leader election both serve"
        status, leases, _ = rbac_api.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases")
        assert status == 200 and leases["items"] == [], "no Lease: nothing waits on one"
        forbidden = [line for p in pickers for line in p.log.read_text(errors="replace").splitlines() if "forbidden" in line]
        assert forbidden == [], forbidden[:3]
        old.process.send_signal(stop)
        exited = _wait("the old picker gone", lambda: old.process.poll() is not None, HANG_GUARD)
        assert new.status(readiness) == new.status(liveness) == "SERVING", "the new picker serves on"
        print(
            f"{fixture}: SERVING after {ready_after:.1f} s, the surge picker after {surge_ready:.1f} s; {signal.Signals(stop).name} -> exited after {exited:.2f} s"
        )
        if os.environ.get(ENV_TIMINGS):
            with open(os.environ[ENV_TIMINGS], "a") as timings:
                times = {
                    "fixture": fixture,
                    "signal": signal.Signals(stop).name,
                    "ready_s": ready_after,
                    "surge_ready_s": surge_ready,
                    "exit_s": exited,
                }
                timings.write(json.dumps(times) + "\n")
    finally:
        for picker in pickers:
            picker.stop()
