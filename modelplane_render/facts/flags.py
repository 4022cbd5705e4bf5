"""Reading engine flags from a container's args (`--port=8001` or `--port 8001`).

Only whole flags are read: `--model-impl=x` is not `--model`. A shell script's flags are read
the same way from the words of its serving command (facts.shells), and never added to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

# ASCII digits only: str.isdigit() also takes "²", which int() refuses, and an unbounded run of
# digits makes int() raise past Python's 4300-digit limit.
_SMALL_DECIMAL = re.compile(r"[0-9]{1,9}")


def find_flag(args: Sequence[str], *names: str) -> Optional[tuple[int, Optional[str]]]:
    """(index of the arg holding the value, the value) of the last occurrence, as argparse takes it."""
    found: Optional[tuple[int, Optional[str]]] = None
    for i, arg in enumerate(args):
        for name in names:
            if arg == name:
                found = (i + 1, args[i + 1]) if i + 1 < len(args) else (i, None)
            elif arg.startswith(name + "="):
                found = (i, arg[len(name) + 1 :])
    return found


def has_flag(args: Sequence[str], *names: str) -> bool:
    return any(arg == n or arg.startswith(n + "=") for arg in args for n in names)


def small_decimal(value: Optional[str]) -> Optional[int]:
    """The flag value as a non-negative integer of at most 9 ASCII digits, else None."""
    if value is None or not _SMALL_DECIMAL.fullmatch(value):
        return None
    return int(value)
