"""The settings' table (options.SETTINGS) is the one declaration every front end's settings are built from.

Each test holds one reader of settings equal to the table's rows: argparse's flags per command,
argocd/plugin.yaml's parameters, Argo CD's PARAMETERS and Application env names, the RenderConfig
keys and its JSON Schema, the Options fields and the render cache's key.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from modelplane_render import main, options
from modelplane_render.cache import render as cache
from modelplane_render.frontends import argocd, krm
from modelplane_render.frontends.json_schema import render_config_schema
from modelplane_render.options import LIST, SETTINGS, SWITCH, Options

ROOT = Path(__file__).resolve().parent.parent


def _flags(command: str) -> dict[str, object]:
    """The flags argparse takes for `command`, other than help and the command's own (diff's --format, --base-renderer ...): dest -> action."""
    parser = main.build_parser(command)
    sub = next(a for a in parser._actions if a.dest == "command")
    found = {}
    for action in sub.choices[command]._actions:  # type: ignore[union-attr]
        if action.option_strings and action.dest not in ("help", "format", "color", "unified", "base_renderer"):
            found[action.dest] = action
    return found


@pytest.mark.parametrize("command", ["render", "validate", "diff"])
def test_argparse_takes_exactly_the_flags_of_the_table(command: str) -> None:
    flags = _flags(command)
    rows = options.command_settings(command)
    assert sorted(flags) == sorted(s.dest for s in rows)
    for setting in rows:
        action = flags[setting.dest]
        assert setting.option in action.option_strings  # type: ignore[attr-defined]
        assert (setting.short in action.option_strings) if setting.short else len(action.option_strings) == 1  # type: ignore[attr-defined]
        repeated = setting.kind == LIST or (command == "diff" and setting.diff_help is not None)
        assert type(action).__name__ == ("_StoreTrueAction" if setting.kind == SWITCH else "_AppendAction" if repeated else "_StoreAction")


def test_the_command_line_read_without_argparse_has_every_flag_of_the_table_unset() -> None:
    for command in ("render", "validate"):
        parsed = vars(main._plain_command_line([command, "x"]))
        assert {k for k in parsed if k not in ("command", "paths")} == {s.dest for s in options.command_settings(command)}
        assert vars(main.build_parser(command).parse_args([command, "x"])) == parsed


def test_options_has_one_field_per_render_setting_and_its_default() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(Options)}
    assert fields == {s.field: s.default for s in options.RENDER_SETTINGS}


def test_the_render_cache_keys_every_render_setting() -> None:
    changed = {
        "namespace": "ml",
        "gateway": ("gw", "main"),
        "cluster": "c",
        "allow_empty": True,
        "picker_plaintext": True,
        "node_pool_label": "x/y",
        "tolerations": (),
        "picker_requests": (),
        "hub_cache_size": "2Ti",
        "autoscaled": True,
        "service_account": "reader",
        "priority_class": "high",
        "affinity": '{"nodeAffinity":{}}',
        "capabilities": ("IPC_LOCK",),
    }
    assert set(changed) == {s.field for s in options.RENDER_SETTINGS if s.in_render_key}
    for field, value in changed.items():
        key = cache.render_key(Options(**{field: value}))
        assert key != cache.RENDER_WITHOUT_OPTIONS and key[f"option {field}"] == repr(value)
        assert {k.removeprefix("option ") for k in key if k != "front"} == set(changed)
    assert cache.render_key(Options()) == cache.RENDER_WITHOUT_OPTIONS


def test_every_argo_cd_parameter_reaches_the_argocd_cache_key() -> None:
    """A setting that is not an Options field (check-cluster-apis) is still keyed: the parameters are keyed as given."""
    for parameter in argocd.PARAMETERS:
        given = json.dumps([{"name": parameter.name, "string": parameter.announced}])
        assert cache.argocd_key({"ARGOCD_APP_PARAMETERS": given}) != cache.argocd_key({})
        assert cache.argocd_key({f"ARGOCD_ENV_{parameter.app_env}": "x"}) != cache.argocd_key({})


def test_plugin_yaml_parameters_are_the_table_rows_with_a_title() -> None:
    plugin = yaml.safe_load((ROOT / "argocd" / "plugin.yaml").read_text())
    announced = plugin["spec"]["parameters"]["static"]
    assert [(p["name"], p["title"], p["tooltip"], p["string"]) for p in announced] == [
        (s.name, s.title, s.tooltip, s.announced) for s in SETTINGS if s.title is not None
    ]
    assert argocd.PARAMETERS == tuple(s for s in SETTINGS if s.title is not None)


def test_the_render_config_keys_and_schema_are_the_table_rows_with_a_config_key() -> None:
    keys = [s.config_key for s in SETTINGS if s.config_key is not None]
    assert list(krm.CONFIG_SPEC_FIELDS) == keys
    schema = render_config_schema()
    spec = schema["properties"]["spec"]
    assert list(spec["properties"]) == keys and spec["additionalProperties"] is False
    for setting in options.CONFIG_SETTINGS:
        prop = spec["properties"][setting.config_key]
        assert prop["type"] == {"text": "string", "switch": "boolean", "list": "array", "object": "object"}[setting.kind]
        assert prop["description"] == setting.help


def test_the_example_render_config_is_valid_under_its_schema() -> None:
    import jsonschema

    config = yaml.safe_load((ROOT / "kustomize" / "base" / "render" / "render.yaml").read_text())
    jsonschema.validate(config, render_config_schema())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**config, "spec": {"gatway": "a/b"}}, render_config_schema())


@pytest.mark.parametrize(
    "kind,argo,config",
    [
        (LIST, '[{"name": "tolerations", "array": ["a.com/gpu:NoSchedule", "b"]}]', ["a.com/gpu:NoSchedule", "b"]),
        (LIST, '[{"name": "tolerations", "string": "a.com/gpu:NoSchedule, b"}]', ["a.com/gpu:NoSchedule", "b"]),
    ],
)
def test_a_list_travels_as_an_array_or_comma_separated_text_and_means_the_same(kind: str, argo: str, config: list[str]) -> None:
    from_argo = argocd.settings_from_env({"ARGOCD_APP_PARAMETERS": argo}).options
    from_config = krm.read_function_config(
        {"apiVersion": krm.CONFIG_API_VERSION, "kind": krm.CONFIG_KIND, "spec": {"tolerations": config}}
    ).options
    from_flags = main.build_parser("render").parse_args(["render", *(f"--toleration={t}" for t in config)])
    from modelplane_render.commands.arguments import options_from_args

    assert from_argo == from_config == options_from_args(from_flags, "render")
    assert from_argo.tolerations == (("a.com/gpu", None, "NoSchedule"), ("b", None, None))


def test_an_empty_list_is_none_in_a_render_config_and_the_default_as_an_empty_parameter() -> None:
    config = krm.read_function_config({"apiVersion": krm.CONFIG_API_VERSION, "kind": krm.CONFIG_KIND, "spec": {"tolerations": []}})
    assert config.options.tolerations == ()
    assert argocd.settings_from_env({"ARGOCD_APP_PARAMETERS": '[{"name": "tolerations", "string": ""}]'}).options == Options()
    assert argocd.settings_from_env({"ARGOCD_APP_PARAMETERS": '[{"name": "tolerations", "array": []}]'}).options == Options()


def test_a_map_is_no_parameter_s_form_and_an_array_only_a_list_s() -> None:
    from modelplane_render.errors import UsageError

    with pytest.raises(UsageError, match=r"'tolerations' takes a string \(`string: ...`\) or an array \(`array: \[...\]`\), not a map"):
        argocd.settings_from_env({"ARGOCD_APP_PARAMETERS": '[{"name": "tolerations", "map": {"a": "b"}}]'})
    with pytest.raises(UsageError, match=r"parameter 'gateway' takes a string \(`string: ...`\), not an array"):
        argocd.settings_from_env({"ARGOCD_APP_PARAMETERS": '[{"name": "gateway", "array": ["a/b"]}]'})


def test_a_render_configs_affinity_is_yaml_in_place_and_each_problem_is_at_its_path() -> None:
    from modelplane_render.errors import InputError, error_line

    spec = {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}, "podAffinity": 3},
        "capabilities": ["IPC_LOK"],
    }
    with pytest.raises(InputError) as raised:
        krm.read_function_config({"apiVersion": krm.CONFIG_API_VERSION, "kind": krm.CONFIG_KIND, "metadata": {"name": "r"}, "spec": spec})
    assert [error_line(e) for e in raised.value.errors] == [
        "RenderConfig r: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: "
        "must have at least one node selector term",
        "RenderConfig r: spec.affinity.podAffinity: must be a mapping, not an integer (3)",
        "RenderConfig r: spec.capabilities: 'IPC_LOK' is not a Linux capability (did you mean \"IPC_LOCK\"?)",
    ]


def test_an_affinity_means_the_same_from_every_front_end() -> None:
    """A flag's JSON, a parameter's JSON text and a RenderConfig's mapping: one canonical value, so one render and one cache key."""
    value = {
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {"topologyKey": "k"}}]}
    }
    from_config = krm.read_function_config(
        {"apiVersion": krm.CONFIG_API_VERSION, "kind": krm.CONFIG_KIND, "spec": {"affinity": value}}
    ).options.affinity
    from_text = options.parse_affinity(json.dumps(value, indent=2))
    assert from_config == from_text == json.dumps(value, sort_keys=True, separators=(",", ":"))
    assert options.parse_affinity("{}") is None and options.parse_affinity("") is None


@pytest.mark.parametrize(
    "text,flags",
    [
        ("", None),
        ("--enable-alpha-plugins --enable-exec", None),  # always on: Argo CD's kustomize.buildOptions copied as it is
        ("--load-restrictor LoadRestrictionsNone", ("--load-restrictor=LoadRestrictionsNone",)),
        ("--enable-exec  --load-restrictor=LoadRestrictionsNone", ("--load-restrictor=LoadRestrictionsNone",)),
        (
            "--load-restrictor LoadRestrictionsNone --load-restrictor LoadRestrictionsRootOnly",
            ("--load-restrictor=LoadRestrictionsRootOnly",),
        ),
    ],
)
def test_kustomize_build_options_as_argo_cd_words_them(text: str, flags: tuple[str, ...] | None) -> None:
    from modelplane_render.options.kustomize_build import parse_kustomize_build_options

    assert parse_kustomize_build_options(text, "kustomize-build-options") == flags


@pytest.mark.parametrize(
    "text,message",
    [
        ("--enable-helm", "--enable-helm is not taken here: the sidecar image has no helm (argocd/image.toml)"),
        ("--load-restrictor", "--load-restrictor takes LoadRestrictionsRootOnly or LoadRestrictionsNone, not ''"),
        ("--load-restrictor=none", "--load-restrictor takes LoadRestrictionsRootOnly or LoadRestrictionsNone, not 'none'"),
        ("--enable-exec=false", "'--enable-exec=false' is not a kustomize build flag the sidecar takes"),
        ("-o out", "-o is not taken here: Argo CD reads the objects from standard output"),
        ("--reorder none", "'--reorder' is not a kustomize build flag the sidecar takes (--load-restrictor"),
    ],
)
def test_kustomize_build_options_refuse_what_the_sidecar_does_not_take(text: str, message: str) -> None:
    from modelplane_render.errors import UsageError
    from modelplane_render.options.kustomize_build import parse_kustomize_build_options

    with pytest.raises(UsageError) as refused:
        parse_kustomize_build_options(text, "kustomize-build-options")
    assert str(refused.value).startswith(f"kustomize-build-options {text!r}: ")
    assert message in str(refused.value)
