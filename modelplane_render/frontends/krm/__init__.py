"""The KRM function front end: a `config.kubernetes.io/v1` ResourceList in, one out.

Its rooms, as kyaml splits its framework: `resource_list` (read and write the ResourceList),
`config` (the function config), `results` (findings as results, and where an item came from),
`function` (the run).

kustomize runs `modelplane-render krm` as an exec KRM function (`kustomize build
--enable-alpha-plugins --enable-exec`). As in kyaml's fn framework, the steps are separate:
`parse_input` (read the ResourceList), `read_function_config` (validate our RenderConfig),
`render` (the one pipeline every front end uses) and `write_output` (items and results).

What a run does:
- every ModelReplica among the `items` is rendered and its objects take its place (a
  transformer); every other item passes through untouched: it is the node ruamel's round-trip
  loader read, written back, so comments, key order, quoting and the orchestrator's
  annotations (`internal.config.kubernetes.io/*`, `config.k8s.io/id`, ...) are kept;
- the function config's `spec.sources` (files or directories, relative to the directory the
  function runs in: kustomize runs it in the kustomization's directory) are read as the
  command line reads its paths, and their objects are added (a generator).
Both are rendered in one pass, so a replica defined twice is an error either way.

Errors: kustomize ignores `results` of severity error when a function exits 0, and when it
exits non-zero it shows only `exit status 1` and the function's stderr. So on invalid input the
function exits 1, writes the input items unchanged with the `results`, and prints every error
on stderr as `location: field.path: message`. Nothing is printed on stderr on success:
kustomize passes a function's stderr through even then.
"""

from .config import CONFIG_API_VERSION, CONFIG_KIND, CONFIG_SPEC_FIELDS, FunctionConfig, read_function_config
from .function import Outcome, is_orchestration_annotation, run_function

__all__ = [
    "CONFIG_API_VERSION",
    "CONFIG_KIND",
    "CONFIG_SPEC_FIELDS",
    "FunctionConfig",
    "Outcome",
    "is_orchestration_annotation",
    "read_function_config",
    "run_function",
]
