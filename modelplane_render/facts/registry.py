"""Which engine each member runs, and all the plan and validation need to know of it, resolved once.

`ENGINES` is the ordered registry of engine facts (facts.engines): `recognise` takes the first
entry whose mark a container shows, else `DEFAULT_ENGINE`. `resolve` turns one member into an
`EngineRecord`: the engine program, its container, the port it binds and whether the user chose
it, its prefill/decode role, its place in its gang, and what we tell it. Validation and the plan
each resolve a replica once (`resolve_replica`) and read the records; neither asks which engine
a container runs, nor has an engine's name in it. A new engine is an `EngineFacts` and its place
in `ENGINES`; nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import constants as c
from ..model import Container, Engine, EngineMember, ModelReplica
from .engines import SGLANG, VLLM, EngineFacts, EnvFact, args_reach_engine, block_size, needs_model_flag
from .flags import find_flag, has_flag, small_decimal
from .gangs import Refusal, accelerators, per_pod
from .shells import program_words, script
from .versions import image_version, shown
from .versions import parse as parse_version

# In the order recognise() asks them: an earlier entry wins when a container shows the marks of two.
ENGINES: tuple[EngineFacts, ...] = (VLLM, SGLANG)
# A container that shows no engine's mark: vLLM, whose images (vllm/vllm-openai, llm-d's) this tool was built for.
DEFAULT_ENGINE = VLLM

# What every member of a multi-node gang is told, first in its env so that `$(MODELPLANE_RANK)`
# in a user's args or env resolves.
GANG_ENV = (EnvFact(c.ENV_LEADER_ADDRESS, value=c.LWS_LEADER_ADDRESS), EnvFact(c.ENV_RANK, value=c.LWS_WORKER_INDEX))

# Env names we set on some engine container, so a user may set none of them on any.
RESERVED_ENV = frozenset(env.name for env in GANG_ENV) | frozenset(env.name for facts in ENGINES for env in facts.pd_env)

# The member roles whose pods serve: Standalone pods and Leader pods; workers only join the leader's gang.
SERVING_POSITIONS = ("Standalone", "Leader")


def recognise(container: Container) -> EngineFacts:
    """The engine a container runs: the first of ENGINES whose program it starts, or, with no command, whose mark
    its image shows.

    The program is named in the command (`sglang serve`, `vllm serve`), in the args after an interpreter
    (`command: [python3]`, `args: [-m, sglang.launch_server]`) or in a shell script (facts.shells); a
    command that names none runs the default engine. With no command the image's entrypoint runs, and its
    repository decides (`lmsysorg/sglang`); anything else is the default engine.
    """
    if container.command:
        return next((f for f in ENGINES if program_words(container, f.program_marks) is not None), DEFAULT_ENGINE)
    repository = container.image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0]
    return next((f for f in ENGINES if any(mark in repository for mark in f.image_marks)), DEFAULT_ENGINE)


@dataclass(frozen=True)
class EngineRecord:
    """One member's engine, resolved once from its container and the replica around it."""

    # The engine program the container runs, and the name of the spec.engines entry it belongs to.
    engine: EngineFacts
    engine_name: str
    member: EngineMember
    # The container named `engine`, and its index in the pod's containers.
    container_index: int
    container: Container
    # Its place in its gang: Standalone, Leader or Worker (the member's role), and the gang's pod count.
    position: str
    gang_size: int
    # "prefill" or "decode" under PrefillDecode (the llm-d.ai/role label's value), else None.
    pd_role: Optional[str]
    # The pd-sidecar protocol its KV transfer speaks (facts.kv_transfer); None: not prefill/decode, or refused.
    pd_connector: Optional[str]
    # The port it binds: the user's --port, else ours. None: a --port that is not a port number.
    port: Optional[int]
    # Where in the container's args --port's value is (None: the user set no --port, we chose the port).
    port_arg: Optional[int]
    # The port we choose when its args set none (its own default, unless the pool or the pd-sidecar needs another).
    our_port: int
    block_size: int
    # Whether flags we add to `args` reach the engine's parser (not a shell's positional parameters).
    args_reach_engine: bool
    # What we tell it: env before the user's, args before and after the user's.
    env: tuple[EnvFact, ...]
    leading_args: tuple[str, ...]
    trailing_args: tuple[str, ...]
    # The command the pod runs: None keeps the container's (facts.gangs: a Ray gang's Leader runs its
    # engine inside a shell that starts Ray first; a Ray Worker runs Ray only, with no args).
    command: Optional[tuple[str, ...]] = None
    # What of its args can't serve as written, and why (validation reports each at its place in the container).
    refusals: tuple[Refusal, ...] = ()

    @property
    def serving(self) -> bool:
        return self.position in SERVING_POSITIONS

    @property
    def pd_sidecar(self) -> bool:
        """Whether its pod gets the pd-sidecar, in front of its port: a serving member of the decode engine."""
        return self.serving and self.pd_role == "decode"

    @property
    def user_port(self) -> bool:
        """Whether the user chose the port (a --port in the args), rather than we."""
        return self.port_arg is not None


@dataclass(frozen=True)
class ResolvedReplica:
    """Every member of a replica resolved: records[i][j] is spec.engines[i].members[j]."""

    prefill_decode: bool
    records: tuple[tuple[EngineRecord, ...], ...]

    def pool_member(self) -> EngineRecord:
        """The serving member the pool sends to (the decode engine's, under PrefillDecode, through its pd-sidecar).

        The picker's prefix blocks follow its block size.
        """
        engine = next(r for r in self.records if r[0].pd_role == "decode") if self.prefill_decode else self.records[0]
        return next(record for record in engine if record.serving)


def is_prefill_decode(replica: ModelReplica) -> bool:
    return replica.spec.serving is not None and replica.spec.serving.mode == "PrefillDecode"


def resolve_replica(replica: ModelReplica) -> ResolvedReplica:
    records = tuple(tuple(resolve(member, engine, replica) for member in engine.members) for engine in replica.spec.engines)
    return ResolvedReplica(is_prefill_decode(replica), records)


def resolve(member: EngineMember, engine: Engine, replica: ModelReplica) -> EngineRecord:
    """One member's EngineRecord (its replica has passed the CRD's checks: exactly one container is `engine`)."""
    ((index, container),) = [(i, ct) for i, ct in enumerate(member.template.spec.containers) if ct.name == c.ENGINE_CONTAINER]
    facts = recognise(container)
    args = container.args or []
    pd_role = None
    if is_prefill_decode(replica):
        pd_role = "prefill" if engine.phase == "Prefill" else "decode"
    ours = _our_port(facts, pd_role)
    port: Optional[int] = ours
    port_arg = None
    reach = args_reach_engine(container)
    refusals: list[Refusal] = []
    found = find_flag(args, "--port")
    script_words, script_at = ([], ()) if reach else _script_of(facts, container)
    if not reach:
        port = _script_port(facts, script_words, script_at, member.role in SERVING_POSITIONS, refusals)
    elif found is not None:
        port_arg = found[0]
        port = small_decimal(found[1])
        if port is None or not 1 <= port <= 65535:
            port = None
    workers = engine.member("Worker")
    gang_size = 1 + (workers.worker.nodes if workers and workers.worker else 0)
    leading: tuple[str, ...] = ()
    trailing = _flags(facts, args, ours) if member.role in SERVING_POSITIONS and reach else []
    command: Optional[tuple[str, ...]] = None
    ray = False  # a gang on vLLM's Ray backend: Ray places the ranks on whichever pods have GPUs
    runs_engine = True
    if member.role in ("Leader", "Worker"):
        leader = _leader_words(engine, facts)
        words = args if reach else script_words
        for field, why in facts.gang_refusals(words, member.role, container.image, leader):
            refusals.append((("image",) if field == "image" else ("args",) if reach else script_at, why))
    if reach and member.role in ("Leader", "Worker"):
        wiring = facts.join_gang(args, container.command, member.role, gang_size, leader)
        trailing += wiring.added
        refusals += wiring.refusals
        if wiring.shell:
            command, ray = (*wiring.shell, *(container.command or facts.server_command)), True
        elif wiring.replaces:
            command, ray, runs_engine = wiring.replaces, True, False
    connector = None
    if pd_role and reach:
        side, connector = facts.kv_side(args, pd_role)
        trailing += side.added
        refusals += side.refusals
    elif pd_role and member.role in SERVING_POSITIONS:
        connector = _script_kv_side(facts, script_words, script_at, pd_role, refusals)
    trailing = _in_release(facts, container.image, trailing, refusals)
    if reach and not refusals:  # a gang refused as written: its sizes would only repeat that
        if not ray:
            refusals += _size_refusals(facts, member, args, trailing, gang_size)
        elif runs_engine:
            refusals += _ray_size_refusals(facts, engine, args)
    if replica.spec.model_cache_ref and runs_engine and needs_model_flag(facts, container):
        # Without it vLLM silently serves its default model instead of the cache. vLLM takes
        # it first and positional (`vllm serve MODEL`): its --model is deprecated.
        if facts.positional_model:
            leading = (c.MODEL_CACHE_PATH,)
        else:
            trailing.append(f"{facts.model_flags[0]}={c.MODEL_CACHE_PATH}")
    if not runs_engine:
        trailing = []
    env = (GANG_ENV if member.role in ("Leader", "Worker") else ()) + (facts.pd_env if pd_role else ())
    return EngineRecord(
        engine=facts,
        engine_name=engine.name,
        member=member,
        container_index=index,
        container=container,
        position=member.role,
        gang_size=gang_size,
        pd_role=pd_role,
        pd_connector=connector,
        port=port,
        port_arg=port_arg,
        our_port=ours,
        block_size=block_size(facts, args),
        args_reach_engine=reach,
        env=env,
        leading_args=leading,
        trailing_args=tuple(trailing),
        refusals=tuple(refusals),
        command=command,
    )


def _script_of(facts: EngineFacts, container: Container) -> tuple[list[str], tuple[object, ...]]:
    """The words of the command a shell script starts the engine with, and where the script is in the container."""
    return program_words(container, facts.program_marks) or [], (script(container) or ("", ()))[1]


def _script_port(facts: EngineFacts, words: list[str], where: tuple[object, ...], serving: bool, refusals: list[Refusal]) -> Optional[int]:
    """The port an engine a shell script starts binds: the one the script gives it, else its own default.

    The script is read, never added to (facts.shells); what it leaves out that serving needs, or says in a
    form we can't read, is refused with the flag to write.
    """
    if not serving:
        return facts.default_port
    found = find_flag(words, "--port")
    port = facts.default_port
    if found is not None:
        value = small_decimal(found[1])
        if value is None or not 1 <= value <= 65535:
            refusals.append(
                (
                    where,
                    f"the script starts {facts.name} with --port {found[1]!r}, which modelplane-render can't read, and the "
                    f"probes and the pool must know the port: write the number (--port=8001), or leave it out for {facts.default_port}",
                )
            )
            return None
        port = value
    refusals += [(where, why) for _, why in _serving_needs(facts, words)]
    return port


def _script_kv_side(
    facts: EngineFacts, words: list[str], where: tuple[object, ...], pd_role: str, refusals: list[Refusal]
) -> Optional[str]:
    """A prefill/decode engine a script starts: its side of the KV transfer as the script gives it, which must be whole."""
    side, connector = facts.kv_side(words, pd_role)
    refusals += [(where, message) for _, message in side.refusals]
    if side.added:
        refusals.append((where, f"the {pd_role} engine's script must say its side of the KV transfer: pass {' '.join(side.added)} in it"))
        return None
    return connector


def _in_release(facts: EngineFacts, image: str, added: list[str], refusals: list[Refusal]) -> list[str]:
    """The flags we add that the image's release has (facts.versions: what is done with the others)."""
    version = image_version(image, facts.release_images)
    kept: list[str] = []
    missing: dict[str, list[str]] = {}  # release -> the needed flags it introduced
    for arg in added:
        name = arg.split("=", 1)[0]
        if name not in facts.since:
            kept.append(arg)
            continue
        release, needed = facts.since[name]
        if version is None:
            if needed:
                kept.append(arg)
        elif version >= parse_version(release):
            kept.append(arg)
        elif needed:
            missing.setdefault(release, []).append(name)
    if missing and version is not None:
        newest = max(missing, key=parse_version)
        needs = "; ".join(
            f"{', '.join(flags)} ({facts.name} {release} and later)"
            for release, flags in sorted(missing.items(), key=lambda item: parse_version(item[0]))
        )
        refusals.append(
            (("image",), f"{image} runs {facts.name} {shown(version)}, and this shape needs {needs}: use an image of {newest} or later")
        )
    return kept


def _leader_words(engine: Engine, facts: EngineFacts) -> list[str]:
    """The words the engine's Leader starts its engine with (the sizes and backend every pod of its gang shares):
    its engine container's args, or the serving command of its script."""
    leader = engine.member("Leader")
    if leader is None:
        return []
    container = next(ct for ct in leader.template.spec.containers if ct.name == c.ENGINE_CONTAINER)
    if args_reach_engine(container):
        return container.args or []
    return _script_of(facts, container)[0]


def _size_refusals(facts: EngineFacts, member: EngineMember, args: list[str], added: list[str], gang_size: int) -> list[Refusal]:
    """The engine's parallel sizes against the accelerators a pod claims: more than it claims stops the engine at
    its start (vLLM's world-size check; SGLang's CUDA device index), so a pod would crash-loop. Fewer is not
    refused: the engine runs on the first devices it sees, and the rest sit idle. None claimed: nothing to hold
    them to (an engine that claims its GPUs outside DRA)."""
    claimed = accelerators(member)
    if not claimed:
        return []
    need, how = per_pod([*args, *added], facts.parallel_flags, gang_size)
    if not how or (need is not None and need <= claimed):
        return []
    where = _tensor_place(facts, args)
    uses = f"uses {need} GPUs a pod" if need is not None else "is not a whole number of GPUs a pod"
    return [
        (
            where,
            f"{how} {uses}, but each pod of this member claims {claimed} (its deviceRequests of a gpu.* DeviceClass): "
            "the engine stops at its start; claim as many as the sizes use, or lower the sizes",
        )
    ]


def _ray_size_refusals(facts: EngineFacts, engine: Engine, args: list[str]) -> list[Refusal]:
    """A Ray gang's sizes against the GPUs of all its pods: vLLM's placement group asks one GPU a rank, packed onto
    whichever pods have them (vllm/v1/executor/ray_utils.py), and waits for ever short of them."""
    claimed = sum(accelerators(m) * (m.worker.nodes if m.worker else 1) for m in engine.members)
    need, how = per_pod(args, facts.parallel_flags, 1)
    if not claimed or not how or (need is not None and need <= claimed):
        return []
    return [
        (
            _tensor_place(facts, args),
            f"{how} uses {need} GPUs, but the gang's pods claim {claimed} in all (their deviceRequests of a gpu.* "
            "DeviceClass), and vLLM's Ray placement group waits for a GPU a rank: claim as many as the sizes use, or lower the sizes",
        )
    ]


def _tensor_place(facts: EngineFacts, args: list[str]) -> tuple[object, ...]:
    """Where a sizes refusal points: the tensor-parallel flag when the args have one, else the args."""
    tensor = find_flag(args, *facts.parallel_flags.tensor)
    return ("args", tensor[0]) if tensor is not None else ("args",)


def _serving_needs(facts: EngineFacts, args: list[str]) -> list[tuple[str, str]]:
    """What a serving engine must be told that its args leave out, each with why a script must say it itself:
    an address off its loopback (the kubelet's probes and the pool's traffic come to the pod's IP), and metrics."""
    needs = []
    if facts.default_host is not None and find_flag(args, "--host") is None:
        needs.append(
            (
                "--host=0.0.0.0",
                f"{facts.name} listens on {facts.default_host} unless told, out of the probes' and the pool's reach, and "
                "modelplane-render adds nothing to a script: pass --host=0.0.0.0 in it",
            )
        )
    if facts.metrics_flag is not None and not has_flag(args, facts.metrics_flag):
        needs.append(
            (
                facts.metrics_flag,
                f"{facts.name} serves no metrics unless told, and the picker scores by them: pass {facts.metrics_flag} in the script",
            )
        )
    return needs


def _our_port(facts: EngineFacts, pd_role: Optional[str]) -> int:
    """The port an engine with no --port serves on: its own default, unless the pool or the pd-sidecar needs another.

    Under PrefillDecode the pool targets the pd-sidecar's port on decode pods, and the sidecar
    sends prefill requests to that same port on prefill pods, so a prefill engine serves there;
    a decode engine whose default is the sidecar's port moves to DECODE_PORT.
    """
    if pd_role is None:
        return facts.default_port
    if pd_role == "prefill":
        return c.PD_SIDECAR_PORT
    return c.DECODE_PORT if facts.default_port == c.PD_SIDECAR_PORT else facts.default_port


def _flags(facts: EngineFacts, args: list[str], ours: int) -> list[str]:
    """The flags a serving engine must be told: a port it would not choose, an address and metrics it would not serve."""
    added = []
    if find_flag(args, "--port") is None and ours != facts.default_port:
        added.append(f"--port={ours}")
    added += [flag for flag, _ in _serving_needs(facts, args)]
    added += [flag for flag in facts.quiet_flags if not has_flag(args, flag.split("=", 1)[0])]
    return added
