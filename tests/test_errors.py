"""Finding is a frozen record ordered like the tuple of its fields: errors sort by file, line and column."""

from __future__ import annotations

import copy
import pickle

import pytest

from modelplane_render.errors import Finding, InputError


def test_errors_compare_and_sort_as_their_fields_do() -> None:
    a, b, c = Finding("a.yaml", 2, 1, "x", "m"), Finding("a.yaml", 10, 1, "x", "m"), Finding("b.yaml", 1, 1, "x", "m")
    assert sorted([c, b, a]) == [a, b, c]
    assert a < b <= b < c and c > a >= a
    assert a == Finding("a.yaml", 2, 1, "x", "m") and hash(a) == hash(Finding("a.yaml", 2, 1, "x", "m"))
    assert a != ("a.yaml", 2, 1, "x", "m")
    with pytest.raises(TypeError):
        assert a < ("a.yaml", 2, 1, "x", "m")  # type: ignore[operator]
    assert InputError([b, a, b]).errors == [a, b]  # duplicates once, in order


def test_an_error_is_frozen_and_survives_copy_and_pickle() -> None:
    error = Finding("a.yaml", 2, 3, "spec.x", "must be y")
    with pytest.raises(AttributeError):
        error.line = 4  # type: ignore[misc]
    assert copy.copy(error) == copy.deepcopy(error) == pickle.loads(pickle.dumps(error)) == error
    assert error.replace(line=9) == Finding("a.yaml", 9, 3, "spec.x", "must be y") and error.line == 2
    assert str(error) == "a.yaml:2:3: spec.x: must be y"
    assert repr(error) == (
        "Finding(file='a.yaml', line=2, column=3, path='spec.x', message='must be y', severity='error', resource=None, origin=None, index=None)"
    )
    match error:
        case Finding(file, line, column, path, message):
            assert (file, line, column, path, message) == ("a.yaml", 2, 3, "spec.x", "must be y")


def test_a_finding_without_a_line_names_its_object_and_one_without_a_place_has_no_path() -> None:
    placed = Finding("ModelReplica ml/qwen (base/qwen.yaml)", 0, 0, "spec.engines", "must not be empty", origin="base/qwen.yaml", index=0)
    assert str(placed) == "ModelReplica ml/qwen (base/qwen.yaml): spec.engines: must not be empty"
    assert str(Finding("modelplane-render", 0, 0, None, "cannot write")) == "modelplane-render: cannot write"
    kept = pickle.loads(pickle.dumps(placed))
    assert kept == placed and (kept.origin, kept.index, kept.severity) == ("base/qwen.yaml", 0, "error")
    assert placed != placed.replace(severity="warning") and placed.replace(severity="warning").severity == "warning"
