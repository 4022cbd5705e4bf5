"""Writing the output: all of it at once, or nothing, and a clear line when the reader has gone."""

from __future__ import annotations

import os
import select
import sys

from ..errors import RenderFailure


def write_stdout(text: str) -> None:
    """Write the whole rendered text to stdout, or fail with one line (exit 1).

    The text is encoded before the first byte goes out, so nothing is written for an output
    that can't be. A reader that closes the pipe early (`| head`) or a full disk is a
    failure, never a traceback; a non-blocking stdout (left so by a parent) is waited on.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RenderFailure(f"the output can't be written as UTF-8: {exc.reason} at character {exc.start}") from None
    if sys.stdout is None:
        raise RenderFailure("cannot write the output: stdout is closed")
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        view = memoryview(data)
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                select.select([], [fd], [])
                continue
            view = view[written:]
    except BrokenPipeError:
        # Don't let the interpreter complain again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise RenderFailure("stdout was closed before all of the output was written") from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise RenderFailure(f"cannot write the output: {reason}") from None


def write_stderr(*lines: str) -> None:
    """Lines to stderr as UTF-8 whatever the locale (so errors are deterministic bytes too); a
    closed stderr costs the message, never a traceback. Every front end's lines come through
    here, each made by errors.error_line or errors.tool_line."""
    stream = sys.stderr
    if stream is None:
        return
    text = "".join(f"{line}\n" for line in lines)
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(text.encode("utf-8", "backslashreplace"))
            buffer.flush()
        else:
            stream.write(text)
            stream.flush()
    except (OSError, ValueError):
        pass
