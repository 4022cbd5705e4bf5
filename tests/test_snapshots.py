"""Every valid fixture's output, locked as the exact YAML `render` prints (review the diff in a PR)."""

from __future__ import annotations

import pytest

from conftest import ROOT, VALID, run_cli


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_render_matches_snapshot(case, snapshot_yaml):  # type: ignore[no-untyped-def]
    result = run_cli("render", str(case.relative_to(ROOT)), cwd=ROOT)
    assert result.code == 0, result.stderr
    assert result.stderr == ""
    assert "kind: LeaderWorkerSet" in result.stdout, "a snapshot must lock a real render"
    assert result.stdout == snapshot_yaml(name=case.name)


def test_every_snapshot_belongs_to_a_fixture():  # type: ignore[no-untyped-def]
    """An unused snapshot fails the run (a renamed fixture must take its snapshot along)."""
    stored = {p.stem for p in (ROOT / "tests" / "__snapshots__" / "test_snapshots").glob("*.yaml")}
    assert stored == {p.name for p in VALID}
