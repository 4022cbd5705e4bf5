"""The cache directory setting and when a directory is safe to keep entries in."""

from __future__ import annotations

import os

ENV_CACHE_DIR = "MODELPLANE_RENDER_CACHE_DIR"


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
