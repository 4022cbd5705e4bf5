"""The output stage: each rendered object parsed back and checked against its plan, in the output's order."""

from __future__ import annotations

from modelplane_render import output


def test_every_fixture_s_objects_come_out_the_same_from_one_parse() -> None:
    from conftest import rendered_fixture_objects

    for planned, text in rendered_fixture_objects():
        obj = output.parse_checked(planned, text)
        assert output.parse_checked_and_serialised(planned, text) == (obj, output.serialise([obj]))
