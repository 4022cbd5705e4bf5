"""The cache directory setting, when a directory is safe to keep entries in, and how entries are written and trimmed.

Shared by the render cache (`cache.render`) and the CEL verdicts (`dra_cel.verdicts`): an entry is
written aside and renamed into place, so a reader sees a whole entry or none, and the least recently
used go first past a directory's bounds.
"""

from __future__ import annotations

import os
import time

ENV_CACHE_DIR = "MODELPLANE_RENDER_CACHE_DIR"
TEMP_SUFFIX = ".partial"
STALE_TEMP_SECONDS = 3600


def usable_directory(directory: str) -> bool:
    """Not another user's directory, and not one others may write to; a missing one is made on the first store."""
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not os.path.isdir(directory):
        return False
    return not (hasattr(os, "getuid") and st.st_uid != os.getuid()) and not st.st_mode & 0o022


def write_whole(path: str, data: bytes) -> bool:
    """data at path, written aside and renamed into place; False (and nothing left behind) on any fault."""
    temp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False
    return True


def evict(directory: str, suffix: str, *, max_entries: int, max_bytes: float = float("inf"), keep: str = "") -> None:
    """Remove the least recently used entries (files ending in suffix) beyond the bounds, and abandoned temporary files."""
    entries: list[tuple[int, int, str]] = []
    now = time.time()
    try:
        with os.scandir(directory) as listing:
            for item in listing:
                try:
                    if item.name.endswith(TEMP_SUFFIX):
                        if now - item.stat().st_mtime > STALE_TEMP_SECONDS:
                            os.unlink(item.path)
                    elif item.name.endswith(suffix) and item.is_file(follow_symlinks=False):
                        st = item.stat()
                        entries.append((st.st_mtime_ns, st.st_size, item.path))
                except OSError:
                    continue
    except OSError:
        return
    entries.sort()
    count, size = len(entries), sum(e[1] for e in entries)
    for _, entry_size, path in entries:
        if count <= max_entries and size <= max_bytes:
            break
        if path == keep:
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        count, size = count - 1, size - entry_size
