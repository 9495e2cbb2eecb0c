"""Upgrading Python: apidrift `--against python==3.13` beside the tools people use for it today.

    python benchmarks/python_upgrade.py                 # every downstream below, against 3.13 from 3.11
    python benchmarks/python_upgrade.py --new 3.12      # against 3.12

Run it with the Python of an environment where apidrift is installed. It sets up under `benchmarks/`
(git-ignored) an environment with the reference tools at pinned versions (`.venv-tools-python`: mypy,
ruff, vermin, from the package index with pip) and an apidrift cache (`.data/python-upgrade`), and
needs CPython OLD and NEW under ~/.pyenv/versions: they are the oracle.

For each downstream (releases from the index, audited as released) every tool runs on the same files:
- apidrift: `audit DOWNSTREAM --against python==NEW --from python==OLD`, its errors;
- mypy `--python-version NEW` (what a type checker says: unresolved imports and attributes among
  everything else it reports), its errors;
- ruff `--target-version pyNEW` with its rules for deprecated imports and aliases (UP005, UP026, UP035);
- vermin `-t=NEW- --violations` (minimum-version detection).

A line is a break when a module or a name it uses (as a tool's report names it) exists under CPython
OLD and not under NEW, run for real (`-I -S`: no site-packages, no setuptools shim); a use inside a
guard that handles its absence (`try: import imp except ImportError`) counts too, though it never
fails (apidrift reports those as information, shown apart). Recall: the breaks
a tool reports, of all the breaks any tool reported and the interpreters confirmed. False errors: lines a
tool reports as errors whose module or name the interpreters show is still there under NEW. Other: a
tool's errors that name no module or name the interpreters can check (a type error, a style rule).
Results are printed as a Markdown table and written to `benchmarks/.data/python-upgrade.json`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data"
TOOLS = HERE / ".venv-tools-python"
PYENV = Path.home() / ".pyenv" / "versions"

MYPY_VERSION = "2.4.1"
RUFF_VERSION = "0.17.6"
VERMIN_VERSION = "1.9.2"
RUFF_RULES = "UP005,UP026,UP035"  # deprecated unittest aliases, mock import, deprecated imports

# Packages of the 3.8-3.11 era that use what 3.12 and 3.13 removed, and modern ones whose CI runs on 3.13.
DOWNSTREAMS = [
    "pyftpdlib==1.5.7",
    "wheel==0.37.1",
    "webob==1.8.7",
    "future==0.18.3",
    "nose==1.3.7",
    "attrs==24.2.0",
    "click==8.1.8",
    "httpx==0.28.1",
    "rich==13.9.4",
]

REACH = """\
import importlib, sys
parts = sys.argv[1].split(".")
for end in range(len(parts), 0, -1):
    try:
        found = importlib.import_module(".".join(parts[:end]))
        break
    except ImportError:
        if end == 1:
            raise
for name in parts[end:]:
    found = getattr(found, name)
"""


def interpreter(version: str) -> Path:
    found = sorted(PYENV.glob(f"{version}.*/bin/python{version}"))
    if not found:
        sys.exit(f"CPython {version} is not installed under {PYENV}: it is the oracle")
    return found[-1]


_reached: dict[tuple[str, str], bool] = {}


def reaches(version: str, symbol: str) -> bool:
    key = (version, symbol)
    if key not in _reached:
        done = subprocess.run(
            [str(interpreter(version)), "-I", "-S", "-W", "ignore", "-c", REACH, symbol],
            capture_output=True,
            timeout=60,
            check=False,
        )
        _reached[key] = done.returncode == 0
    return _reached[key]


def setup_tools() -> None:
    if not (TOOLS / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(TOOLS)], check=True)
    subprocess.run(
        [str(TOOLS / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         f"mypy=={MYPY_VERSION}", f"ruff=={RUFF_VERSION}", f"vermin=={VERMIN_VERSION}"],
        check=True,
    )  # fmt: skip


@dataclass
class Report:
    """One tool's errors on one downstream: (path, line) -> the symbol it names (None: none checkable)."""

    lines: dict[tuple[str, int], str | None] = field(default_factory=dict)
    guarded: dict[tuple[str, int], str | None] = field(default_factory=dict)  # apidrift's information
    seconds: float = 0.0


def run_apidrift(spec: str, new: str, old: str, cache: Path) -> tuple[Report, Path]:
    import time

    from apidrift import AuditRequest, audit

    started = time.perf_counter()
    result = audit(AuditRequest(spec, f"python=={new}", old=f"python=={old}", cache_dir=cache))
    report = Report(seconds=time.perf_counter() - started)
    for finding in result.findings:
        key = (finding.location.path, finding.location.line)
        if finding.severity.value == "error" and finding.code != "AD901":
            report.lines[key] = finding.symbol
        elif finding.guarded and finding.code in ("AD001", "AD002", "AD003", "AD004"):
            report.guarded[key] = finding.symbol  # information: the code handles its absence
    return report, result.root


_MYPY_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<message>.*?)(?:\s+\[(?P<code>[\w-]+)\])?$"
)
_MYPY_MODULE = re.compile(r'module named "(?P<module>[\w.]+)"')
_MYPY_ATTRIBUTE = re.compile(r'^Module "(?P<module>[\w.]+)" has no attribute "(?P<name>\w+)"')


def run_mypy(root: Path, packages: list[str], new: str) -> Report:
    import time

    started = time.perf_counter()
    done = subprocess.run(
        [str(TOOLS / "bin" / "mypy"), "--python-version", new, "--no-incremental", "--follow-imports=silent",
         "--show-error-codes", "--no-error-summary", "--no-color-output", *packages],
        cwd=root, capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    report = Report(seconds=time.perf_counter() - started)
    for line in done.stdout.splitlines():
        match = _MYPY_LINE.match(line)
        if not match:
            continue
        message = match.group("message")
        symbol = None
        if module := _MYPY_MODULE.search(message):
            symbol = module.group("module")
        elif attribute := _MYPY_ATTRIBUTE.match(message):
            symbol = f"{attribute.group('module')}.{attribute.group('name')}"
        key = (match.group("path"), int(match.group("line")))
        if report.lines.get(key) is None:
            report.lines[key] = symbol
    return report


_RUFF_ALIAS = re.compile(r"`(\w+)` is deprecated, use `(\w+)`")


def run_ruff(root: Path, packages: list[str], new: str) -> Report:
    import time

    started = time.perf_counter()
    done = subprocess.run(
        [str(TOOLS / "bin" / "ruff"), "check", "--isolated", "--no-cache", "--exit-zero",
         "--target-version", f"py{new.replace('.', '')}", "--select", RUFF_RULES, "--output-format", "json",
         *packages],
        cwd=root, capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    report = Report(seconds=time.perf_counter() - started)
    for item in json.loads(done.stdout or "[]"):
        path = str(Path(item["filename"]).resolve().relative_to(root.resolve()))
        alias = _RUFF_ALIAS.search(item.get("message", ""))
        symbol = f"unittest.TestCase.{alias.group(1)}" if item["code"] == "UP005" and alias else None
        report.lines[(path, item["location"]["row"])] = symbol
    return report


_VERMIN_LINE = re.compile(r"^!2?,? ?.*?(?P<path>[^\s:]+\.py):(?P<line>\d+)")


def run_vermin(root: Path, packages: list[str], new: str) -> Report:
    """vermin's violations of `-t=NEW-`, line by line (`-vvv`): a file's header names it, then `L12 C4: ...`."""
    import time

    started = time.perf_counter()
    done = subprocess.run(
        [str(TOOLS / "bin" / "vermin"), f"-t={new}-", "--violations", "--no-tips", "-vvv", "--no-parse-comments",
         *packages],
        cwd=root, capture_output=True, text=True, timeout=3600, check=False,
    )  # fmt: skip
    report = Report(seconds=time.perf_counter() - started)
    current = None
    for line in done.stdout.splitlines():
        header = re.search(r"(\S+\.pyi?)$", line)
        if header and not line.startswith(" "):
            path = Path(header.group(1))
            current = str(path.resolve().relative_to(root.resolve())) if path.is_absolute() else str(path)
            continue
        where = re.match(r"^\s+L(\d+)(?: C\d+)?:", line)
        if where and current is not None:
            report.lines[(current, int(where.group(1)))] = None
    return report


def packages_of(root: Path, import_names: tuple[str, ...]) -> list[str]:
    found = []
    for name in import_names:
        for candidate in (root / name, root / f"{name}.py"):
            if candidate.exists():
                found.append(
                    str(candidate.relative_to(root)) if candidate.is_relative_to(root) else str(candidate)
                )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", default="3.11")
    parser.add_argument("--new", default="3.13")
    parser.add_argument("--downstreams", nargs="*", default=DOWNSTREAMS)
    args = parser.parse_args()
    setup_tools()
    cache = DATA / "python-upgrade"
    cache.mkdir(parents=True, exist_ok=True)

    from apidrift.auditor.cache import Cache
    from apidrift.auditor.sources.locate import locate

    rows = []
    for spec in args.downstreams:
        tree = locate(spec, role="downstream", cache=Cache(cache))
        prefix = tree.root.relative_to(tree.path_base).as_posix()
        prefix = "" if prefix == "." else prefix + "/"
        packages = packages_of(tree.root, tree.import_names)
        reports = {"apidrift": run_apidrift(spec, args.new, args.old, cache)[0]}
        for name, run in (("mypy", run_mypy), ("ruff", run_ruff), ("vermin", run_vermin)):
            report = run(tree.root, packages, args.new)
            report.lines = {(prefix + path, line): symbol for (path, line), symbol in report.lines.items()}
            reports[name] = report
        breaks: set[tuple[str, int]] = set()
        not_breaks: set[tuple[str, int]] = set()
        for report in reports.values():
            for key, symbol in (*report.lines.items(), *report.guarded.items()):
                if symbol is None:
                    continue
                if reaches(args.old, symbol) and not reaches(args.new, symbol):
                    breaks.add(key)
                elif reaches(args.new, symbol):
                    not_breaks.add(key)
        row = {"downstream": spec, "breaks": len(breaks), "tools": {}}
        for name, report in reports.items():
            flagged = set(report.lines)
            row["tools"][name] = {
                "found": len(flagged & breaks),
                "guarded": len(set(report.guarded) & breaks),  # reported as information, not as errors
                "false_errors": len(flagged & not_breaks - breaks),
                "other": len(flagged - breaks - not_breaks),
                "seconds": round(report.seconds, 1),
            }
        rows.append(row)
        print(json.dumps(row), flush=True)

    (DATA / "python-upgrade.json").write_text(
        json.dumps({"old": args.old, "new": args.new, "rows": rows}, indent=1)
    )
    tools = ["apidrift", "mypy", "ruff", "vermin"]
    print(f"\n| downstream (against {args.new}, from {args.old}) | breaks | "
          + " | ".join(f"{t} found / false / other" for t in tools) + " |")  # fmt: skip
    print("|---|---:|" + "---:|" * len(tools))
    totals = {t: [0, 0, 0] for t in tools}
    for row in rows:
        cells = []
        for t in tools:
            r = row["tools"][t]
            guarded = f" (+{r['guarded']} guarded, info)" if r["guarded"] else ""
            cells.append(f"{r['found']}{guarded} / {r['false_errors']} / {r['other']}")
            totals[t] = [
                totals[t][0] + r["found"],
                totals[t][1] + r["false_errors"],
                totals[t][2] + r["other"],
            ]
        print(f"| {row['downstream']} | {row['breaks']} | " + " | ".join(cells) + " |")
    all_breaks = sum(r["breaks"] for r in rows)
    print(
        f"| **all** | {all_breaks} | " + " | ".join(f"{a} / {b} / {c}" for a, b, c in totals.values()) + " |"
    )


if __name__ == "__main__":
    main()
