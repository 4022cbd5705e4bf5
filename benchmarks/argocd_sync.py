"""Argo CD's loop, timed (issue 33): a commit to a monorepo of 50 Applications, until all 50 are Synced.

benchmarks/run.py --argocd-loop runs it. Real Argo CD v3.2.11 against a real kube-apiserver, as
tests/test_argocd_sync.py runs it (tests/argocd_loop.py). One monorepo of APPS directories, one replica
each (the shapes of fixtures/valid, without metadata.namespace: each Application's destination namespace
keeps them apart), every Application synced automatically with CreateNamespace=true. Two modes, side by
side in one run, in turns:

- `plugin`: source.plugin modelplane-render-v1, our plugin in argocd-cmp-server, its render cache on
  (MODELPLANE_RENDER_CACHE_DIR, as argocd/repo-server-sidecar.yaml sets it);
- `directory`: Argo CD's own directory source of the same objects, rendered beforehand with
  `modelplane-render render --namespace NS DIR` and committed, in a repository of their own (the
  repo-server streams the whole repository to a plugin, so the rendered copies stay out of the plugin's).

A round is one commit that changes every app (a label, which every rendered object carries), a hard
refresh of all 50, and the time until all 50 are Synced at the new revision with their sync operation
Succeeded (health is not waited for: no kubelet or LWS controller runs). A last round changes one app of
the 50: the other 49 are rendered again all the same (Argo CD keys its manifest cache by revision), and
there the render cache answers them.

Measured per round: wall time; the CPU seconds (user + system, its waited-for children included) of the
sidecar (argocd-cmp-server, the generate commands below it) and of the repo-server; the sidecar's process
tree RSS, sampled every SAMPLE_S; each `modelplane-render argocd generate` (through a wrapper first on
the sidecar's PATH: bash, `exec /usr/bin/time`, so each run leaves its start, end, exit and peak RSS)
and how many ran at once; the render cache's hits (runs less the entries they stored). The generates run a
copy of the package taken at the start (installed_copy), as an image would hold it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "peers")]

from argocd_loop import HARD_REFRESH, NAMESPACE, ArgoLoop, generated_project, running_loop, sync_revision, sync_status  # noqa: E402

from real_engine import process_tree  # noqa: E402

APPS = 50
PLUGIN_NAME = "modelplane-render-v1"
BENCH_PROJECT = "modelplane-render-bench"
ROUND_LABEL = "benchmark.modelplane.ai/round"
SERVING_CRDS = ("leaderworkerset.x-k8s.io_leaderworkersets.v0.10.0.yaml", "inference.networking.k8s.io_inferencepools.v1.6.0.yaml")
SAMPLE_S = 0.1
POLL_S = 0.25  # one LIST of every Application: its cost lands on the API server, not on what is measured
ROUND_TIMEOUT_S = 900.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
MODES = ("plugin", "directory")
APPLICATION = ("argoproj.io/v1alpha1", "Application")


# --- the start-up: the one place that knows how tests/argocd_loop.py is started ---------------------


@contextlib.contextmanager
def started_loop(work: Path, sidecar_path: str) -> Iterator[ArgoLoop]:
    """The loop of tests/test_argocd_sync.py's fixture: Argo CD installed as examples/argocd-install (our
    Component) builds it, the serving CRDs (check-cluster-apis stays on), argocd-cmp-server with
    `sidecar_path` as its PATH."""
    from argocd_install import build_install

    from conftest import SHARED
    from peer import real_apiserver, require_peer

    bin_dir = require_peer("argocd-cmp-server").parent
    require_peer("kube-controller-manager")
    (work / "argocd-install").mkdir(parents=True)
    install = build_install(work / "argocd-install")
    with real_apiserver() as api:
        api.wait_for_api("resource.k8s.io/v1", "ResourceClaimTemplate")
        for name in SERVING_CRDS:
            api.apply_crd(yaml.safe_load((SHARED / "upstream" / "crds" / name).read_text()))
        with running_loop(api, bin_dir, [], install, sidecar_path) as loop:  # no install before ours
            yield loop


# --- the apps ----------------------------------------------------------------------------------------


@dataclass
class App:
    name: str  # the Application's, its directory's and (prefixed) its namespace's
    fixture: str
    replica: dict[str, Any]

    def text(self, round_: int) -> str:
        replica = json.loads(json.dumps(self.replica))
        meta = replica["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), ROUND_LABEL: str(round_)}
        return f"# {self.fixture}\n" + yaml.safe_dump(replica, sort_keys=False)


def monorepo_apps(shapes: list[Any]) -> list[App]:
    """APPS apps cycling through the fixture shapes (benchmarks/run.py fixture_shapes), namespace dropped."""
    apps = []
    for i in range(APPS):
        shape = shapes[i % len(shapes)]
        replica = yaml.safe_load(shape.text)
        replica["metadata"].pop("namespace", None)
        apps.append(App(f"app-{i:02d}", shape.fixture, replica))
    return apps


def namespace_of(mode: str, app: App) -> str:
    return f"bench-{mode[0]}-{app.name}"


def application(mode: str, app: App, repo_url: str) -> dict[str, Any]:
    source: dict[str, Any] = {"repoURL": repo_url, "targetRevision": "main", "path": app.name}
    source |= {"plugin": {"name": PLUGIN_NAME}} if mode == "plugin" else {"directory": {"recurse": False}}
    return {
        "apiVersion": APPLICATION[0],
        "kind": APPLICATION[1],
        "metadata": {"name": f"{mode}-{app.name}", "namespace": NAMESPACE},
        "spec": {
            "project": BENCH_PROJECT,
            "source": source,
            "destination": {"server": "https://kubernetes.default.svc", "namespace": namespace_of(mode, app)},
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True}, "syncOptions": ["CreateNamespace=true"]},
        },
    }


class Repo:
    """A repository `git daemon` serves beside the loop's own (its base path serves every directory in it)."""

    def __init__(self, path: Path, url: str) -> None:
        self.path, self.url = path, url
        path.mkdir(parents=True, exist_ok=True)
        if not (path / ".git").exists():
            for command in (["init", "-q", "-b", "main"], ["config", "user.email", "ci@example.com"], ["config", "user.name", "CI"]):
                self.git(*command)

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True, check=True, timeout=60).stdout.strip()

    def commit(self, files: dict[str, str], message: str) -> str:
        for relative, text in files.items():
            (self.path / relative).parent.mkdir(parents=True, exist_ok=True)
            (self.path / relative).write_text(text, encoding="utf-8")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


def bench_project(render: Path, repos: dict[str, Repo], env: dict[str, str]) -> dict[str, Any]:
    """The AppProject both modes' apps are in, as a team makes it: `argocd appproject`, both repositories."""
    args = [f"--name={BENCH_PROJECT}", *(f"--src={r.url}" for r in repos.values()), "--dest=https://kubernetes.default.svc,bench-*"]
    return generated_project(str(render), *args, "--create-namespace", env=env)


def files_for(
    mode: str, apps: list[App], round_: int, changed: set[str], render: Path, scratch: Path, env: dict[str, str]
) -> dict[str, str]:
    """What a round commits: each changed app's replica, or (directory) what `render --namespace NS` prints of it."""
    files = {}
    for app in apps:
        if app.name not in changed:
            continue
        if mode == "plugin":
            files[f"{app.name}/replica.yaml"] = app.text(round_)
            continue
        source = scratch / app.name
        source.mkdir(parents=True, exist_ok=True)
        (source / "replica.yaml").write_text(app.text(round_), encoding="utf-8")
        done = subprocess.run(
            [str(render), "render", "--namespace", namespace_of(mode, app), str(source)], capture_output=True, text=True, env=env
        )
        if done.returncode != 0:
            raise SystemExit(f"argocd loop: render of {app.name} ({app.fixture}) failed:\n{done.stderr}")
        files[f"{app.name}/objects.yaml"] = done.stdout
    return files


# --- measuring ---------------------------------------------------------------------------------------


def cpu_seconds(pid: int, children: bool = True) -> float:
    """utime + stime (+ cutime + cstime) of a process: its own CPU (and that of the children it has waited for)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(v) for v in fields[11 : 15 if children else 13]) / CLOCK_TICKS


class TreeSampler(threading.Thread):
    """The RSS of a process and all below it, every SAMPLE_S: the peak, the root's own peak, and the most
    generates at once (each runs under one GNU time, the wrapper's)."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_bytes = self.peak_root_bytes = 0
        self.peak_pythons = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(SAMPLE_S):
            total, pythons = 0, 0
            for pid in process_tree(self.root):
                try:
                    rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
                    pythons += Path(f"/proc/{pid}/comm").read_text().strip() == "time"
                except (OSError, IndexError, ValueError):
                    continue
                total += rss
                if pid == self.root:
                    self.peak_root_bytes = max(self.peak_root_bytes, rss)
            self.peak_bytes = max(self.peak_bytes, total)
            self.peak_pythons = max(self.peak_pythons, pythons)

    def reset(self) -> None:
        self.peak_bytes = self.peak_root_bytes = self.peak_pythons = 0

    def stop(self) -> None:
        self._done.set()
        self.join()


def installed_copy(target: Path) -> Path:
    """The package and its templates copied as they are now, for PYTHONPATH: the render cache keys on the tool's
    files (size and mtime), so an edit to the checkout during the run would make every generate a miss, as it
    never happens to an installed sidecar image."""
    for name in ("modelplane_render", "templates"):
        shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def write_wrapper(directory: Path, real: Path, runs: Path, cache: Path, pythonpath: Path) -> None:
    """`modelplane-render` first on the sidecar's PATH: the real one under GNU time, which writes its exit,
    peak RSS (KiB) and render cache directory to a file named for when it started (the file's mtime: when it
    ended). The cache directory is the sidecar's own setting (argocd/repo-server-sidecar.yaml), else `cache`."""
    directory.mkdir(parents=True)
    runs.mkdir(parents=True)
    wrapper = directory / "modelplane-render"
    wrapper.write_text(
        "#!/bin/bash\n"
        f"export PYTHONPATH={pythonpath}\n"
        f'export MODELPLANE_RENDER_CACHE_DIR="${{MODELPLANE_RENDER_CACHE_DIR:-{cache}}}"\n'
        f'exec /usr/bin/time -f "%x %M $MODELPLANE_RENDER_CACHE_DIR" -o "{runs}/$EPOCHREALTIME.$$" "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)


@dataclass
class Generate:
    name: str
    start: float
    end: float
    exit: int
    rss_kib: int
    cache: str


def generate_runs(runs: Path) -> list[Generate]:
    found = []
    for path in runs.iterdir():
        lines = path.read_text().split("\n")
        last = [line for line in lines if line.strip()]
        if not last:
            continue  # still running
        exit_, rss, cache = last[-1].split(" ", 2)
        found.append(Generate(path.name, float(path.name.rsplit(".", 1)[0]), path.stat().st_mtime, int(exit_), int(rss), cache))
    return sorted(found, key=lambda g: g.start)


def most_at_once(runs: list[Generate]) -> int:
    events = sorted([(g.start, 1) for g in runs] + [(g.end, -1) for g in runs])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def wait_synced(loop: ArgoLoop, mode: str, revision: str, changed: set[str], t0: float) -> dict[str, float]:
    """Seconds from t0 until each of the mode's apps is Synced at `revision` (and an app that changed has
    its sync operation for it Succeeded)."""
    synced: dict[str, float] = {}
    deadline = t0 + ROUND_TIMEOUT_S
    prefix = f"{mode}-"
    while True:
        now = time.perf_counter()
        for app in loop.list(*APPLICATION, NAMESPACE):
            name = app["metadata"]["name"]
            if not name.startswith(prefix) or name in synced:
                continue
            if sync_status(app) != "Synced" or sync_revision(app) != revision:
                continue
            operation = (app.get("status") or {}).get("operationState") or {}
            if name[len(prefix) :] in changed and (
                operation.get("phase") != "Succeeded" or (operation.get("syncResult") or {}).get("revision") != revision
            ):
                continue
            synced[name] = now - t0
        if len(synced) == APPS:
            return synced
        loop.check_alive()
        if time.perf_counter() > deadline:
            late = sorted(f"{prefix}{n}" for n in changed if f"{prefix}{n}" not in synced)[:5]
            raise SystemExit(
                f"argocd loop: {mode} not all Synced at {revision[:8]} after {ROUND_TIMEOUT_S:.0f}s: {late}\n{loop.logs()[-8000:]}"
            )
        time.sleep(POLL_S)


@dataclass
class Round:
    mode: str
    number: int
    changed: int  # apps the commit changed
    wall_s: float
    sidecar_cpu_s: float
    repo_server_cpu_s: float
    controller_cpu_s: float
    sidecar_peak_mib: float
    cmp_server_own_cpu_s: float = 0.0  # the sidecar's CPU less its commands': receiving and extracting tars, reading output
    cmp_server_own_peak_mib: float = 0.0
    generates: int = 0
    generate_peak_mib: float = 0.0
    generate_median_s: float = 0.0
    generates_at_once: int = 0
    pythons_at_once_sampled: int = 0
    cache_misses: int = 0
    failed: int = 0
    synced_s: list[float] = field(default_factory=list)


@dataclass
class Bench:
    loop: ArgoLoop
    apps: list[App]
    repos: dict[str, Repo]
    render: Path
    runs: Path
    cache: Path
    scratch: Path
    sampler: TreeSampler
    env: dict[str, str]  # for the commands run here: the installed copy on PYTHONPATH, the cache off

    def cache_dir(self) -> Path:
        """Where the generates keep the render cache (as the last one was told), else the wrapper's default."""
        runs = generate_runs(self.runs)
        return Path(runs[-1].cache) if runs else self.cache

    def pid(self, name: str) -> int:
        return self.loop.processes[name].proc.pid

    def round(self, mode: str, number: int, changed: set[str]) -> Round:
        files = files_for(mode, self.apps, number, changed, self.render, self.scratch / f"{mode}-{number}", self.env)
        revision = self.repos[mode].commit(files, f"round {number}: {len(changed)} apps changed")
        before_runs = {p.name for p in self.runs.iterdir()}
        cache = self.cache_dir()
        before_cache = set(os.listdir(cache)) if cache.exists() else set()
        pids = {k: self.pid(k) for k in ("argocd-cmp-server", "argocd-repo-server", "argocd-application-controller")}
        cpu = {k: cpu_seconds(p) for k, p in pids.items()}
        own = cpu_seconds(pids["argocd-cmp-server"], children=False)
        self.sampler.reset()
        t0 = time.perf_counter()
        for app in self.apps:
            self.loop.merge_patch(*APPLICATION, NAMESPACE, f"{mode}-{app.name}", {"metadata": {"annotations": {HARD_REFRESH: "hard"}}})
        synced = wait_synced(self.loop, mode, revision, changed, t0)
        wall = max(synced.values())
        time.sleep(1.0)  # the last generate's files written, the cmp-server's waits done
        cpu = {k: cpu_seconds(p) - cpu[k] for k, p in pids.items()}
        own = cpu_seconds(pids["argocd-cmp-server"], children=False) - own
        runs = [g for g in generate_runs(self.runs) if g.name not in before_runs]
        stored = set(os.listdir(cache)) - before_cache if cache.exists() else set()
        result = Round(
            mode,
            number,
            len(changed),
            wall,
            cpu["argocd-cmp-server"],
            cpu["argocd-repo-server"],
            cpu["argocd-application-controller"],
            self.sampler.peak_bytes / 2**20,
            own,
            self.sampler.peak_root_bytes / 2**20,
            synced_s=sorted(synced.values()),
        )
        if runs:
            result.generates = len(runs)
            result.generate_peak_mib = max(g.rss_kib for g in runs) / 1024
            result.generate_median_s = statistics.median(g.end - g.start for g in runs)
            result.generates_at_once = most_at_once(runs)
            result.pythons_at_once_sampled = self.sampler.peak_pythons
            result.cache_misses = len([s for s in stored if s.endswith(".render")])
            result.failed = sum(g.exit != 0 for g in runs)
        print(
            f"  argocd loop {mode} round {number} ({len(changed)} apps changed): {wall:.1f} s, sidecar {result.sidecar_cpu_s:.1f} s CPU, "
            f"repo-server {result.repo_server_cpu_s:.1f} s CPU, {result.generates} generates",
            file=sys.stderr,
        )
        return result


def startup_costs(env: dict[str, str], render: Path, repeats: int = 10) -> dict[str, float]:
    """Median wall ms of what every generate pays before rendering: the interpreter, and the console script."""
    out = {}
    for key, argv in (("python_c_pass_ms", [sys.executable, "-c", "pass"]), ("modelplane_render_version_ms", [str(render), "--version"])):
        subprocess.run(argv, env=env, capture_output=True, check=True)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(argv, env=env, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
        out[key] = statistics.median(times) * 1000
    return out


def cmp_request_ms(log: Path) -> list[float]:
    """The argocd-cmp-server's own time of each GenerateManifest call it finished (the tar received and
    extracted, the command run), ms, from its log."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("grpc.method") == "GenerateManifest" and entry.get("msg") == "finished call":
            found.append(float(entry["grpc.time_ms"]))
    return found


def run_argocd_loop(tmp: Path, shapes: list[Any], rounds: int) -> dict[str, Any]:
    """Both modes, `rounds` rounds each in turns (which goes first alternates), then a round changing one app."""
    started = time.perf_counter()
    venv_bin = Path(sys.executable).parent
    render = venv_bin / "modelplane-render"
    work = tmp / "argocd-loop"
    wrapper_dir, runs, cache, scratch = work / "sidecar-bin", work / "generate-runs", work / "render-cache", work / "scratch"
    installed = installed_copy(work / "installed")
    write_wrapper(wrapper_dir, render, runs, cache, installed)
    peers_bin = Path(os.environ.get("MODELPLANE_PEERS_DIR") or Path.home() / ".cache" / "modelplane-render" / "peers") / "bin"
    sidecar_path = os.pathsep.join([str(wrapper_dir), str(venv_bin), str(peers_bin), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {**os.environ, "PATH": sidecar_path, "PYTHONPATH": str(installed)}
    env.pop("MODELPLANE_RENDER_CACHE_DIR", None)
    apps = monorepo_apps(shapes)
    every = {a.name for a in apps}
    results: list[Round] = []
    with started_loop(work, sidecar_path) as loop:
        repos = {"plugin": Repo(loop.repo, loop.repo_url)}
        rendered = loop.repo.parent / "rendered"
        repos["directory"] = Repo(rendered, loop.repo_url.rsplit("/", 1)[0] + "/rendered")
        loop.create(bench_project(render, repos, env))
        cmp_pid = loop.processes["argocd-cmp-server"].proc.pid
        sampler = TreeSampler(cmp_pid)
        sampler.start()
        bench = Bench(loop, apps, repos, render, runs, cache, scratch, sampler, env)
        try:
            first: dict[str, float] = {}
            for mode in MODES:  # round 0: the apps made and synced a first time (every namespace created), untimed
                revision = repos[mode].commit(files_for(mode, apps, 0, every, render, scratch / f"{mode}-0", env), "the apps")
                t0 = time.perf_counter()
                for app in apps:
                    loop.create(application(mode, app, repos[mode].url))
                first[mode] = max(wait_synced(loop, mode, revision, every, t0).values())
                print(f"  argocd loop: {APPS} {mode} apps created and synced in {first[mode]:.1f} s", file=sys.stderr)
            for number in range(1, rounds + 1):
                order = MODES if number % 2 else tuple(reversed(MODES))
                for mode in order:
                    results.append(bench.round(mode, number, every))
            for mode in MODES:
                results.append(bench.round(mode, rounds + 1, {apps[0].name}))
            requests = cmp_request_ms(loop.processes["argocd-cmp-server"].log)
            generate_s = [g.end - g.start for g in generate_runs(runs)]
        finally:
            sampler.stop()
    return summarise(results, first, startup_costs(env, render), requests, generate_s, rounds, time.perf_counter() - started)


def summarise(
    results: list[Round],
    first: dict[str, float],
    startup: dict[str, float],
    requests: list[float],
    generate_s: list[float],
    rounds: int,
    took: float,
) -> dict[str, Any]:
    def median(mode: str, attribute: str, all_changed: bool = True) -> float:
        values = [getattr(r, attribute) for r in results if r.mode == mode and (r.changed == APPS) == all_changed]
        return statistics.median(values)

    modes = {}
    for mode in MODES:
        modes[mode] = {
            "first_sync_s": first[mode],
            "sync_s": median(mode, "wall_s"),
            "sidecar_cpu_s": median(mode, "sidecar_cpu_s"),
            "cmp_server_own_cpu_s": median(mode, "cmp_server_own_cpu_s"),
            "repo_server_cpu_s": median(mode, "repo_server_cpu_s"),
            "controller_cpu_s": median(mode, "controller_cpu_s"),
            "one_app_changed_sync_s": median(mode, "wall_s", all_changed=False),
            "one_app_changed_sidecar_cpu_s": median(mode, "sidecar_cpu_s", all_changed=False),
            "one_app_changed_cmp_server_own_cpu_s": median(mode, "cmp_server_own_cpu_s", all_changed=False),
            "one_app_changed_repo_server_cpu_s": median(mode, "repo_server_cpu_s", all_changed=False),
        }
    plugin_rounds = [r for r in results if r.mode == "plugin"]
    every = [r for r in plugin_rounds if r.changed == APPS]
    one = [r for r in plugin_rounds if r.changed != APPS]
    p, d = modes["plugin"], modes["directory"]
    generates = sum(r.generates for r in every)
    sidecar = {
        "peak_tree_mib": max(r.sidecar_peak_mib for r in plugin_rounds),
        "cmp_server_own_peak_mib": max(r.cmp_server_own_peak_mib for r in plugin_rounds),
        "generate_peak_mib": max(r.generate_peak_mib for r in plugin_rounds),
        "generates_at_once": max(r.generates_at_once for r in plugin_rounds),
        "pythons_at_once_sampled": max(r.pythons_at_once_sampled for r in plugin_rounds),
        "generates_per_round": statistics.median(r.generates for r in every),
        "generate_median_s": statistics.median(r.generate_median_s for r in every),
        "failed_generates": sum(r.failed for r in plugin_rounds),
        "cache_hit_rate_all_changed": 1 - sum(r.cache_misses for r in every) / generates if generates else None,
        "cache_hit_rate_one_changed": 1 - sum(r.cache_misses for r in one) / max(1, sum(r.generates for r in one)),
        "generate_median_s_one_changed": statistics.median(r.generate_median_s for r in one),
        "cmp_request_median_ms": statistics.median(requests) if requests else None,
        "cmp_requests": len(requests),
        # Each call's time less its command's: receiving and extracting the repository's tar, starting the
        # command, reading its output (from the sums: the calls are not matched one to one with the commands).
        "cmp_overhead_per_call_ms": (sum(requests) - 1000 * sum(generate_s)) / len(requests) if requests else None,
    }
    costs = {
        **startup,
        # What a round's generates cost the sidecar besides starting Python, per app: the render itself and the cache.
        "sidecar_cpu_per_generate_ms": p["sidecar_cpu_s"] / sidecar["generates_per_round"] * 1000
        if sidecar["generates_per_round"]
        else None,
    }
    return {
        "apps": APPS,
        "rounds": rounds,
        "took_s": took,
        "modes": modes,
        "ratios": {
            "sync_plugin_vs_directory": p["sync_s"] / d["sync_s"],
            "sidecar_plus_repo_server_cpu_plugin_vs_directory": (p["sidecar_cpu_s"] + p["repo_server_cpu_s"])
            / (d["sidecar_cpu_s"] + d["repo_server_cpu_s"]),
            "one_app_changed_sync_plugin_vs_directory": p["one_app_changed_sync_s"] / d["one_app_changed_sync_s"],
        },
        "sidecar": sidecar,
        "costs": costs,
        "rounds_detail": [vars(r) for r in results],
    }


def print_table(result: dict[str, Any]) -> None:
    m, s, c, ratios = result["modes"], result["sidecar"], result["costs"], result["ratios"]
    print(
        f"\nArgo CD loop (v3.2.11, real kube-apiserver): {result['apps']} Applications of one monorepo, a commit changing every "
        f"app, a hard refresh of all, until all are Synced; median of {result['rounds']} rounds (the whole: {result['took_s'] / 60:.1f} min):"
    )
    print(
        f"{'mode':>10} {'sync s':>7} {'sidecar CPU s':>13} {'of it cmp-server':>16} {'repo-server CPU s':>17} {'controller CPU s':>16}"
        f"   {'one app changed: sync s':>23} {'sidecar CPU s':>13}"
    )
    for mode, row in m.items():
        print(
            f"{mode:>10} {row['sync_s']:7.1f} {row['sidecar_cpu_s']:13.1f} {row['cmp_server_own_cpu_s']:16.1f} "
            f"{row['repo_server_cpu_s']:17.1f} {row['controller_cpu_s']:16.1f}   {row['one_app_changed_sync_s']:23.1f} "
            f"{row['one_app_changed_sidecar_cpu_s']:13.1f}"
        )
    print(
        f"  plugin / directory: sync {ratios['sync_plugin_vs_directory']:.2f}x, sidecar + repo-server CPU "
        f"{ratios['sidecar_plus_repo_server_cpu_plugin_vs_directory']:.2f}x; one app changed: sync "
        f"{ratios['one_app_changed_sync_plugin_vs_directory']:.2f}x"
    )
    print(
        f"  the sidecar: peak RSS of its process tree {s['peak_tree_mib']:.0f} MiB (argocd-cmp-server itself {s['cmp_server_own_peak_mib']:.0f}); "
        f"one generate at most {s['generate_peak_mib']:.0f} MiB; at most {s['generates_at_once']} generates at once "
        f"({s['pythons_at_once_sampled']} seen by the {SAMPLE_S * 1000:.0f} ms sampler); failed generates {s['failed_generates']}"
    )
    hit_all = s["cache_hit_rate_all_changed"] or 0.0
    print(
        f"  a generate: {s['generates_per_round']:g} a round, median {s['generate_median_s'] * 1000:.0f} ms each under that load "
        f"({s['generate_median_s_one_changed'] * 1000:.0f} ms when one app changed); sidecar CPU {c['sidecar_cpu_per_generate_ms'] or 0:.0f} ms "
        f"per generate; python -c pass {c['python_c_pass_ms']:.0f} ms, modelplane-render --version {c['modelplane_render_version_ms']:.0f} ms "
        f"(idle); render cache hits {hit_all:.0%} when every app changed, {s['cache_hit_rate_one_changed']:.0%} when one did"
    )
    if s["cmp_request_median_ms"] is not None:
        print(
            f"  argocd-cmp-server's GenerateManifest calls: median {s['cmp_request_median_ms']:.0f} ms of {s['cmp_requests']}; "
            f"less the command's own time, {s['cmp_overhead_per_call_ms']:.0f} ms a call (the tar received and extracted, the output read)"
        )
