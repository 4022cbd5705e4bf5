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


def test_the_templates_compiled_ahead_of_time_are_the_templates_as_jinja_compiles_them_now() -> None:
    """modelplane_render/templates_compiled/ is what write_compiled_templates() writes: regenerate it after a
    template changes (`python -c 'from modelplane_render.render import write_compiled_templates as w; w()'`)."""
    from pathlib import Path

    from modelplane_render.render import compiled_templates

    directory = Path(render.__file__).parent / "templates_compiled"
    shipped = {p.name: p.read_text(encoding="utf-8") for p in directory.glob("*.py")}
    assert shipped == compiled_templates(), "templates_compiled/ is stale: regenerate it (see this test's docstring)"


def test_a_template_whose_text_changed_is_compiled_again_not_served_stale(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A compiled module is used only for the text it was compiled from: an edited template renders as edited."""
    import jinja2

    real = render._Precompiled.get_source

    def edited(self, environment, name):  # type: ignore[no-untyped-def]
        source, filename, uptodate = real(self, environment, name)
        return (
            (source.replace("kind: ServiceAccount", "kind: ServiceAccount\n# edited") if name == "serviceaccount.yaml.j2" else source),
            filename,
            uptodate,
        )

    monkeypatch.setattr(render._Precompiled, "get_source", edited)
    env = jinja2.Environment(loader=render._Precompiled(render.templates_dir()), undefined=jinja2.StrictUndefined)
    env.filters["tojson"] = render.to_json
    text = env.get_template("serviceaccount.yaml.j2").render(v={"name": "n", "namespace": "ns", "labels": {}, "annotations": {}})
    assert "# edited" in text
