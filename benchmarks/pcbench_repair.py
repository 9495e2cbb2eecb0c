"""Repair on PCBench: how many flagged incompatible cases `apidrift fix` repairs, and whether the repairs run.

    python benchmarks/pcbench_repair.py plan --cases W/cases --libs click,rich --cache DIR --out W/repair
    python benchmarks/pcbench_repair.py oracle --out W/repair --sample 40 --seed 33 [--skip LIB,...]

`plan` takes the case folders an external PCBench harness writes (one folder per API and version pair:
`case.json` with the distribution and both versions, `down/case_<NNNN>_<CR>.py` one snippet each; nothing
of PCBench is stored in this repository), audits each folder against V2 from V1 as `apidrift audit` does,
plans `apidrift fix --unsafe-fixes` on it (the last release's evidence and the follow-up round included),
and records, for every incompatible snippet (label NN or NY) with an error-level finding, which fixes its
findings get: every error fixed safely (or resolved by a safe fix), fixed with an unsafe fix among them,
a manual step, or nothing. The fixed snippets go to `OUT/fixed/<lib>/<folder>/<module>.py`.

`oracle` is the check by CPython: a random sample (fixed seed, spread over libraries round-robin) of the
fixed snippets is run in a throwaway venv holding V2 (pip, the configured index; one venv per library
and version), the original first (which must raise the TypeError/AttributeError PCBench labels it with,
or run for NY), then the fixed one, which must not raise a TypeError or AttributeError. Libraries whose V2
does not install within the time limit are skipped and listed. This is a script, not a test.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

from apidrift import AuditRequest
from apidrift.auditor.core.results import Applicability, Severity
from apidrift.auditor.engine import audit, locate_inputs
from apidrift.auditor.fix.codemods import (
    APPLIED,
    RESOLVED,
    follow_up,
    plan_fixes,
    with_evidence_of_the_last_release,
)


def classify(outcomes: list) -> str:  # type: ignore[type-arg]
    """The repair a snippet gets: safe, unsafe, manual or none (the worst of its error findings')."""
    kinds = set()
    for o in outcomes:
        fix = o.finding.fix
        if o.status == RESOLVED:
            kinds.add("safe")
        elif o.status == APPLIED and fix is not None:
            kinds.add("safe" if fix.applicability is Applicability.SAFE else "unsafe")
        elif fix is not None and fix.applicability is Applicability.MANUAL:
            kinds.add("manual")
        else:
            kinds.add("none")
    for worst in ("none", "manual", "unsafe", "safe"):
        if worst in kinds:
            return worst
    return "none"


def plan_folder(folder: Path, cache: Path, fixed_root: Path) -> list[dict]:  # type: ignore[type-arg]
    meta = json.loads((folder / "case.json").read_text())
    labels = {c["module"]: c["label"] for c in meta["cases"]}
    down = folder / "down"
    request = AuditRequest(
        str(down), f"{meta['pypi']}=={meta['v2']}", f"{meta['pypi']}=={meta['v1']}", cache_dir=cache
    )
    inputs = locate_inputs(request)
    result = audit(request, inputs)
    root = result.root
    assert root is not None
    result, _ = with_evidence_of_the_last_release(request, inputs, result)
    planned = plan_fixes(result, root, unsafe=True)

    def again(where: Path):  # type: ignore[no-untyped-def]
        return audit(
            replace(request, downstream=str(where)),
            replace(inputs, downstream=inputs.sources.locate(str(where), "downstream")),
        )

    fixed = follow_up(planned, again)
    by_module: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    for o in fixed.outcomes:
        if o.finding.severity is Severity.ERROR and not o.finding.guarded:
            by_module[Path(o.finding.location.path).stem].append(o)
    after = {Path(c.path).stem: c.after for c in fixed.changes}
    rows = []
    for module, label in sorted(labels.items()):
        if label == "YY" or module not in by_module:
            continue
        outcomes = by_module[module]
        kind = classify(outcomes)
        fixed_path = None
        if module in after and kind in ("safe", "unsafe"):
            target = fixed_root / meta["lib"] / folder.name / f"{module}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(after[module])
            fixed_path = str(target)
        rows.append(
            {
                "lib": meta["lib"],
                "pypi": meta["pypi"],
                "v1": meta["v1"],
                "v2": meta["v2"],
                "python_v1": meta.get("python_v1"),
                "python_v2": meta.get("python_v2"),
                "api": meta["api"],
                "folder": folder.name,
                "module": module,
                "label": label,
                "repair": kind,
                "original": str(down / f"{module}.py"),
                "fixed": fixed_path,
                "fixes": [
                    {
                        "code": o.finding.code,
                        "status": o.status,
                        "fix": f"{o.finding.fix.applicability.value} {o.finding.fix.kind.value}: "
                        f"{o.finding.fix.description}"
                        if o.finding.fix
                        else None,
                        "evidence": o.finding.fix.evidence if o.finding.fix else None,
                        "message": o.finding.message,
                    }
                    for o in outcomes
                ],
            }
        )
    return rows


def plan(args: argparse.Namespace) -> None:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []  # type: ignore[type-arg]
    errors: dict[str, str] = {}
    started = time.monotonic()
    for lib in args.libs.split(","):
        for folder in sorted((args.cases / lib).iterdir()):
            if not (folder / "case.json").exists():
                continue
            try:
                rows.extend(plan_folder(folder, args.cache, out / "fixed"))
            except Exception as error:  # a folder that cannot be audited is counted, not fatal
                errors[f"{lib}/{folder.name}"] = f"{type(error).__name__}: {error}"[:300]
            print(f"{lib}/{folder.name}: {len(rows)} flagged so far", file=sys.stderr, flush=True)
    (out / "plan.json").write_text(json.dumps({"rows": rows, "errors": errors}, indent=1))
    summary(rows)
    print(f"folders not audited: {len(errors)}; wall {time.monotonic() - started:.0f} s")


def summary(rows: list[dict]) -> None:  # type: ignore[type-arg]
    per_lib: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        per_lib[r["lib"]][r["repair"]] += 1
    total: Counter[str] = Counter()
    print("| library | flagged incompatible | safe | unsafe | manual | none |")
    print("|---|---|---|---|---|---|")
    for lib, c in sorted(per_lib.items()):
        total.update(c)
        print(f"| {lib} | {sum(c.values())} | {c['safe']} | {c['unsafe']} | {c['manual']} | {c['none']} |")
    n = sum(total.values())
    print(
        f"| **all** | **{n}** | **{total['safe']}** | **{total['unsafe']}** | **{total['manual']}** | "
        f"**{total['none']}** |"
    )


RUN = r"""
import json, re, runpy, sys, warnings
warnings.simplefilter("ignore")
target = sys.argv[2]
seen = []

def hook(frame, event, arg):
    if event != "call" or seen:
        return
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    if code.co_name == target or (
        code.co_name == "__init__" and type(frame.f_locals.get("self")).__name__ == target
    ):
        loc = frame.f_locals
        seen.append({n: re.sub(r" at 0x[0-9a-fA-F]+", "", repr(loc[n]))[:200] for n in names if n != "self" and n in loc})

sys.setprofile(hook)
try:
    runpy.run_path(sys.argv[1], run_name="__main__")
    error = None
except BaseException as exc:
    error = [type(exc).__name__, str(exc)[:300]]
sys.setprofile(None)
print(json.dumps({"error": error, "bound": seen[0] if seen else None}))
"""

HEAVY = {"keras": "needs tensorflow", "jax": "needs jaxlib"}
EXTRAS = {"dask": "[dataframe]"}  # what the snippets import besides the distribution itself


def interpreters_for(version: str | None) -> list[str]:
    """The pyenv CPythons from PCBench's V2 Python (`3.8`) on, nearest first (two at most), else this one."""
    root = Path.home() / ".pyenv" / "versions"
    found: list[str] = []
    if version and root.is_dir():
        have = sorted(
            (tuple(int(x) for x in d.name.split(".")[:2]), d)
            for d in root.iterdir()
            if re.fullmatch(r"3\.\d+\.\d+", d.name)
        )
        wanted = tuple(int(x) for x in version.split(".")[:2])
        found = [str(folder / "bin" / "python3") for minor, folder in have if minor >= wanted][:2]
    return found or [sys.executable]


def release_python(pypi: str, version: str, python: str | None, root: Path, timeout: int) -> Path:
    """A venv holding `pypi==version` (pip, the configured index), made with PCBench's Python for that
    version or, when the install fails there, the next newer one; RuntimeError when neither installs."""
    extra = EXTRAS.get(pypi, "")
    problems = []
    for attempt, base in enumerate(interpreters_for(python)):
        folder = root / f"{pypi}{extra.strip('[]')}-{version}" / str(attempt)
        interpreter = folder / "bin" / "python"
        if (folder / "ok").exists():
            return interpreter
        if (folder / "failed").exists():
            problems.append((folder / "failed").read_text())
            continue
        try:
            subprocess.run([base, "-m", "venv", str(folder)], check=True, capture_output=True, timeout=120)
            subprocess.run(
                [
                    str(interpreter),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--prefer-binary",
                    f"{pypi}{extra}=={version}",
                ],
                check=True,
                timeout=timeout,
                capture_output=True,
                text=True,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
            detail = getattr(error, "stderr", "") or ""
            detail = detail.decode() if isinstance(detail, bytes) else detail
            lines = [line for line in str(detail).splitlines() if "is ignored" not in line]
            (folder / "failed").write_text(f"{type(error).__name__} ({base}): {' '.join(lines)[-300:]}")
            problems.append((folder / "failed").read_text())
            continue
        (folder / "ok").write_text("")
        return interpreter
    raise RuntimeError(" | ".join(problems))


def run_snippet(python: Path, path: str, target: str) -> dict:  # type: ignore[type-arg]
    try:
        done = subprocess.run(
            [str(python), "-c", RUN, path, target],
            check=False,
            capture_output=True,
            text=True,
            timeout=90,
            cwd=Path(path).parent,
            env={**os.environ, "PYTHONHASHSEED": "0"},  # a set's repr in the same order in every run
        )
    except subprocess.TimeoutExpired:
        return {"error": ["Timeout", ""], "bound": None}
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {"error": ["no-output", done.stderr[-300:]], "bound": None}


def call_shape(path: str, target: str) -> tuple[int, set[str]] | None:
    """(positional count, keyword names) of the snippet's first call of `target` (PCBench snippets
    call the API once), or None when there is none or it unpacks arguments."""
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else None
            )
            if name != target:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                return None
            return len(node.args), {k.arg for k in node.keywords if k.arg}
    return None


def passed(bound: dict, shape: tuple[int, set[str]]) -> dict:  # type: ignore[type-arg]
    """The parameters the call passes explicitly, with the values the callee received."""
    positional, keywords = shape
    names = list(bound)
    chosen = set(names[:positional]) | keywords
    return {name: value for name, value in bound.items() if name in chosen}


def same_meaning(before: dict | None, after: dict | None) -> bool | None:  # type: ignore[type-arg]
    """Whether every parameter the old version's call was passed, and the new version still has, gets the
    same value (by repr) in the new version's fixed call, and the fixed call passes nothing the old one
    did not; None when a call was not seen."""
    if before is None or after is None:
        return None
    kept = all(after[name] == value for name, value in before.items() if name in after)
    return kept and all(name in before and before[name] == value for name, value in after.items())


def oracle(args: argparse.Namespace) -> None:
    data = json.loads((args.out / "plan.json").read_text())
    fixed = [r for r in data["rows"] if r["fixed"]]
    if args.evidence:  # only the snippets a fix resting on this evidence touched (e.g. "default for")
        fixed = [r for r in fixed if any(args.evidence in (f["evidence"] or "") for f in r["fixes"])]
    skip = set(args.skip.split(",")) if args.skip else set()
    rng = random.Random(args.seed)
    by_lib: dict[str, list] = defaultdict(list)  # type: ignore[type-arg]
    for r in fixed:
        if r["lib"] not in skip and r["lib"] not in HEAVY:
            by_lib[r["lib"]].append(r)
    for rows in by_lib.values():
        rows.sort(key=lambda r: (r["folder"], r["module"]))
        rng.shuffle(rows)
    sample = []
    while len(sample) < args.sample and any(by_lib.values()):
        for lib in sorted(by_lib):
            if by_lib[lib] and len(sample) < args.sample:
                sample.append(by_lib[lib].pop())
    venvs = args.out / "venvs"
    venvs.mkdir(exist_ok=True)
    results = []
    for r in sample:
        target = r["api"].rsplit(".", 1)[-1]
        try:
            new = release_python(r["pypi"], r["v2"], r["python_v2"], venvs, args.install_timeout)
            old = release_python(r["pypi"], r["v1"], r["python_v1"], venvs, args.install_timeout)
        except RuntimeError as error:
            results.append({**r, "oracle": "not-installed", "detail": str(error)})
            print(f"{r['lib']} {r['folder']} {r['module']}: not installed: {error}"[:300], flush=True)
            continue
        before_old = run_snippet(old, r["original"], target)
        before_new = run_snippet(new, r["original"], target)
        after_new = run_snippet(new, r["fixed"], target)
        raised = (before_new["error"] or [None])[0]
        still = (after_new["error"] or [None])[0]
        broke = raised in ("TypeError", "AttributeError")
        runs = still not in ("TypeError", "AttributeError")
        shapes = call_shape(r["original"], target), call_shape(r["fixed"], target)
        meaning = (
            same_meaning(passed(before_old["bound"], shapes[0]), passed(after_new["bound"], shapes[1]))
            if before_old["bound"] is not None and after_new["bound"] is not None and None not in shapes
            else None
        )
        if r["label"] == "NY" and raised is not None:
            verdict = f"not checkable: the original raises {raised} under V2 here (it should run)"
        elif not runs:
            verdict = "wrong: still raises"
        elif r["label"] == "NN" and not broke:
            verdict = f"not checkable: the original raises {raised} here, not the labelled error"
        elif meaning is False:
            verdict = "runs, meaning changed" if r["repair"] == "unsafe" else "wrong: meaning changed"
        elif meaning is None:
            verdict = "runs, meaning not observed"
        else:
            verdict = "right"
        results.append(
            {
                **r,
                "v1_original": before_old,
                "v2_original": before_new,
                "v2_fixed": after_new,
                "original_broke": broke,
                "oracle": verdict,
            }
        )
        print(
            f"{r['lib']} {r['folder']} {r['module']} [{r['repair']}]: V2 original {raised}, fixed {still}, "
            f"meaning kept {meaning}: {verdict}",
            flush=True,
        )
    (args.out / "oracle.json").write_text(json.dumps(results, indent=1))
    print(Counter(x["oracle"] for x in results))
    print(Counter((x["repair"], x["oracle"]) for x in results))


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("plan")
    p.add_argument("--cases", type=Path, required=True)
    p.add_argument("--libs", required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    o = sub.add_parser("oracle")
    o.add_argument("--out", type=Path, required=True)
    o.add_argument("--sample", type=int, default=40)
    o.add_argument("--seed", type=int, default=33)
    o.add_argument("--skip", default="")
    o.add_argument("--evidence", default="", help="sample only snippets with a fix whose evidence says this")
    o.add_argument("--install-timeout", type=int, default=240)
    s = sub.add_parser("summary")
    s.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.command == "plan":
        plan(args)
    elif args.command == "oracle":
        oracle(args)
    else:
        summary(json.loads((args.out / "plan.json").read_text())["rows"])


if __name__ == "__main__":
    main()
