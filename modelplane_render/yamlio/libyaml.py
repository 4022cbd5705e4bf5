"""PyYAML (C-backed where libyaml is there) in the output's settings: how objects are read back and written.

`tests/test_yamlio.py` holds `fast` to what this module reads and writes, byte for byte.
"""

from __future__ import annotations

from typing import Any

import yaml

from .scalars import BOOL, INT, MAP, NULL, SEQ, STR, resolve, string_style, written_resolve

# PyYAML's safe loader, on libyaml when it is there: the sources, the CRD and the rendered text.
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SAFE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Slow(Exception):
    """A value the fast representer below doesn't take: PyYAML's own SafeRepresenter does it."""


class Loader(SAFE_LOADER):  # type: ignore[misc]
    """PyYAML's safe loader, with the tag of each plain scalar remembered (values repeat: keys, kinds, labels)."""

    resolve = resolve


class Dumper(SAFE_DUMPER):  # type: ignore[misc]
    """Multi-line strings (an EndpointPickerConfig, a CEL expression) as literal blocks, for review.

    `represent` builds the node tree of plain data (dicts, lists, str, int, bool, None) directly,
    as SafeRepresenter would build it, and hands it to the C emitter: PyYAML's generic
    representer costs as much as the rest of a render. Anything else (a float, a shared
    container that would become an anchor) goes through SafeRepresenter as before.
    """

    literal_blocks = True  # _represent_str's choice, made again by _node
    resolve = written_resolve

    def represent(self, data: Any) -> None:
        if self.default_style is None and self.default_flow_style is False and not self.sort_keys:
            try:
                node = _node(data, set(), self.literal_blocks)
            except Slow:
                pass
            else:
                self.serialize(node)
                return
        super().represent(data)

    resolve = resolve


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(STR, value, style=string_style(value, True))


Dumper.add_representer(str, _represent_str)


class PlainDumper(Dumper):
    """PyYAML's own safe dumper, strings and all, with Dumper's faster way to it (for text the plan embeds)."""

    literal_blocks = False

    def ignore_aliases(self, data: Any) -> bool:
        # An object met twice is written out twice: `&id001` / `*id001` is unreadable in a PR's diff.
        return True


PlainDumper.add_representer(str, yaml.representer.SafeRepresenter.represent_str)
# One memo serves both: they read the same implicit resolvers (yaml.resolver.Resolver's).
assert Loader.yaml_implicit_resolvers is Dumper.yaml_implicit_resolvers is yaml.resolver.Resolver.yaml_implicit_resolvers

# How the output is written: block style, keys in the templates' order, UTF-8 as it is, no folding.
# Every writer of output text (write_document, fast's forms) uses these.
OUTPUT_STYLE: dict[str, Any] = {"default_flow_style": False, "sort_keys": False, "allow_unicode": True, "width": 4096}


def output_dumper(stream: Any) -> Any:
    """A Dumper writing to stream in the output's style."""
    return Dumper(stream, **OUTPUT_STYLE)


def _node(value: Any, seen: set[int], literal: bool) -> Any:
    """The node SafeRepresenter (block style, keys unsorted; with _represent_str when literal) makes of value."""
    kind = type(value)
    if kind is str:
        return yaml.ScalarNode(STR, value, style=string_style(value, literal))
    if kind is dict or kind is list:
        if id(value) in seen:
            raise Slow  # the same object twice: SafeRepresenter writes an anchor and an alias
        seen.add(id(value))
        if kind is dict:
            return yaml.MappingNode(MAP, [(_node(k, seen, literal), _node(v, seen, literal)) for k, v in value.items()], flow_style=False)
        return yaml.SequenceNode(SEQ, [_node(v, seen, literal) for v in value], flow_style=False)
    if kind is int:
        return yaml.ScalarNode(INT, str(value), style=None)
    if kind is bool:
        return yaml.ScalarNode(BOOL, "true" if value else "false", style=None)
    if value is None:
        return yaml.ScalarNode(NULL, "null", style=None)
    raise Slow


def load_all(text: str) -> list[Any]:
    """Every document of text, as PyYAML's safe loader builds it."""
    return list(yaml.load_all(text, Loader=Loader))


def write_document(obj: Any) -> str:
    """One object as a document of the output stream: `---`, then its YAML in the output's style."""
    return "---\n" + str(yaml.dump(obj, Dumper=Dumper, **OUTPUT_STYLE))


def write_plain(data: Any) -> str:
    """data as PyYAML's safe dumper writes it in block style (no literal blocks: text the plan embeds)."""
    return str(yaml.dump(data, Dumper=PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True))


# What a caller outside yamlio catches and keys by, without importing PyYAML itself.
YAMLError = yaml.YAMLError
PYYAML_VERSION: str = yaml.__version__


def load_one(text: str) -> Any:
    """The one document of text, as PyYAML's safe loader builds it."""
    return yaml.load(text, Loader=SAFE_LOADER)


def write_unaliased(data: Any) -> str:
    """data in block style with every alias written out (not every tool reads YAML anchors), key order kept."""

    class Unaliased(SAFE_DUMPER):  # type: ignore[misc]
        def ignore_aliases(self, data: object) -> bool:
            return True

    return str(yaml.dump(data, Dumper=Unaliased, sort_keys=False, default_flow_style=False, allow_unicode=True, width=4096))
