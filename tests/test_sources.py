"""Reading YAML as kubectl does, keeping where everything is, refusing what a renderer must not guess."""

from __future__ import annotations

import pytest

from modelplane_render.errors import InputError
from modelplane_render.yamlio.loader import decode, load_documents


def load(text: str):  # type: ignore[no-untyped-def]
    return load_documents("f.yaml", text)


def error_of(text: str) -> str:
    with pytest.raises(InputError) as caught:
        load(text)
    return str(caught.value.errors[0])


def test_yaml_1_1_scalars_as_kubectl_reads_them():  # type: ignore[no-untyped-def]
    (doc,) = load("a: yes\nb: on\nc: 0755\nd: 2001-12-14\ne: 1:20\nf: '1'\ng: 1.0\n")
    assert doc.data == {"a": True, "b": True, "c": 493, "d": "2001-12-14", "e": "1:20", "f": "1", "g": 1.0}


def test_positions_of_values_and_keys_are_one_based():  # type: ignore[no-untyped-def]
    (doc,) = load("spec:\n  engines:\n  - name: x\n")
    assert doc.positions.values[("spec", "engines", 0, "name")] == (3, 11)
    assert doc.positions.keys[("spec", "engines", 0, "name")] == (3, 5)


def test_duplicate_key_is_an_error_at_the_second_key():  # type: ignore[no-untyped-def]
    assert error_of("a: 1\nb:\n  c: 1\n  c: 2\n") == 'f.yaml:4:3: b.c: duplicate key "c" (first given on line 3)'


def test_non_core_tags_are_refused():  # type: ignore[no-untyped-def]
    assert "!!python/object:os.system is not allowed" in error_of("a: !!python/object:os.system x\n")
    assert "YAML tag !custom is not allowed" in error_of("a: !custom x\n")


def test_merge_keys_are_refused():  # type: ignore[no-untyped-def]
    assert "merge keys" in error_of("base: &b {x: 1}\nother:\n  <<: *b\n")


@pytest.mark.parametrize(("text", "line"), [("a:\n\tb: 1\n", 2), ("a: 1\r\nb:\r\n\tc: 1\r\n", 3)])
def test_tab_indentation_is_named_at_its_line(text, line):  # type: ignore[no-untyped-def]
    assert error_of(text) == f"f.yaml:{line}:1: .: YAML syntax: a tab indents this line: YAML indents with spaces only"


def test_an_unclosed_flow_collection_names_where_it_opened():  # type: ignore[no-untyped-def]
    text = "a: 1\nb: [x, y\nc: 2\n"
    assert error_of(text).endswith("(while parsing a flow sequence that starts at line 2, column 4)")


def test_empty_documents_are_skipped():  # type: ignore[no-untyped-def]
    assert load("") == []
    assert load("# only a comment\n") == []
    assert load("---\n---\n") == []


def test_bytes_are_decoded_as_kubectl_does():  # type: ignore[no-untyped-def]
    assert decode("f", "\ufeffa: 1\n".encode()) == "a: 1\n"
    assert decode("f", "a: 1\n".encode("utf-16")) == "a: 1\n"
    with pytest.raises(InputError) as caught:
        decode("f", b"a: \xff\n")
    assert str(caught.value.errors[0]) == "f:1:4: .: invalid UTF-8 (byte 0xff): files must be UTF-8 text"
    with pytest.raises(InputError):
        decode("f", b"a: 1\n\x00\x01")


def test_alias_bomb_is_bounded():  # type: ignore[no-untyped-def]
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        bomb += f"{chr(97 + i)}: &{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 10) + "]\n"
    assert "nodes in one file" in error_of(bomb)


def test_deep_nesting_is_bounded():  # type: ignore[no-untyped-def]
    assert "nested deeper than" in error_of("a: " + "[" * 200 + "]" * 200 + "\n")


@pytest.mark.parametrize(
    "kustomization",
    [
        "resources: [../replica.yaml]\npatches:\n- path: patches/node-pool.yaml\n",
        "resources: [../replica.yaml]\npatchesStrategicMerge: [patches/node-pool.yaml]\n",
        "resources: [../replica.yaml]\npatchesJson6902:\n- target: {kind: ModelReplica, name: x}\n  path: patches/node-pool.yaml\n",
    ],
    ids=["patches", "patchesStrategicMerge", "patchesJson6902"],
)
def test_a_file_a_kustomization_lists_as_a_patch_is_not_a_source(tmp_path, kustomization):  # type: ignore[no-untyped-def]
    """A patch is a fragment of a replica, not a replica: pre-commit hands it to validate like any changed file."""
    import shutil

    from conftest import VALID, run_cli

    shutil.copy(next(p for p in VALID if p.name == "single-gpu-standalone") / "replica.yaml", tmp_path / "replica.yaml")
    (tmp_path / "overlay" / "patches").mkdir(parents=True)
    (tmp_path / "overlay" / "kustomization.yaml").write_text(kustomization)
    fragment = "apiVersion: modelplane.ai/v1alpha1\nkind: ModelReplica\nmetadata: {name: qwen3-8b-eks-l4-0}\nspec: {clusterName: eks-l4}\n"
    (tmp_path / "overlay" / "patches" / "node-pool.yaml").write_text(fragment)
    result = run_cli("validate", str(tmp_path / "overlay" / "patches" / "node-pool.yaml"))
    assert (result.code, result.stderr) == (0, "")
    # A walk over the overlay refuses it: only kustomize makes the patched replica (frontends.kustomize_app).
    walked = run_cli("validate", str(tmp_path))
    assert walked.code == 1 and "overlay/kustomization.yaml:1:1: .: kustomize builds" in walked.stderr, walked.stderr
    # The same fragment where no kustomization lists it is judged, and found wanting.
    (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [../replica.yaml]\n")
    assert run_cli("validate", str(tmp_path)).code == 1
