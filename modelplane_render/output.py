"""Stage 5, output: parse every rendered object back, check it against its plan, order it, serialise.

Nothing is printed until all of it has been rendered and checked: a partial render that Argo
CD applies with pruning deletes live serving workloads, so output is all or nothing.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any, Optional

import yaml

from . import template_yaml
from .errors import RenderFailure
from .plan import PlannedObject
from .yaml_scalars import (
    BOOL,
    INT,
    MAP,
    MERGE,
    NULL,
    RESOLVED,
    SCALAR_OUT,
    SCALARS,
    SEQ,
    STR,
    STRING_OUT,
    VALUE,
    resolve,
    scalar_out,
    string_out,
    string_style,
    tag_of,
)


class _Slow(Exception):
    """A value the fast paths below don't take: PyYAML's own constructor or representer does it."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe loader, with the tag of each plain scalar remembered (values repeat: keys, kinds, labels)."""

    resolve = resolve


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Multi-line strings (an EndpointPickerConfig, a CEL expression) as literal blocks, for review.

    `represent` builds the node tree of plain data (dicts, lists, str, int, bool, None) directly,
    as SafeRepresenter would build it, and hands it to the C emitter: PyYAML's generic
    representer costs as much as the rest of a render. Anything else (a float, a shared
    container that would become an anchor) goes through SafeRepresenter as before.
    """

    literal_blocks = True  # _represent_str's choice, made again by _node

    def represent(self, data: Any) -> None:
        if self.default_style is None and self.default_flow_style is False and not self.sort_keys:
            try:
                node = _node(data, set(), self.literal_blocks)
            except _Slow:
                pass
            else:
                self.serialize(node)
                return
        super().represent(data)

    resolve = resolve


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar(STR, value, style=string_style(value, True))


_Dumper.add_representer(str, _represent_str)


# How the output is written: block style, keys in the templates' order, UTF-8 as it is, no folding.
# Every writer of output text (serialise, the one-parse path, template_yaml's forms) uses these.
_OUTPUT_STYLE: dict[str, Any] = {"default_flow_style": False, "sort_keys": False, "allow_unicode": True, "width": 4096}


def output_dumper(stream: Any) -> Any:
    """A _Dumper writing to stream in the output's style."""
    return _Dumper(stream, **_OUTPUT_STYLE)


class PlainDumper(_Dumper):
    """PyYAML's own safe dumper, strings and all, with _Dumper's faster way to it (for text the plan embeds)."""

    literal_blocks = False


PlainDumper.add_representer(str, yaml.representer.SafeRepresenter.represent_str)
# One memo serves both: they read the same implicit resolvers (yaml.resolver.Resolver's).
assert _Loader.yaml_implicit_resolvers is _Dumper.yaml_implicit_resolvers is yaml.resolver.Resolver.yaml_implicit_resolvers


def _node(value: Any, seen: set[int], literal: bool) -> Any:
    """The node SafeRepresenter (block style, keys unsorted; with _represent_str when literal) makes of value."""
    kind = type(value)
    if kind is str:
        return yaml.ScalarNode(STR, value, style=string_style(value, literal))
    if kind is dict or kind is list:
        if id(value) in seen:
            raise _Slow  # the same object twice: SafeRepresenter writes an anchor and an alias
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
    raise _Slow


def _data(loader: Any, node: Any, seen: set[int]) -> Any:
    """What SafeConstructor makes of a document of plain data (maps, sequences, str, int, float, bool, null)."""
    tag, kind = node.tag, type(node)
    if kind is yaml.ScalarNode:
        if tag == STR:
            return node.value
        constructor = SCALARS.get(tag)
        if constructor is None:
            raise _Slow  # a timestamp, binary, a tag of its own
        return constructor(loader, node)
    if id(node) in seen:
        raise _Slow  # an alias: SafeConstructor shares the object
    seen.add(id(node))
    if tag == MAP and kind is yaml.MappingNode:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not yaml.ScalarNode or key_node.tag in (MERGE, VALUE):
                raise _Slow
            result[_data(loader, key_node, seen)] = _data(loader, value_node, seen)
        return result
    if tag == SEQ and kind is yaml.SequenceNode:
        return [_data(loader, item, seen) for item in node.value]
    raise _Slow


def _load_all(text: str) -> list[Any]:
    """yaml.load_all(text, Loader=_Loader), with plain data constructed by _data."""
    loader = _Loader(text)
    try:
        documents = []
        while loader.check_node():
            node = loader.get_node()
            try:
                documents.append(_data(loader, node, set()))
            except _Slow:
                documents.append(loader.construct_document(node))
        return documents
    finally:
        loader.dispose()


# Dependencies first: identities and config, then claims, then what serves, then what routes.
KIND_ORDER = (
    "Namespace",
    "CustomResourceDefinition",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "PersistentVolumeClaim",
    "ResourceClaimTemplate",
    "Service",
    "LeaderWorkerSet",
    "Deployment",
    "StatefulSet",
    "PodDisruptionBudget",
    "InferencePool",
    "HTTPRoute",
)
_RANK = {kind: i for i, kind in enumerate(KIND_ORDER)}


def parse_checked(planned: PlannedObject, text: str) -> dict[str, Any]:
    """The rendered text as an object, or an internal failure that names the template."""
    try:
        documents = _load_all(text)
    except yaml.YAMLError as exc:
        raise RenderFailure(
            f"template {planned.template} rendered invalid YAML for {planned.kind} {planned.name}: {str(exc).splitlines()[0]}"
        ) from None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise RenderFailure(f"template {planned.template} must render exactly one object, rendered {len(documents)}")
    obj: dict[str, Any] = documents[0]
    _check_plan(planned, obj)
    return obj


def _check_plan(planned: PlannedObject, obj: dict[str, Any]) -> None:
    meta = obj.get("metadata") or {}
    got = (obj.get("apiVersion"), obj.get("kind"), meta.get("name"), meta.get("namespace"))
    want = (planned.api_version, planned.kind, planned.name, planned.namespace)
    if got != want:
        raise RenderFailure(f"template {planned.template} rendered {got}, the plan says {want}")


def parse_checked_and_serialised(planned: PlannedObject, text: str) -> tuple[dict[str, Any], str]:
    """parse_checked(planned, text), and the object's part of the output (serialise([object])), from one parse.

    The templates' own YAML is read and written by template_yaml, as libyaml would. Else the
    rendered text is parsed into events once: they build the object and, restyled as
    SafeRepresenter would style its values (block collections, canonical scalars, literal blocks
    for multi-line strings), go straight back to libyaml's emitter. Whatever that path does not
    take (anchors, explicit tags, duplicate keys, floats, timestamps, more or less than one
    mapping) takes parse_checked and serialise, so the result is theirs either way.
    """
    fast = template_yaml.read(text)
    if fast is not None:
        written = template_yaml.write(fast)
        if written is not None:
            _check_plan(planned, fast)
            return fast, written
    parsed = _parse_and_emit(text)
    if parsed is None:
        obj = parse_checked(planned, text)
        return obj, serialise([obj])
    _check_plan(planned, parsed[0])
    return parsed


class _Pending:
    """A mapping waiting for its next key."""


_NO_KEY = _Pending()


def _parse_and_emit(text: str) -> Optional[tuple[dict[str, Any], str]]:
    """One mapping of plain data as (object, `---` and its YAML as serialise writes it), or None to go the long way.

    Each event goes to the emitter as soon as it is restyled; when the document turns out not to
    be plain data, what was emitted is thrown away with the emitter.
    """
    loader = _Loader(text)
    stream = io.StringIO()
    dumper = output_dumper(stream)
    emit = dumper.emit
    try:
        emit(yaml.StreamStartEvent())
        emit(yaml.DocumentStartEvent(explicit=False))
        root = _plain_document(loader, emit)
        emit(yaml.DocumentEndEvent(explicit=False))
        emit(yaml.StreamEndEvent())
    except (_Slow, yaml.YAMLError):
        return None
    finally:
        loader.dispose()
        dumper.dispose()
    return root, "---\n" + stream.getvalue()


def _plain_document(loader: Any, emit: Callable[[Any], None]) -> dict[str, Any]:
    """The mapping the one document builds, each of its events restyled for the output and passed to emit; _Slow for anything else."""
    get = loader.get_event
    if type(get()) is not yaml.StreamStartEvent or type(get()) is not yaml.DocumentStartEvent:
        raise _Slow
    # Locals: this loop runs for every node of every object.
    scalar_event, mapping_start, sequence_start = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent
    collection_end = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    memo, str_tag, no_key = RESOLVED.get, STR, _NO_KEY
    string_memo, scalar_memo = STRING_OUT.get, SCALAR_OUT.get
    stack: list[list[Any]] = []  # per open collection: [the collection, the key waiting for its value]
    root: Any = None
    while True:
        event = get()
        kind = type(event)
        if kind is scalar_event:
            if event.anchor is not None or event.tag is not None or not stack:
                raise _Slow  # an anchor, a tag, or a document that is one scalar
            value = event.value
            implicit = event.implicit
            # A quoted scalar is a string; a plain one is what its text resolves to.
            tag = (memo((value, implicit)) or tag_of(value, implicit)) if implicit[0] else str_tag
            if tag == str_tag:
                data: Any = value
                event.style, event.implicit = string_memo(value) or string_out(value)
            elif tag == INT or tag == BOOL or tag == NULL:
                data, event.value, event.implicit = scalar_memo(value) or scalar_out(tag, value)
                event.style = None
            else:
                raise _Slow  # a float, timestamp, merge or value key: SafeRepresenter's own rules
            event.tag = tag
            emit(event)
            top = stack[-1]
            container = top[0]
            if type(container) is list:
                container.append(data)
            elif top[1] is no_key:
                if data in container:
                    raise _Slow  # a duplicate key: the object keeps one, the events have both
                top[1] = data
            else:
                container[top[1]] = data
                top[1] = no_key
        elif kind is mapping_start or kind is sequence_start:
            if event.anchor is not None or event.tag is not None:
                raise _Slow
            new: Any = {} if kind is mapping_start else []
            event.tag = MAP if kind is mapping_start else SEQ
            event.flow_style = False
            emit(event)
            if stack:
                top = stack[-1]
                container = top[0]
                if type(container) is list:
                    container.append(new)
                elif top[1] is no_key:
                    raise _Slow  # a collection as a key
                else:
                    container[top[1]] = new
                    top[1] = no_key
            else:
                root = new
            stack.append([new, no_key])
        elif kind in collection_end:
            emit(event)
            stack.pop()
            if not stack:
                break
        else:
            raise _Slow  # an alias
    if type(get()) is not yaml.DocumentEndEvent or type(get()) is not yaml.StreamEndEvent or type(root) is not dict:
        raise _Slow
    return root


def sort_key(obj: dict[str, Any]) -> tuple[int, str, str, str]:
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind", ""))
    return (_RANK.get(kind, len(KIND_ORDER)), kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def serialise(objects: Iterable[dict[str, Any]]) -> str:
    """One YAML stream, `---` before every object, keys in the order the templates give them."""
    parts = []
    for obj in objects:
        parts.append("---\n" + yaml.dump(obj, Dumper=_Dumper, **_OUTPUT_STYLE))
    return "".join(parts)
