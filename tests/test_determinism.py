"""Same input, byte-identical output: across hash seeds, locales and the order files are found in."""

from __future__ import annotations

import shutil

from conftest import ROOT, VALID, run_process


def test_output_is_identical_across_hash_seeds_and_locales():  # type: ignore[no-untyped-def]
    outputs = set()
    for seed, locale in (("0", "C"), ("1", "C.UTF-8"), ("12345", "tr_TR.UTF-8")):
        result = run_process("render", "fixtures/valid", cwd=ROOT, env={"PYTHONHASHSEED": seed, "LC_ALL": locale})
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_output_does_not_depend_on_file_creation_order(tmp_path):  # type: ignore[no-untyped-def]
    forward, backward = tmp_path / "f", tmp_path / "b"
    for target, order in ((forward, VALID), (backward, list(reversed(VALID)))):
        target.mkdir()
        for case in order:
            shutil.copytree(case, target / case.name)
    a = run_process("render", ".", cwd=forward)
    b = run_process("render", ".", cwd=backward)
    assert a.returncode == 0 and a.stdout == b.stdout
