"""The README's editor setup, with the real yaml-language-server: the schema `modelplane-render schema` prints,
named by a modeline as the README shows it, checks ModelReplica files as people type.

Every valid replica opens without a diagnostic; every invalid fixture whose fault a schema can say
gets an error on it, and the ones test_json_schema.py lists as beyond a schema get none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_json_schema import NOT_EXPRESSIBLE, YAML_LEVEL, documents_of, is_replica

from conftest import INVALID, VALID
from lsp import YamlLanguageServer
from modelplane_render.frontends.json_schema import replica_schema
from peer import require_peer

pytestmark = pytest.mark.real_peers

MODELINE = "# yaml-language-server: $schema=../.schemas/modelreplica.json\n"  # as the README writes it
ERROR = 1


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("editor")
    (root / ".schemas").mkdir()
    (root / ".schemas" / "modelreplica.json").write_text(json.dumps(replica_schema(), indent=2))
    (root / "replicas").mkdir()
    return root


@pytest.fixture(scope="module")
def server(workspace: Path) -> Iterator[YamlLanguageServer]:
    launcher = require_peer("yaml-language-server")
    with YamlLanguageServer(launcher, workspace) as running:
        yield running


def _errors(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [f"{d['range']['start']['line']}: {d['message']}" for d in diagnostics if d.get("severity") == ERROR]


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_every_valid_replica_opens_without_a_diagnostic(case: Path, server: YamlLanguageServer, workspace: Path) -> None:
    replicas = [d for d in documents_of(case) if is_replica(d)]
    assert replicas
    for index, data in enumerate(replicas):
        text = MODELINE + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        path = workspace / "replicas" / f"{case.name}-{index}.yaml"
        path.write_text(text)
        assert server.diagnostics(path, text) == []


@pytest.mark.parametrize("case", [p for p in INVALID if NOT_EXPRESSIBLE.get(p.name) != YAML_LEVEL], ids=lambda p: p.name)
def test_an_invalid_fixture_gets_an_error_where_a_schema_can_say_it(case: Path, server: YamlLanguageServer, workspace: Path) -> None:
    errors = []
    for source in sorted(case.glob("*.y*ml")):
        if source.name.startswith("kustomization"):
            continue
        text = MODELINE + source.read_text(encoding="utf-8")
        path = workspace / "replicas" / f"{case.name}-{source.name}"
        path.write_text(text)
        errors += _errors(server.diagnostics(path, text))
    if case.name in NOT_EXPRESSIBLE:
        assert errors == [], f"{case.name} ({NOT_EXPRESSIBLE[case.name]}): the editor reports {errors}"
    else:
        assert errors, f"{case.name}: the editor shows no error, the schema should catch it"


def test_an_unknown_field_is_reported_on_its_line(server: YamlLanguageServer, workspace: Path) -> None:
    replica = next(d for d in documents_of(VALID[0]) if is_replica(d))
    replica["spec"]["clusterNmae"] = replica["spec"].pop("clusterName")
    text = MODELINE + yaml.safe_dump(replica, sort_keys=False)
    path = workspace / "replicas" / "typo.yaml"
    path.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines()) if row.strip().startswith("clusterNmae:"))
    errors = _errors(server.diagnostics(path, text))
    assert f"{line}: Property clusterNmae is not allowed." in errors, errors
    assert any('Missing property "clusterName"' in e for e in errors), errors
