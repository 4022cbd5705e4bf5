"""Where modelplane-render keeps what it compiles once and reuses in later runs (Jinja bytecode, the parsed CRD).

Argo CD starts a new process per app and refresh, so whatever every run would build the same way
is kept on disk, checked against its source before use. Nothing here changes output: without a
writable directory each run simply builds it all again.
"""

from __future__ import annotations

import os
from typing import Optional

from .directory import ENV_CACHE_DIR, usable_directory


def compiled_dir(name: str) -> Optional[str]:
    """A writable directory for compiled things called `name`, or None.

    $XDG_CACHE_HOME/modelplane-render/NAME (by default under ~/.cache). Where that can't be
    written, as in the Argo CD sidecar (read-only root filesystem, a home that may not exist),
    MODELPLANE_RENDER_CACHE_DIR/compiled/NAME when the render cache is on. A relative base (HOME
    unset and the user unknown, so `~` stays `~`) is never used: it would land in the sources.
    """
    candidates = []
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if os.path.isabs(base):
        candidates.append(os.path.join(base, "modelplane-render", name))
    render_cache = os.environ.get(ENV_CACHE_DIR, "")
    if os.path.isabs(render_cache) and usable_directory(render_cache):
        candidates.append(os.path.join(render_cache, "compiled", name))
    for directory in candidates:
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        except OSError:
            continue
        if os.access(directory, os.W_OK):
            return directory
    return None
