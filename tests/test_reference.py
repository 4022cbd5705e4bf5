"""docs/reference.md: its field entries are the CRD's, every field of the CRD has one, and its "Beyond the CRD"
table names every check beyond the CRD.

The entries are generated (modelplane_render/frontends/reference.py); `pytest --snapshot-update`, the
command that rewrites the snapshots, rewrites them too.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from conftest import ROOT
from modelplane_render import crd
from modelplane_render.frontends.reference import field_reference
from modelplane_render.validation.beyond_crd import CHECKS_BEYOND_CRD

REFERENCE = ROOT / "docs" / "reference.md"
BEGIN = "<!-- generated: the field reference (tests/test_reference.py) -->\n"
END = "<!-- end generated -->\n"


def generated_part(text: str) -> str:
    assert text.count(BEGIN) == 1 and text.count(END) == 1, f"{REFERENCE.name}: the generated part's markers"
    return text[text.index(BEGIN) + len(BEGIN) : text.index(END)]


def test_the_field_entries_are_what_the_crd_says(request: pytest.FixtureRequest) -> None:
    text = REFERENCE.read_text()
    wanted = "\n" + field_reference() + "\n"
    if request.config.getoption("--snapshot-update", default=False) and generated_part(text) != wanted:
        REFERENCE.write_text(text[: text.index(BEGIN) + len(BEGIN)] + wanted + text[text.index(END) :])
        text = REFERENCE.read_text()
    assert generated_part(text) == wanted, "docs/reference.md is stale: run .venv/bin/pytest tests/test_reference.py --snapshot-update"


def crd_fields(node: dict[str, Any], path: str = "") -> list[str]:
    """Every field path of the CRD's schema, walked here rather than by the generator."""
    found = []
    for name, child in node.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        found.append(here)
        while child.get("type") == "array":
            here, child = f"{here}[]", child["items"]
        found += crd_fields(child, here)
    return found


def test_every_field_of_the_crd_has_an_entry() -> None:
    paths = crd_fields(crd.openapi_schema())
    assert len(paths) > 80 and "spec.engines[].members[].deviceRequests[].count" in paths
    headings = re.findall(r"^### `([^`]+)`$", REFERENCE.read_text(), flags=re.M)
    assert sorted(set(paths) - set(headings)) == []
    assert sorted(set(headings) - set(paths)) == []
    assert len(headings) == len(set(headings))


def test_every_field_says_what_it_is_for() -> None:
    """A description on every field, so each entry says what the field does, not only its type."""

    def undescribed(node: dict[str, Any], path: str) -> list[str]:
        missing = [] if "description" in node else [path]
        for name, child in node.get("properties", {}).items():
            missing += undescribed(child, f"{path}.{name}" if path else name)
        if "items" in node:
            missing += [p for p in undescribed(node["items"], f"{path}[]") if p != f"{path}[]"]
        return missing

    schema = crd.openapi_schema()
    # The API server forbids a description on the root metadata: the generator says what it holds.
    assert [p for name, child in schema["properties"].items() for p in undescribed(child, name)] == ["metadata"]
    assert "The replica's name" in REFERENCE.read_text().split("### `metadata`", 1)[1].split("###", 1)[0]


def test_beyond_the_crd_names_every_check() -> None:
    section = REFERENCE.read_text().split("## Beyond the CRD", 1)[1]
    named = re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.M)
    assert named == list(CHECKS_BEYOND_CRD)
