"""validation.metadata: ObjectMeta as the API server (v1.37) takes it on create, one error per fault at its line.

Beyond name, namespace, labels and annotations: the type of every other ObjectMeta field (Go's JSON
decoding refuses `uid: 1` or `generation: "1"` before any rule runs), RFC 3339 times, and what
ValidateObjectMeta checks of ownerReferences and finalizers. tests/test_yaml_differential.py holds
each of these against the real API server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

BASE = (FIXTURES / "valid" / "single-gpu-standalone" / "replica.yaml").read_text()
NAMESPACE = "  namespace: ml-team\n"
OWNER = "{apiVersion: apps/v1, kind: Deployment, name: d, uid: 6f1c0d8e-1d2a-4c1e-9a9e-0f3f3c2b1a00"


def _validate(tmp_path: Path, *lines: str) -> tuple[int, list[str]]:
    """validate the base replica with lines added to its metadata (after line 7, its namespace)."""
    (tmp_path / "replica.yaml").write_text(BASE.replace(NAMESPACE, NAMESPACE + "".join(f"  {line}\n" for line in lines), 1))
    result = run_cli("validate", "replica.yaml", cwd=tmp_path)
    return result.code, result.stderr.splitlines()


@pytest.mark.parametrize(
    "lines",
    [
        (f"ownerReferences: [{OWNER}, controller: true, blockOwnerDeletion: true}}]",),
        (f"ownerReferences: [{OWNER}}}, {{apiVersion: /v1, kind: ConfigMap, name: c, uid: u, controller: false}}]",),
        ("ownerReferences: []", "finalizers: ~", "managedFields: ~"),
        ("finalizers: [example.com/cleanup, orphan]",),
        ("uid: u", "resourceVersion: '1'", "generation: 0o17", "deletionGracePeriodSeconds: -1", "selfLink: /x"),
        ("creationTimestamp: 2001-12-14T21:59:43.10-05:00", "deletionTimestamp: null"),
        ("managedFields: [{manager: m, operation: Patch, fieldsType: FieldsV1, fieldsV1: {f:spec: {}}, time: '2001-12-14T21:59:43Z'}]",),
    ],
)
def test_what_the_api_server_takes_is_taken(tmp_path: Path, lines: tuple[str, ...]) -> None:
    assert _validate(tmp_path, *lines) == (0, [])


@pytest.mark.parametrize(
    ("lines", "errors"),
    [
        (
            ("ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: d}]",),
            [
                "8:21: metadata.ownerReferences[0].uid: required field is missing: an owner reference names its owner by apiVersion, kind, name, uid"
            ],
        ),
        (
            ("ownerReferences: [{apiVersion: '', kind: Deployment, name: ~, uid: u}]",),
            [
                "8:34: metadata.ownerReferences[0].apiVersion: must not be empty",
                "8:62: metadata.ownerReferences[0].name: must have a value (it is empty)",
            ],
        ),
        (
            ("ownerReferences: [{apiVersion: apps/v1/x, kind: Deployment, name: d, uid: u}]",),
            [
                '8:34: metadata.ownerReferences[0].apiVersion: must be <group>/<version> or <version> (such as apps/v1 or v1), not "apps/v1/x"'
            ],
        ),
        (
            ("ownerReferences: [{apiVersion: v1, kind: Event, name: e, uid: u}]",),
            [
                "8:44: metadata.ownerReferences[0].kind: a v1 Event can't be an owner: the API server refuses it; name the object that owns this one"
            ],
        ),
        (
            (f"ownerReferences: [{OWNER}, controller: true}}, {OWNER}, controller: y}}]",),
            [
                "8:236: metadata.ownerReferences[1].controller: only one owner reference may be the controller: ownerReferences[0] already is"
            ],
        ),
        (
            (f"ownerReferences: [{OWNER}, namespace: ~}}, c]",),
            [
                '8:113: metadata.ownerReferences[0].namespace: unknown field "namespace"',
                '8:128: metadata.ownerReferences[1]: must be a mapping, not a string ("c")',
            ],
        ),
        (
            ("finalizers: [Bad Name, orphan, foregroundDeletion]",),
            [
                "8:15: metadata.finalizers: must not hold both orphan and foregroundDeletion: they ask for opposite deletions; keep one",
                "8:16: metadata.finalizers[0]: a finalizer must be a qualified name (an optional DNS prefix and '/', then at most 63 letters, "
                """digits, '-', '_' or '.', such as example.com/cleanup), not "Bad Name\"""",
            ],
        ),
        (
            ("uid: 1", "generation: 1.5", "creationTimestamp: 2001-12-14"),
            [
                "8:8: metadata.uid: must be a string: 1 reads as the number 1 in Kubernetes YAML (kubectl, Argo CD, the API server); quote it",
                "9:15: metadata.generation: must be an integer, not a number (1.5)",
                '10:22: metadata.creationTimestamp: must be a time in RFC 3339 form, such as 2026-01-02T15:04:05Z, not "2001-12-14"',
            ],
        ),
        (("managedFields: [{manager: m, extra: 1}]",), ['8:32: metadata.managedFields[0].extra: unknown field "extra"']),
    ],
)
def test_what_the_api_server_refuses_is_refused_at_its_place(tmp_path: Path, lines: tuple[str, ...], errors: list[str]) -> None:
    assert _validate(tmp_path, *lines) == (1, [f"replica.yaml:{error}" for error in errors])
