"""A comparison as text for a terminal, or as Markdown for a pull-request comment."""

from __future__ import annotations

import html

from .compare import Change, Comparison

NO_CHANGE = "no change to the rendered output"
# GitHub refuses a comment longer than 65,536 characters; keep room for what a workflow adds.
MARKDOWN_LIMIT = 60_000
MARKDOWN_MARKER = "<!-- modelplane-render diff -->"
# How a comment starts: the marker a workflow finds it by, and its title.
_COMMENT_START = f"{MARKDOWN_MARKER}\n### modelplane-render diff\n"
_FOOTER_ROOM = 300

_RESET, _BOLD, _RED, _GREEN, _YELLOW, _CYAN = "\033[0m", "\033[1m", "\033[31m", "\033[32m", "\033[33m", "\033[36m"
_STATUS_COLOUR = {"added": _GREEN, "removed": _RED, "changed": _YELLOW}


def _counts(change: Change) -> str:
    if change.status == "added":
        return f"+{change.added}"
    if change.status == "removed":
        return f"-{change.removed}"
    return f"+{change.added} -{change.removed}"


def _summary(comparison: Comparison) -> str:
    c = comparison
    return (
        f"{c.count('added')} added, {c.count('removed')} removed, {c.count('changed')} changed (+{c.lines_added} -{c.lines_removed} lines)"
    )


def _file_header(comparison: Comparison, change: Change) -> tuple[str, str]:
    before = "/dev/null" if change.status == "added" else comparison.base
    after = "/dev/null" if change.status == "removed" else comparison.head
    return f"--- {before}\n", f"+++ {after}\n"


def format_text(comparison: Comparison, *, colour: bool = False) -> str:
    """The summary, the notes, then one unified diff per object, headed `Kind namespace/name`."""

    def paint(code: str, line: str) -> str:
        if not colour:
            return line
        body = line.rstrip("\n")
        return f"{code}{body}{_RESET}" + line[len(body) :]

    c = comparison
    where = f"{c.base} -> {c.head}" + (f" ({c.scope})" if c.scope else "")
    if not c.changes:
        return f"{where}: {NO_CHANGE} ({c.unchanged} objects)\n"
    out = [paint(_BOLD, f"{where}: {_summary(c)}\n"), "\n"]
    width = max(len(change.title) for change in c.changes)
    for change in c.changes:
        out.append(paint(_STATUS_COLOUR[change.status], f"  {change.status:<8} {change.title:<{width}}  {_counts(change)}\n"))
    if c.impacts:
        out.append("\n")
        out.extend(paint(_BOLD, f"impact: {line}\n") for line in c.impacts)
    if c.notes:
        out.append("\n")
        out.extend(paint(_YELLOW, f"note: {note}\n") for note in c.notes)
    for change in c.changes:
        out.append("\n")
        out.append(paint(_BOLD, f"{change.title}\n"))
        out.extend(paint(_BOLD, line) for line in _file_header(c, change))
        for line in change.hunks:
            code = _CYAN if line.startswith("@@") else _GREEN if line.startswith("+") else _RED if line.startswith("-") else ""
            out.append(paint(code, line) if code else line)
    return "".join(out)


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in the text, so an object can't close it."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`"


def format_text_per_cluster(comparisons: list[Comparison], *, colour: bool = False) -> str:
    """Each cluster's comparison (format_text), one after another, a blank line between."""
    return "\n".join(format_text(c, colour=colour) for c in comparisons)


def format_markdown_per_cluster(comparisons: list[Comparison], *, limit: int = MARKDOWN_LIMIT) -> str:
    """One pull-request comment for several clusters: a section each, the comment's room shared among them."""
    if len(comparisons) == 1:
        return format_markdown(comparisons[0], limit=limit)
    room = (limit - 200) // len(comparisons)
    sections = [format_markdown(c, limit=room, heading=f"#### {_scope_heading(c)}\n") for c in comparisons]
    return _COMMENT_START + "".join("\n" + s for s in sections)


def _scope_heading(c: Comparison) -> str:
    parts = ([f"Kustomization `{c.app}`"] if c.app else ["The other paths"] if c.cluster is None else []) + (
        [f"Cluster `{c.cluster}`"] if c.cluster else []
    )
    return ", ".join(parts)


def format_markdown(comparison: Comparison, *, limit: int = MARKDOWN_LIMIT, heading: str = "") -> str:
    """A pull-request comment: the summary, then a collapsible section per source file (as argocd-diff-preview).

    With a heading (a cluster's, in a comment for several), the section alone: no marker or title.
    """
    c = comparison
    head = [heading if heading else _COMMENT_START, "\n"]
    where = f"`{c.base}` → `{c.head}`" + (f" ({c.scope})" if c.scope and not heading else "")
    if not c.changes:
        head.append(f"{where}: {NO_CHANGE} ({c.unchanged} objects).\n")
        return "".join(head)
    head.append(f"{where}: **{_summary(c)}**\n\n")
    head.append("| change | object | source | lines |\n| --- | --- | --- | --- |\n")
    # The table may take half of the comment; the diffs fill what is left, the footer has its room.
    budget = limit - _FOOTER_ROOM
    rows = [f"| {change.status} | {_cell(change.title)} | {_cell(change.file)} | {_counts(change)} |\n" for change in c.changes]
    for index, row in enumerate(rows):
        if sum(map(len, head)) + len(row) > budget // 2:
            head.append(f"| … | {len(rows) - index} more objects | | |\n")
            break
        head.append(row)
    if c.impacts:
        head.append("\n**What it does to live pods**\n\n")
        head.extend(f"- {html.escape(line, quote=False)}\n" for line in c.impacts)
    if c.notes:
        head.append("\n> [!WARNING]\n")
        head.append("> \n".join(f"> {html.escape(note, quote=False)}\n" for note in c.notes))
    out = ["".join(head)]
    size = len(out[0])
    omitted = 0
    by_file: dict[str, list[Change]] = {}
    for change in c.changes:
        by_file.setdefault(change.file, []).append(change)
    for file in sorted(by_file):
        changes = by_file[file]
        counts = ", ".join(f"{n} {s}" for s in ("added", "removed", "changed") if (n := sum(1 for x in changes if x.status == s)))
        opening = f"\n<details>\n<summary>{html.escape(file)} ({counts})</summary>\n\n"
        closing = "</details>\n"
        shown: list[str] = []
        for change in changes:
            body = "".join(change.hunks)  # the heading says which object and whether it is added or removed
            fence = _fence(body)
            block = f"#### {change.title} ({change.status})\n\n{fence}diff\n{body}{fence}\n\n"
            if size + len(opening) + len(closing) + sum(map(len, shown)) + len(block) > budget:
                omitted += 1
            else:
                shown.append(block)
        if shown:
            section = opening + "".join(shown) + closing
            out.append(section)
            size += len(section)
    if omitted:
        out.append(
            f"\n_{omitted} more object diffs are not shown (a comment holds at most {limit} characters): "
            "run the same `modelplane-render diff` without `--format markdown` to see them all._\n"
        )
    return "".join(out)
