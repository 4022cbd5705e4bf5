"""What a front end adds to the sources: the default namespace and an optional Gateway."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Options:
    namespace: Optional[str] = None
    gateway: Optional[tuple[str, str]] = None  # (namespace, name) of a Gateway for an HTTPRoute
