"""Writing the output: all of it at once, or nothing, and a clear line when the reader has gone."""

from __future__ import annotations

import os
import sys

from .errors import RenderFailure


def write_stdout(text: str) -> None:
    data = text.encode("utf-8")
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except BrokenPipeError:
        # Don't let the interpreter complain again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise RenderFailure("stdout was closed before all of the output was written") from None
    except OSError as exc:
        raise RenderFailure(f"cannot write the output: {exc.strerror or exc}") from None
