"""What kubectl refuses in a file's text that libyaml (PyYAML) reads: each found where it is.

kubectl reads a file with k8s.io/apimachinery's YAMLReader, which splits the stream into documents at
every line that starts with `---` (before any YAML parser sees it), then hands each piece to go-yaml v2
under sigs.k8s.io/yaml. So:
- a `%YAML` or `%TAG` directive reaches go-yaml alone, in the piece before its `---` (go-yaml: "did not
  find expected <document start>");
- a `---` line with anything but a comment after it (`--- !!map`, `--- {}`, `----`) is the splitter's
  own error ("invalid Yaml document separator");
- go-yaml v2 knows no `\\/` escape in a double-quoted scalar (YAML 1.2 added it; libyaml 0.2 reads it);
- go-yaml v2 reads a `,` (or a bracket) right after a tag as part of the tag, in a flow collection too:
  `[!, x]` is `["x"]` to it and `["", "x"]` to libyaml, and `{name: !!str, key: k}` is its syntax error.
Each function returns (index in the text, message), or None.
"""

from __future__ import annotations

import re
from typing import Optional

import yaml

_DIRECTIVE_LINE = re.compile(r"^%", re.MULTILINE)
_SEPARATOR_LINE = re.compile(r"^---([^\n]*)", re.MULTILINE)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def directive(text: str, loader: type) -> Optional[tuple[int, str]]:
    """The first %YAML or %TAG directive, which kubectl splits from the document it is for."""
    if not (text.startswith("%") or "\n%" in text):
        return None
    if not any(isinstance(e, yaml.DocumentStartEvent) and (e.version or e.tags) for e in yaml.parse(text, Loader=loader)):
        return None
    at = next((m.start() for m in _DIRECTIVE_LINE.finditer(text)), 0)
    return at, "a %YAML or %TAG directive: kubectl does not read it with its document (it splits the stream at ---); remove it"


def separator(text: str) -> Optional[tuple[int, str]]:
    """The first line that starts with `---` and holds more than blanks or a comment after it."""
    for match in _SEPARATOR_LINE.finditer(text):
        after = match.group(1).strip()
        if after and not after.startswith("#"):
            shown = after if len(after) <= 40 else after[:37] + "..."
            return match.start(), (
                f"`---` followed by {shown}: kubectl splits a file into documents at each line that starts with ---, "
                "and refuses one with more than a comment after it; put the rest on the next line"
            )
    return None


def escape(text: str) -> Optional[tuple[int, str]]:
    """The first `\\/` escape in a double-quoted scalar (a key's or a value's)."""
    if "\\/" not in text:
        return None
    try:
        # The pure-Python scanner: its marks' indexes are the text's (only a text holding `\/` pays for it).
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.ScalarToken) and token.style == '"':
                start = token.start_mark.index
                for match in _ESCAPE.finditer(text, start, token.end_mark.index):
                    if match.group(1) == "/":
                        return match.start(), "\\/ is no escape to Kubernetes YAML (go-yaml v2 refuses the document): write / alone"
    except yaml.YAMLError:
        return None  # composing meets the syntax error at the same place and reports it
    return None


_TAG_AGAINST_FLOW = re.compile(r"![^\s,\[\]{}]*[,\[\]{}]")


def tag_against_flow_indicator(text: str, loader: type) -> Optional[tuple[int, str]]:
    """The first tag written right against a `,`, `[`, `]`, `{` or `}`, which go-yaml takes into the tag."""
    if not _TAG_AGAINST_FLOW.search(text):
        return None
    try:
        # The source's scanner (libyaml's): its tag ends where a flow indicator starts; its marks' indexes are the text's.
        for token in yaml.scan(text, Loader=loader):
            if isinstance(token, yaml.TagToken) and token.end_mark.index < len(text) and text[token.end_mark.index] in ",[]{}":
                return token.start_mark.index, (
                    f"a tag right against `{text[token.end_mark.index]}`: Kubernetes YAML (go-yaml v2, as kubectl and the API "
                    "server read it) takes the character into the tag and reads what follows as this value; put a space after the tag"
                )
    except yaml.YAMLError:
        return None  # composing meets the syntax error at the same place and reports it
    return None
