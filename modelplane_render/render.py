"""Stage 4, render: give each planned object its YAML shape through one Jinja template per kind.

No value reaches the YAML as raw text: every value goes through `tojson`, whose JSON is valid
YAML flow syntax for any string (quotes, newlines, `{{ }}`, `---`, tags are inert inside a
JSON string). `StrictUndefined` turns a missing value into an error, never an empty field.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
from typing import Any

import jinja2

try:  # CPython's own BLAKE2: a cold run does not pay for loading OpenSSL (hashlib's first import)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

from .cache.compiled import compiled_dir
from .errors import InternalError
from .plan import PlannedObject
from .templates_compiled import COMPILED

# Characters JSON leaves raw but YAML would not keep as they are inside a double-quoted
# scalar: C1 controls and NEL (YAML line breaks or non-printable), the Unicode line and
# paragraph separators, BOM and non-characters. Escaped as \uXXXX, YAML reads them back exactly.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


# json.dumps with these arguments makes a new encoder on every call; one serves every value.
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": ")).encode


def to_json(value: Any) -> str:
    text = _ENCODE(value)
    if text.isascii() and "\x7f" not in text:  # the usual case, told without the regex's scan
        return text
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def templates_dir() -> str:
    """The templates shipped in the wheel, or the project's top-level templates/ in a checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    packaged = os.path.join(here, "templates")
    return packaged if os.path.isdir(packaged) else os.path.join(os.path.dirname(here), "templates")


def _bytecode_cache() -> Any:
    """Compiled templates kept between runs (Jinja checks each against its source), if a cache dir is writable.

    Compiling the templates costs more than rendering them; Argo CD starts a new process per app.
    """
    directory = compiled_dir(f"jinja-{jinja2.__version__}")
    return jinja2.FileSystemBytecodeCache(directory) if directory else None


@functools.cache
def environment() -> Any:
    class Environment(jinja2.Environment):
        def getattr(self, obj: Any, attribute: str) -> Any:
            """`v.name` is a key of the plan's dicts: looked up first, as no template means a dict's method.

            Jinja tries the attribute first, and the AttributeError it catches for every field cost
            a fifth of rendering; anything else (a missing key, another type) goes Jinja's way.
            """
            if type(obj) is dict and attribute in obj:
                return obj[attribute]
            return super().getattr(obj, attribute)

    env = Environment(
        loader=_Precompiled(templates_dir()),
        bytecode_cache=_bytecode_cache(),
        # A run is one process: the templates can't change under it, so don't stat them on every object.
        auto_reload=False,
        cache_size=-1,  # every template kept, in a plain dict (an LRU cache takes a lock on each lookup)
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["tojson"] = to_json
    # Nothing but `v` and the templates' own macros: Jinja's default globals (range, dict, lipsum...)
    # are not used, and while there are any, every `{% from %}` import works out which of them the
    # imported template lacks, which cost a fifth of rendering.
    env.globals.clear()
    env.policies["json.dumps_function"] = None
    return env


# templates/ as Jinja compiled them ahead of time, one module each (written by write_compiled_templates;
# tests/test_render.py holds them equal to a compile of templates/): a cold run compiles no template (about
# 50 ms) and never builds Jinja's lexer. A module is used only while its template's text and Jinja's version
# are the ones it was compiled from; otherwise the template is compiled here, as it always was.
COMPILED_PACKAGE = f"{__package__}.templates_compiled"


def compiled_module(template: str) -> str:
    return "t_" + re.sub(r"\W", "_", template.removesuffix(".yaml.j2"))


def _digest(source: str) -> str:
    return blake2b(source.encode("utf-8"), digest_size=16).hexdigest()


class _Precompiled(jinja2.FileSystemLoader):
    def load(self, environment: Any, name: str, globals: Any = None) -> Any:
        source, filename, _ = self.get_source(environment, name)
        compiled = _compiled_index().get(name)
        if compiled is not None and compiled == (_digest(source), jinja2.__version__):
            spec = importlib.util.find_spec(f"{COMPILED_PACKAGE}.{compiled_module(name)}")
            code = spec.loader.get_code(spec.name) if spec is not None and spec.loader is not None else None  # type: ignore[attr-defined]
            if code is not None:
                # Executed into a namespace of its own, as Jinja's Template.from_code does, with the template's
                # own file name, so an error in it is traced to its line in templates/.
                namespace: dict[str, Any] = {"environment": environment, "__file__": filename}
                exec(code, namespace)
                return environment.template_class.from_module_dict(environment, namespace, environment.make_globals(globals))
        return super().load(environment, name, globals)


def _compiled_index() -> dict[str, tuple[str, str]]:
    """template name -> (digest of the text it was compiled from, Jinja's version)."""
    return COMPILED


def compiled_templates() -> dict[str, str]:
    """The modules of templates_compiled/, file name -> text, as this Jinja compiles templates/ now."""
    env = environment()
    loader = jinja2.FileSystemLoader(templates_dir())
    files: dict[str, str] = {}
    index = []
    for name in sorted(loader.list_templates()):
        source, _, _ = loader.get_source(env, name)
        code = env.compile(source, name, name, raw=True, defer_init=True)
        files[f"{compiled_module(name)}.py"] = f"# Generated from templates/{name} by Jinja {jinja2.__version__}: don't edit.\n{code}\n"
        index.append(f"    {name!r}: ({_digest(source)!r}, {jinja2.__version__!r}),")
    files["__init__.py"] = (
        '"""templates/ compiled by Jinja ahead of time (modelplane_render.render.write_compiled_templates): the name of each\n'
        'template, and the digest of the text and the Jinja version it was compiled from. Generated: don\'t edit."""\n\n'
        "COMPILED = {\n" + "\n".join(index) + "\n}\n"
    )
    return files


def write_compiled_templates() -> None:
    """Write templates_compiled/ again, after a template changes: `python -c 'from modelplane_render.render import
    write_compiled_templates as w; w()'`."""
    directory = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates_compiled")
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name.endswith(".py"):
            os.remove(os.path.join(directory, name))
    for name, text in compiled_templates().items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
            handle.write(text)


def render_object(obj: PlannedObject) -> str:
    """The template's text for one object; a fault in a template is an InternalError that names it and its line."""
    try:
        return str(environment().get_template(obj.template).render(v=obj.values))
    except MemoryError:
        raise
    except Exception as exc:
        where = _template_line(exc, obj.template)
        raise InternalError(f"in template {where} ({type(exc).__name__}: {exc}) while rendering {obj.kind} {obj.name}") from exc


def _template_line(exc: BaseException, template: str) -> str:
    """`name.yaml.j2:LINE` of the innermost template frame (Jinja maps its frames to template lines)."""
    import traceback  # only on this failure path: a render that succeeds doesn't pay for it

    lineno = getattr(exc, "lineno", None)  # a syntax error carries its own position
    if lineno is not None:
        template = getattr(exc, "name", None) or template
    else:
        # A template loaded from memory (the tests' overrides) has no file name: "<template>".
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.endswith(".j2") or f.filename == "<template>"]
        if frames:
            filename = frames[-1].filename
            template, lineno = (template if filename == "<template>" else os.path.basename(filename)), frames[-1].lineno
    return f"{template}:{lineno}" if lineno else template
