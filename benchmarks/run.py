#!/usr/bin/env python3
"""How fast `render` is, measured against what surrounds it, side by side in one run.

    .venv/bin/python benchmarks/run.py            # N = 1, 10, 100, 1000 replicas, 5 runs each
    .venv/bin/python benchmarks/run.py --quick    # N = 1, 10, 100, 3 runs each (what CI runs)

Every figure is the median of several whole-process runs (a new interpreter each time, as Argo
CD starts one per app), taken in turns so that a burst of load elsewhere on the machine hits
every command alike. What is compared with what:

- the floor: `python -c pass` with the same interpreter (sys.executable, not a shim);
- `render` of N generated replicas (a mix of the shapes in fixtures/valid, renamed), wall time
  and peak RSS, and the same with a warm render cache (MODELPLANE_RENDER_CACHE_DIR);
- the peer: `kustomize build` of a directory holding the objects `render` printed, one file
  each (what merely reading and re-emitting the same output costs with the tool every user
  already runs);
- the kustomize KRM path end to end: `kustomize build --enable-alpha-plugins --enable-exec` of
  each example overlay in kustomize/overlays;
- DRA selectors: `render` of the one replica (it has selectors) with its CEL verdicts forgotten
  before every run (`selectors-cold/1`: the first compile, the CEL library loaded), beside
  `render/1`, whose verdicts are known (the library not even imported);
- with `--baseline REV`, `render/1` of that git revision (a worktree of it, the same interpreter):
  the cost of a change, measured in the same turns as the figures it is compared with;
- Argo CD's discovery: `argocd discover` in an app directory of 1000 YAML files, none of them a
  replica (`discover/1000-files`: every file read) and the replica last (`-match-last`), as the
  cmp-server runs it for every Application that names no plugin;
- hostile input (not with --quick): `render` of each input tests/test_limits.py refuses at a limit
  (or, the long string, renders), `limits/<case>`, wall time and peak RSS: the tests bound their
  memory, and their time is measured here, never asserted there;
- with `--picker` (opt-in: MODELPLANE_EPP_BIN, the real peers): the real endpoint picker of
  tests/test_picker_runs.py, how long the picker and its rolling update's surge take to serve (against
  what the README states), and the old one to go after a graceful stop and a crash;
- with `--argocd-loop` (opt-in, several minutes: the real peers of tests/argocd_loop.py, Argo CD v3.2.11 and a
  real kube-apiserver): a monorepo of 50 Applications, a commit changing every app, a hard refresh of all,
  and the time until all are Synced, through our plugin and through Argo CD's directory source of the same
  objects rendered beforehand (benchmarks/argocd_sync.py), in turns; with the sidecar's and repo-server's CPU,
  the sidecar's peak RSS, how many generates ran at once, and where a generate's time goes.

Every test asserts behaviour and bounds on work or memory, never speed: speed is measured here.

It prints ratios (render / floor, render / kustomize, cached / floor, the growth from N to 10 N),
checks them against the targets of issue 8, and writes everything as JSON to
benchmarks/results/ (or --json) so a later run can be compared (--compare OLD.json).
Ratios, not times, are what to compare across machines. `--gate R` exits 1 when render of 100
replicas takes more than R times the kustomize build of its output (CI passes 2).

Children run with a fresh bytecode prefix and cache home under a temporary directory, warmed by
one untimed run of each command: the figures are those of an installed tool (pip compiles its
bytecode), not of the first run after an edit.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "valid"
PLUGIN = ROOT / "plugin.py"
RESULTS = Path(__file__).resolve().parent / "results"
TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None  # GNU time, for each command's own peak RSS
MIB = 1024 * 1024

# Issue 8's targets: (name, what it measures, limit).
TARGETS = (
    ("render_1_vs_floor", "cold render of 1 replica / interpreter floor", 12.0),
    ("render_1_vs_kustomize", "cold render of 1 replica / kustomize build of its output", 6.0),
    ("render_100_vs_kustomize", "render of 100 replicas / kustomize build of its output", 0.25),
    ("render_1000_vs_100", "render of 1000 replicas / render of 100", 11.0),
    ("render_1000_peak_mib", "peak memory of render of 1000 replicas, MiB", 300.0),
    # Issue 26's: 10,000 replicas in bounded memory, growing as the work does.
    ("render_10000_vs_1000", "render of 10,000 replicas / render of 1000", 11.0),
    ("render_10000_peak_mib", "peak memory of render of 10,000 replicas, MiB", 512.0),
    ("cached_1_vs_floor", "cache hit, 1 replica / interpreter floor", 2.0),
)

# How soon a new picker serves after its process starts, as the README states ("The endpoint picker"):
# a drained node's replacement adds only its scheduling and image pull to it.
PICKER_READY_STATED = 5.0


# --- sources -------------------------------------------------------------------------------------


@dataclass
class Shape:
    """One ModelReplica document of a fixture: its text, and where its metadata.name is in it."""

    fixture: str
    text: str
    name: str
    name_start: int
    name_end: int


def fixture_shapes() -> list[Shape]:
    """Every ModelReplica document of fixtures/valid, in a stable order."""
    shapes: list[Shape] = []
    for path in sorted(FIXTURES.glob("*/*.y*ml")):
        if path.name.startswith("kustomization"):
            continue
        text = path.read_text(encoding="utf-8")
        for node in yaml.compose_all(text, Loader=yaml.SafeLoader):  # the pure loader: its marks carry indexes
            if not isinstance(node, yaml.MappingNode):
                continue
            entries = {key.value: value for key, value in node.value if isinstance(key, yaml.ScalarNode)}
            kind, meta = entries.get("kind"), entries.get("metadata")
            if kind is None or kind.value != "ModelReplica" or not isinstance(meta, yaml.MappingNode):
                continue
            name = next(v for k, v in meta.value if k.value == "name")
            start, end = node.start_mark.index, node.end_mark.index
            shapes.append(Shape(path.parent.name, text[start:end], name.value, name.start_mark.index - start, name.end_mark.index - start))
    if not shapes:
        raise SystemExit(f"no ModelReplica in {FIXTURES}")
    return shapes


def replica_name(base: str, index: int) -> str:
    """A unique name of the same shape: `-NNNNN` appended, or, for a name at its limit, put after its first
    12 characters (the LeaderWorkerSet's name keeps a name's first 43: thousands of replicas that differed
    only past them would share a head and meet in its 5-digit hash, which `render` refuses as a clash)."""
    suffix = f"-{index:05d}"
    if len(base) + len(suffix) <= 40:
        return base + suffix
    head = base[:12].rstrip("-")
    return f"{head}{suffix}-{base[12:]}"[: len(base)].rstrip("-")


def write_sources(directory: Path, count: int, shapes: list[Shape]) -> None:
    """`count` replicas, one file each, cycling through the fixture shapes."""
    directory.mkdir(parents=True)
    for i in range(count):
        shape = shapes[i % len(shapes)]
        name = replica_name(shape.name, i)
        text = shape.text[: shape.name_start] + name + shape.text[shape.name_end :]
        (directory / f"{name}.yaml").write_text(f"# {shape.fixture}, renamed\n{text.rstrip()}\n", encoding="utf-8")


def write_kustomization(directory: Path, stream: str) -> int:
    """The objects of a YAML stream, one file each, and a kustomization.yaml listing them; the count."""
    directory.mkdir(parents=True)
    documents = [d for d in re.split(r"(?m)^---\n", stream) if d.strip()]
    names = []
    for i, document in enumerate(documents):
        name = f"{i:05d}.yaml"
        (directory / name).write_text(document, encoding="utf-8")
        names.append(name)
    (directory / "kustomization.yaml").write_text("resources:\n" + "".join(f"- {n}\n" for n in names), encoding="utf-8")
    return len(documents)


def write_thousand_files(directory: Path, replica: Optional[str]) -> None:
    """1000 YAML files in 20 directories (tests/test_argocd.py's thousand_files): ConfigMaps, and the replica last if given."""
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n" + "".join(
        f"  key{k}: value {k}\n" for k in range(40)
    )
    for i in range(1000 - (replica is not None)):
        sub = directory / f"group-{i % 20:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"cm-{i:04d}.yaml").write_text(config_map.format(i=i), encoding="utf-8")
    if replica is not None:
        (directory / "group-19" / "zz-replica.yaml").write_text(replica, encoding="utf-8")


def billion_laughs(levels: int = 9) -> str:
    text = 'lol0: &lol0 "lol"\n'
    for i in range(1, levels + 1):
        text += f"lol{i}: &lol{i} [" + ", ".join([f"*lol{i - 1}"] * 10) + "]\n"
    return text


# tests/test_limits.py's inputs, each rendered as one file: (case, what it is, the exit status `render`
# gives it). Each is refused at a limit (exit 1) but the long string, which renders; the cost each had
# before its limit was checked where it is now is in its test.
HOSTILE = (
    ("billion-laughs", "9 levels of 10 aliases (a billion nodes)", 1),
    ("quadratic-aliases", "a 20,000-item anchor, aliased 100 times", 1),
    ("file-50-mib", "a replica and 50 MiB of comment", 1),
    ("string-2-mib", "a ConfigMap with a 2 MiB value (renders)", 0),
    ("annotations-15-mib", "a replica with 15 MiB of annotations", 1),
    ("key-1-mib", "a replica with a 1 MiB key", 1),
    ("flow-list-16-mib", "16 MiB of `a,` in one flow list (8 million nodes)", 1),
    ("documents-100000", "100,000 documents in one file", 1),
    ("aliases-of-100-kb", "3,000 aliases of a 100 KB string in a replica's args (300 MB expanded)", 1),
)


def hostile_input(case: str, replica: str) -> str:
    """The text of one HOSTILE case; `replica` is a valid replica's YAML, for the cases that spoil one."""
    if case == "billion-laughs":
        return billion_laughs()
    if case == "quadratic-aliases":
        return "big: &big [" + ", ".join(str(i) for i in range(20_000)) + "]\nuses:\n" + "- *big\n" * 100
    if case == "file-50-mib":
        return replica + ("# " + "x" * 1021 + "\n") * (50 * 1024)
    if case == "string-2-mib":
        data = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "long"}, "data": {"big": "v" * (2 * MIB)}}
        return yaml.safe_dump(data, width=1 << 30)
    if case == "aliases-of-100-kb":
        aliases = "".join("            - *big\n" for _ in range(3000))
        return replica.replace("            args:\n", f"            args:\n            - &big {'x' * 100_000}\n{aliases}", 1)
    if case == "annotations-15-mib":
        return replica.replace("\nmetadata:\n", "\nmetadata:\n  annotations:\n    example.com/notes: " + "n" * (15 * MIB) + "\n", 1)
    if case == "key-1-mib":
        return replica.replace("spec:\n", "spec:\n  ? " + "k" * MIB + "\n  : 1\n", 1)
    if case == "flow-list-16-mib":
        return "a: [" + "a," * (8 * MIB - 8) + "a]\n"
    if case == "documents-100000":
        return "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n" for i in range(100_000))
    raise ValueError(case)


# --- running -------------------------------------------------------------------------------------


@dataclass
class Case:
    """One command to time."""

    key: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    times: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)  # KiB
    cpu: list[float] = field(default_factory=list)  # user + system seconds
    slow: bool = False  # a warm-up over 5 s: at most 3 timed runs
    forget: Optional[Path] = None  # a directory removed before every run (a cache this case measures without)
    expect: int = 0  # the exit status the command must give (1: a hostile input refused)

    def run(self, scratch: Path) -> tuple[float, int, float]:
        """One whole-process run: wall seconds, the command's own peak RSS (KiB) and its CPU seconds.

        The peak comes from GNU time (`/usr/bin/time -f %M`), which starts the command from its
        own small process: a child started straight from this one would report this process's
        size, because Linux keeps the peak RSS of the address space a child is forked from
        across exec. Without GNU time, wait4's figure is used (an upper bound). CPU (user + system,
        from wait4) includes GNU time's own, well under a millisecond.
        """
        argv = [TIME, "-f", "%M", "-o", str(scratch / "rss"), *self.argv] if TIME else self.argv
        if self.forget:
            shutil.rmtree(self.forget, ignore_errors=True)
        with open(scratch / "stdout", "wb") as out, open(scratch / "stderr", "wb") as err:
            start = time.perf_counter()
            process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd)
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != self.expect:
            detail = (scratch / "stderr").read_text(errors="replace").strip()[-3000:]
            raise SystemExit(f"{self.key}: {' '.join(self.argv)} exited {process.returncode}, not {self.expect}:\n{detail}")
        cpu = usage.ru_utime + usage.ru_stime
        if TIME:
            return elapsed, int((scratch / "rss").read_text().split()[-1]), cpu
        return elapsed, usage.ru_maxrss, cpu

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_mib(self) -> float:
        return max(self.rss) / 1024


def child_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("MODELPLANE_RENDER_CACHE_DIR", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env["XDG_CACHE_HOME"] = str(tmp / "xdg-cache")
    return env


def find_kustomize(given: Optional[str]) -> Optional[Path]:
    if given:
        return Path(given)
    peers = Path(os.environ.get("MODELPLANE_PEERS_DIR") or Path.home() / ".cache" / "modelplane-render" / "peers")
    found = peers / "bin" / "kustomize"
    if found.exists():
        return found
    on_path = shutil.which("kustomize")
    return Path(on_path) if on_path else None


def render_argv(sources: Path, plugin: Path = PLUGIN) -> list[str]:
    # No options: every fixture's replica names its namespace, and `render PATH` is the command
    # line a cache hit answers before parsing it (as it answers Argo CD's `argocd generate`).
    return [sys.executable, str(plugin), "render", str(sources)]


def baseline_tree(revision: str, tmp: Path) -> Path:
    """A detached worktree of `revision` under tmp (removed with it, and pruned from git's list)."""
    tree = tmp / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), revision], check=True)
    return tree


def machine(kustomize: Optional[Path]) -> dict[str, Any]:
    cpu = "unknown"
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    memory = 0
    try:
        memory = int(next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal"))) // 1024
    except (OSError, StopIteration):
        pass
    version = ""
    if kustomize:
        version = subprocess.run([str(kustomize), "version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    return {
        "cpu": cpu,
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_mib": memory,
        "system": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "executable": sys.executable,
        "kustomize": version,
        "commit": commit,
        "peak_rss_from": "GNU time -f %M" if TIME else "wait4 (an upper bound: includes this script's size)",
    }


# --- the run -------------------------------------------------------------------------------------


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="N = 1, 10, 100 and 3 runs each, no hostile input (CI)")
    parser.add_argument("--sizes", help="comma-separated replica counts (default 1,10,100,1000,10000; --quick 1,10,100)")
    parser.add_argument("--repeats", type=int, help="timed runs per command, the median is reported (default 5; --quick 3)")
    parser.add_argument("--kustomize", help="the kustomize binary (default: the one tests/peers/build-kustomize.sh built, else PATH)")
    parser.add_argument(
        "--kustomize-max",
        type=int,
        default=100,
        help="build with kustomize only up to this many replicas (default 100: kustomize is quadratic, 10,000 objects take it over 10 minutes)",
    )
    parser.add_argument("--json", help="where to write the results (default benchmarks/results/<UTC time>.json)")
    parser.add_argument("--compare", help="an earlier results JSON: print how each median moved")
    parser.add_argument("--gate", type=float, help="exit 1 when render of 100 replicas / kustomize build of its output exceeds this")
    parser.add_argument(
        "--baseline", metavar="REV", help="also time render of 1 replica at this git revision (e.g. HEAD~3), in the same turns"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (sources, outputs) and print its path")
    parser.add_argument(
        "--helm-chart",
        metavar="DIR",
        help="a checkout of llm-d-modelservice (v0.4.12, fetched by hand, never committed): time `helm template` of its "
        "examples/values-pd.yaml beside a cold render of prefill-decode-kimi-k2 (without it, that row is skipped)",
    )
    parser.add_argument(
        "--helm", default=None, help="the helm binary (default: ~/go/bin/helm, from `go install helm.sh/helm/v4/cmd/helm@v4.3.2`)"
    )
    parser.add_argument(
        "--picker",
        action="store_true",
        help="also run the real endpoint picker (MODELPLANE_EPP_BIN, the real peers; tests/test_picker_runs.py) once per repeat",
    )
    parser.add_argument(
        "--argocd-loop",
        action="store_true",
        help="also time Argo CD syncing 50 Applications through the plugin and through its directory source "
        "(the real peers; benchmarks/argocd_sync.py), --argocd-loop-rounds rounds each",
    )
    parser.add_argument("--argocd-loop-rounds", type=int, default=3, help="rounds of --argocd-loop per mode (default 3)")
    args = parser.parse_args(argv)

    sizes = [int(s) for s in (args.sizes or ("1,10,100" if args.quick else "1,10,100,1000,10000")).split(",")]
    repeats = args.repeats or (3 if args.quick else 5)
    kustomize = find_kustomize(args.kustomize)
    if kustomize is None:
        print("benchmark: kustomize not found: run tests/peers/build-kustomize.sh or pass --kustomize", file=sys.stderr)
        if args.gate is not None:
            return 1
    tmp = Path(tempfile.mkdtemp(prefix="modelplane-bench-"))
    try:
        return run(args, sizes, repeats, kustomize, tmp)
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)


def run(args: argparse.Namespace, sizes: list[int], repeats: int, kustomize: Optional[Path], tmp: Path) -> int:
    env = child_env(tmp)
    cached_env = {**env, "MODELPLANE_RENDER_CACHE_DIR": str(tmp / "render-cache")}
    scratch = tmp / "scratch"
    scratch.mkdir()
    load_before = os.getloadavg()
    started = time.time()
    shapes = fixture_shapes()

    cases: list[Case] = [Case("floor", [sys.executable, "-c", "pass"], env, tmp)]
    objects: dict[int, int] = {}
    for n in sizes:
        sources = tmp / f"sources-{n}"
        write_sources(sources, n, shapes)
        render = Case(f"render/{n}", render_argv(sources), env, tmp)
        elapsed, _, _ = render.run(scratch)  # untimed: compiles bytecode, fills the template cache, checks the sources render
        stream = (scratch / "stdout").read_text(encoding="utf-8")
        objects[n] = write_kustomization(tmp / f"output-{n}", stream)
        cases += [render, Case(f"cached/{n}", render_argv(sources), cached_env, tmp)]
        if n == 1:
            verdicts = Path(env["XDG_CACHE_HOME"]) / "modelplane-render" / "cel-verdicts"
            cases.append(Case("selectors-cold/1", render_argv(sources), env, tmp, forget=verdicts))
            if args.baseline:
                cases.append(Case("baseline/1", render_argv(sources, baseline_tree(args.baseline, tmp) / "plugin.py"), env, tmp))
        if kustomize and n <= args.kustomize_max:
            cases.append(Case(f"kustomize/{n}", [str(kustomize), "build", str(tmp / f"output-{n}")], env, tmp))
        print(f"  generated {n} replicas ({objects[n]} objects, first render {elapsed * 1000:.0f} ms)", file=sys.stderr)

    helm = Path(args.helm or Path.home() / "go" / "bin" / "helm")
    if args.helm_chart and helm.exists():
        # The tool a user would pick instead: a cold render (every cache of ours forgotten: compiled templates,
        # the parsed CRD, CEL verdicts; helm keeps none) of the prefill/decode fixture, and the same warm, beside
        # helm template of llm-d-modelservice's own prefill/decode example.
        kimi = [sys.executable, str(PLUGIN), "render", str(FIXTURES / "prefill-decode-kimi-k2")]
        ours = Path(env["XDG_CACHE_HOME"]) / "modelplane-render"
        cases.append(Case("pd/render-cold", kimi, env, tmp, forget=ours))
        cases.append(Case("pd/render-warm", kimi, env, tmp))
        # What no render can go under: the interpreter importing the two libraries the design card fixes
        # (Jinja2 for the templates, PyYAML with libyaml for reading and writing) and doing nothing else.
        cases.append(Case("pd/stack-floor", [sys.executable, "-c", "import jinja2, yaml"], env, tmp))
        chart = Path(args.helm_chart)
        values = chart / "examples" / "values-pd.yaml"
        cases.append(
            Case(
                "pd/helm-template", [str(helm), "template", "pd", str(chart / "charts" / "llm-d-modelservice"), "-f", str(values)], env, tmp
            )
        )
    elif not args.quick:
        print("  helm row skipped: give --helm-chart DIR (a checkout of llm-d-modelservice v0.4.12) and helm", file=sys.stderr)
    for key, replica in (("discover/1000-files", None), ("discover/1000-files-match-last", shapes[0].text.rstrip() + "\n")):
        app = tmp / key.replace("/", "-")
        write_thousand_files(app, replica)
        cases.append(Case(key, [sys.executable, str(PLUGIN), "argocd", "discover"], env, app))
    if not args.quick:
        for name, _, expect in HOSTILE:
            directory = tmp / f"limits-{name}"
            directory.mkdir()
            (directory / "case.yaml").write_text(hostile_input(name, shapes[0].text.rstrip() + "\n"), encoding="utf-8")
            argv = [sys.executable, str(PLUGIN), "render", "--allow-empty", "case.yaml"]
            cases.append(Case(f"limits/{name}", argv, env, directory, expect=expect))

    overlays = sorted(p for p in (ROOT / "kustomize" / "overlays").glob("*") if (p / "kustomization.yaml").exists())
    if kustomize and overlays:
        wrapper = tmp / "modelplane-render"
        wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{PLUGIN}" "$@"\n')
        wrapper.chmod(0o755)
        krm_env = {**env, "MODELPLANE_RENDER": str(wrapper)}
        for overlay in overlays:
            krm = Case(
                f"krm/{overlay.name}", [str(kustomize), "build", "--enable-alpha-plugins", "--enable-exec", str(overlay)], krm_env, tmp
            )
            krm.run(scratch)
            objects_dir = tmp / f"krm-output-{overlay.name}"
            # kustomize's first object has no ---
            write_kustomization(objects_dir, "---\n" + (scratch / "stdout").read_text(encoding="utf-8"))
            cases += [krm, Case(f"krm-output/{overlay.name}", [str(kustomize), "build", str(objects_dir)], env, tmp)]
    else:
        print("  kustomize KRM path: not measured (no kustomize, or no kustomize/overlays/*/kustomization.yaml yet)", file=sys.stderr)

    for case in cases:  # warm every command once (page cache, bytecode, the render cache of the cached cases)
        first, _, _ = case.run(scratch)
        case.slow = first > 5
    for turn in range(repeats):
        for case in cases:
            if case.slow and turn >= 3:
                continue
            elapsed, rss, cpu = case.run(scratch)
            case.times.append(elapsed)
            case.rss.append(rss)
            case.cpu.append(cpu)
        print(f"  run {turn + 1}/{repeats} done", file=sys.stderr)

    picker = run_picker(tmp, repeats) if args.picker else {}
    argocd_loop: dict[str, Any] = {}
    if args.argocd_loop:
        import argocd_sync  # its imports reach into tests/: only when asked for

        argocd_loop = argocd_sync.run_argocd_loop(tmp, shapes, args.argocd_loop_rounds)
    load_after = os.getloadavg()
    by_key = {c.key: c for c in cases}
    result = summarise(by_key, sizes, objects, repeats, kustomize, load_before, load_after, started)
    if picker:
        result["picker"] = picker
    if argocd_loop:
        result["argocd_loop"] = argocd_loop
    print_table(result)
    if argocd_loop:
        import argocd_sync

        argocd_sync.print_table(argocd_loop)
    if args.compare:
        compare(result, json.loads(Path(args.compare).read_text()))
    out = Path(args.json) if args.json else RESULTS / (time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started)) + ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten to {out}")

    if args.gate is not None:
        ratio = result["ratios"].get("render_100_vs_kustomize")
        if ratio is None:
            print("gate: render of 100 replicas vs kustomize was not measured", file=sys.stderr)
            return 1
        if ratio > args.gate:
            print(f"gate: FAILED: render of 100 replicas takes {ratio:.2f}x the kustomize build of its output (limit {args.gate}x)")
            return 1
        print(f"gate: ok: render of 100 replicas takes {ratio:.2f}x the kustomize build of its output (limit {args.gate}x)")
    return 0


def summarise(
    cases: dict[str, Case],
    sizes: list[int],
    objects: dict[int, int],
    repeats: int,
    kustomize: Optional[Path],
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
    started: float,
) -> dict[str, Any]:
    floor, floor_cpu = cases["floor"].median, cases["floor"].cpu_median
    rows = []
    for n in sizes:
        render, cached, peer = cases[f"render/{n}"], cases[f"cached/{n}"], cases.get(f"kustomize/{n}")
        row: dict[str, Any] = {
            "replicas": n,
            "objects": objects[n],
            "render_ms": render.median * 1000,
            "render_peak_mib": render.peak_mib,
            "cached_ms": cached.median * 1000,
            "cached_peak_mib": cached.peak_mib,
            "render_vs_floor": render.median / floor,
            "cached_vs_floor": cached.median / floor,
            "runs": len(render.times),
            "render_cpu_ms": render.cpu_median * 1000,
            "cached_cpu_ms": cached.cpu_median * 1000,
            "render_vs_floor_cpu": render.cpu_median / floor_cpu,
            "cached_vs_floor_cpu": cached.cpu_median / floor_cpu,
        }
        if peer:
            row |= {
                "kustomize_ms": peer.median * 1000,
                "kustomize_peak_mib": peer.peak_mib,
                "render_vs_kustomize": render.median / peer.median,
                "kustomize_cpu_ms": peer.cpu_median * 1000,
                "render_vs_kustomize_cpu": render.cpu_median / peer.cpu_median,
            }
        if n // 10 in sizes and n % 10 == 0:
            row["growth_vs_tenth"] = render.median / cases[f"render/{n // 10}"].median
        rows.append(row)
    krm = []
    for key, case in cases.items():
        if key.startswith("krm/"):
            overlay = key.split("/", 1)[1]
            peer = cases[f"krm-output/{overlay}"]
            krm.append(
                {
                    "overlay": f"kustomize/overlays/{overlay}",
                    "ms": case.median * 1000,
                    "vs_floor": case.median / floor,
                    "kustomize_of_output_ms": peer.median * 1000,
                    "vs_kustomize_of_output": case.median / peer.median,
                }
            )
    ratios: dict[str, float] = {}
    by_n = {r["replicas"]: r for r in rows}
    if 1 in by_n:
        ratios["render_1_vs_floor"] = by_n[1]["render_vs_floor"]
        ratios["render_1_vs_floor_cpu"] = by_n[1]["render_vs_floor_cpu"]
        ratios["cached_1_vs_floor"] = by_n[1]["cached_vs_floor"]
        ratios["cached_1_vs_floor_cpu"] = by_n[1]["cached_vs_floor_cpu"]
        if "render_vs_kustomize" in by_n[1]:
            ratios["render_1_vs_kustomize"] = by_n[1]["render_vs_kustomize"]
            ratios["render_1_vs_kustomize_cpu"] = by_n[1]["render_vs_kustomize_cpu"]
    selectors = {}
    if "selectors-cold/1" in cases:
        render_1, cold = cases["render/1"], cases["selectors-cold/1"]
        selectors = {
            "render_1_ms": render_1.median * 1000,
            "verdicts_cold_1_ms": cold.median * 1000,
            "first_compile_ms": (cold.median - render_1.median) * 1000,
        }
        if "baseline/1" in cases:
            baseline = cases["baseline/1"]
            selectors |= {"baseline_1_ms": baseline.median * 1000, "render_1_minus_baseline_ms": (render_1.median - baseline.median) * 1000}
    helm_row = {}
    if "pd/helm-template" in cases:
        helm_case = cases["pd/helm-template"]
        helm_row = {
            "render_cold_ms": cases["pd/render-cold"].median * 1000,
            "render_warm_ms": cases["pd/render-warm"].median * 1000,
            "helm_template_ms": helm_case.median * 1000,
            "cold_vs_helm": cases["pd/render-cold"].median / helm_case.median,
            "warm_vs_helm": cases["pd/render-warm"].median / helm_case.median,
            "cold_vs_helm_cpu": cases["pd/render-cold"].cpu_median / helm_case.cpu_median,
            "stack_floor_ms": cases["pd/stack-floor"].median * 1000,
            "stack_floor_vs_helm": cases["pd/stack-floor"].median / helm_case.median,
        }
    discover = [
        {
            "case": key,
            "ms": case.median * 1000,
            "peak_mib": case.peak_mib,
            "vs_floor": case.median / floor,
            "cpu_ms": case.cpu_median * 1000,
        }
        for key, case in cases.items()
        if key.startswith("discover/")
    ]
    what = {name: text for name, text, _ in HOSTILE}
    limits = [
        {
            "case": key,
            "what": what[key.split("/", 1)[1]],
            "exit": case.expect,
            "ms": case.median * 1000,
            "peak_mib": case.peak_mib,
            "vs_floor": case.median / floor,
            "cpu_ms": case.cpu_median * 1000,
            "runs": len(case.times),
        }
        for key, case in cases.items()
        if key.startswith("limits/")
    ]
    if 100 in by_n and "render_vs_kustomize" in by_n[100]:
        ratios["render_100_vs_kustomize"] = by_n[100]["render_vs_kustomize"]
        ratios["render_100_vs_kustomize_cpu"] = by_n[100]["render_vs_kustomize_cpu"]
    if 1000 in by_n:
        ratios["render_1000_peak_mib"] = by_n[1000]["render_peak_mib"]
        if 100 in by_n:
            ratios["render_1000_vs_100"] = by_n[1000]["render_ms"] / by_n[100]["render_ms"]
            ratios["render_1000_vs_100_cpu"] = by_n[1000]["render_cpu_ms"] / by_n[100]["render_cpu_ms"]
    if 10000 in by_n:
        ratios["render_10000_peak_mib"] = by_n[10000]["render_peak_mib"]
        if 1000 in by_n:
            ratios["render_10000_vs_1000"] = by_n[10000]["render_ms"] / by_n[1000]["render_ms"]
            ratios["render_10000_vs_1000_cpu"] = by_n[10000]["render_cpu_ms"] / by_n[1000]["render_cpu_ms"]
    return {
        "date": datetime.datetime.fromtimestamp(started, datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine(kustomize) | {"load_before": load_before, "load_after": load_after},
        "repeats": repeats,
        "floor_ms": floor * 1000,
        "floor_cpu_ms": floor_cpu * 1000,
        "sizes": rows,
        "krm": krm,
        "selectors": selectors,
        "helm": helm_row,
        "discover": discover,
        "limits": limits,
        "ratios": ratios,
        "targets": [
            {
                "name": name,
                "what": what,
                "limit": limit,
                "value": ratios.get(name),
                "cpu_value": ratios.get(name + "_cpu"),
                "met": ratios[name] <= limit if name in ratios else None,
            }
            for name, what, limit in TARGETS
        ],
    }


def print_table(result: dict[str, Any]) -> None:
    m = result["machine"]
    print(
        f"\nmodelplane-render benchmark, {result['date']}, {m['commit']}\n"
        f"{m['cpu']}, {m['cpus']} CPUs, {m['memory_mib']} MiB, {m['system']}, Python {m['python']}, {m['kustomize'] or 'no kustomize'}\n"
        f"load average {m['load_before'][0]:.1f} before, {m['load_after'][0]:.1f} after; median of {result['repeats']} runs\n"
    )
    print(f"floor (python -c pass): {result['floor_ms']:.1f} ms\n")
    header = f"{'replicas':>8} {'objects':>7} {'render ms':>10} {'peak MiB':>8} {'cached ms':>9} {'kustomize ms':>12}   {'render/floor':>12} {'render/kust':>11} {'cached/floor':>12} {'growth N/(N/10)':>15}"
    print(header)
    for r in result["sizes"]:
        kust = f"{r['kustomize_ms']:12.1f}" if "kustomize_ms" in r else f"{'-':>12}"
        vs = f"{r['render_vs_kustomize']:10.2f}x" if "render_vs_kustomize" in r else f"{'-':>11}"
        growth = f"{r['growth_vs_tenth']:14.2f}x" if "growth_vs_tenth" in r else f"{'':>15}"
        print(
            f"{r['replicas']:>8} {r['objects']:>7} {r['render_ms']:10.1f} {r['render_peak_mib']:8.1f} {r['cached_ms']:9.1f} {kust}"
            f"   {r['render_vs_floor']:11.2f}x {vs} {r['cached_vs_floor']:11.2f}x {growth}"
        )
    for k in result["krm"]:
        print(
            f"\nKRM end to end, kustomize build --enable-alpha-plugins --enable-exec {k['overlay']}: {k['ms']:.1f} ms "
            f"({k['vs_floor']:.1f}x floor, {k['vs_kustomize_of_output']:.1f}x kustomize build of its output, {k['kustomize_of_output_ms']:.1f} ms)"
        )
    if not result["krm"]:
        print("\nKRM end to end: not measured")
    sel = result.get("selectors") or {}
    if sel:
        print(
            f"\nDRA selectors, render of 1 replica: verdicts known {sel['render_1_ms']:.1f} ms, verdicts forgotten "
            f"{sel['verdicts_cold_1_ms']:.1f} ms (first compile: {sel['first_compile_ms']:+.1f} ms)"
        )
        if "baseline_1_ms" in sel:
            print(
                f"  baseline revision: {sel['baseline_1_ms']:.1f} ms; this tree minus baseline: {sel['render_1_minus_baseline_ms']:+.1f} ms"
            )
    hr = result.get("helm") or {}
    if hr:
        print(
            f"\nAgainst helm template (llm-d-modelservice v0.4.12 examples/values-pd.yaml): render of prefill-decode-kimi-k2 "
            f"cold {hr['render_cold_ms']:.1f} ms, warm {hr['render_warm_ms']:.1f} ms, helm {hr['helm_template_ms']:.1f} ms: "
            f"cold/helm {hr['cold_vs_helm']:.2f}x [{hr['cold_vs_helm_cpu']:.2f}x CPU], warm/helm {hr['warm_vs_helm']:.2f}x"
        )
        print(
            f"  `python -c 'import jinja2, yaml'` (the stack's floor, no render): {hr['stack_floor_ms']:.1f} ms, "
            f"{hr['stack_floor_vs_helm']:.2f}x helm"
        )
    for d in result.get("discover", []):
        print(
            f"\nArgo CD discovery, {d['case']} (argocd discover, a new process): {d['ms']:.1f} ms, {d['vs_floor']:.1f}x floor, "
            f"{d['peak_mib']:.1f} MiB peak, {d['cpu_ms']:.1f} ms CPU"
        )
    if result.get("limits"):
        print("\nhostile input (tests/test_limits.py's), render of one file, a new process:")
        print(f"{'case':>28} {'exit':>4} {'ms':>9} {'peak MiB':>8} {'x floor':>8}   what")
        for lim in result["limits"]:
            print(f"{lim['case']:>28} {lim['exit']:>4} {lim['ms']:9.1f} {lim['peak_mib']:8.1f} {lim['vs_floor']:7.1f}x   {lim['what']}")
    picker = result.get("picker")
    if picker:
        print(f"\nthe real endpoint picker (tests/test_picker_runs.py), median of {picker['runs']} runs:")
        for row in picker["cases"]:
            mark = "met" if row["met"] else "MISSED"
            print(
                f"  {row['fixture']}: SERVING {row['ready_s']:.1f} s after start, the surge picker {row['surge_ready_s']:.1f} s "
                f"(README states at most {row['stated_s']:g} s: {mark}); the old one gone {row['exit_s']:.2f} s after {row['signal']}"
            )
    print(
        f"\nThe same in CPU time (user + system), which other work on the machine moves far less than wall time; "
        f"floor {result['floor_cpu_ms']:.1f} ms:"
    )
    print(
        f"{'replicas':>8} {'render ms':>10} {'cached ms':>9} {'kustomize ms':>12}   {'render/floor':>12} {'render/kust':>11} {'cached/floor':>12}"
    )
    for r in result["sizes"]:
        kust = f"{r['kustomize_cpu_ms']:12.1f}" if "kustomize_cpu_ms" in r else f"{'-':>12}"
        vs = f"{r['render_vs_kustomize_cpu']:10.2f}x" if "render_vs_kustomize_cpu" in r else f"{'-':>11}"
        print(
            f"{r['replicas']:>8} {r['render_cpu_ms']:10.1f} {r['cached_cpu_ms']:9.1f} {kust}"
            f"   {r['render_vs_floor_cpu']:11.2f}x {vs} {r['cached_vs_floor_cpu']:11.2f}x"
        )
    print("\ntargets (issue 8), on wall time (CPU time in brackets):")
    for t in result["targets"]:
        mark = {True: "met   ", False: "MISSED", None: "n/a   "}[t["met"]]
        value = f"{t['value']:.2f}" if t["value"] is not None else "-"
        cpu = f" [{t['cpu_value']:.2f}]" if t.get("cpu_value") is not None else ""
        print(f"  {mark} {t['what']}: {value}{cpu} (limit {t['limit']:g})")


def compare(new: dict[str, Any], old: dict[str, Any]) -> None:
    print(f"\ncompared with {old['date']} ({old['machine'].get('commit', '?')}):")
    old_rows = {r["replicas"]: r for r in old["sizes"]}
    for r in new["sizes"]:
        before = old_rows.get(r["replicas"])
        if not before:
            continue
        parts = []
        for key in ("render_vs_floor", "render_vs_kustomize", "cached_vs_floor", "render_peak_mib"):
            if key in r and key in before:
                parts.append(f"{key} {before[key]:.2f} -> {r[key]:.2f}")
        print(f"  {r['replicas']:>5} replicas: " + ", ".join(parts))
    for section in ("discover", "limits"):
        before_rows = {row["case"]: row for row in old.get(section, [])}
        for row in new.get(section, []):
            if row["case"] in before_rows:
                was = before_rows[row["case"]]
                print(
                    f"  {row['case']}: vs_floor {was['vs_floor']:.2f} -> {row['vs_floor']:.2f}, peak_mib {was['peak_mib']:.1f} -> {row['peak_mib']:.1f}"
                )


def run_picker(tmp: Path, repeats: int) -> dict[str, Any]:
    """tests/test_picker_runs.py `repeats` times, its times read back; the medians for each fixture.

    The test owns the setup (an RBAC API server, the rendered objects, a token, the picker and its
    surge); it asserts what happens and writes how long it took to MODELPLANE_EPP_TIMINGS.
    MODELPLANE_EPP_SECONDS (how long the first must stay up) is 0 unless set: only the times are wanted here.
    """
    timings = tmp / "picker-timings.jsonl"
    env = {**os.environ, "MODELPLANE_EPP_TIMINGS": str(timings)}
    env.setdefault("MODELPLANE_EPP_SECONDS", "0")
    test = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "picker_binary",
        str(ROOT / "tests" / "test_picker_runs.py"),
    ]
    for turn in range(repeats):
        done = subprocess.run(test, env=env, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"picker: {' '.join(test)} exited {done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}")
        print(f"  picker run {turn + 1}/{repeats} done", file=sys.stderr)
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in timings.read_text().splitlines():
        row = json.loads(line)
        runs.setdefault((row["fixture"], row["signal"]), []).append(row)
    cases = []
    for (fixture, stop), rows in sorted(runs.items()):
        ready = statistics.median(r["ready_s"] for r in rows)
        surge = statistics.median(r["surge_ready_s"] for r in rows)
        cases.append(
            {
                "fixture": fixture,
                "signal": stop,
                "ready_s": ready,
                "surge_ready_s": surge,
                "exit_s": statistics.median(r["exit_s"] for r in rows),
                "stated_s": PICKER_READY_STATED,
                "met": max(ready, surge) <= PICKER_READY_STATED,
            }
        )
    return {"runs": repeats, "cases": cases}


if __name__ == "__main__":
    sys.exit(main())
