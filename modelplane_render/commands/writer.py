"""Writing the output: all of it at once, or nothing, and a clear line when the reader has gone."""

from __future__ import annotations

import os
import select
import sys

from ..errors import RenderFailure

# What is encoded and written at a time: the output is never held twice, as text and as bytes.
PIECE = 1 << 20


def write_stdout(text: str | list[str]) -> None:
    """Write the whole rendered text (or its parts, in order) to stdout, or fail with one line (exit 1).

    Every part is encoded once before the first byte goes out, so nothing is written for an output
    that can't be; then each is encoded again and written piece by piece, so the output is never
    held as bytes too. A reader that closes the pipe early (`| head`) or a full disk is a failure,
    never a traceback; a non-blocking stdout (left so by a parent) is waited on.
    """
    parts = [text] if isinstance(text, str) else text
    done = 0
    for part in parts:
        for start in range(0, len(part), PIECE):
            try:
                part[start : start + PIECE].encode("utf-8")
            except UnicodeEncodeError as exc:
                at = done + start + exc.start
                raise RenderFailure(f"the output can't be written as UTF-8: {exc.reason} at character {at}") from None
        done += len(part)
    if sys.stdout is None:
        raise RenderFailure("cannot write the output: stdout is closed")
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        for part in parts:
            for start in range(0, len(part), PIECE):
                view = memoryview(part[start : start + PIECE].encode("utf-8"))
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
