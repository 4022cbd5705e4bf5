"""What libyaml's syntax errors mean, said so that a user knows what to fix: a tab that indents, a key too
long for YAML's implicit form, a ':' missing a line above, an unclosed flow collection and where it began."""

from __future__ import annotations

import yaml

from .document import LINE_BREAK


def syntax_message(exc: yaml.MarkedYAMLError, text: str, *, too_deep: str) -> str:
    """libyaml's complaint as a sentence that says what to fix (`too_deep`: the loader's own words for depth)."""
    problem, context = exc.problem or "invalid YAML", exc.context
    if problem == "second occurrence" and context and "duplicate anchor" in context and exc.context_mark:
        # PyYAML's words, reordered to read as one sentence.
        return f"{context.split(';')[0]} (first given on line {exc.context_mark.line + 1})"
    if problem.startswith("exceeded maximum nesting depth"):
        return too_deep  # libyaml's own bound (1000), met before our scan could see level 101
    mark = exc.problem_mark
    if problem in _LONG_KEY_PROBLEMS and mark is not None and mark.column >= MAX_SIMPLE_KEY:
        return f"{problem}: a key is at most {MAX_SIMPLE_KEY} characters long in YAML unless written as an explicit `? key`"
    if problem == _NO_TOKEN and mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        return "a tab indents this line: YAML indents with spaces only"
    if problem == _MAPPING_VALUE_HERE:
        # libyaml sees the fault only at the next colon: often a line after the one at fault.
        return f"{problem}: is a ':' missing after a key on a line above, or does a value hold ': ' and need quotes?"
    start = exc.context_mark
    if context and context.startswith(_FLOW_CONTEXTS) and start is not None:
        # The end of the file is where libyaml gives up; where the collection began is what to look at.
        return f"{problem} ({context} that starts at line {start.line + 1}, column {start.column + 1})"
    return problem + (f" ({context})" if context else "")


_NO_TOKEN = "found character that cannot start any token"
_MAPPING_VALUE_HERE = "mapping values are not allowed in this context"
_FLOW_CONTEXTS = ("while parsing a flow sequence", "while parsing a flow mapping")


def _char_at(text: str, line: int, column: int) -> str:
    """The character at a 0-based libyaml line and column, or '' when there is none."""
    lines = LINE_BREAK.split(text, maxsplit=line + 1)
    return lines[line][column : column + 1] if line < len(lines) else ""


# YAML's own limit on an implicit ("simple") key, and what libyaml says when a line passes it.
MAX_SIMPLE_KEY = 1024
_LONG_KEY_PROBLEMS = frozenset({_MAPPING_VALUE_HERE, "could not find expected ':'"})
