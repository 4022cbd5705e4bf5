"""The function config (kyaml's processors.go: validate the config, then process): a RenderConfig read strictly, every error at once.

Its render settings are the settings' table's rows with a RenderConfig field (options.SETTINGS),
each checked for its kind's form and then parsed as every front end parses it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ... import constants as c
from ...errors import FieldPath, Finding, InputError, UsageError, describe, unknown_field
from ...options import CONFIG_SETTINGS, LIST, OBJECT, SWITCH, Options, Setting, options_with, read
from ...options.pod_fields import SettingProblems
from .results import Place, locate

CONFIG_API_VERSION = c.RENDER_CONFIG_API
CONFIG_KIND = c.RENDER_CONFIG_KIND
CONFIG_FIELDS = ("apiVersion", "kind", "metadata", "spec")
CONFIG_SPEC_FIELDS = tuple(s.config_key for s in CONFIG_SETTINGS if s.config_key is not None)


@dataclass(frozen=True)
class FunctionConfig:
    """What the RenderConfig asks for: the renderer's options and the sources to generate from."""

    options: Options = field(default_factory=Options)
    sources: tuple[str, ...] = ()


def read_function_config(config: Any) -> FunctionConfig:
    """Validate the RenderConfig strictly (unknown fields, types, values), all errors at once.

    No function config at all means the defaults: render the replicas among the items as they are.
    """
    if config is None:
        return FunctionConfig()
    place = locate(config)
    if not isinstance(config, dict):
        raise InputError([place.problem((), f"functionConfig must be a {CONFIG_API_VERSION} {CONFIG_KIND} (a mapping)")])
    if place.ref.get("kind") is None:
        place.ref["kind"] = CONFIG_KIND
    problems: list[Finding] = []
    if (config.get("apiVersion"), config.get("kind")) != (CONFIG_API_VERSION, CONFIG_KIND):
        got = f"{config.get('apiVersion')} {config.get('kind')}"
        raise InputError([place.problem(("kind",), f"functionConfig must be a {CONFIG_API_VERSION} {CONFIG_KIND}, not {got}")])
    for key in config:
        if key not in CONFIG_FIELDS:
            problems.append(place.problem((key,), _unknown(key, CONFIG_FIELDS), at_key=True))
    if config.get("metadata") is not None and not isinstance(config.get("metadata"), dict):
        problems.append(place.problem(("metadata",), "must be a mapping"))
    spec = config.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise InputError([*problems, place.problem(("spec",), f"must be a mapping, not {describe(spec)}")])
    for key in spec:
        if key not in CONFIG_SPEC_FIELDS:
            problems.append(place.problem(("spec", key), _unknown(key, CONFIG_SPEC_FIELDS), at_key=True))
    values = {s.name: _setting(place, spec, s, problems) for s in CONFIG_SETTINGS if s.field is not None}
    sources = _sources(place, spec.get("sources"), problems)
    if problems:
        raise InputError(problems)
    return FunctionConfig(options_with(values), sources)


def _unknown(key: str, known: Iterable[str]) -> str:
    return unknown_field(key, sorted(known))


def _fits(setting: Setting, value: Any) -> bool:
    """Whether value has the form a RenderConfig gives the setting's kind (options' docstring: how a value travels)."""
    if setting.kind == SWITCH:
        return isinstance(value, bool)
    if setting.kind == LIST:
        return isinstance(value, list) and all(isinstance(entry, str) for entry in value)
    if setting.kind == OBJECT:
        return isinstance(value, dict)
    return isinstance(value, str)


def _form(setting: Setting) -> str:
    if setting.kind == SWITCH:
        return "true or false"
    if setting.kind == LIST:
        return f"a list of {setting.metavar} strings" if setting.metavar else "a list of strings"
    if setting.kind == OBJECT:
        return "a mapping"
    return "a string"


def _setting(place: Place, spec: dict[str, Any], setting: Setting, problems: list[Finding]) -> Any:
    """The setting's value from spec (None: absent, or wrong and reported in problems)."""
    assert setting.config_key is not None
    value = spec.get(setting.config_key)
    if value is None:
        return None
    path = ("spec", setting.config_key)
    if not _fits(setting, value):
        problems.append(place.problem(path, f"must be {_form(setting)}, not {describe(value)}"))
        return None
    try:
        return read(setting, value, "")
    except SettingProblems as exc:
        problems += [place.problem(path + tuple(inner), message) for inner, message in exc.problems]
        return None
    except UsageError as exc:
        problems.append(place.problem(path, str(exc).strip()))
        return None


def _sources(place: Place, value: Any, problems: list[Finding]) -> tuple[str, ...]:
    """Source paths: relative, inside the directory the function runs in (kustomize's own rule).

    kustomize refuses to read a file outside the kustomization's directory (its default load
    restrictor); a function config in a shared or remote base must not reach further either.
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(place.problem(("spec", "sources"), f"must be a list of paths, not {describe(value)}"))
        return ()
    root = os.path.realpath(".")
    found = []
    for i, entry in enumerate(value):
        path: FieldPath = ("spec", "sources", i)
        if not isinstance(entry, str) or not entry:
            problems.append(place.problem(path, f"must be a path (a non-empty string), not {describe(entry)}"))
        elif os.path.isabs(entry):
            problems.append(place.problem(path, "must be relative to the kustomization's directory, where the function runs"))
        elif os.path.commonpath([root, os.path.realpath(entry)]) != root:
            problems.append(
                place.problem(path, "must stay inside the kustomization's directory (kustomize's load restrictor does the same)")
            )
        else:
            found.append(entry)
    return tuple(found)
