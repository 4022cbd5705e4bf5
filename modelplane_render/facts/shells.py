"""Reading, never rewriting, an engine started by a shell script or an interpreter.

`command: [sh, -c, SCRIPT]` (or `command: [sh, -c]` with the script in `args`) runs the engine inside a
script: flags we added to `args` would become the shell's `$0`, `$1`, so we add none, and the script is
never rewritten. What it says is read: which program serves (the last command of the script that
starts an engine), and the flags that command gives it, so a `--port` the script sets is the port the
probes and the pool follow. A value we can't read (`--port $PORT`) is refused with the flag to write.
`command: [python3]` with `args: [-m, sglang.launch_server, ...]` names its program in the args.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Optional

from ..model import Container

# A command that starts one of these runs a shell string: the engine's flags are inside it.
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh"})
_SEPARATORS = frozenset({"&&", "||", ";", "|", "&"})


def is_shell(container: Container) -> bool:
    command = container.command or []
    return bool(command) and posixpath.basename(command[0]) in SHELLS


def script(container: Container) -> Optional[tuple[str, tuple[object, ...]]]:
    """The shell script a container runs, and where it is (("command", 2) or ("args", 0)); None: no shell, or no -c."""
    if not is_shell(container):
        return None
    command, args = list(container.command or []), list(container.args or [])
    words = command + args
    for i, word in enumerate(words[1:], start=1):
        if word == "-c" or (word.startswith("-") and not word.startswith("--") and word.endswith("c")):
            if i + 1 >= len(words):
                return None
            where: tuple[object, ...] = ("command", i + 1) if i + 1 < len(command) else ("args", i + 1 - len(command))
            return words[i + 1], where
    return None


def commands(text: str) -> Optional[list[list[str]]]:
    """The simple commands of a script, as words (None: a script shlex can't split, e.g. an open quote).

    A line ends a command, as in a shell (a backslash before the line break continues it); a quote left
    open across lines is read as one text.
    """
    found: list[list[str]] = []
    for line in text.replace("\\\n", " ").split("\n"):
        words = _commands(line)
        if words is None:
            return _commands(text)
        found += words
    return found


def _commands(text: str) -> Optional[list[list[str]]]:
    import shlex  # only an engine a script starts is read: a render of plain args loads no lexer

    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    found: list[list[str]] = [[]]
    try:
        for word in lexer:
            if word in _SEPARATORS:
                found.append([])
            elif word != "\n":
                found[-1].append(word)
    except ValueError:
        return None
    return [words for words in found if words]


def program_words(container: Container, marks: Sequence[str]) -> Optional[list[str]]:
    """The words of the command that starts the engine program (a word of `marks` in it), in a script or in
    command and args; None when no command names one."""
    found = script(container)
    if found is not None:
        serving = [words for words in commands(found[0]) or [] if _names(words, marks)]
        return serving[-1] if serving else None
    words = [*(container.command or []), *(container.args or [])]
    return words if container.command and _names(words, marks) else None


def _names(words: Sequence[str], marks: Sequence[str]) -> bool:
    """Whether a command's words start a program of `marks` (`vllm serve`, `exec python3 -m sglang.launch_server`):
    a mark among the words before its first flag."""
    for word in words:
        if word.startswith("--"):
            return False
        if posixpath.basename(word) in marks:
            return True
    return False
