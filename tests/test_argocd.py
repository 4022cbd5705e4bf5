"""The Argo CD plugin: its environment and parameters, discovery, and the whole plugin in the real argocd-cmp-server.

The unmarked tests cover `modelplane_render.frontends.argocd` and `argocd generate|discover` in-process. The
`real_peers` ones start the real argocd-cmp-server (argo-cd v3.2.11, built by tests/peers/build-argocd.sh)
with our argocd/plugin.yaml and drive it over its unix socket with modelplane-cmpclient, which sends the
app's files and environment exactly as Argo CD's repo-server does; and they build argocd/ with the real
kustomize against Argo CD's own install manifest.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from argocd_install import build_install, load_all, repo_server, upstream_install

from conftest import INVALID, ROOT, VALID, run_cli, run_process
from modelplane_render.constants import DRA_API, LWS_API, POOL_API, ROUTE_API
from modelplane_render.errors import UsageError
from modelplane_render.frontends import argocd
from modelplane_render.options import Options
from modelplane_render.pipeline import head_of, render_paths

ARGOCD_DIR = ROOT / "argocd"
PLUGIN_YAML = ARGOCD_DIR / "plugin.yaml"
SOCKET_NAME = f"{argocd.PLUGIN_FULL_NAME}.sock"

SINGLE = ROOT / "fixtures" / "valid" / "single-gpu-standalone"
APPLICATIONSET = ARGOCD_DIR / "applicationset.yaml"
# Fixtures whose replicas are pinned to eks-l4 (two), gke-l4 and eks-l40s.
MANY_CLUSTERS = ("several-replicas-in-one-file", "objects-passed-through", "single-gpu-standalone")
# What a cluster with LWS, DRA v1, GIE v1 and Gateway API serves, as Argo CD sends it (both forms).
ALL_APIS = ",".join(
    sorted(
        {"v1", "v1/ConfigMap", "v1/Service", "v1/ServiceAccount", "apps/v1", "apps/v1/Deployment", "policy/v1"}
        | {"policy/v1/PodDisruptionBudget", "rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1/Role"}
        | {"rbac.authorization.k8s.io/v1/RoleBinding", LWS_API, f"{LWS_API}/LeaderWorkerSet", DRA_API}
        | {f"{DRA_API}/ResourceClaim", f"{DRA_API}/ResourceClaimTemplate", f"{DRA_API}/DeviceClass", POOL_API}
        | {f"{POOL_API}/InferencePool", ROUTE_API, f"{ROUTE_API}/HTTPRoute", f"{ROUTE_API}/Gateway"}
    )
)
FILE_LINE_COL = re.compile(r"^[^\s:]+:\d+:\d+: \S+: ")


def parameters(**values: str) -> str:
    """ARGOCD_APP_PARAMETERS as Argo CD marshals an Application's string parameters."""
    return json.dumps([{"name": name.replace("_", "-"), "string": value} for name, value in values.items()])


def replica_without_namespace(directory: Path) -> Path:
    """An app directory whose replica sets no namespace (Argo CD's destination namespace fills it)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = (SINGLE / "replica.yaml").read_text()
    assert "  namespace: ml-team\n" in text
    (directory / "replica.yaml").write_text(text.replace("  namespace: ml-team\n", "", 1))
    return directory


def objects_of(yaml_text: str) -> list[dict[str, Any]]:
    return [o for o in yaml.safe_load_all(yaml_text) if o is not None]


# --- plugin.yaml: one truth with the code ------------------------------------------------------------


def test_plugin_yaml_announces_the_parameters_the_code_reads() -> None:
    plugin = yaml.safe_load(PLUGIN_YAML.read_text())
    assert plugin["apiVersion"] == "argoproj.io/v1alpha1"
    assert plugin["kind"] == "ConfigManagementPlugin"
    assert f"{plugin['metadata']['name']}-{plugin['spec']['version']}" == argocd.PLUGIN_FULL_NAME
    announced = plugin["spec"]["parameters"]["static"]
    assert [(p["name"], p["title"], p["tooltip"], p["string"]) for p in announced] == [
        (p.name, p.title, p.tooltip, p.announced) for p in argocd.PARAMETERS
    ]
    assert plugin["spec"]["generate"]["command"] == ["modelplane-render", "argocd", "generate"]
    assert "discover" not in plugin["spec"], "opt-in: an Application names the plugin"
    assert plugin["spec"]["preserveFileMode"] is True, "a kustomize app's exec function needs its mode bits"
    assert "init" not in plugin["spec"]


def test_example_application_names_the_plugin_and_only_announced_parameters() -> None:
    app = yaml.safe_load((ARGOCD_DIR / "application.yaml").read_text())
    plugin = app["spec"]["source"]["plugin"]
    assert plugin["name"] == argocd.PLUGIN_FULL_NAME
    env = {"ARGOCD_APP_PARAMETERS": json.dumps(plugin["parameters"]), "ARGOCD_APP_NAMESPACE": app["spec"]["destination"]["namespace"]}
    settings = argocd.settings_from_env(env)
    assert settings.options == Options(namespace="ml-team", gateway=("gateway-system", "inference"))


# --- the environment and parameters -----------------------------------------------------------------


def test_no_environment_gives_the_defaults() -> None:
    settings = argocd.settings_from_env({})
    assert settings == argocd.ArgoSettings(Options(None, None), check_cluster_apis=True, api_versions=None, source_path="")


@pytest.mark.parametrize("sent", ["", "null", "[]"])
def test_no_parameters_as_argo_cd_sends_them(sent: str) -> None:
    assert argocd.parse_parameters(sent) == {}


def test_the_destination_namespace_is_the_default_namespace() -> None:
    assert argocd.settings_from_env({"ARGOCD_APP_NAMESPACE": "ml-team"}).options.namespace == "ml-team"
    assert argocd.settings_from_env({"ARGOCD_APP_NAMESPACE": ""}).options.namespace is None


def test_a_parameter_beats_application_env_which_beats_the_destination_namespace() -> None:
    env = {"ARGOCD_APP_NAMESPACE": "from-destination"}
    assert argocd.settings_from_env(env).options.namespace == "from-destination"
    env["ARGOCD_ENV_MODELPLANE_NAMESPACE"] = "from-env"
    assert argocd.settings_from_env(env).options.namespace == "from-env"
    env["ARGOCD_APP_PARAMETERS"] = parameters(namespace="from-parameter")
    assert argocd.settings_from_env(env).options.namespace == "from-parameter"


def test_an_empty_parameter_falls_back_to_the_default() -> None:
    env = {"ARGOCD_APP_NAMESPACE": "ml-team", "ARGOCD_APP_PARAMETERS": parameters(namespace="", gateway="")}
    assert argocd.settings_from_env(env).options == Options("ml-team", None)


def test_gateway_and_the_api_check_from_parameters_and_env() -> None:
    env = {"ARGOCD_ENV_MODELPLANE_GATEWAY": "gw/from-env", "ARGOCD_ENV_MODELPLANE_CHECK_CLUSTER_APIS": "False"}
    settings = argocd.settings_from_env(env)
    assert settings.options.gateway == ("gw", "from-env")
    assert settings.check_cluster_apis is False
    env["ARGOCD_APP_PARAMETERS"] = parameters(gateway="gw/from-parameter", check_cluster_apis="true")
    settings = argocd.settings_from_env(env)
    assert settings.options.gateway == ("gw", "from-parameter")
    assert settings.check_cluster_apis is True


def test_a_parameter_given_without_a_value_is_unset() -> None:
    assert argocd.parse_parameters('[{"name": "gateway"}]') == {}


def test_other_application_env_is_not_ours() -> None:
    assert argocd.settings_from_env({"ARGOCD_ENV_FOO": "bar", "PARAM_GATEWAY": "ignored/too"}).options == Options(None, None)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"ARGOCD_APP_PARAMETERS": parameters(gatway="a/b")},
            "Application spec.source.plugin.parameters[0]: unknown parameter 'gatway': modelplane-render-v1 takes namespace, gateway, cluster, check-cluster-apis, allow-empty, picker-plaintext, node-pool-label, tolerations, picker-requests, hub-cache-size, autoscaled, service-account, priority-class, affinity, capabilities, kustomize-build-options",
        ),
        (
            {"ARGOCD_APP_PARAMETERS": '[{"name": "gateway", "array": ["a/b"]}]'},
            "Application spec.source.plugin.parameters[0]: parameter 'gateway' takes a string (`string: ...`), not an array",
        ),
        (
            {"ARGOCD_APP_PARAMETERS": '[{"name": "namespace", "map": {"a": "b"}}]'},
            "Application spec.source.plugin.parameters[0]: parameter 'namespace' takes a string (`string: ...`), not a map",
        ),
        (
            {"ARGOCD_APP_PARAMETERS": parameters(namespace="a")[:-1] + ', {"name": "namespace", "string": "b"}]'},
            "Application spec.source.plugin.parameters[1]: parameter 'namespace' is given twice",
        ),
        ({"ARGOCD_APP_PARAMETERS": "{"}, "ARGOCD_APP_PARAMETERS is not JSON"),
        ({"ARGOCD_APP_PARAMETERS": '{"name": "gateway"}'}, "ARGOCD_APP_PARAMETERS must be a JSON array"),
        ({"ARGOCD_APP_PARAMETERS": "[1]"}, "Application spec.source.plugin.parameters[0]: a parameter must have a name"),
        (
            {"ARGOCD_APP_PARAMETERS": parameters(gateway="no-slash")},
            "Application spec.source.plugin.parameters gateway 'no-slash' must be NAMESPACE/NAME of a Gateway",
        ),
        (
            {"ARGOCD_APP_PARAMETERS": parameters(namespace="ML")},
            "Application spec.source.plugin.parameters namespace 'ML' is not a namespace name",
        ),
        (
            {"ARGOCD_APP_PARAMETERS": parameters(check_cluster_apis="no")},
            'Application spec.source.plugin.parameters check-cluster-apis \'no\' must be "true" or "false"',
        ),
        (
            {"ARGOCD_ENV_MODELPLANE_GATWAY": "a/b"},
            "Application spec.source.plugin.env MODELPLANE_GATWAY is not known: modelplane-render-v1 reads "
            "MODELPLANE_NAMESPACE, MODELPLANE_GATEWAY, MODELPLANE_CLUSTER, MODELPLANE_CHECK_CLUSTER_APIS, MODELPLANE_ALLOW_EMPTY",
        ),
        ({"ARGOCD_APP_NAMESPACE": "Not_A_Namespace"}, "ARGOCD_APP_NAMESPACE (the Application's spec.destination.namespace)"),
    ],
)
def test_a_bad_parameter_or_env_names_the_application_field(env: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        argocd.settings_from_env(env)
    assert str(caught.value).startswith(message)


def test_the_source_path_is_kept_for_errors() -> None:
    assert argocd.settings_from_env({"ARGOCD_APP_SOURCE_PATH": "deploy/replicas/"}).source_path == "deploy/replicas"
    assert argocd.settings_from_env({"ARGOCD_APP_SOURCE_PATH": "."}).source_path == ""


# --- KUBE_API_VERSIONS --------------------------------------------------------------------------------


def test_api_versions_absent_or_empty_means_unknown() -> None:
    assert argocd.parse_api_versions(None) is None
    assert argocd.parse_api_versions("") is None
    assert argocd.parse_api_versions("v1, apps/v1") == frozenset({"v1", "apps/v1"})


def test_served_by_group_version_or_by_kind() -> None:
    only_versions = frozenset({"v1", LWS_API})
    assert argocd.is_served(only_versions, LWS_API, "LeaderWorkerSet")
    with_kinds = frozenset({LWS_API, f"{LWS_API}/LeaderWorkerSet", DRA_API, f"{DRA_API}/DeviceClass"})
    assert argocd.is_served(with_kinds, LWS_API, "LeaderWorkerSet")
    assert not argocd.is_served(with_kinds, DRA_API, "ResourceClaimTemplate")  # listed kinds, not this one
    assert not argocd.is_served(with_kinds, POOL_API, "InferencePool")
    assert not argocd.is_served(
        frozenset({"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta1/ResourceClaimTemplate"}), DRA_API, "ResourceClaimTemplate"
    )


def test_missing_apis_name_each_api_what_to_install_and_the_replica() -> None:
    objects = render_paths([str(SINGLE)], Options(gateway=("gw", "main")), keep_objects=False).heads
    served = frozenset(ALL_APIS.split(","))
    assert argocd.missing_apis(objects, served) == ([], [])
    missing, replicas = argocd.missing_apis(objects, frozenset({"v1", "apps/v1", "resource.k8s.io/v1beta1"}))
    assert missing == [
        "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (install LeaderWorkerSet (LWS) >= v0.7)",
        "resource.k8s.io/v1 ResourceClaimTemplate (DRA v1 is served from Kubernetes 1.34: upgrade the cluster to >= 1.34)",
        "inference.networking.k8s.io/v1 InferencePool (install the Gateway API Inference Extension v1 CRDs)",
        "gateway.networking.k8s.io/v1 HTTPRoute (install the Gateway API v1 CRDs)",
    ]
    assert replicas == ["qwen3-8b-eks-l4-0"]


def test_objects_passed_through_are_not_checked() -> None:
    passthrough = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "x"}}
    assert argocd.missing_apis([head_of(passthrough)], frozenset({"v1"})) == ([], [])


# --- `argocd generate` in-process ---------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No Argo CD variables from the environment the tests run in."""
    for key in list(os.environ):
        if key.startswith(("ARGOCD_", "KUBE_", "PARAM_")):
            monkeypatch.delenv(key)
    return monkeypatch


# A fixture directory that is a kustomization is a kustomize app to Argo CD: kustomize builds it.
NOT_KUSTOMIZATIONS = [p for p in VALID if not (p / "kustomization.yaml").exists()]


@pytest.mark.parametrize("fixture", NOT_KUSTOMIZATIONS, ids=lambda p: p.name)
def test_generate_prints_what_render_prints(fixture: Path, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("KUBE_API_VERSIONS", ALL_APIS)
    clean_env.setenv("ARGOCD_APP_NAMESPACE", "elsewhere")  # the fixtures set their namespaces
    generated = run_cli("argocd", "generate", cwd=fixture)
    rendered = run_cli("render", cwd=fixture)
    assert (generated.code, generated.stderr) == (0, "")
    assert generated.stdout == rendered.stdout


def test_generate_takes_the_destination_namespace(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    app = replica_without_namespace(tmp_path / "app")
    clean_env.setenv("ARGOCD_APP_NAMESPACE", "team-a")
    result = run_cli("argocd", "generate", cwd=app)
    assert result.code == 0, result.stderr
    assert {o["metadata"]["namespace"] for o in objects_of(result.stdout)} == {"team-a"}


@pytest.mark.parametrize(
    "fixture", [f for f in INVALID if f.name in ("several-faults", "syntax-error", "missing-namespace")], ids=lambda p: p.name
)
def test_generate_errors_first_line_is_file_line_field(fixture: Path, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("ARGOCD_APP_SOURCE_PATH", "deploy/replicas")
    result = run_cli("argocd", "generate", cwd=fixture)
    assert result.code == 1
    assert result.stdout == ""
    expected = (fixture / "expected.stderr").read_text().splitlines()
    assert result.stderr.splitlines() == [f"deploy/replicas/{line}" for line in expected]
    assert FILE_LINE_COL.match(result.stderr.splitlines()[0])


def test_generate_refuses_an_empty_set(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> None:
    (tmp_path / "README.md").write_text("no manifests here\n")
    result = run_cli("argocd", "generate", cwd=tmp_path)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr.startswith("modelplane-render: nothing to render: the sources hold no ModelReplica. Argo CD (with pruning)")
    assert "the plugin parameter allow-empty" in result.stderr
    clean_env.setenv("ARGOCD_APP_PARAMETERS", '[{"name": "allow-empty", "string": "true"}]')
    allowed = run_cli("argocd", "generate", cwd=tmp_path)
    assert (allowed.code, allowed.stdout, allowed.stderr) == (0, "", "")


def test_generate_fails_when_the_cluster_lacks_dra_v1(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("KUBE_API_VERSIONS", ",".join(e for e in ALL_APIS.split(",") if not e.startswith(DRA_API)))
    result = run_cli("argocd", "generate", cwd=SINGLE)
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "modelplane-render: the destination cluster does not serve resource.k8s.io/v1 ResourceClaimTemplate (DRA v1 is served "
        "from Kubernetes 1.34: upgrade the cluster to >= 1.34) (needed by replica qwen3-8b-eks-l4-0). Nothing was generated, "
        'so nothing is applied or pruned; if this Application\'s sync installs these APIs itself, set the plugin parameter check-cluster-apis to "false"'
    ]
    clean_env.setenv("ARGOCD_APP_PARAMETERS", parameters(check_cluster_apis="false"))
    assert run_cli("argocd", "generate", cwd=SINGLE).code == 0


def test_generate_bad_parameter_is_a_usage_error(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("ARGOCD_APP_PARAMETERS", parameters(gatway="a/b"))
    result = run_cli("argocd", "generate", cwd=SINGLE)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith("modelplane-render: Application spec.source.plugin.parameters[0]: unknown parameter 'gatway'")


def test_generate_is_one_call_of_the_pipeline(monkeypatch: pytest.MonkeyPatch, clean_env: pytest.MonkeyPatch) -> None:
    """A render cache wraps render_for_argocd; generate reaches the pipeline through it, once."""
    import modelplane_render.pipeline

    outer: list[tuple[str, argocd.ArgoSettings]] = []
    inner: list[tuple[list[str], Options]] = []
    real_outer, real_inner = argocd.render_for_argocd, modelplane_render.pipeline.render_paths

    def spy_outer(source_dir: str, settings: argocd.ArgoSettings) -> str:
        outer.append((source_dir, settings))
        return real_outer(source_dir, settings)

    def spy_inner(paths: list[str], options: Options, **kwargs: Any) -> Any:
        inner.append((paths, options))
        return real_inner(paths, options, **kwargs)

    monkeypatch.setattr(argocd, "render_for_argocd", spy_outer)
    monkeypatch.setattr(argocd, "render_paths", spy_inner)
    clean_env.setenv("ARGOCD_APP_NAMESPACE", "ns")
    clean_env.setenv("KUBE_API_VERSIONS", ALL_APIS)
    text = argocd.generate(os.environ, str(SINGLE))
    assert outer == [(str(SINGLE), argocd.settings_from_env(os.environ))]
    assert inner == [([str(SINGLE)], Options(namespace="ns"))]
    assert text == real_inner([str(SINGLE)], Options(namespace="ns")).text


# --- discovery ------------------------------------------------------------------------------------------


def test_discover_matches_a_directory_with_a_replica() -> None:
    result = run_cli("argocd", "discover", cwd=SINGLE)
    assert (result.code, result.stdout, result.stderr) == (0, "replica.yaml\n", "")


@pytest.mark.parametrize(
    ("files", "found"),
    [
        ({"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}, None),
        # The CRD names the kind, indented: not a replica.
        ({"crd.yaml": (ROOT / "modelplane_render" / "crds" / "modelreplicas.modelplane.ai.yaml").read_text()}, None),
        ({"notes.md": "kind: ModelReplica\n", "kustomization.yaml": "kind: ModelReplica\n", ".hidden.yaml": "kind: ModelReplica\n"}, None),
        ({"r.yml": "# replicas\nkind: 'ModelReplica'  # quoted\n"}, "r.yml"),
        ({"r.yaml": "apiVersion: modelplane.ai/v1alpha1\r\nkind: ModelReplica\r\n"}, "r.yaml"),
        ({"r.yaml": '{"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelReplica"}\n'}, "r.yaml"),
        # A syntax error still matches, so generate reports it with its line.
        ({"sub/r.yaml": "kind: ModelReplica\nmetadata: [unclosed\n"}, "sub/r.yaml"),
    ],
)
def test_discover_reads_the_text_of_yaml_files(tmp_path: Path, files: dict[str, str], found: str | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert argocd.discover(str(tmp_path)) == (str(tmp_path / found) if found else None)


def test_discover_reads_only_the_app_directory(tmp_path: Path) -> None:
    (tmp_path / "outside.yaml").write_text("kind: ModelReplica\n")
    app = tmp_path / "app"
    app.mkdir()
    (app / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    (app / "dir").symlink_to(tmp_path)
    result = run_cli("argocd", "discover", cwd=app)
    assert (result.code, result.stdout) == (0, "")


def thousand_files(directory: Path, replica_last: bool) -> Path:
    """1000 YAML files in 20 directories, as a big app directory or a monorepo's app holds them."""
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n" + "".join(
        f"  key{k}: value {k}\n" for k in range(40)
    )
    for i in range(1000 - replica_last):
        sub = directory / f"group-{i % 20:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"cm-{i:04d}.yaml").write_text(config_map.format(i=i))
    if replica_last:
        shutil.copy(SINGLE / "replica.yaml", directory / "group-19" / "zz-replica.yaml")
    return directory


@pytest.mark.parametrize("replica_last", [False, True], ids=["no-match", "match-last"])
def test_discover_finds_the_replica_among_a_thousand_files(tmp_path: Path, replica_last: bool) -> None:
    """Run as the cmp-server runs it, a new process in the app directory; all 1000 files are read when none matches.

    Slow discovery is a known Argo CD failure (it runs for every Application that names no plugin), so its
    time is measured, by the benchmark (`discover/1000-files` in benchmarks/run.py), not asserted here.
    """
    app = thousand_files(tmp_path / "app", replica_last)
    assert len(list(app.rglob("*.yaml"))) == 1000
    result = run_process("argocd", "discover", cwd=app)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (b"group-19/zz-replica.yaml\n" if replica_last else b"")


# --- the real argocd-cmp-server -------------------------------------------------------------------------


@dataclass
class CmpServer:
    socket: Path
    client: Path
    repo: Path  # the repository the client streams (a small copy: the repo-server tars it for every call)

    def call(self, verb: str, app_path: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        args = [str(self.client), "-socket", str(self.socket), "-repo", str(self.repo), "-app-path", app_path, "-timeout", "90s"]
        for name, value in (env or {}).items():
            args += ["-env", f"{name}={value}"]
        return subprocess.run([*args, verb], capture_output=True, text=True, timeout=120)

    def match(self, app_path: str) -> dict[str, bool]:
        result = self.call("match", app_path, repo_server_env(app_path))
        assert result.returncode == 0, result.stderr
        return dict(json.loads(result.stdout))

    def generate(self, app_path: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return self.call("generate", app_path, repo_server_env(app_path, **kwargs))


def repo_server_env(
    app_path: str,
    *,
    namespace: str = "ml-team",
    api_versions: str = ALL_APIS,
    plugin_parameters: list[dict[str, Any]] | None = None,
    plugin_env: dict[str, str] | None = None,
    named_plugin: bool = True,
) -> dict[str, str]:
    """The environment Argo CD v3.2.11's repo-server sends a plugin (reposerver/repository/repository.go).

    newEnv: ARGOCD_APP_*; getPluginEnvs: KUBE_VERSION and KUBE_API_VERSIONS; getPluginParamEnvs, only when
    the Application has a plugin block: ARGOCD_ENV_<name> per plugin env entry, then
    ApplicationSourcePluginParameters.Environ(): ARGOCD_APP_PARAMETERS (`null` without parameters) and PARAM_<NAME>.
    """
    revision = "8f3c2a1d9e7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a"
    env = {
        "ARGOCD_APP_NAME": "ml-team-replicas",
        "ARGOCD_APP_NAMESPACE": namespace,
        "ARGOCD_APP_PROJECT_NAME": "default",
        "ARGOCD_APP_REVISION": revision,
        "ARGOCD_APP_REVISION_SHORT": revision[:7],
        "ARGOCD_APP_REVISION_SHORT_8": revision[:8],
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/platform/serving.git",
        "ARGOCD_APP_SOURCE_PATH": app_path,
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.34.2",
        "KUBE_API_VERSIONS": api_versions,
    }
    if named_plugin:
        for name, value in (plugin_env or {}).items():
            env[f"ARGOCD_ENV_{name}"] = value
        env["ARGOCD_APP_PARAMETERS"] = json.dumps(plugin_parameters) if plugin_parameters is not None else "null"
        for parameter in plugin_parameters or []:
            if "string" in parameter:
                env["PARAM_" + re.sub("[^A-Z0-9_]", "_", parameter["name"].upper())] = parameter["string"]
    return env


def _die_with_parent() -> None:
    import ctypes

    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: no orphaned server


@pytest.fixture(scope="module")
def cmp_server() -> Iterator[CmpServer]:
    from peer import require_peer

    server_bin = require_peer("argocd-cmp-server")
    client = require_peer("modelplane-cmpclient")
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "modelplane-render").is_file(), f"no modelplane-render console script beside {sys.executable}: pip install -e ."
    base = Path(tempfile.mkdtemp(prefix="mpr-cmp-"))  # short: a unix socket path has at most 107 bytes
    try:
        config, sockets, work, repo = (base / d for d in ("config", "plugins", "work", "repo"))
        for d in (config, sockets, work, repo):
            d.mkdir()
        shutil.copy(PLUGIN_YAML, config / "plugin.yaml")
        build_repository(repo)
        env = {
            # The sidecar image's PATH: our console script first (the plugin's commands name it bare).
            # and kustomize, which the image carries for apps that are kustomizations.
            "PATH": f"{venv_bin}{os.pathsep}{Path(require_peer('kustomize')).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(base),
            "ARGOCD_PLUGINSOCKFILEPATH": str(sockets),
            "ARGOCD_CMP_WORKDIR": str(work),
        }
        log = open(base / "cmp-server.log", "wb")
        proc = subprocess.Popen(
            [str(server_bin), "--config-dir-path", str(config)], env=env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
        )
        try:
            socket = sockets / SOCKET_NAME
            deadline = time.monotonic() + 60  # a hang guard, not a speed expectation
            while not socket.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        f"argocd-cmp-server did not open {socket}:\n{(base / 'cmp-server.log').read_text(errors='replace')[-3000:]}"
                    )
                time.sleep(0.05)
            yield CmpServer(socket, client, repo)
        finally:
            proc.kill()  # it ignores SIGTERM
            proc.wait()
            log.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def build_repository(repo: Path) -> None:
    """A repository as a platform team keeps it: one app directory per case, and one that isn't ours."""
    for fixture in VALID:
        shutil.copytree(fixture, repo / "valid" / fixture.name)
    for fixture in INVALID:
        shutil.copytree(fixture, repo / "invalid" / fixture.name)
    replica_without_namespace(repo / "no-namespace")
    # deploy/replicas: every cluster's replicas in one directory, as argocd/applicationset.yaml points at it.
    for case in MANY_CLUSTERS:
        shutil.copytree(ROOT / "fixtures" / "valid" / case, repo / "deploy" / "replicas" / case)
    plain = repo / "plain-manifests"
    plain.mkdir()
    (plain / "configmap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n")
    (plain / "kustomization.yaml").write_text("resources: [configmap.yaml]\n")
    # The kustomize example, and an overlay of it whose patch breaks the replica.
    shutil.copytree(ROOT / "kustomize", repo / "kustomize")
    broken = repo / "kustomize" / "overlays" / "broken"
    broken.mkdir()
    (broken / "kustomization.yaml").write_text(
        "resources: [../../base]\npatches:\n- target: {kind: ModelReplica}\n  patch: |-\n"
        "    - {op: replace, path: /spec/engines/0/members/0/nodePoolName, value: 'gpu:l4'}\n"
        "transformers: [../../base/render]\n"
    )
    # An overlay whose patch is shared by several overlays, kept outside it: kustomize's default load restrictor
    # refuses it, `kustomize-build-options: --load-restrictor LoadRestrictionsNone` lets it.
    shared = repo / "kustomize" / "shared-patches"
    shared.mkdir()
    (shared / "pool.yaml").write_text("- {op: replace, path: /spec/engines/0/members/0/nodePoolName, value: gpu-l4-spot}\n")
    outside = repo / "kustomize" / "overlays" / "spot"
    outside.mkdir()
    (outside / "kustomization.yaml").write_text(
        "resources: [../../base]\npatches:\n- target: {kind: ModelReplica}\n  path: ../../shared-patches/pool.yaml\n"
        "transformers: [../../base/render]\n"
    )
    # Another tool's apps whose files hold a ModelReplica: a kustomize base with a patch, and a chart.
    kustomize_app = repo / "kustomize-app"
    shutil.copytree(SINGLE, kustomize_app)
    (kustomize_app / "kustomization.yaml").write_text("namespace: ml-prod\nresources: [replica.yaml]\n")
    chart = repo / "helm-chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serving\nversion: 0.1.0\n")
    (chart / "templates" / "replica.yaml").write_text((SINGLE / "replica.yaml").read_text())


def manifests(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert result.returncode == 0, result.stderr
    return [json.loads(m) for m in json.loads(result.stdout)]


@pytest.mark.real_peers
@pytest.mark.parametrize(
    "app,app_type",
    [
        ("valid/single-gpu-standalone", "Directory"),
        ("kustomize-app", "Kustomize"),
        ("helm-chart", "Helm"),
        ("plain-manifests", "Kustomize"),
    ],
)
def test_real_repo_server_never_hands_us_an_app_that_does_not_name_the_plugin(cmp_server: CmpServer, app: str, app_type: str) -> None:
    """Argo CD's own discovery.AppType, asking the real plugin server first: a kustomize app or a chart whose
    files mention a ModelReplica stays kustomize's or Helm's, and a replica directory is a plain directory."""
    assert cmp_server.match(app) == {"isSupported": False, "isDiscoveryEnabled": False}
    result = cmp_server.call("apptype", app, repo_server_env(app, named_plugin=False))
    assert (result.returncode, json.loads(result.stdout or "{}")) == (0, {"appType": app_type}), result.stderr


@pytest.mark.real_peers
@pytest.mark.parametrize("app", ["valid/single-gpu-standalone", "invalid/syntax-error", "kustomize-app"])
def test_real_repo_server_hands_an_app_that_names_the_plugin_to_it(cmp_server: CmpServer, app: str) -> None:
    result = cmp_server.call("named", app, repo_server_env(app))
    assert (result.returncode, json.loads(result.stdout or "{}")) == (0, {"uses": True}), result.stderr


@pytest.mark.real_peers
@pytest.mark.parametrize("fixture", NOT_KUSTOMIZATIONS, ids=lambda p: p.name)
def test_real_generate_returns_what_render_prints(cmp_server: CmpServer, fixture: Path) -> None:
    rendered = run_cli("render", cwd=fixture)
    assert rendered.code == 0
    assert manifests(cmp_server.generate(f"valid/{fixture.name}")) == objects_of(rendered.stdout)


@pytest.mark.real_peers
@pytest.mark.parametrize(
    "fixture", [f for f in INVALID if f.name in ("several-faults", "syntax-error", "duplicate-replica")], ids=lambda p: p.name
)
def test_real_generate_of_an_invalid_app_is_our_error_and_no_manifests(cmp_server: CmpServer, fixture: Path) -> None:
    app_path = f"invalid/{fixture.name}"
    result = cmp_server.generate(app_path)
    assert (result.returncode, result.stdout) == (1, "")
    prefix = "rpc error: code = Unknown desc = error generating manifests: `modelplane-render argocd generate` failed exit status 1: "
    expected = [f"{app_path}/{line}" for line in (fixture / "expected.stderr").read_text().splitlines()]
    # What the Argo CD UI shows: the command, then our first error (file:line:col: field: message) on the same line.
    assert result.stderr.strip().splitlines() == [prefix + expected[0], *expected[1:]]


@pytest.mark.real_peers
def test_real_destination_namespace_and_namespace_parameter(cmp_server: CmpServer) -> None:
    from_destination = manifests(cmp_server.generate("no-namespace", namespace="team-a"))
    assert {o["metadata"]["namespace"] for o in from_destination} == {"team-a"}
    with_parameter = manifests(
        cmp_server.generate("no-namespace", namespace="team-a", plugin_parameters=[{"name": "namespace", "string": "team-b"}])
    )
    assert {o["metadata"]["namespace"] for o in with_parameter} == {"team-b"}
    without = cmp_server.generate("no-namespace", namespace="")
    assert without.returncode == 1
    assert re.search(r"failed exit status 1: no-namespace/replica\.yaml:\d+:\d+: metadata: ", without.stderr)


@pytest.mark.real_peers
def test_real_gateway_from_application_env_and_parameter(cmp_server: CmpServer) -> None:
    plain = manifests(cmp_server.generate("valid/single-gpu-standalone"))
    assert "HTTPRoute" not in [o["kind"] for o in plain]
    from_env = manifests(cmp_server.generate("valid/single-gpu-standalone", plugin_env={"MODELPLANE_GATEWAY": "gateway-system/from-env"}))
    routes = [o for o in from_env if o["kind"] == "HTTPRoute"]
    assert [r["spec"]["parentRefs"][0]["name"] for r in routes] == ["from-env"]
    assert from_env == objects_of(run_cli("render", "--gateway", "gateway-system/from-env", cwd=SINGLE).stdout)
    both = manifests(
        cmp_server.generate(
            "valid/single-gpu-standalone",
            plugin_env={"MODELPLANE_GATEWAY": "gateway-system/from-env"},
            plugin_parameters=[{"name": "gateway", "string": "gateway-system/from-parameter"}],
        )
    )
    assert [o["spec"]["parentRefs"][0]["name"] for o in both if o["kind"] == "HTTPRoute"] == ["from-parameter"]


@pytest.mark.real_peers
def test_real_unknown_parameter_fails_with_no_manifests(cmp_server: CmpServer) -> None:
    result = cmp_server.generate("valid/single-gpu-standalone", plugin_parameters=[{"name": "gatway", "string": "a/b"}])
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.strip().endswith(
        "failed exit status 2: modelplane-render: Application spec.source.plugin.parameters[0]: unknown parameter 'gatway': "
        "modelplane-render-v1 takes namespace, gateway, cluster, check-cluster-apis, allow-empty, picker-plaintext, node-pool-label, tolerations, "
        "picker-requests, hub-cache-size, autoscaled, service-account, priority-class, affinity, capabilities, kustomize-build-options"
    )


@pytest.mark.real_peers
def test_real_cluster_without_dra_v1_fails_with_what_to_install(cmp_server: CmpServer) -> None:
    without_dra = ",".join(e for e in ALL_APIS.split(",") if not e.startswith(DRA_API)) + ",resource.k8s.io/v1beta1"
    result = cmp_server.generate("valid/single-gpu-standalone", api_versions=without_dra)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.strip().endswith(
        "failed exit status 1: modelplane-render: the destination cluster does not serve resource.k8s.io/v1 ResourceClaimTemplate "
        "(DRA v1 is served from Kubernetes 1.34: upgrade the cluster to >= 1.34) (needed by replica qwen3-8b-eks-l4-0). "
        "Nothing was generated, so nothing is applied or pruned; if this Application's sync installs these APIs itself, "
        'set the plugin parameter check-cluster-apis to "false"'
    )
    switched_off = cmp_server.generate(
        "valid/single-gpu-standalone", api_versions=without_dra, plugin_parameters=[{"name": "check-cluster-apis", "string": "false"}]
    )
    assert manifests(switched_off) == objects_of(run_cli("render", cwd=SINGLE).stdout)


@pytest.mark.real_peers
def test_real_named_app_without_parameters_gets_the_defaults(cmp_server: CmpServer) -> None:
    """`plugin: {name: modelplane-render-v1}` and nothing else: ARGOCD_APP_PARAMETERS is null; the API check is on."""
    result = cmp_server.call("generate", "no-namespace", repo_server_env("no-namespace", namespace="team-c"))
    assert {o["metadata"]["namespace"] for o in manifests(result)} == {"team-c"}
    result = cmp_server.call("generate", "no-namespace", repo_server_env("no-namespace", api_versions="v1,apps/v1"))
    assert result.returncode == 1
    assert "does not serve leaderworkerset.x-k8s.io/v1 LeaderWorkerSet" in result.stderr


# --- the repo-server sidecar, built with the real kustomize ----------------------------------------------


@pytest.fixture(scope="module")
def built_argocd(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return build_install(tmp_path_factory.mktemp("argocd-kustomize"))


@pytest.mark.real_peers
def test_kustomize_adds_the_sidecar_to_the_repo_server(built_argocd: list[dict[str, Any]]) -> None:
    pod = repo_server(built_argocd)
    [sidecar] = [c for c in pod["containers"] if c["name"] == "modelplane-render"]
    [config_map] = [o for o in built_argocd if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith("modelplane-render-plugin-")]
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    assert sidecar["securityContext"]["runAsNonRoot"] is True
    assert sidecar["securityContext"]["runAsUser"] == 999
    assert sidecar["image"] == "registry.example.com/platform/modelplane-render-argocd-cmp:0.1.0"
    assert sidecar["env"] == [{"name": "MODELPLANE_RENDER_CACHE_DIR", "value": "/tmp/modelplane-render-cache"}]
    # Memory bounded well above the loop's measured 549 MiB peak; CPU requested but never throttled.
    assert sidecar["resources"] == {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}
    assert sidecar["volumeMounts"] == [
        {"name": "var-files", "mountPath": "/var/run/argocd"},
        {"name": "plugins", "mountPath": "/home/argocd/cmp-server/plugins"},
        {"name": "modelplane-render-plugin", "mountPath": "/home/argocd/cmp-server/config/plugin.yaml", "subPath": "plugin.yaml"},
        {"name": "modelplane-render-tmp", "mountPath": "/tmp"},
    ]
    assert pod["automountServiceAccountToken"] is False  # a repository's exec function finds no token to use
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["modelplane-render-plugin"]["configMap"] == {"name": config_map["metadata"]["name"]}
    assert volumes["modelplane-render-tmp"] == {"name": "modelplane-render-tmp", "emptyDir": {}}
    assert volumes["var-files"]["emptyDir"] == {} and volumes["plugins"]["emptyDir"] == {}
    # The sidecar's /tmp is its own, never the repo-server's.
    [main] = [c for c in pod["containers"] if c["name"] == "argocd-repo-server"]
    assert {m["mountPath"]: m["name"] for m in main["volumeMounts"]}["/tmp"] == "tmp"
    # `kubectl logs` names the container that exists in the built pod, the repo-server.
    [deployment] = [o for o in built_argocd if o["kind"] == "Deployment" and o["metadata"]["name"] == "argocd-repo-server"]
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["kubectl.kubernetes.io/default-container"] == main["name"]
    # Argo CD's init container puts the server binary where the sidecar's command looks for it.
    [copyutil] = [c for c in pod["initContainers"] if c["name"] == "copyutil"]
    assert copyutil["command"][-1] == "/var/run/argocd/argocd-cmp-server"
    assert config_map["metadata"]["namespace"] == "argocd"
    assert config_map["data"] == {"plugin.yaml": PLUGIN_YAML.read_text()}


@pytest.mark.real_peers
def test_kustomize_changes_nothing_else(built_argocd: list[dict[str, Any]]) -> None:
    install = load_all(upstream_install().read_text())
    built = {(o["kind"], o["metadata"]["name"]): o for o in built_argocd}
    assert len(built_argocd) == len(install) + 1  # the plugin's ConfigMap
    for obj in install:
        if (obj["kind"], obj["metadata"]["name"]) == ("Deployment", "argocd-repo-server"):
            continue
        got = copy.deepcopy(built[(obj["kind"], obj["metadata"]["name"])])
        if (obj["kind"], obj["metadata"]["name"]) == ("ConfigMap", "argocd-cm"):
            # Our health checks merged in, nothing of Argo CD's own settings changed.
            added = {k for k in got["data"] if k not in (obj.get("data") or {})}
            assert added == {
                "resource.customizations.health.leaderworkerset.x-k8s.io_LeaderWorkerSet",
                "resource.customizations.health.inference.networking.k8s.io_InferencePool",
            }
            for key in added:
                del got["data"][key]
        # kustomize's `namespace: argocd` (upstream's own kustomize install does the same): the
        # namespaced objects get it, and so do the ServiceAccounts that bindings name.
        assert got["metadata"].pop("namespace", "argocd") == "argocd"
        for subject in got.get("subjects", []):
            assert subject.pop("namespace", "argocd") == "argocd"
        for subject in obj.get("subjects", []):
            subject.pop("namespace", None)
        assert got == obj
    pod = repo_server(built_argocd)
    [upstream] = [o for o in install if o["kind"] == "Deployment" and o["metadata"]["name"] == "argocd-repo-server"]
    upstream_pod = upstream["spec"]["template"]["spec"]
    assert [c for c in pod["containers"] if c["name"] != "modelplane-render"] == upstream_pod["containers"]
    assert [v for v in pod["volumes"] if not v["name"].startswith("modelplane-render-")] == upstream_pod["volumes"]


# --- many clusters: the ApplicationSet, its controller's Applications, the plugin -------------------------------


def cluster_secret(name: str, server: str, inference_cluster: str | None) -> dict[str, Any]:
    """A cluster secret as `argocd cluster add` stores it (util/db/cluster.go: name, server, config)."""
    import base64

    labels = {"argocd.argoproj.io/secret-type": "cluster"}
    if inference_cluster is not None:
        labels["modelplane.ai/inference-cluster"] = inference_cluster
    data = {"name": name, "server": server, "config": json.dumps({"bearerToken": "t", "tlsClientConfig": {"insecure": False}})}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": f"cluster-{name}", "namespace": "argocd", "labels": labels},
        "type": "Opaque",
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def replica_labels(objects: list[dict[str, Any]]) -> set[str]:
    from modelplane_render.constants import LABEL_REPLICA

    return {o["metadata"]["labels"][LABEL_REPLICA] for o in objects if LABEL_REPLICA in (o["metadata"].get("labels") or {})}


@pytest.mark.real_peers
def test_real_applicationset_makes_an_app_per_labelled_cluster_that_renders_exactly_its_replicas(cmp_server: CmpServer) -> None:
    """The ApplicationSet through the real API server (Argo CD's own CRDs), its Applications made by Argo CD's
    ApplicationSet controller code with the real cluster generator over real cluster secrets, and each of those
    Applications generated by the real argocd-cmp-server."""
    from peer import real_apiserver

    install = load_all(upstream_install().read_text())
    crds = [
        o
        for o in install
        if o["kind"] == "CustomResourceDefinition" and o["metadata"]["name"].startswith(("applicationsets.", "applications."))
    ]
    assert len(crds) == 2
    appset = yaml.safe_load(APPLICATIONSET.read_text())
    with real_apiserver() as api:
        for crd in crds:
            api.apply_crd(crd)
        api.create_namespace("argocd")
        status, body, warnings = api.dry_run_create(appset)
        assert (status, warnings) == (201, []), body
        secrets = [
            cluster_secret("gke-prod-us-central1", "https://gke.example.com", "gke-l4"),
            cluster_secret("eks-prod", "https://eks.example.com", "eks-l4"),
            cluster_secret("build-farm", "https://ci.example.com", None),  # not a serving cluster: no Application
        ]
        for secret in secrets:
            status, body, _ = api.request("POST", "/api/v1/namespaces/argocd/secrets", secret)
            assert status == 201, body
        made = subprocess.run(
            [
                str(cmp_server.client),
                "appset",
                "-server",
                api.url,
                "-token",
                api.token,
                "-namespace",
                "argocd",
                "-file",
                str(APPLICATIONSET),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert made.returncode == 0, made.stderr
        apps = {a["metadata"]["name"]: a for a in json.loads(made.stdout)}
        assert set(apps) == {"replicas-gke-prod-us-central1", "replicas-eks-prod"}
        for app in apps.values():
            app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", **app}
            app["metadata"] = {
                k: v for k, v in app["metadata"].items() if k in ("name", "namespace", "labels", "annotations", "finalizers")
            }
            app.pop("status", None)
            # The controller adds Argo CD's own finalizer, whose name kube-apiserver warns about: Argo CD's, not ours.
            assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]
            status, body, warnings = api.dry_run_create(app)
            assert status == 201, body
            assert [w for w in warnings if not w.startswith('metadata.finalizers: "resources-finalizer.argocd.argoproj.io"')] == []

    repo_replicas: dict[str, set[str]] = {}
    for case in MANY_CLUSTERS:
        for path in sorted((ROOT / "fixtures" / "valid" / case).glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if isinstance(doc, dict) and doc.get("kind") == "ModelReplica":
                    repo_replicas.setdefault(doc["spec"]["clusterName"], set()).add(doc["metadata"]["name"])
    for name, cluster in (("replicas-gke-prod-us-central1", "gke-l4"), ("replicas-eks-prod", "eks-l4")):
        source, destination = apps[name]["spec"]["source"], apps[name]["spec"]["destination"]
        assert source["plugin"]["parameters"] == [{"name": "cluster", "string": cluster}]
        result = cmp_server.generate(source["path"], namespace=destination["namespace"], plugin_parameters=source["plugin"]["parameters"])
        got = manifests(result)
        assert replica_labels(got) == repo_replicas[cluster]
        local = run_cli("render", "--cluster", cluster, "-n", destination["namespace"], str(cmp_server.repo / source["path"]))
        assert got == objects_of(local.stdout)


@pytest.mark.real_peers
def test_real_cluster_with_no_replica_fails_unless_allowed(cmp_server: CmpServer) -> None:
    refused = cmp_server.generate("deploy/replicas", plugin_parameters=[{"name": "cluster", "string": "aks-a100"}])
    assert (refused.returncode, refused.stdout) == (1, "")
    assert "failed exit status 1: modelplane-render: nothing to render for cluster aks-a100: none of the 4 ModelReplicas" in refused.stderr
    assert "the plugin parameter allow-empty" in refused.stderr
    allowed = manifests(
        cmp_server.generate(
            "deploy/replicas", plugin_parameters=[{"name": "cluster", "string": "aks-a100"}, {"name": "allow-empty", "string": "true"}]
        )
    )
    assert replica_labels(allowed) == set() and allowed  # only the objects passed through
    from_env = cmp_server.generate("deploy/replicas", plugin_env={"MODELPLANE_CLUSTER": "eks-l40s"})
    assert replica_labels(manifests(from_env)) == {"mistral-small-eks-l40s-0"}


@pytest.mark.parametrize("root_file", argocd.OTHER_TOOLS_ROOTS)
def test_discover_declines_a_kustomize_or_helm_root_for_whoever_turns_discovery_on(tmp_path: Path, root_file: str) -> None:
    shutil.copy(SINGLE / "replica.yaml", tmp_path / "replica.yaml")
    assert argocd.discover(str(tmp_path)) == str(tmp_path / "replica.yaml")
    (tmp_path / root_file).write_text("resources: [replica.yaml]\n")
    assert argocd.discover(str(tmp_path)) is None


def test_the_sidecar_images_dependencies_are_pinned_within_pyprojects_ranges() -> None:
    """A reproducible image: every runtime dependency (and Jinja2's MarkupSafe) pinned, each pin allowed by pyproject."""
    import re

    pins = {}
    for line in (ARGOCD_DIR / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower()] = tuple(int(x) for x in version.split("."))
    ranges = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for requirement in ranges:
        name = re.split(r"[<>=!~ ]", requirement, maxsplit=1)[0].lower()
        assert name in pins, f"{name} is not pinned in argocd/constraints.txt"
        for op, bound in re.findall(r"(>=|<)([0-9.]+)", requirement):
            limit = tuple(int(x) for x in bound.split("."))
            assert (pins[name] >= limit) if op == ">=" else (pins[name] < limit), (requirement, pins[name])
    assert "markupsafe" in pins


def test_kubectl_still_means_the_repo_server_by_default() -> None:
    patch = yaml.safe_load((ARGOCD_DIR / "repo-server-sidecar.yaml").read_text())
    assert patch["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/default-container"] == "argocd-repo-server"


# --- health checks, judged by the real argocd binary ------------------------------------------------------

# Status objects in each state their controllers write. LeaderWorkerSet: kubernetes-sigs/lws v0.10.0
# pkg/controllers/leaderworkerset_controller.go (updateConditions, makeCondition). InferencePool:
# gateway-api-inference-extension v1.6.0 api/v1/inferencepool_types.go (condition types and reasons).
_T = "2026-12-03T00:00:00Z"


def _lws(status: dict[str, Any] | None, generation: int = 2) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": LWS_API,
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "x", "namespace": "ml-team", "generation": generation},
    }
    obj["spec"] = {"replicas": 2}
    if status is not None:
        obj["status"] = status
    return obj


def _condition(kind: str, status: str, reason: str, generation: int = 2) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": reason, "observedGeneration": generation, "lastTransitionTime": _T}


def _pool(parents: list[dict[str, Any]] | None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": POOL_API,
        "kind": "InferencePool",
        "metadata": {"name": "p", "namespace": "ml-team", "generation": 1},
    }
    obj["spec"] = {"selector": {"matchLabels": {"a": "b"}}, "targetPorts": [{"number": 8000}]}
    if parents is not None:
        obj["status"] = {"parents": parents}
    return obj


def _parent(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {"parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference"}, "conditions": list(conditions)}


HEALTH_CASES = [
    ("lws-just-created", _lws(None), "Progressing"),
    (
        "lws-groups-starting",
        _lws(
            {
                "observedGeneration": 2,
                "readyReplicas": 1,
                "replicas": 2,
                "conditions": [_condition("Progressing", "True", "GroupsProgressing")],
            }
        ),
        "Progressing",
    ),
    (
        "lws-rolling-update",
        _lws(
            {
                "observedGeneration": 2,
                "readyReplicas": 2,
                "replicas": 2,
                "updatedReplicas": 1,
                "conditions": [
                    _condition("UpdateInProgress", "True", "GroupsUpdating"),
                    _condition("Progressing", "True", "GroupsProgressing"),
                ],
            }
        ),
        "Progressing",
    ),
    (
        "lws-all-ready",
        _lws(
            {
                "observedGeneration": 2,
                "readyReplicas": 2,
                "replicas": 2,
                "updatedReplicas": 2,
                "conditions": [_condition("Available", "True", "AllGroupsReady")],
            }
        ),
        "Healthy",
    ),
    (
        "lws-change-not-yet-seen",
        _lws(
            {
                "observedGeneration": 1,
                "readyReplicas": 2,
                "replicas": 2,
                "conditions": [_condition("Available", "True", "AllGroupsReady", 1)],
            },
            generation=2,
        ),
        "Progressing",
    ),
    ("pool-no-route-yet", _pool(None), "Healthy"),
    ("pool-no-parents", _pool([]), "Healthy"),
    (
        "pool-accepted",
        _pool([_parent(_condition("Accepted", "True", "Accepted", 1), _condition("ResolvedRefs", "True", "ResolvedRefs", 1))]),
        "Healthy",
    ),
    ("pool-pending", _pool([_parent(_condition("Accepted", "Unknown", "Pending", 1))]), "Progressing"),
    ("pool-not-supported", _pool([_parent(_condition("Accepted", "False", "NotSupportedByParent", 1))]), "Degraded"),
    (
        "pool-picker-unresolved",
        _pool([_parent(_condition("Accepted", "True", "Accepted", 1), _condition("ResolvedRefs", "False", "InvalidExtensionRef", 1))]),
        "Degraded",
    ),
]


@pytest.mark.real_peers
@pytest.mark.parametrize("name,obj,expected", HEALTH_CASES, ids=[c[0] for c in HEALTH_CASES])
def test_real_argocd_judges_our_health_checks(
    built_argocd: list[dict[str, Any]], tmp_path: Path, name: str, obj: dict[str, Any], expected: str
) -> None:
    """`argocd admin settings resource-overrides health`, with the argocd-cm kustomize builds from argocd/."""
    from peer import require_peer

    argocd_cli = Path(require_peer("argocd-cmp-server")).resolve()  # the multi-call binary: the CLI under its own name
    [cm] = [o for o in built_argocd if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "argocd-cm"]
    (tmp_path / "argocd-cm.yaml").write_text(yaml.safe_dump(cm))
    (tmp_path / "obj.yaml").write_text(yaml.safe_dump(obj))
    result = subprocess.run(
        [
            str(argocd_cli),
            "admin",
            "settings",
            "resource-overrides",
            "health",
            str(tmp_path / "obj.yaml"),
            "--argocd-cm-path",
            str(tmp_path / "argocd-cm.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert f"STATUS: {expected}\n" in result.stdout, result.stdout


def test_the_helm_values_install_the_same_plugin_sidecar_and_health_checks() -> None:
    """argocd/helm-values.yaml (the argo-cd chart's install) says what the kustomize install says."""
    values = yaml.safe_load((ARGOCD_DIR / "helm-values.yaml").read_text())
    plugin = yaml.safe_load(PLUGIN_YAML.read_text())
    assert values["configs"]["cmp"] == {"create": True, "plugins": {plugin["metadata"]["name"]: plugin["spec"]}}
    for kind, lua in (
        ("leaderworkerset.x-k8s.io_LeaderWorkerSet", "leaderworkerset"),
        ("inference.networking.k8s.io_InferencePool", "inferencepool"),
    ):
        assert values["configs"]["cm"][f"resource.customizations.health.{kind}"] == (ARGOCD_DIR / "health" / f"{lua}.lua").read_text()
    patch = yaml.safe_load((ARGOCD_DIR / "repo-server-sidecar.yaml").read_text())
    [ours] = patch["spec"]["template"]["spec"]["containers"]
    [sidecar] = values["repoServer"]["extraContainers"]
    # The chart's argocd-cmp-cm holds the plugin under <name>.yaml; the rest of the container is the same.
    chart_mount = {"name": "argocd-cmp-cm", "mountPath": "/home/argocd/cmp-server/config/plugin.yaml", "subPath": "modelplane-render.yaml"}
    mounts = [chart_mount if m["name"] == "modelplane-render-plugin" else m for m in ours["volumeMounts"]]
    assert {k: v for k, v in sidecar.items() if k not in ("image", "volumeMounts")} == {
        k: v for k, v in ours.items() if k not in ("image", "volumeMounts")
    }
    assert sidecar["volumeMounts"] == mounts
    assert {v["name"] for v in values["repoServer"]["volumes"]} == {"argocd-cmp-cm", "modelplane-render-tmp"}


@pytest.mark.real_peers
def test_real_a_kustomize_app_is_built_by_kustomize_in_the_sidecar(cmp_server: CmpServer, tmp_path: Path) -> None:
    """An Application naming the plugin at a kustomize overlay gets what `kustomize build` gives, function and all."""
    from peer import require_peer

    kustomize = require_peer("kustomize")
    overlay = ROOT / "kustomize" / "overlays" / "prod"
    local = subprocess.run(
        [str(kustomize), "build", "--enable-alpha-plugins", "--enable-exec", str(overlay)],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert local.returncode == 0, local.stderr
    built = manifests(cmp_server.generate("kustomize/overlays/prod"))
    assert built == load_all(local.stdout)
    assert {o["metadata"]["namespace"] for o in built if "namespace" in o["metadata"]} == {"ml-prod"}
    assert not [o for o in built if o["kind"] in ("ModelReplica", "RenderConfig")]


@pytest.mark.real_peers
def test_real_kustomize_build_options_reach_kustomize_in_the_sidecar(cmp_server: CmpServer) -> None:
    """Argo CD gives a plugin no kustomize.buildOptions: the parameter does, as Argo CD's own kustomize would get them."""
    refused = cmp_server.generate("kustomize/overlays/spot")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert "is not in or below" in refused.stderr, refused.stderr  # kustomize's load restrictor, in the Application's error
    options = "--enable-alpha-plugins --enable-exec --load-restrictor LoadRestrictionsNone"  # as kustomize.buildOptions has it
    built = manifests(
        cmp_server.generate("kustomize/overlays/spot", plugin_parameters=[{"name": "kustomize-build-options", "string": options}])
    )
    [lws] = [o for o in built if o["kind"] == "LeaderWorkerSet"]
    assert lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["nodeSelector"] == {"modelplane.ai/pool": "gpu-l4-spot"}
    helm = cmp_server.generate(
        "kustomize/overlays/prod", plugin_parameters=[{"name": "kustomize-build-options", "string": "--enable-helm"}]
    )
    assert (helm.returncode, helm.stdout) == (1, "")  # argocd-cmp-server's failure, whatever our exit code
    assert "--enable-helm is not taken here: the sidecar image has no helm" in helm.stderr, helm.stderr
    plain = cmp_server.generate("valid/single-gpu-standalone", plugin_parameters=[{"name": "kustomize-build-options", "string": options}])
    assert (plain.returncode, plain.stdout) == (1, "")
    assert "kustomize-build-options: this app is not a kustomization" in plain.stderr, plain.stderr


@pytest.mark.real_peers
def test_real_a_kustomize_apps_errors_reach_argo_cd_and_nothing_else(cmp_server: CmpServer) -> None:
    result = cmp_server.generate("kustomize/overlays/broken")
    assert (result.returncode, result.stdout) == (1, "")
    assert "kustomize build --enable-alpha-plugins --enable-exec failed" in result.stderr
    assert "nodePoolName: must be a valid label value" in result.stderr, result.stderr
    # A kustomization (here: a namespace) without the function would hand Argo CD the replica itself, which no
    # cluster serves.
    unrendered = cmp_server.generate("kustomize-app")
    assert (unrendered.returncode, unrendered.stdout) == (1, "")
    assert "printed ModelReplica qwen3-8b-eks-l4-0 unrendered: list the RenderConfig directory" in unrendered.stderr, unrendered.stderr
    # A plain base (a kustomization listing its own files, nothing more) is read as `render` reads it: one rule.
    plain = cmp_server.generate("valid/objects-passed-through")
    assert plain.returncode == 0, plain.stderr
    assert manifests(plain) == load_all(run_cli("render", str(ROOT / "fixtures" / "valid" / "objects-passed-through")).stdout)
    refused = cmp_server.generate("kustomize/overlays/prod", plugin_parameters=[{"name": "gateway", "string": "a/b"}])
    assert refused.returncode == 1 and "whose RenderConfig (spec) holds the render options" in refused.stderr


def _guide_application_plugin(page: str) -> dict[str, Any]:
    """The Application excerpt a guide page shows (its `plugin:` block), as YAML."""
    text = (ROOT / page).read_text()
    block = text.split("```yaml\n    plugin:\n", 1)[1].split("```", 1)[0]
    plugin: dict[str, Any] = yaml.safe_load("plugin:\n" + block)["plugin"]
    return plugin


@pytest.mark.real_peers
def test_real_platform_settings_as_the_guide_gives_them_reach_every_engine_pod(cmp_server: CmpServer) -> None:
    """docs/platform-settings.md's parameters, through the real argocd-cmp-server: every engine pod gets each one."""
    plugin = _guide_application_plugin("docs/platform-settings.md")
    assert plugin["name"] == "modelplane-render-v1"
    objects = manifests(cmp_server.generate("valid/multi-node-leader-worker", plugin_parameters=plugin["parameters"]))
    given = {p["name"]: p.get("string", p.get("array")) for p in plugin["parameters"]}
    pods = [
        template
        for o in objects
        if o["kind"] == "LeaderWorkerSet"
        for key, template in o["spec"]["leaderWorkerTemplate"].items()
        if key in ("leaderTemplate", "workerTemplate")
    ]
    assert len(pods) == 2  # a leader and a worker
    for pod in pods:
        spec = pod["spec"]
        assert spec["serviceAccountName"] == given["service-account"]
        assert spec["priorityClassName"] == given["priority-class"]
        assert spec["affinity"] == json.loads(given["affinity"])
        assert spec["nodeSelector"] == {"modelplane.ai/pool": "gpu-h200"}  # the member's pool still holds
        engine = [c for c in spec["containers"] if c["name"] == "engine"]
        assert [c["securityContext"]["capabilities"]["add"] for c in engine] == [given["capabilities"]]
        assert all("securityContext" not in c for c in spec["containers"] if c["name"] != "engine")
    (picker,) = [o for o in objects if o["kind"] == "Deployment"]
    assert picker["spec"]["template"]["spec"]["serviceAccountName"] != given["service-account"]  # the picker keeps its own
