"""The Jinja environment the templates render in: a plan value's fields are its keys."""

from __future__ import annotations

import jinja2
import pytest

from modelplane_render import render


def _render(source: str, **values: object) -> str:
    return str(render.environment().from_string(source).render(**values))


def test_a_field_is_the_plan_value_s_key_even_where_a_dict_has_a_method_of_that_name() -> None:
    assert _render("{{ v.items }} {{ v.name }}", v={"items": 3, "name": "n"}) == "3 n"


def test_a_missing_field_is_an_error_not_an_empty_value() -> None:
    with pytest.raises(jinja2.UndefinedError, match="has no attribute 'nope'"):
        _render("{{ v.nope }}", v={"name": "n"})


def test_jinja_s_default_globals_are_not_there() -> None:
    with pytest.raises(jinja2.UndefinedError):
        _render("{{ range(2) }}")
