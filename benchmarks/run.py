"""apidrift benchmarks against the tools people would use instead (ty, mypy, pyright).

    python benchmarks/run.py                      # everything: flagship, large, scale, upstream-scale
    python benchmarks/run.py --cases flagship     # one case; --quick for fewer runs and sizes

Run it with the Python of an environment where apidrift is installed (`pip install .`). It sets up
what it needs under `benchmarks/` (git-ignored): the reference tools in `benchmarks/.venv-tools`
(ty and mypy from the package index with pip, pyright with npm into a local prefix), an empty
environment `benchmarks/.venv-empty` that every type checker is pointed at (so none of them sees
site-packages), and `benchmarks/.data` (one apidrift cache per case, generated trees, raw results).
This is a script, not a test: the test suite never runs it.

Every timed run is a separate process; wall time is measured around it, CPU time (user + system)
and peak memory (max RSS of the process tree, from `wait4`) come from the kernel. apidrift runs
through its Python API (`benchmarks/_child.py`) so that its phases are timed separately; the CLI is
timed too on the flagship. States: `fresh` = empty cache (download + extract, once); `cold` = sources
extracted, the `api/` and `scan/` cache folders removed; `warm` = everything cached.
Results: printed, and written to `benchmarks/.data/results.json` and `benchmarks/.data/results.md`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
TOOLS = HERE / ".venv-tools"
EMPTY = HERE / ".venv-empty"
NPM_PREFIX = TOOLS / "npm"

TY_VERSION = "0.0.108"
MYPY_VERSION = "2.4.1"
PYRIGHT_VERSION = "1.1.414"

FLAGSHIP = ("speculators==0.3.0", "vllm==0.16.0")
# The large downstream: pandas 2.2.3 (2024-09-20) against numpy 2.1.2 (2024-10-05): 1,413 files, 966 of
# them use numpy, thousands of call sites (numpy is read from its .pyi stubs, as type checkers do).
LARGE = ("pandas==2.2.3", "numpy==2.1.2")
# transformers 4.57.1 (2025-10-14) against huggingface_hub 0.35.3 (2025-09-29), the example: 2,214
# files but only 43 of them use the hub (179 use sites), so it is a large tree with a small use.
LARGE_HF = ("transformers==4.57.1", "huggingface_hub==0.35.3")
SCALE_SIZES = (10, 100, 1_000, 10_000)
UPSTREAM_EXTRA_MODULES = (0, 100, 1_000, 10_000)
REACHED_MODULES = 10  # upstream modules the synthetic downstream calls into


# --- setup ---------------------------------------------------------------------------------------


def run_quiet(cmd: list[str], **kwargs) -> None:  # type: ignore[no-untyped-def]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kwargs)


def setup_tools() -> None:
    """Install the reference tools if missing (idempotent)."""
    if not (TOOLS / "bin" / "python").exists():
        run_quiet([sys.executable, "-m", "venv", str(TOOLS)])
    pip = [str(TOOLS / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if not (TOOLS / "bin" / "ty").exists() or tool_version("ty") != TY_VERSION:
        run_quiet([*pip, f"ty=={TY_VERSION}"])
    if not (TOOLS / "bin" / "mypy").exists() or MYPY_VERSION not in tool_version("mypy"):
        run_quiet([*pip, f"mypy=={MYPY_VERSION}"])
    if not pyright_js().exists() or tool_version("pyright") != PYRIGHT_VERSION:
        if not shutil.which("npm"):
            raise SystemExit("pyright needs node and npm (e.g. apt-get install nodejs npm)")
        NPM_PREFIX.mkdir(parents=True, exist_ok=True)
        # npm installs pyright's JavaScript bundle from the npm registry; nothing else is downloaded.
        run_quiet(["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(NPM_PREFIX),
                   f"pyright@{PYRIGHT_VERSION}"])  # fmt: skip
    if not (EMPTY / "bin" / "python").exists():
        run_quiet([sys.executable, "-m", "venv", "--without-pip", str(EMPTY)])


def snapshot(ref: str) -> None:
    """Re-run this script with apidrift installed (not editable) from commit `ref` into its own venv.

    Other work may land in the repository while a long benchmark runs; a snapshot keeps every run of
    one benchmark on the same code, compiled as a normal `pip install` compiles it.
    """
    git = ["git", "-C", str(HERE.parent)]
    commit = subprocess.run(
        [*git, "rev-parse", ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    venv = DATA / f"venv-apidrift-{commit[:12]}"
    python = venv / "bin" / "python"
    if not (venv / ".complete").exists():
        shutil.rmtree(venv, ignore_errors=True)
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(
                [*git, "archive", "--format=tar", commit], capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            run_quiet([sys.executable, "-m", "venv", str(venv)])
            run_quiet([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", tmp])
        (venv / ".complete").write_text(commit + "\n")
    argv = [a for a in sys.argv[1:] if not a.startswith("--snapshot")]
    if "--snapshot" in sys.argv:
        i = sys.argv.index("--snapshot")
        argv = sys.argv[1:i] + sys.argv[i + 2 :]
    env = dict(os.environ, APIDRIFT_BENCH_SNAPSHOT=commit)
    os.execve(str(python), [str(python), str(Path(__file__).resolve()), *argv], env)


def pyright_js() -> Path:
    return NPM_PREFIX / "node_modules" / "pyright" / "index.js"


def tool_version(tool: str) -> str:
    try:
        if tool == "ty":
            out = subprocess.run(
                [str(TOOLS / "bin" / "ty"), "--version"], capture_output=True, text=True, check=False
            ).stdout
            return out.split()[1]
        if tool == "mypy":
            out = subprocess.run(
                [str(TOOLS / "bin" / "mypy"), "--version"], capture_output=True, text=True, check=False
            ).stdout
            return out.split()[1]
        if tool == "pyright":
            package = json.loads((NPM_PREFIX / "node_modules" / "pyright" / "package.json").read_text())
            return str(package["version"])
        if tool == "node":
            return subprocess.run(
                ["node", "--version"], capture_output=True, text=True, check=False
            ).stdout.strip()
        if tool == "apidrift":
            out = subprocess.run([sys.executable, "-c", "import apidrift, griffe, libcst, importlib.metadata as m;"
                                  "print(apidrift.__version__, m.version('griffe'), m.version('libcst'))"],
                                 capture_output=True, text=True, check=False).stdout.split()  # fmt: skip
            commit = os.environ.get("APIDRIFT_BENCH_SNAPSHOT")
            if commit:
                where = f"snapshot of commit {commit[:12]}"
            else:
                git = ["git", "-C", str(HERE.parent)]
                head = subprocess.run(
                    [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
                ).stdout.strip()
                dirty = subprocess.run([*git, "status", "--porcelain", "--", ".", ":!benchmarks"],
                                       capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
                where = f"installed from the work tree at {head or '?'}" + (
                    " with local changes" if dirty else ""
                )
            return f"{out[0]} ({where}; griffe {out[1]}, libcst {out[2]})"
    except (OSError, IndexError, ValueError, KeyError):
        return "?"
    return "?"


def machine() -> dict[str, object]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        kib = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0])
        mem = f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": mem,
        "os": platform.platform(),
        "python": platform.python_version(),
        "loadavg_start": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# --- measuring -----------------------------------------------------------------------------------


@dataclass
class Run:
    wall: float
    cpu: float  # user + system, the process tree
    rss_mib: float  # peak RSS of the largest process in the tree
    rc: int
    child: dict | None = None  # apidrift's own timings (from _child.py)
    output_lines: int = 0


@dataclass
class Series:
    case: str
    tool: str
    state: str
    load: tuple[float, float, float]
    runs: list[Run] = field(default_factory=list)
    note: str = ""

    def median(self, attr: str) -> float:
        return statistics.median(getattr(r, attr) for r in self.runs) if self.runs else float("nan")

    def child_median(self, group: str, key: str) -> float:
        values = [r.child[group].get(key, 0.0) for r in self.runs if r.child]
        return statistics.median(values) if values else float("nan")


def measure(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 3600,
            output: Path | None = None) -> Run:  # fmt: skip
    out = open(output, "wb") if output else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                status = -9 << 8
                break
            time.sleep(0.002)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status) if status >= 0 else -9
    finally:
        if output:
            out.close()  # type: ignore[union-attr]
    lines = 0
    if output and output.exists():
        with open(output, "rb") as handle:
            lines = sum(1 for _ in handle)
    # ru_maxrss is in KiB on Linux; for a reaped child it is the max over it and its reaped descendants.
    return Run(wall=wall, cpu=usage.ru_utime + usage.ru_stime, rss_mib=usage.ru_maxrss / 1024,
               rc=proc.returncode, output_lines=lines)  # fmt: skip


def run_series(case: str, tool: str, state: str, runs: int, one_run, budget: float, note: str = "") -> Series:  # type: ignore[no-untyped-def]
    """Up to `runs` runs; stop early once the series has taken `budget` seconds (slow tools get fewer runs)."""
    series = Series(case, tool, state, os.getloadavg(), note=note)
    began = time.perf_counter()
    for i in range(runs):
        run = one_run(i)
        series.runs.append(run)
        if run.rc not in (0, 1):
            series.note = (series.note + f"; exit status {run.rc}").lstrip("; ")
        if time.perf_counter() - began > budget and i + 1 < runs:
            series.note = (series.note + f"; {i + 1} of {runs} runs (time budget)").lstrip("; ")
            break
    summary = (
        f"{case:16} {tool:14} {state:6} n={len(series.runs)} wall {series.median('wall'):7.2f}s  "
        f"cpu {series.median('cpu'):7.2f}s  rss {series.median('rss_mib'):6.0f} MiB  load {series.load[0]:.2f}"
    )
    print(summary + (f"  ({series.note})" if series.note else ""), flush=True)
    return series


# --- apidrift --------------------------------------------------------------------------------------


def cache_dir(case: str) -> Path:
    return DATA / "cache" / case


def make_cold(case: str) -> None:
    for sub in ("api", "scan"):
        shutil.rmtree(cache_dir(case) / sub, ignore_errors=True)


def apidrift_env() -> dict[str, str]:
    """The environment of an apidrift run: bytecode caching on, as after any `pip install`.

    A development shell may set PYTHONDONTWRITEBYTECODE (this machine does), and an editable install has
    no compiled modules of its own: every run would then compile apidrift's sources again (~0.1 s).
    The compiled files go to a folder of the benchmark's own, never into the repository.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(DATA / "pycache")
    return env


def warm_bytecode() -> None:
    """Compile everything an apidrift run imports once, outside any measurement."""
    modules = ("apidrift.auditor.engine", "apidrift.auditor.cli.main", "apidrift.reports", "apidrift.auditor.downstream.astscan",
               "apidrift.auditor.downstream.cst_to_ast", "apidrift.auditor.upstream.loader")  # fmt: skip
    code = (
        "import importlib, importlib.util\nfor m in %r:\n    if importlib.util.find_spec(m): importlib.import_module(m)"
        % (modules,)
    )
    subprocess.run(
        [sys.executable, "-c", code], env=apidrift_env(), check=True
    )  # an older snapshot may lack one


def apidrift_run(case: str, downstream: str, against: str, *, offline: bool = True, profile: Path | None = None,
                 keep_archives: bool = False) -> Run:  # fmt: skip
    out = DATA / "raw" / f"child-{case}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(HERE / "_child.py"), "--downstream", downstream, "--against", against,
           "--cache-dir", str(cache_dir(case)), "--out", str(out)]  # fmt: skip
    if offline:
        cmd.append("--offline")
    if profile:
        cmd += ["--profile", str(profile)]
    if keep_archives:
        cmd += ["--keep-archives", str(DATA / "archives")]
    out.unlink(missing_ok=True)
    run = measure(cmd, env=apidrift_env(), output=DATA / "raw" / f"child-{case}.log")
    if run.rc != 0:
        raise SystemExit(f"apidrift failed on {case}: see {DATA / 'raw' / f'child-{case}.log'}")
    run.child = json.loads(out.read_text())
    return run


def apidrift_cli_run(case: str, downstream: str, against: str) -> Run:
    exe = Path(sys.executable).with_name("apidrift")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "apidrift"]
    return measure([*base, "audit", downstream, "--against", against, "--cache-dir", str(cache_dir(case)),
                    "--offline", "--quiet"], env=apidrift_env(), output=DATA / "raw" / f"cli-{case}.out")  # fmt: skip


def ensure_sources(case: str, downstream: str, against: str, results: list[Series]) -> None:
    """The fresh run (download + extract + a cold audit) if this case's cache has no sources yet."""
    if (cache_dir(case) / "sources").is_dir():
        return
    results.append(run_series(case, "apidrift", "fresh", 1,
                              lambda i: apidrift_run(case, downstream, against, offline=False, keep_archives=True),
                              budget=0, note="empty cache: download, extract, parse"))  # fmt: skip


def source_roots(case: str, downstream: str, against: str) -> tuple[Path, list[Path], Path]:
    """(downstream root, its package folders, upstream root) as apidrift located them."""
    code = (
        "import json, sys\n"
        "from apidrift.auditor.cache import Cache\n"
        "from apidrift.auditor.sources.locate import locate\n"
        "c = Cache(sys.argv[1])\n"
        "d = locate(sys.argv[2], role='downstream', cache=c, offline=True)\n"
        "u = locate(sys.argv[3], role='upstream', cache=c, offline=True)\n"
        "print(json.dumps([str(d.root), list(d.import_names), str(u.root)]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(cache_dir(case)), downstream, against],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    down, names, up = json.loads(out)
    packages = [
        Path(down) / n for n in names if (Path(down) / n).exists() or (Path(down) / f"{n}.py").exists()
    ]
    packages = [p if p.exists() else p.with_suffix(".py") for p in packages]
    return Path(down), packages, Path(up)


def extract_series(case: str, runs: int, results: list[Series]) -> None:
    """Extraction alone, repeated, from the archives kept by the fresh run."""
    archives = sorted((DATA / "archives").glob("*"))
    code = (
        "import sys, time, tempfile, pathlib\n"
        "from apidrift.auditor.sources.archive import extract_archive, ExtractLimits\n"
        "with tempfile.TemporaryDirectory(dir=sys.argv[2]) as d:\n"
        "    t = time.perf_counter()\n"
        "    extract_archive(pathlib.Path(sys.argv[1]), pathlib.Path(d) / 'x', limits=ExtractLimits.from_env())\n"
        "    print(time.perf_counter() - t)\n"
    )
    for archive in archives:
        wanted = {"flagship": ("speculators", "vllm"), "large": ("pandas", "numpy"),
                  "large-hf": ("transformers", "huggingface_hub")}[case]  # fmt: skip
        if not archive.name.lower().startswith(wanted):
            continue
        tmp = DATA / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        results.append(run_series(case, "extract", archive.name[:40], runs,
                                  lambda i: measure([sys.executable, "-c", code, str(archive), str(tmp)]),
                                  budget=60))  # fmt: skip


# --- reference tools -------------------------------------------------------------------------------


def tool_cmd(
    tool: str, packages: list[Path], search: list[Path], work: Path
) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    empty_python = str(EMPTY / "bin" / "python")
    if tool == "ty":
        cmd = [str(TOOLS / "bin" / "ty"), "check", "--python", str(EMPTY), "--python-version", "3.11",
               "--output-format", "concise", "--no-progress", "--color", "never"]  # fmt: skip
        for path in search:
            cmd += ["--extra-search-path", str(path)]
        return cmd + [str(p) for p in packages], env
    if tool.startswith("mypy"):
        env["MYPYPATH"] = os.pathsep.join(str(p) for p in search)
        cache = work / "mypy-cache"
        if tool == "mypy":  # cold: a new cache folder every run
            shutil.rmtree(cache, ignore_errors=True)
        cmd = [str(TOOLS / "bin" / "mypy"), "--check-untyped-defs", "--ignore-missing-imports",
               "--follow-imports", "silent", "--python-executable", empty_python, "--python-version", "3.11",
               "--no-error-summary", "--cache-dir", str(cache), "--explicit-package-bases"]  # fmt: skip
        return cmd + [str(p) for p in packages], env
    if tool == "pyright":
        config = work / "pyrightconfig.json"
        config.write_text(json.dumps({  # pyright wants "include" relative to the configuration file
            "include": [os.path.relpath(p, work) for p in packages],
            "extraPaths": [str(p) for p in search],
            "pythonVersion": "3.11",
            "typeCheckingMode": "standard",
        }))  # fmt: skip
        return ["node", str(pyright_js()), "-p", str(config), "--pythonpath", empty_python], env
    raise ValueError(tool)


def tool_series(case: str, tool: str, packages: list[Path], search: list[Path], runs: int, budget: float,
                timeout: float, results: list[Series]) -> None:  # fmt: skip
    work = DATA / "work" / case / tool
    work.mkdir(parents=True, exist_ok=True)
    if tool == "mypy-warm":  # one unmeasured run fills the cache
        cmd, env = tool_cmd(tool, packages, search, work)
        measure(cmd, cwd=work, env=env, timeout=timeout)

    def one(i: int) -> Run:
        cmd, env = tool_cmd(tool, packages, search, work)
        return measure(cmd, cwd=work, env=env, timeout=timeout, output=work / "output.txt")

    state = "warm" if tool == "mypy-warm" else "cold"
    series = run_series(case, tool.replace("-warm", ""), state, runs, one, budget)
    if any(r.rc == -9 for r in series.runs):
        series.note = (series.note + f"; killed after {timeout:.0f} s").lstrip("; ")
    results.append(series)


# --- synthetic trees -------------------------------------------------------------------------------

UPSTREAM_MODULE = '''"""Generated upstream module {i}."""
from __future__ import annotations


class Client{i}:
    """A client."""

    def __init__(self, name: str, *, retries: int = 3, timeout: float = 1.0) -> None:
        self.name = name
        self.retries = retries
        self.timeout = timeout

    def get(self, key: str, default: object = None) -> object:
        return default

    def put(self, key: str, value: object, *, overwrite: bool = False) -> None:
        return None

    def close(self) -> None:
        return None


def helper_{i}_0(a: int, b: int = 0, *, factor: float = 1.0) -> int:
    """`scale` was renamed `factor`: callers passing scale= break."""
    return int((a + b) * factor)


def helper_{i}_1(a: int, b: int, c: int = 0) -> int:
    return a + b + c


def helper_{i}_2(a: int, /, b: int = 1) -> int:
    return a * b


def helper_{i}_3(a: int, *, b: int = 0, c: int = 0) -> int:
    return a - b - c
'''

EXTRA_MODULE = '''"""Generated upstream module never reached by the downstream."""


class Thing{j}:
    def __init__(self, value: int) -> None:
        self.value = value

    def twice(self) -> int:
        return self.value * 2


def f{j}(a: int, b: int = 0) -> int:
    return a + b
'''

DOWNSTREAM_FILE = '''"""Generated downstream module {k}."""
from __future__ import annotations

import synthup.mod_{c}
from synthup import mod_{b}
from synthup.mod_{a} import Client{a}, helper_{a}_1


def local_{k}(values: list[int]) -> int:
    total = 0
    for v in values:
        if v % 2:
            total += v * 2
        else:
            total -= v
    return total


def table_{k}(n: int) -> dict[str, int]:
    return {{f"key{{i}}": i * i for i in range(n)}}


class Worker{k}:
    """Uses the upstream through an attribute set in __init__."""

    def __init__(self, name: str) -> None:
        self.client = Client{a}(name, retries=2)
        self.count = 0

    def run(self, n: int) -> int:
        self.client.put("k", n, overwrite=True)
        self.client.get("k")
        self.count += 1
        return helper_{a}_1(n, 2) + mod_{b}.helper_{b}_2(n) + local_{k}([n, self.count])

    def stop(self) -> None:
        self.client.close()


def main_{k}(argv: list[str]) -> int:
    worker = Worker{k}("w{k}")
    worker.run(len(argv))
    other = mod_{b}.Client{b}("x", timeout=2.0)
    other.get("y", default=None)
    other.put("y", 1)
    total = mod_{b}.helper_{b}_0(1, 2, scale=2.0)
    total += mod_{b}.helper_{b}_3(3, b=1)
    total += synthup.mod_{c}.helper_{c}_1(1, 2, c=3)
    total += synthup.mod_{c}.helper_{c}_0(4, b=1, factor=0.5)
    total += sum(table_{k}(3).values())
    worker.stop()
    return total
'''


def write_upstream(root: Path, extra_modules: int) -> None:
    if (root / ".complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    package = root / "synthup"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Generated upstream package."""\n')
    for i in range(REACHED_MODULES):
        (package / f"mod_{i}.py").write_text(UPSTREAM_MODULE.format(i=i))
    if extra_modules:
        (package / "extra").mkdir()
        (package / "extra" / "__init__.py").write_text("")
    for j in range(extra_modules):
        sub = package / "extra" / f"e{j // 100}"
        if not sub.exists():
            sub.mkdir()
            (sub / "__init__.py").write_text("")
        (sub / f"m_{j}.py").write_text(EXTRA_MODULE.format(j=j))
    (root / ".complete").write_text("")


def write_downstream(root: Path, files: int) -> None:
    if (root / ".complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    package = root / "synthdown"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Generated downstream package."""\n')
    for k in range(files):
        sub = package / f"p{k // 100}"
        if not sub.exists():
            sub.mkdir()
            (sub / "__init__.py").write_text("")
        a, b, c = k % REACHED_MODULES, (k + 3) % REACHED_MODULES, (k + 7) % REACHED_MODULES
        (sub / f"m_{k}.py").write_text(DOWNSTREAM_FILE.format(k=k, a=a, b=b, c=c))
    (root / ".complete").write_text("")


# --- cases -----------------------------------------------------------------------------------------


def index_case(case: str, downstream: str, against: str, args: argparse.Namespace, results: list[Series],
               facts: dict) -> None:  # fmt: skip
    runs, tool_runs = (3, 1) if args.quick else (args.runs, args.tool_runs)
    print(f"\n== {case}: {downstream} --against {against}", flush=True)
    ensure_sources(case, downstream, against, results)
    if (DATA / "archives").is_dir():
        extract_series(case, 3, results)

    def cold(i: int) -> Run:
        make_cold(case)
        return apidrift_run(case, downstream, against)

    c = run_series(case, "apidrift", "cold", runs, cold, budget=args.budget)
    results.append(c)
    first = c.runs[0].child or {}
    facts[case] = {k: first.get(k) for k in ("files", "use_sites", "checked", "findings", "downstream", "upstream",
                                             "old_upstream")}  # fmt: skip
    results.append(run_series(case, "apidrift", "warm", runs,
                              lambda i: apidrift_run(case, downstream, against), budget=args.budget))  # fmt: skip
    if case == "flagship":
        results.append(run_series(case, "apidrift-cli", "warm", runs,
                                  lambda i: apidrift_cli_run(case, downstream, against), budget=args.budget))  # fmt: skip
    if args.profile:
        prof = DATA / "profiles"
        prof.mkdir(parents=True, exist_ok=True)
        make_cold(case)
        apidrift_run(case, downstream, against, profile=prof / f"{case}-cold.prof")
        apidrift_run(case, downstream, against, profile=prof / f"{case}-warm.prof")
    down_root, packages, up_root = source_roots(case, downstream, against)
    facts[case]["down_root"] = str(down_root)
    facts[case]["up_root"] = str(up_root)
    facts[case]["down_py_files"] = sum(1 for p in packages for _ in (p.rglob("*.py") if p.is_dir() else [p]))
    if case == "large":
        incremental(case, down_root, against, args, results, facts)
    for tool in args.tools if case != "large-hf" else [t for t in args.tools if t == "ty"]:
        tool_series(
            case, tool, packages, [down_root, up_root], tool_runs, args.tool_budget, args.timeout, results
        )
        if tool == "mypy" and case == "flagship":
            tool_series(case, "mypy-warm", packages, [down_root, up_root], tool_runs, args.tool_budget,
                        args.timeout, results)  # fmt: skip


def incremental(case: str, down_root: Path, against: str, args: argparse.Namespace, results: list[Series],
                facts: dict) -> None:  # fmt: skip
    """Audit a copy of the downstream as a folder, change one file that uses the upstream, audit again."""
    copy = DATA / "work" / f"{case}-downstream"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(down_root, copy)
    spec = str(copy)
    first = apidrift_run(case, spec, against)  # fills the scan cache for the copy's files
    warm = run_series(case, "apidrift", "folder", 3, lambda i: apidrift_run(case, spec, against), budget=60,
                      note="downstream as a local folder, warm")  # fmt: skip
    results.append(warm)
    # The first scanned file that imports the upstream gets one more call.
    target = None
    name = against.split("==")[0]
    for path in sorted(copy.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if f"import {name}" in text:
            target = path
            break
    assert target is not None

    edits = iter(range(1_000_000))

    def edit_and_run(i: int) -> Run:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"\n_apidrift_benchmark_edit_{next(edits)} = 1\n")
        return apidrift_run(case, spec, against)

    series = run_series(case, "apidrift", "1-edit", 3, edit_and_run, budget=60,
                        note=f"one file changed each run ({target.relative_to(copy)})")  # fmt: skip
    results.append(series)
    facts[case]["incremental"] = {
        "first_parses": first.child["counts"]["scan_parses"] if first.child else None,
        "warm_parses": [r.child["counts"]["scan_parses"] for r in warm.runs if r.child],
        "edit_parses": [r.child["counts"]["scan_parses"] for r in series.runs if r.child],
        "edited_file": str(target.relative_to(copy)),
    }
    print(
        f"   parses: first {facts[case]['incremental']['first_parses']}, warm "
        f"{facts[case]['incremental']['warm_parses']}, after one edit {facts[case]['incremental']['edit_parses']}"
    )


def scale_case(args: argparse.Namespace, results: list[Series], facts: dict) -> None:
    sizes = (10, 100, 1_000) if args.quick else SCALE_SIZES
    up = DATA / "synth" / "up-20"
    write_upstream(up, 20)
    print("\n== scale: synthetic downstream of N files against a 31-module synthetic upstream", flush=True)
    for n in sizes:
        case = f"scale-{n}"
        down = DATA / "synth" / f"down-{n}"
        write_downstream(down, n)
        spec, against = str(down), f"synthup@{up}"
        runs = 3 if n >= 10_000 or args.quick else args.runs

        def cold(i: int, case: str = case, spec: str = spec, against: str = against) -> Run:
            make_cold(case)
            return apidrift_run(case, spec, against)

        c = run_series(case, "apidrift", "cold", runs, cold, budget=args.budget)
        results.append(c)
        results.append(run_series(case, "apidrift", "warm", runs, lambda i, case=case, spec=spec, against=against:
                                  apidrift_run(case, spec, against), budget=args.budget))  # fmt: skip
        facts[case] = {k: c.runs[0].child[k] for k in ("files", "use_sites", "checked", "findings")}  # type: ignore[index]
        for tool in args.tools:
            tool_runs = 1 if n >= 10_000 or args.quick else args.tool_runs
            tool_series(case, tool, [down / "synthdown"], [down, up], tool_runs, args.tool_budget, args.timeout,
                        results)  # fmt: skip


def upstream_scale_case(args: argparse.Namespace, results: list[Series], facts: dict) -> None:
    extras = (0, 1_000) if args.quick else UPSTREAM_EXTRA_MODULES
    down = DATA / "synth" / "down-100"
    write_downstream(down, 100)
    print("\n== upstream-scale: 100-file downstream against upstreams of growing size (10 modules reached)",
          flush=True)  # fmt: skip
    for extra in extras:
        case = f"upstream-{extra}"
        up = DATA / "synth" / f"up-{extra}"
        write_upstream(up, extra)
        spec, against = str(down), f"synthup@{up}"

        def cold(i: int, case: str = case, spec: str = spec, against: str = against) -> Run:
            make_cold(case)
            return apidrift_run(case, spec, against)

        c = run_series(case, "apidrift", "cold", args.runs, cold, budget=args.budget,
                       note=f"upstream of {REACHED_MODULES + extra} modules")  # fmt: skip
        results.append(c)
        results.append(run_series(case, "apidrift", "warm", args.runs, lambda i, case=case, spec=spec, against=against:
                                  apidrift_run(case, spec, against), budget=args.budget,
                                  note=f"upstream of {REACHED_MODULES + extra} modules"))  # fmt: skip
        facts[case] = {"api_parsed": c.runs[0].child["counts"]["api_parsed"]}  # type: ignore[index]
        if "ty" in args.tools:
            tool_series(
                case, "ty", [down / "synthdown"], [down, up], 3, args.tool_budget, args.timeout, results
            )


# --- reporting -------------------------------------------------------------------------------------


def table(results: list[Series]) -> str:
    lines = ["| case | tool | state | runs | median wall (s) | median CPU (s) | peak RSS (MiB) | wall / apidrift | load (1 min) | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    reference: dict[tuple[str, str], float] = {}
    for s in results:
        if s.tool == "apidrift" and s.state in ("cold", "warm"):
            reference[(s.case, s.state)] = s.median("wall")
    for s in results:
        ratio = ""
        if s.tool in ("ty", "mypy", "pyright"):
            ref = reference.get((s.case, s.state))
            if ref:
                ratio = f"{s.median('wall') / ref:.2f}x"
        lines.append(f"| {s.case} | {s.tool} | {s.state} | {len(s.runs)} | {s.median('wall'):.3f} | "
                     f"{s.median('cpu'):.3f} | {s.median('rss_mib'):.0f} | {ratio} | {s.load[0]:.2f} | {s.note} |")  # fmt: skip
    return "\n".join(lines)


PHASES = ("import", "fetch", "download", "extract", "scan", "api_load", "resolve_only", "rules", "render")


def phase_table(results: list[Series]) -> str:
    head = (
        "| case | state | "
        + " | ".join(PHASES)
        + " | audit() | process wall | LibCST parses | griffe parses | API cache reads |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in results:
        if s.tool != "apidrift" or not s.runs or not s.runs[0].child:
            continue
        cells = []
        for phase in PHASES:
            group = "timings" if phase in ("fetch", "scan", "rules") else "extra"
            cells.append(f"{s.child_median(group, phase):.3f}")
        child = s.runs[-1].child or {}
        counts = child.get("counts", {})
        audit_wall = statistics.median(r.child["audit_wall"] for r in s.runs if r.child)
        lines.append(f"| {s.case} | {s.state} | " + " | ".join(cells) + f" | {audit_wall:.3f} | {s.median('wall'):.3f} | "
                     f"{counts.get('scan_parses')} | {counts.get('api_parsed')} | {counts.get('api_from_cache')} |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", default="flagship,large,large-hf,scale,upstream-scale")
    parser.add_argument("--tools", default="ty,mypy,pyright", help="reference tools ('' for none)")
    parser.add_argument("--runs", type=int, default=7, help="apidrift runs per series (default 7)")
    parser.add_argument("--tool-runs", type=int, default=5, help="runs per reference tool (default 5)")
    parser.add_argument(
        "--budget", type=float, default=120, help="seconds after which an apidrift series stops early"
    )
    parser.add_argument("--tool-budget", type=float, default=180, help="same for a reference tool's series")
    parser.add_argument(
        "--timeout", type=float, default=1800, help="a reference tool run is killed after this"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also write cProfile files of the cold and warm runs"
    )
    parser.add_argument("--quick", action="store_true", help="fewer runs and sizes (a smoke run)")
    parser.add_argument("--label", default="results", help="file name stem under benchmarks/.data")
    parser.add_argument(
        "--snapshot", metavar="COMMIT", help="benchmark apidrift installed from this commit (e.g. HEAD)"
    )
    args = parser.parse_args()
    if args.snapshot and not os.environ.get("APIDRIFT_BENCH_SNAPSHOT"):
        DATA.mkdir(parents=True, exist_ok=True)
        snapshot(args.snapshot)
    args.tools = [t for t in args.tools.split(",") if t]
    cases = [c for c in args.cases.split(",") if c]

    DATA.mkdir(parents=True, exist_ok=True)
    if args.tools:
        setup_tools()
    info = machine()
    versions = {tool: tool_version(tool) for tool in ("apidrift", "ty", "mypy", "pyright", "node")}
    print("machine:", json.dumps(info))
    print("versions:", json.dumps(versions), flush=True)

    warm_bytecode()
    results: list[Series] = []
    facts: dict = {}
    for case in cases:
        if case == "flagship":
            index_case("flagship", *FLAGSHIP, args, results, facts)
        elif case == "large":
            index_case("large", *LARGE, args, results, facts)
        elif case == "large-hf":
            index_case("large-hf", *LARGE_HF, args, results, facts)
        elif case == "scale":
            scale_case(args, results, facts)
        elif case == "upstream-scale":
            upstream_scale_case(args, results, facts)
        else:
            raise SystemExit(f"unknown case {case!r}")
    info["loadavg_end"] = os.getloadavg()

    md = "\n\n".join([
        f"Machine: {info['nproc']} cores, {info['cpu']}, {info['memory']}; {info['os']}; Python {info['python']}; "
        f"{info['date']}; load average at start {info['loadavg_start']}, at end {info['loadavg_end']}",
        "Versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()),
        table(results),
        "apidrift phases (medians, seconds):\n\n" + phase_table(results),
        "Facts: \n\n```json\n" + json.dumps(facts, indent=1) + "\n```",
    ])  # fmt: skip
    (DATA / f"{args.label}.md").write_text(md + "\n")
    (DATA / f"{args.label}.json").write_text(
        json.dumps(
            {"machine": info, "versions": versions, "facts": facts, "series": [asdict(s) for s in results]},
            indent=1,
        )
    )
    print("\n" + md)
    print(f"\nwritten: {DATA / (args.label + '.md')} and .json")


if __name__ == "__main__":
    main()
