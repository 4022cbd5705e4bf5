"""How the two engines of a prefill/decode pair move KV blocks, and which pd-sidecar protocol matches them.

The pd-sidecar in front of the decode engine (llm-d-router v0.9.0 pkg/sidecar/proxy) speaks one
protocol, its `--kv-connector`: `nixlv2` sends the prompt to the prefill engine with
`kv_transfer_params: {do_remote_decode: true}` and hands the `kv_transfer_params` of its answer to the
decode engine (connector_nixlv2.go), which only a vLLM running a NixlConnector returns; without one
the sidecar logs "missing 'kv_transfer_params'" and decode computes the prompt again. `shared-storage`
pairs vLLM's SharedStorageConnector. `sglang` adds the prefill pod's bootstrap host, port and room to
the request, which only SGLang engines started with `--disaggregation-mode` answer.

Each engine is told its side where its args leave it out, and refused where they name a transfer the
sidecar can't drive or a side that is not its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Optional

from .flags import find_flag
from .gangs import Refusal, Wiring

KV_TRANSFER_FLAG = "--kv-transfer-config"
# vLLM's kv_connector class (vllm/distributed/kv_transfer/kv_connector/factory.py) -> the pd-sidecar's protocol.
VLLM_CONNECTORS = {"NixlConnector": "nixlv2", "SharedStorageConnector": "shared-storage"}
# vllm/config/kv_transfer.py: a producer sends KV blocks, a consumer receives them, kv_both does both
# (for the NixlConnector a deprecated spelling since v0.23.0, still taken).
VLLM_ROLES = {"prefill": ("kv_producer", "kv_both"), "decode": ("kv_consumer", "kv_both")}
SGLANG_MODE_FLAG = "--disaggregation-mode"


def vllm_side(args: Sequence[str], pd_role: str) -> tuple[Wiring, Optional[str]]:
    """What a vLLM engine of the pair is told, and the sidecar protocol its connector speaks (None: refused)."""
    wiring = Wiring()
    found = find_flag(args, KV_TRANSFER_FLAG)
    if found is None:
        ours = VLLM_ROLES[pd_role][0]
        wiring.added.append(f'{KV_TRANSFER_FLAG}={{"kv_connector":"NixlConnector","kv_role":"{ours}"}}')
        return wiring, "nixlv2"
    where: tuple[object, ...] = ("args", found[0])
    try:
        config = json.loads(found[1] or "")
    except ValueError:
        config = None
    if not isinstance(config, dict):
        wiring.refusals.append((where, f"{KV_TRANSFER_FLAG} must be a JSON object, as vLLM parses it"))
        return wiring, None
    connector, role = config.get("kv_connector"), config.get("kv_role")
    protocol: Optional[str] = VLLM_CONNECTORS.get(connector) if isinstance(connector, str) else None
    refusals: list[Refusal] = []
    if protocol is None:
        known = ", ".join(f"{name} ({speaks})" for name, speaks in VLLM_CONNECTORS.items())
        refusals.append(
            (
                where,
                f"the pd-sidecar has no protocol for kv_connector {json.dumps(connector)}: it drives {known}; leave the flag out for NixlConnector",
            )
        )
    if role not in VLLM_ROLES[pd_role]:
        refusals.append((where, f"the {pd_role} engine's kv_role must be {' or '.join(VLLM_ROLES[pd_role])}, not {json.dumps(role)}"))
    wiring.refusals += refusals
    return wiring, None if refusals else protocol


def sglang_side(args: Sequence[str], pd_role: str) -> tuple[Wiring, Optional[str]]:
    """What an SGLang engine of the pair is told: its side, `--disaggregation-mode` (python/sglang/srt/server_args.py)."""
    wiring = Wiring()
    found = find_flag(args, SGLANG_MODE_FLAG)
    if found is None:
        wiring.added.append(f"{SGLANG_MODE_FLAG}={pd_role}")
    elif found[1] != pd_role:
        wiring.refusals.append((("args", found[0]), f"the {pd_role} engine runs {SGLANG_MODE_FLAG}={pd_role}, not {found[1]}"))
        return wiring, None
    return wiring, "sglang"
