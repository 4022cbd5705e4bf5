"""What an engine container does with what we give it: the port it serves on, its KV block size.

Read from the container's args (facts.flags), with the defaults the engine takes when a flag is
absent.
"""

from __future__ import annotations

from typing import Optional

from .. import constants as c
from ..model import Container, Engine, EngineMember, ModelReplica
from .flags import find_flag, small_decimal


def member_is_serving(member: EngineMember) -> bool:
    """Standalone pods and Leader pods serve; workers only join the leader's gang."""
    return member.role in ("Standalone", "Leader")


def is_prefill_decode(replica: ModelReplica) -> bool:
    return replica.spec.serving is not None and replica.spec.serving.mode == "PrefillDecode"


def decode_engine(replica: ModelReplica) -> Engine:
    return next(e for e in replica.spec.engines if e.phase == "Decode")


def engine_container(member: EngineMember) -> tuple[int, Container]:
    (found,) = [(i, ct) for i, ct in enumerate(member.template.spec.containers) if ct.name == c.ENGINE_CONTAINER]
    return found


def engine_port_spec(engine: Engine, member: EngineMember, prefill_decode: bool) -> tuple[Optional[int], Optional[tuple[int, int]]]:
    """The port the engine serves on, and where in the args it was set (None: the default).

    The engine's own `--port` wins; else 8000, or 8001 for a decode engine, whose pod's
    port 8000 belongs to the pd-sidecar. A `--port` that is not a port number gives None.
    """
    index, container = engine_container(member)
    found = find_flag(container.args or [], "--port")
    if found is None:
        return (c.DECODE_PORT if prefill_decode and engine.phase == "Decode" else c.SERVING_PORT), None
    where = (index, found[0])
    port = small_decimal(found[1])
    if port is None or not 1 <= port <= 65535:
        return None, where
    return port, where


def serving_port(engine: Engine, member: EngineMember, prefill_decode: bool) -> int:
    port, _ = engine_port_spec(engine, member, prefill_decode)
    assert port is not None, "validated before planning"
    return port


def block_size(engine: Engine) -> int:
    """The KV block size the picker's prefix index must match: vLLM `--block-size`, SGLang `--page-size`."""
    member = next(m for m in engine.members if member_is_serving(m))
    _, container = engine_container(member)
    found = find_flag(container.args or [], "--block-size", "--page-size")
    size = small_decimal(found[1]) if found else None
    return size if size else c.DEFAULT_BLOCK_SIZE
