"""SourceError is a frozen record ordered like the tuple of its fields: errors sort by file, line and column."""

from __future__ import annotations

import copy
import pickle

import pytest

from modelplane_render.errors import InputError, SourceError


def test_errors_compare_and_sort_as_their_fields_do() -> None:
    a, b, c = SourceError("a.yaml", 2, 1, "x", "m"), SourceError("a.yaml", 10, 1, "x", "m"), SourceError("b.yaml", 1, 1, "x", "m")
    assert sorted([c, b, a]) == [a, b, c]
    assert a < b <= b < c and c > a >= a
    assert a == SourceError("a.yaml", 2, 1, "x", "m") and hash(a) == hash(SourceError("a.yaml", 2, 1, "x", "m"))
    assert a != ("a.yaml", 2, 1, "x", "m")
    with pytest.raises(TypeError):
        assert a < ("a.yaml", 2, 1, "x", "m")  # type: ignore[operator]
    assert InputError([b, a, b]).errors == [a, b]  # duplicates once, in order


def test_an_error_is_frozen_and_survives_copy_and_pickle() -> None:
    error = SourceError("a.yaml", 2, 3, "spec.x", "must be y")
    with pytest.raises(AttributeError):
        error.line = 4  # type: ignore[misc]
    assert copy.copy(error) == copy.deepcopy(error) == pickle.loads(pickle.dumps(error)) == error
    assert error.replace(line=9) == SourceError("a.yaml", 9, 3, "spec.x", "must be y") and error.line == 2
    assert str(error) == "a.yaml:2:3: spec.x: must be y"
    assert repr(error) == "SourceError(file='a.yaml', line=2, column=3, path='spec.x', message='must be y')"
    match error:
        case SourceError(file, line, column, path, message):
            assert (file, line, column, path, message) == ("a.yaml", 2, 3, "spec.x", "must be y")
