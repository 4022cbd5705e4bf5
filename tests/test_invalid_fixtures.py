"""Every invalid fixture: exit 1, nothing on stdout, exactly the expected errors on stderr."""

from __future__ import annotations

import pytest

from conftest import INVALID, run_cli


@pytest.mark.parametrize("case", INVALID, ids=[p.name for p in INVALID])
def test_invalid_fixture_reports_expected_errors(case):  # type: ignore[no-untyped-def]
    sources = sorted(p.name for p in case.iterdir() if p.suffix in (".yaml", ".yml"))
    expected = (case / "expected.stderr").read_text(encoding="utf-8")
    result = run_cli("validate", *sources, cwd=case)
    assert result.code == 1
    assert result.stdout == ""
    assert result.stderr == expected
    render = run_cli("render", *sources, cwd=case)
    assert (render.code, render.stdout, render.stderr) == (1, "", expected)


def test_there_are_enough_invalid_cases():  # type: ignore[no-untyped-def]
    assert len(INVALID) >= 30
