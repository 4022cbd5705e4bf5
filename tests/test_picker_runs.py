"""The real endpoint picker runs what we render: two replicas, our ServiceAccount's token, Role and config.

Opt-in (`pytest -m picker_binary`), and left out of `.ci/run`: it needs the llm-d-router v0.9.0
`epp` binary, which no registry this project's CI reaches serves (the Go module proxy does not
carry llm-d-router). Build it from its source yourself and name it in MODELPLANE_EPP_BIN; the
gRPC health client needs `pip install grpcio grpcio-health-checking`. This is the one test CI
does not run; docs/proofs.md says what it showed.

For a Unified and a PrefillDecode fixture, against kube-apiserver with RBAC on and every CRD the
picker looks for: one leader answers SERVING on the readiness probe's service and is still up after
MODELPLANE_EPP_SECONDS (180); the standby is live (the liveness probe's service) and not Ready;
once the leader is stopped (gracefully, SIGTERM) or killed (SIGKILL), the standby is SERVING.

How long each step takes is not asserted (each wait has a hang guard of HANG_GUARD seconds): the
benchmark measures it against the handover window the README states (`benchmarks/run.py --picker`,
which runs this test with MODELPLANE_EPP_TIMINGS naming a file for the times).
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
# controller-runtime's leader election (LeaseDuration 15 s, RetryPeriod 2 s): a picker stopped
# with SIGTERM releases the lease (LeaderElectionReleaseOnCancel); a crashed one holds it 15 s.
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
    pickers = [
        Picker(epp, container, config, kubeconfig, namespace, f"{deployment['metadata']['name']}-{i}", tmp_path / f"epp-{i}.log")
        for i in range(deployment["spec"]["replicas"])
    ]
    try:

        def ready() -> list[Picker]:
            return [p for p in pickers if p.status(readiness) == "SERVING"]

        ready_after = _wait("a leader SERVING on readiness", lambda: len(ready()) == 1, HANG_GUARD)
        time.sleep(max(0.0, STAYS_UP - ready_after))
        (leader,) = ready()
        (standby,) = [p for p in pickers if p is not leader]
        assert [p.status(liveness) for p in pickers] == ["SERVING", "SERVING"], "both live: the kubelet restarts neither"
        assert standby.status(readiness) == "NOT_SERVING", "only the leader is Ready"
        forbidden = [line for p in pickers for line in p.log.read_text(errors="replace").splitlines() if "forbidden" in line]
        assert forbidden == [], forbidden[:3]
        leader.process.send_signal(stop)
        took = _wait("the standby SERVING after the leader stopped", lambda: standby.status(readiness) == "SERVING", HANG_GUARD)
        print(f"{fixture}: leader SERVING after {ready_after:.1f} s; {signal.Signals(stop).name} -> standby SERVING after {took:.1f} s")
        if os.environ.get(ENV_TIMINGS):
            with open(os.environ[ENV_TIMINGS], "a") as timings:
                times = {"fixture": fixture, "signal": signal.Signals(stop).name, "ready_s": ready_after, "handover_s": took}
                timings.write(json.dumps(times) + "\n")
    finally:
        for picker in pickers:
            picker.stop()
