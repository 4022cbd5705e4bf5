"""What start-up imports, decided in this one place (tests/test_startup.py holds it).

Argo CD starts `generate` anew for every app on every commit, so two paths are kept light:

- a render-cache hit: answered before the command line is parsed, it imports CACHE_HIT and no
  other module of ours, and neither YAML, argparse nor dataclasses;
- a cold render of valid input: it imports the stages and what they use, and none of COLD_NEVER.

An import waits inside a function only where DEFERRED says so and why; every other import is at
the top of its module. Costs were measured at 59fe3fa with `python -X importtime` (first import,
with what a render imports already loaded).
"""

from __future__ import annotations

CACHE_HIT = frozenset(
    {
        "modelplane_render",
        "modelplane_render.main",
        "modelplane_render.errors",
        "modelplane_render.cache",
        "modelplane_render.cache.directory",
        "modelplane_render.cache.render",
        "modelplane_render.walk",
        "modelplane_render.commands",
        "modelplane_render.commands.writer",
    }
)

# What a cold render of valid input never imports: only an error, another command or a zip install needs them.
COLD_NEVER = ("argparse", "difflib", "traceback", "importlib.resources", "pydantic", "ruamel", "subprocess", "modelplane_render.frontends")

# (module, what it imports inside a function): why the import waits.
DEFERRED = {
    ("modelplane_render.main", "argparse"): "a parser is built only for a command line _plain_command_line can't read (8 ms)",
    ("modelplane_render.errors", "re"): "only an error line is escaped: a cache hit needs no regular expression",
    ("modelplane_render.main", "traceback"): "only an internal error with MODELPLANE_RENDER_DEBUG=1 prints one",
    ("modelplane_render.main", "types"): "SimpleNamespace, only for the command lines read without argparse",
    (
        "modelplane_render.main",
        "modelplane_render.commands.arguments",
    ): "the settings' table, only for the command lines read without argparse: a cache hit needs none",
    ("modelplane_render.commands.render", "modelplane_render.pipeline"): "a cache hit found after parsing loads no stage",
    ("modelplane_render.crd", "importlib.resources"): "only an install without files on disk (a zip) reads the CRD through it (2 ms)",
    ("modelplane_render.render", "traceback"): "only a failing template is traced to its line",
    ("modelplane_render.frontends.kustomize_app", "subprocess"): "only a directory that kustomize builds runs a process",
    (
        "modelplane_render.commands.kustomized",
        "modelplane_render.frontends.kustomize_app",
    ): "only a PATH that kustomize builds loads the front end that runs it",
    (
        "modelplane_render.commands.kustomized",
        "modelplane_render.sources",
    ): "only a PATH holding a kustomization is read for what it does: a cache hit after parsing reads no YAML",
    ("modelplane_render.validation.selectors", "modelplane_render.dra_cel.verdicts"): "a replica without DRA selectors reads no verdict",
    (
        "modelplane_render.commands.argocd",
        "modelplane_render.frontends.argocd_project",
    ): "only `argocd appproject` makes a project: `argocd generate` runs for every app on every commit",
    ("modelplane_render.commands.argocd", "modelplane_render.yamlio.libyaml"): "only `argocd appproject` writes its one document here",
    (
        "modelplane_render.dra_cel.verdicts",
        "modelplane_render.dra_cel.check",
    ): "a known expression's verdict is read, not compiled: no CEL library (about 50 ms)",
    (
        "modelplane_render.dra_cel.environment",
        "cel_expr_python",
    ): "the CEL library loads only to compile an expression no earlier run judged",
    ("modelplane_render.dra_cel.check", "difflib"): "only an undeclared name in a selector is matched to a suggestion (3 ms)",
    ("modelplane_render.yamlio.kubernetes", "decimal"): "only a float mapping key (`1.5: x`) is written as Go writes it",
    ("modelplane_render.facts.shells", "shlex"): "only an engine a shell script starts is read word by word",
    ("modelplane_render.errors", "difflib"): "only a misspelt field name or enum value is matched to a suggestion (3 ms)",
}
