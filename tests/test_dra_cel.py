"""DRA selector expressions: what is reported, where in the file, and what a known expression costs.

The verdicts themselves are held to kube-apiserver's in test_dra_cel_apiserver.py; this file holds
the messages (an interface), the positions inside every YAML scalar style, and the verdict cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from modelplane_render.dra_cel import verdicts
from modelplane_render.dra_cel.check import MAX_EXPRESSION_BYTES, problems
from modelplane_render.errors import InputError
from modelplane_render.validation import judge_replica
from modelplane_render.validation.selectors import selector_expressions
from modelplane_render.yamlio.loader import load_documents

ROOT = Path(__file__).resolve().parent.parent
GPU = 'device.capacity["gpu.nvidia.com"].memory'


@pytest.mark.parametrize(
    ("expression", "at", "message"),
    [
        ('device.drivr == "x"', "drivr", "device has no field 'drivr': did you mean 'driver'?"),
        (
            'device.nodeName == "x"',
            "nodeName",
            "device has no field 'nodeName' (it has driver, attributes, capacity, allowMultipleAllocations)",
        ),
        ('devices.driver == "x"', "devices", "undeclared reference to 'devices': the device is 'device'"),
        ('device.driver == "x" && gpu', "gpu", "undeclared reference to 'gpu'"),
        (
            f'{GPU} >= quantity("80Gi")',
            ">=",
            'a quantity is not compared with >=: use compareTo() (e.g. q.compareTo(quantity("80Gi")) >= 0), isGreaterThan() or isLessThan()',
        ),
        (f"{GPU}.compareTo(80) >= 0", "(80)", "no overload of 'compareTo' takes (kubernetes.Quantity, int)"),
        ('device.driver == 1 + "a"', "+", "no overload of '+' takes (int, string)"),
        ("device.attributes[1] == 1", "[1]", "no overload of '[]' takes (map(string, map(string, dyn)), int)"),
        ("device.driver", "device", "must evaluate to a bool, not string"),
        (
            f'{GPU}.compareTo(quantity("80GB")) >= 0',
            "quantity(",
            'quantity("80GB") is not a quantity (e.g. 80Gi, 500M, 1.5): the API server accepts it, and the claim fails when the scheduler evaluates it',
        ),
        (
            'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("v550"))',
            "semver(",
            'semver("v550") is not a semantic version (e.g. 1.2.3): the API server accepts it, and the claim fails when the scheduler evaluates it',
        ),
        ('duration("1x") < duration("1h")', 'duration("1x")', 'duration("1x") is not a duration (e.g. 90s, 1h30m)'),
        (
            'timestamp("2025-02-30T00:00:00Z") < timestamp("2026-01-01T00:00:00Z")',
            "timestamp(",
            'timestamp("2025-02-30T00:00:00Z") is not an RFC 3339 timestamp (e.g. 2025-01-31T00:00:00Z)',
        ),
        ('device.driver.matches("gpu.(nvidia")', '"gpu', '"gpu.(nvidia" is not a regular expression: missing ), unterminated subpattern'),
        (
            'cidr("10.0.0.0/33").containsIP(device.attributes["dra.net"].ipv4)',
            "cidr(",
            'cidr("10.0.0.0/33") is not a CIDR (e.g. 10.0.0.0/8): the API server accepts it, and the claim fails when the scheduler evaluates it',
        ),
        (
            'ip("::ffff:10.0.0.1").family() == 4',
            "ip(",
            'ip("::ffff:10.0.0.1") is not an IP address (e.g. 10.0.0.1, fd00::1): the API server accepts it, and the claim fails when the scheduler evaluates it',
        ),
    ],
)
def test_each_kind_of_problem_reads_as_it_should_and_points_at_its_token(expression, at, message):  # type: ignore[no-untyped-def]
    assert [(p.offset, p.message) for p in problems(expression)] == [(expression.index(at), message)]


def test_a_syntax_error_says_what_the_parser_expected():  # type: ignore[no-untyped-def]
    (problem,) = problems('device.driver == "x" &&')
    assert problem.message.startswith("syntax error: mismatched input '<EOF>' expecting")


def test_every_problem_of_an_expression_comes_at_once():  # type: ignore[no-untyped-def]
    expression = 'device.drivr == "x" && gpu || 1 + "a" == 2'
    assert [expression[p.offset :].split()[0] for p in problems(expression)] == ["drivr", "gpu", "+"]


@pytest.mark.parametrize(
    "expression",
    [
        f'{GPU}.compareTo(quantity("80Gi")) >= 0',
        f'{GPU}.isGreaterThan(quantity("40Gi")) && {GPU}.isLessThan(quantity("200Gi"))',
        'device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100")',
        'device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.54.15"))',
        'cel.bind(gpu, device.attributes["gpu.nvidia.com"], gpu.index < 4 && gpu.productName != "")',
        'device.driver == "dra.net" && device.attributes["dra.net"].rdma == true',
        "device.attributes.exists(domain, domain.endsWith('.nvidia.com'))",
        'device.attributes["dra.net"].ipv4 != "" && cidr("10.0.0.0/8").containsIP(device.attributes["dra.net"].ipv4)',
        "device.allowMultipleAllocations",
        'device.attributes["gpu.nvidia.com"].index < 4.5',  # cross-type numeric comparison
        'device.attributes["gpu.nvidia.com"].?index.orValue(0) == 0',
        'device.driver.matches("^gpu\\\\.nvidia\\\\.com$") && device.driver.matches("\\\\pL")',  # RE2's \pL: left to the API server
        'timestamp("2025-01-31T00:00:00.5+01:00") < timestamp("2026-01-01T00:00:00Z") && duration("1h30m") > duration("90s")',
    ],
)
def test_expressions_drivers_document_are_accepted(expression):  # type: ignore[no-untyped-def]
    assert problems(expression) == []


def test_an_expression_over_the_api_servers_byte_limit_is_refused_though_it_fits_the_crds_characters():  # type: ignore[no-untyped-def]
    # 3,500 three-byte characters: under the CRD's 10240 characters, over the API server's 10240 bytes.
    expression = f'device.driver == "{"€" * 3500}"'
    assert len(expression) < 10240 < len(expression.encode())
    assert [p.message for p in problems(expression)] == [
        f"is {len(expression.encode())} bytes long: the API server compiles at most {MAX_EXPRESSION_BYTES} bytes"
    ]


REPLICA = """\
apiVersion: modelplane.ai/v1alpha1
kind: ModelReplica
metadata:
  name: qwen3-8b-0
  namespace: ml-team
spec:
  clusterName: eks-l4
  engines:
  - name: qwen3-8b
    members:
    - role: Standalone
      nodePoolName: gpu-l4
      deviceRequests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        selectors:
{selectors}
      template:
        spec:
          containers:
          - name: engine
            image: vllm/vllm-openai:v0.23.0
            args: [--model=Qwen/Qwen3-8B]
"""

# One misspelt field in every scalar style YAML has; each line says where `drivr` stands in the file.
STYLES = {
    "plain": '        - cel: device.drivr == "gpu.nvidia.com"',
    "plain on two lines": '        - cel: device.driver != "" &&\n            device.drivr == "gpu.nvidia.com"',
    "single-quoted": "        - cel: 'device.drivr == ''gpu.nvidia.com'''",
    "double-quoted": '        - cel: "device.drivr == \\"gpu.nvidia.com\\""',
    "double-quoted, escapes before": '        - cel: "device.driver != \\"\\\\\\\\\\" &&\\n  device.drivr == \\"x\\""',
    "literal": '        - cel: |\n            device.driver != "" &&\n              device.drivr == "gpu.nvidia.com"',
    "literal, keep": '        - cel: |+\n            device.drivr == "gpu.nvidia.com"\n',
    "folded": '        - cel: >-\n            device.driver != "" &&\n            device.drivr == "gpu.nvidia.com"',
    "tagged": '        - cel: !!str device.drivr == "gpu.nvidia.com"',
    "anchored": '        - cel: &expr device.drivr == "gpu.nvidia.com"',
    "flow mapping": '        - {cel: device.drivr == "gpu.nvidia.com"}',
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_the_error_is_at_the_misspelt_field_in_every_scalar_style(style):  # type: ignore[no-untyped-def]
    text = REPLICA.format(selectors=STYLES[style])
    (document,) = load_documents("replica.yaml", text)
    _, errors = judge_replica(document, None)
    assert [e.path for e in errors] == ["spec.engines[0].members[0].deviceRequests[0].selectors[0].cel"], errors
    (error,) = errors
    line = text.splitlines()[error.line - 1]
    assert line[error.column - 1 :].startswith("drivr"), (style, error.line, error.column, line)
    assert error.message == "device has no field 'drivr': did you mean 'driver'?"


def test_a_selector_error_comes_with_the_documents_other_errors():  # type: ignore[no-untyped-def]
    text = (
        REPLICA.format(selectors=STYLES["plain"])
        .replace("clusterName: eks-l4", "clusterName: EKS_L4")
        .replace("role: Standalone", "role: standalone")
    )
    (document,) = load_documents("replica.yaml", text)
    _, errors = judge_replica(document, None)
    paths = [e.path for e in errors]
    assert "spec.engines[0].members[0].deviceRequests[0].selectors[0].cel" in paths
    assert "spec.engines[0].members[0].role" in paths


def test_selectors_are_found_however_wrong_the_rest_of_the_document_is():  # type: ignore[no-untyped-def]
    data = {
        "spec": {
            "engines": [
                {"members": "not a list"},
                {"members": [{"deviceRequests": [{"selectors": [{"cel": "a"}, {"cel": 3}, "x", {"cel": ""}]}]}]},
            ]
        }
    }
    assert list(selector_expressions(data)) == [(("spec", "engines", 1, "members", 0, "deviceRequests", 0, "selectors", 0, "cel"), "a")]
    assert list(selector_expressions(["not", "a", "mapping"])) == []


def _run_validate(fixture: Path, cache_home: Path) -> dict[str, object]:
    """validate of a fixture in a new process; whether it loaded the CEL library, and its findings."""
    code = (
        "import json, sys\n"
        "from modelplane_render.sources import iter_documents\n"
        "from modelplane_render.validation import judge_replica\n"
        "errors = []\n"
        "for d in iter_documents(sys.argv[1:]):\n"
        "    errors += [str(e) for e in judge_replica(d, None)[1]]\n"
        "print(json.dumps({'cel_loaded': 'cel_expr_python' in sys.modules, 'errors': errors}))\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    env.pop("MODELPLANE_RENDER_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", code, str(fixture)], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_a_known_expression_costs_no_compile_and_the_library_is_not_even_imported(tmp_path):  # type: ignore[no-untyped-def]
    fixture = ROOT / "fixtures" / "valid" / "cel-selectors-two-device-requests" / "replica.yaml"
    first = _run_validate(fixture, tmp_path)
    assert first == {"cel_loaded": True, "errors": []}
    stored = list((tmp_path / "modelplane-render" / "cel-verdicts").iterdir())
    assert len(stored) == 3  # one verdict per distinct expression
    assert _run_validate(fixture, tmp_path) == {"cel_loaded": False, "errors": []}


def test_a_known_error_is_reported_from_the_cache_as_when_it_was_compiled(tmp_path):  # type: ignore[no-untyped-def]
    fixture = ROOT / "fixtures" / "invalid" / "cel-selector-unknown-field" / "replica.yaml"
    first = _run_validate(fixture, tmp_path)
    second = _run_validate(fixture, tmp_path)
    assert first["cel_loaded"] is True and second["cel_loaded"] is False
    assert first["errors"] == second["errors"] and len(first["errors"]) == 1  # type: ignore[arg-type]


def test_a_replica_without_selectors_loads_no_cel_and_reads_no_verdict(tmp_path):  # type: ignore[no-untyped-def]
    fixture = ROOT / "fixtures" / "invalid" / "empty-selector" / "replica.yaml"
    assert _run_validate(fixture, tmp_path)["cel_loaded"] is False
    assert not (tmp_path / "modelplane-render" / "cel-verdicts").exists()


def test_a_corrupt_or_foreign_verdict_is_a_miss(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(verdicts, "_this_run", {})
    expression = 'device.drivr == "x"'
    assert verdicts.judged(expression) == [(7, "device has no field 'drivr': did you mean 'driver'?")]
    (entry,) = (tmp_path / "modelplane-render" / "cel-verdicts").iterdir()
    for planted in ["{not json", json.dumps({"key": "another", "problems": []}), json.dumps({"key": entry.stem, "problems": [["x", 1]]})]:
        entry.write_text(planted)
        monkeypatch.setattr(verdicts, "_this_run", {})  # as a new process would
        assert verdicts.judged(expression) == [(7, "device has no field 'drivr': did you mean 'driver'?")]


def test_a_new_environment_version_judges_every_expression_anew(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(verdicts, "_this_run", {})
    verdicts.judged('device.driver == "x"')
    monkeypatch.setattr(verdicts, "_this_run", {})
    monkeypatch.setattr(verdicts, "_fingerprint", None)
    monkeypatch.setattr(verdicts.environment, "VERSION", verdicts.environment.VERSION + "-next")
    verdicts.judged('device.driver == "x"')
    assert len(list((tmp_path / "modelplane-render" / "cel-verdicts").iterdir())) == 2


def test_the_cache_key_names_the_installed_library_version():  # type: ignore[no-untyped-def]
    from importlib.metadata import version

    assert verdicts.library_version() == f"cel_expr_python-{version('cel-expr-python')}.dist-info"


def test_every_valid_fixtures_selectors_compile():  # type: ignore[no-untyped-def]
    from modelplane_render.sources import iter_documents

    seen = 0
    for document in iter_documents([str(ROOT / "fixtures" / "valid")]):
        if isinstance(document, InputError):
            continue
        for _, expression in selector_expressions(getattr(document, "data", None)):
            seen += 1
            assert problems(expression) == [], expression
    assert seen >= 10


def test_past_its_bound_the_verdict_cache_forgets_the_oldest(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(verdicts, "MAX_VERDICTS", 3)
    monkeypatch.setattr(verdicts, "_this_run", {})
    directory = tmp_path / "modelplane-render" / "cel-verdicts"
    for n in range(5):
        verdicts.judged(f'device.driver == "d{n}"')
        newest = max(directory.iterdir(), key=lambda p: p.stat().st_mtime_ns)
        os.utime(newest, ns=(n * 10**9, n * 10**9))  # a clear age order, whatever the clock's grain
    kept = {json.loads(p.read_text())["key"] for p in directory.iterdir()}
    assert kept == {verdicts._key(f'device.driver == "d{n}"') for n in (2, 3, 4)}


def test_a_run_reads_each_expressions_verdict_once_however_many_replicas_share_it(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(verdicts, "_this_run", {})
    reads = []
    monkeypatch.setattr(verdicts, "_lookup", lambda directory, key: reads.append(key))
    for _ in range(3):
        verdicts.judged('device.driver == "x"')
    assert len(reads) == 1
