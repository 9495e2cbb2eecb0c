"""How many real breaks `apidrift fix` repairs, and whether each repair works under the new release.

    python benchmarks/repair.py [--cache DIR] [--out benchmarks/.data/repair.json]

The cases are the real-world tier's breaks (`tests/real/test_real_world.py`: the famous breaks and the
typer/click 8.2 break, every one confirmed under CPython) and the issue's own examples (Jinja2,
numpy, click). For each: the audit's error findings (each a true positive, confirmed in the tier),
which of them carry a fix and of what applicability, and, for every fix `apidrift fix
--unsafe-fixes` applies (the follow-up round included), a check by CPython in a throwaway venv
holding the new release (pip, the configured index): an import fix imports, a replaced name is an
attribute of its owner, a call fix's fixed call binds with `inspect.signature(callee).bind(...)`.
Nothing of the downstream is run. This is a script, not a test.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import tempfile
import venv
from collections import Counter
from pathlib import Path

from apidrift import AuditRequest
from apidrift.auditor.core.results import (
    MoveImport,
    PositionalToKeyword,
    RemoveKeyword,
    RenameAttribute,
    RenameKeyword,
    ReplaceName,
    Severity,
)
from apidrift.auditor.engine import audit, locate_inputs
from apidrift.auditor.fix.codemods import (
    APPLIED,
    RESOLVED,
    follow_up,
    plan_fixes,
    with_evidence_of_the_last_release,
)

HERE = Path(__file__).resolve().parent

# (downstream, new upstream, old upstream or None to infer, pip spec of the new release, source)
CASES = [
    ("openai==1.55.0", "httpx==0.28.0", None, "httpx==0.28.0", None),
    ("flask==1.1.4", "jinja2==3.1.0", None, "Jinja2==3.1.0", None),
    ("flask==1.1.4", "itsdangerous==2.1.0", None, "itsdangerous==2.1.0", None),
    ("black==22.1.0", "click==8.1.0", None, "click==8.1.0", None),
    ("scikit-learn==0.24.2", "scipy==1.9.3", None, "scipy==1.9.3", None),
    ("jinja2==2.11.3", "markupsafe==2.1.0", None, "MarkupSafe==2.1.0", None),
    ("typer==0.15.1", "click==8.2.0", "click==8.1.8", "click==8.2.0", None),
    # every other real pair of the tier with error-level findings (each confirmed under CPython there)
    ("transformers==4.46.0", "huggingface_hub==0.26.1", "none", "huggingface_hub==0.26.1", None),
    ("flask-restful==0.3.9", "flask==3.0.0", "flask==2.2.5", "flask==3.0.0", None),
    ("flask-debugtoolbar==0.13.1", "flask==3.0.0", "flask==2.2.5", "flask==3.0.0", None),
    ("django-tinymce==2.6.0", "django==2.1", "django==1.11.15", "django==2.1", None),
    ("kombu==5.1.0", "pymongo==4.0", "pymongo==3.12.0", "pymongo==4.0", None),
    ("eve==1.1.5", "pymongo==4.0", "pymongo==3.12.0", "pymongo==4.0", None),
    ("dataset==1.6.0", "sqlalchemy==2.0.0", "sqlalchemy==1.4.46", "sqlalchemy==2.0.0", None),
    ("statsmodels==0.14.4", "scipy==1.14.1", "none", "scipy==1.14.1", None),
    ("djangorestframework-jwt==1.11.0", "pyjwt==2.0.0", "pyjwt==1.7.1", "pyjwt==2.0.0", None),
    ("jesse==0.13.2", "arrow==1.0.0", "arrow==0.17.0", "arrow==1.0.0", None),
    ("jishaku==2.2.0", "discord.py==2.0.0", "discord.py==1.7.3", "discord.py==2.0.0", None),
    (
        "issue-click",
        "click==8.2.0",
        "click==8.1.8",
        "click==8.2.0",
        "from click.testing import CliRunner\n\nrunner = CliRunner(mix_stderr=False)\n",
    ),
    (
        "issue-jinja2",
        "jinja2==3.1.0",
        "jinja2==3.0.3",
        "Jinja2==3.1.0",
        "from jinja2 import contextfunction, environmentfilter\nimport jinja2\n\n\n@contextfunction\n"
        "def f(ctx):\n    return ctx\n\n\n@environmentfilter\ndef g(env, v):\n    return v\n\n\n"
        "@jinja2.evalcontextfilter\ndef h(ctx, v):\n    return v\n",
    ),
    (
        "issue-jinja2-from-2",
        "jinja2==3.1.0",
        "jinja2==2.11.3",
        "Jinja2==3.1.0",
        "from jinja2 import contextfunction, environmentfilter\nimport jinja2\n\n\n@contextfunction\n"
        "def f(ctx):\n    return ctx\n\n\n@environmentfilter\ndef g(env, v):\n    return v\n\n\n"
        "@jinja2.evalcontextfilter\ndef h(ctx, v):\n    return v\n",
    ),
    (
        "issue-markup",
        "jinja2==3.1.0",
        "jinja2==2.11.3",
        "Jinja2==3.1.0",
        "from jinja2 import Markup\n\nsafe = Markup('<b>')\n",
    ),
    (
        "matplotlib-rename",
        "matplotlib==3.8.0",
        "matplotlib==3.7.3",
        "matplotlib==3.8.0",
        "from matplotlib.collections import Collection\nfrom matplotlib.transforms import IdentityTransform\n\n"
        "c = Collection()\nc.set_offset_transform(transOffset=IdentityTransform())\n",
    ),
    (
        "issue-numpy",
        "numpy==2.0.0",
        "numpy==1.26.4",
        "numpy==2.0.0",
        "import numpy as np\n\na = np.float_(1)\nb = np.product([1, 2])\nc = np.NaN\nd = np.Inf\ne = np.round_(1.5)\n"
        "f = np.NINF\n",
    ),
]

CHECK = r"""
import importlib, inspect, json, sys

def obtain(path):
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name)
        return value
    raise ImportError(path)

results = []
for check in json.loads(sys.stdin.read()):
    try:
        if check["kind"] == "import":
            module = importlib.import_module(check["module"])
            getattr(module, check["name"])
        elif check["kind"] == "attribute":
            getattr(obtain(check["owner"]), check["name"])
        else:
            callee = obtain(check["callee"])
            owner, _, name = check["callee"].rpartition(".")
            parent = obtain(owner) if owner else None
            # a method read off its class: the instance is the first argument
            bound = isinstance(parent, type) and inspect.isfunction(inspect.getattr_static(parent, name, None))
            positional = check["positional"] + (1 if bound else 0)
            inspect.signature(callee).bind(*[None] * positional, **{k: None for k in check["keywords"]})
        results.append(None)
    except Exception as error:
        results.append(f"{type(error).__name__}: {error}")
print(json.dumps(results))
"""


def release_python(spec: str, root: Path) -> Path | None:
    """A venv holding the new release, or None where pip cannot install it here (its checks are then
    reported as not run, never as working)."""
    folder = root / ("venv-" + spec.replace("=", "-"))
    python = folder / "bin" / "python"
    ready = folder / ".installed"
    if not ready.exists():
        venv.create(folder, with_pip=True, clear=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", spec], capture_output=True, timeout=900, check=False
        )
        if done.returncode != 0:
            return None
        ready.write_text(spec)
    return python


def call_shape(source: str, where: tuple[int, int]) -> tuple[int, list[str]] | None:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and (node.lineno, node.col_offset + 1) == where:
            if any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords
            ):
                return None
            return len(node.args), [k.arg for k in node.keywords if k.arg]
    return None


def callee_path(symbol: str) -> str:
    return symbol[: -len(".__init__")] if symbol.endswith(".__init__") else symbol


def check_of(outcome, sources: dict[str, str], applied: list) -> dict | None:  # type: ignore[no-untyped-def,type-arg]
    """What CPython is asked about one applied fix. A call fix is checked with every fix applied to
    the same call (CPython binds the call as the patch leaves it, not one edit at a time)."""
    finding = outcome.finding
    data = finding.fix.data
    if isinstance(data, MoveImport):
        return {"kind": "import", "module": data.new_module, "name": data.name}
    if isinstance(data, ReplaceName):
        if data.module is not None:
            return {"kind": "import", "module": data.module, "name": data.new}
        return {"kind": "attribute", "owner": finding.symbol.rpartition(".")[0], "name": data.new}
    if isinstance(data, RenameAttribute):
        return {"kind": "attribute", "owner": finding.symbol.rpartition(".")[0], "name": data.new}
    if isinstance(data, (RenameKeyword, RemoveKeyword, PositionalToKeyword)) and data.call is not None:
        shape = call_shape(sources[finding.location.path], data.call)
        if shape is None:
            return None
        positional, keywords = shape
        together = [
            o.finding.fix.data
            for o in applied
            if o.finding.location.path == finding.location.path
            and isinstance(o.finding.fix.data, (RenameKeyword, RemoveKeyword, PositionalToKeyword))
            and o.finding.fix.data.call == data.call
        ]
        for each in together:
            if isinstance(each, RenameKeyword):
                keywords = [each.new if k == each.old else k for k in keywords]
            elif isinstance(each, RemoveKeyword):
                keywords = [k for k in keywords if k != each.name]
            else:
                positional -= len(each.arguments) + len(each.dropped)
                keywords = [*keywords, *(name for _, name in each.arguments)]
        return {
            "kind": "call",
            "callee": callee_path(finding.symbol),
            "positional": positional,
            "keywords": keywords,
        }
    return None


def run_case(case: tuple, cache: Path, venvs: Path) -> dict:  # type: ignore[type-arg]
    downstream, against, old, spec, source = case
    with tempfile.TemporaryDirectory() as scratch:
        if source is not None:
            folder = Path(scratch) / downstream
            folder.mkdir()
            (folder / "app.py").write_text(source)
            downstream_spec = str(folder)
        else:
            downstream_spec = downstream
        request = AuditRequest(downstream_spec, against, old, cache_dir=cache)
        inputs = locate_inputs(request)
        result = audit(request, inputs)
        root = result.root
        assert root is not None
        result, _ = with_evidence_of_the_last_release(request, inputs, result)  # as `apidrift fix` does
        planned = plan_fixes(result, root, unsafe=True)

        def again(folder: Path):  # type: ignore[no-untyped-def]
            from dataclasses import replace

            return audit(
                replace(request, downstream=str(folder)),
                replace(inputs, downstream=inputs.sources.locate(str(folder), "downstream")),
            )

        fixed = follow_up(planned, again)
        errors = [o for o in fixed.outcomes if o.finding.severity is Severity.ERROR and not o.finding.guarded]
        applicability = Counter(
            "resolved"
            if o.status == RESOLVED
            else o.finding.fix.applicability.value
            if o.finding.fix
            else "none"
            for o in errors
        )
        applied = [o for o in errors if o.status == APPLIED]
        sources = {}
        for outcome in applied:
            path = outcome.finding.location.path
            if path not in sources:
                change = next((c for c in fixed.changes if c.path == path), None)
                sources[path] = change.before if change else (root / path).read_text()
        checks = [check_of(o, sources, applied) for o in applied]
        wanted = [c for c in checks if c is not None]
        python = release_python(spec, venvs) if wanted else None
        if python is None:
            verdicts = [f"not run: {spec} not installed here"] * len(wanted)
        else:
            done = subprocess.run(
                [str(python), "-c", CHECK],
                input=json.dumps(wanted),
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            verdicts = json.loads(done.stdout) if done.returncode == 0 else [done.stderr[-300:]] * len(wanted)
        rows = []
        answers = iter(verdicts)
        for outcome, check in zip(applied, checks):
            fix = outcome.finding.fix
            rows.append(
                {
                    "site": f"{outcome.finding.location.path}:{outcome.finding.location.line} {outcome.finding.code}",
                    "fix": f"{fix.applicability.value} {fix.kind.value}: {fix.description}",
                    "evidence": fix.evidence,
                    "check": check,
                    "failure": next(answers) if check is not None else "not checkable",
                }
            )
        return {
            "case": f"{downstream} -> {against}" + (f" (from {old})" if old else ""),
            "old": result.old_upstream.label if result.old_upstream else None,
            "errors": len(errors),
            "by_fix": dict(applicability),
            "applied": rows,
            "unfixed": [
                f"{o.finding.location.path}:{o.finding.location.line} {o.finding.code} {o.finding.message}"
                for o in errors
                if o.status not in (APPLIED, RESOLVED)
            ],
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, default=HERE / ".data" / "repair-cache")
    parser.add_argument("--out", type=Path, default=HERE / ".data" / "repair.json")
    parser.add_argument("--only", default="", help="run only the cases whose downstream contains this")
    parser.add_argument("--venvs", type=Path, default=HERE / ".data" / "repair-venvs")
    args = parser.parse_args()
    venvs = args.venvs
    venvs.mkdir(parents=True, exist_ok=True)
    report = []
    for case in CASES:
        if args.only in case[0]:
            print(f"{case[0]} -> {case[1]} ...", file=sys.stderr, flush=True)
            report.append(run_case(case, args.cache, venvs))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    errors = sum(r["errors"] for r in report)
    with_fix = sum(r["errors"] - r["by_fix"].get("none", 0) for r in report)
    safe = sum(r["by_fix"].get("safe", 0) + r["by_fix"].get("resolved", 0) for r in report)
    applied = [row for r in report for row in r["applied"]]
    works = [row for row in applied if row["failure"] is None]
    safe_rows = [row for row in applied if row["fix"].startswith("safe")]
    for r in report:
        print(f"{r['case']}: {r['errors']} errors, fixes {r['by_fix']}, old {r['old']}")
        for row in r["applied"]:
            print(
                f"    {row['site']}  {row['fix']}  -> {'works' if row['failure'] is None else row['failure']}"
            )
        for line in r["unfixed"]:
            print(f"    not fixed: {line}")
    tier = [r for r in report if not r["case"].startswith(("issue-", "matplotlib-rename"))]
    tier_errors = sum(r["errors"] for r in tier)
    tier_fix = sum(r["errors"] - r["by_fix"].get("none", 0) for r in tier)
    tier_safe = sum(r["by_fix"].get("safe", 0) + r["by_fix"].get("resolved", 0) for r in tier)
    tier_rows = [row for r in tier for row in r["applied"]]
    print(
        f"\nreal-world tier: {tier_errors} error-level true positives; with a fix or step {tier_fix}; safe "
        f"(or resolved by one) {tier_safe}; applied {len(tier_rows)}, working "
        f"{sum(1 for row in tier_rows if row['failure'] is None)}; safe applied "
        f"{sum(1 for row in tier_rows if row['fix'].startswith('safe'))}, working "
        f"{sum(1 for row in tier_rows if row['fix'].startswith('safe') and row['failure'] is None)}"
    )
    print(
        f"\nerror-level true positives: {errors}; with a fix (any applicability, manual steps included): "
        f"{with_fix} ({with_fix / errors:.0%}); with a safe fix (or resolved by one): {safe} ({safe / errors:.0%})"
    )
    print(
        f"applied fixes (with --unsafe-fixes): {len(applied)}; working under the new release: {len(works)}; "
        f"safe: {len(safe_rows)}, working {sum(1 for r in safe_rows if r['failure'] is None)}"
    )


if __name__ == "__main__":
    main()
