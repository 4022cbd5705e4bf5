#!/usr/bin/env python3
"""modelplane-render's entry point: `python plugin.py render fixtures/` runs the same CLI as `modelplane-render`."""

from modelplane_render.main import entry

if __name__ == "__main__":
    entry()
