"""Scale benchmark of `apidrift impact`: a local index on 127.0.0.1 with 1,000 generated dependents.

The upstream `genlib` 1.0 -> 2.0 has known breaks (keywords removed, parameters made required) and
changed defaults. Each dependent is generated for one bucket (broken, at-risk, clean, not-using,
not-yet-affected) with 1 to 40 modules; 50 more candidates do not require genlib at all. The run is
`apidrift impact genlib==2.0 --discover candidates.txt` through the index (PEP 658 metadata files),
once per worker count, each from an empty cache; every bucket is checked against the generator's.

    .venv/bin/python benchmarks/impact_scale.py [--dependents 1000] [--workers 1 2]

Not a test: it takes minutes. Output: a table on stdout and benchmarks/.data/impact-scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from localindex import LocalIndex, core_metadata, wheel_bytes  # noqa: E402

BROKEN_KW = [f"load{i}" for i in range(5)]  # 2.0 drops their `legacy` keyword
BROKEN_REQ = [f"make{i}" for i in range(5)]  # 2.0 adds a required `size`
DEFAULTS = [f"tune{i}" for i in range(3)]  # 2.0 changes the default of `level`
SAME = [f"keep{i}" for i in range(10)]


def upstream(version: str) -> str:
    new = version.startswith("2")
    lines = []
    for name in BROKEN_KW:
        lines.append(f"def {name}(path, mode='r'{'' if new else ', legacy=False'}):\n    return path\n")
    for name in BROKEN_REQ:
        lines.append(f"def {name}(config{', size' if new else ''}):\n    return config\n")
    for name in DEFAULTS:
        lines.append(f"def {name}(value, level={2 if new else 1}):\n    return value\n")
    for name in SAME:
        lines.append(f"def {name}(a, b=None, *args, **kwargs):\n    return a\n")
    lines.append(
        f"class Client:\n    def __init__(self, url{', timeout' if new else ''}):\n        self.url = url\n"
    )
    return "\n\n".join(lines)


def dependent(name: str, bucket: str, rng: random.Random) -> tuple[dict[str, str], list[str]]:
    """(files, requirements) of one generated dependent of `bucket`."""
    modules = rng.choice([1, 1, 2, 3, 5, 8, 13, 21, 40])
    files = {f"{name}/__init__.py": ""}
    for number in range(modules):
        calls = [f"    genlib.{rng.choice(SAME)}({number}, b={number})" for _ in range(rng.randint(1, 12))]
        body = "import genlib\n\n\ndef work():\n" + "\n".join(calls) + "\n"
        if bucket == "not-using":
            body = "import os\n\n\ndef work():\n    return os.getcwd()\n"
        files[f"{name}/m{number}.py"] = body
    last = f"{name}/m{modules - 1}.py"
    if bucket in ("broken", "not-yet-affected"):
        if rng.random() < 0.5:
            files[last] += f"\n\ndef bad():\n    genlib.{rng.choice(BROKEN_KW)}('x', legacy=True)\n"
        else:
            files[last] += (
                f"\n\ndef bad():\n    genlib.{rng.choice(BROKEN_REQ)}({{}})\n    genlib.Client('u')\n"
            )
    elif bucket == "at-risk":
        files[last] += f"\n\ndef risky():\n    genlib.{rng.choice(DEFAULTS)}(1)\n"
    requires = ["genlib<2"] if bucket == "not-yet-affected" else ["genlib>=1"]
    if bucket == "not-using":
        requires = ['genlib>=1; extra == "plugins"']
    return files, requires


def build(root: Path, count: int, seed: int) -> tuple[LocalIndex, dict[str, str], Path]:
    rng = random.Random(seed)
    index = LocalIndex(root / "index")
    for version in ("1.0", "2.0"):
        data = wheel_bytes("genlib", version, {"genlib/__init__.py": upstream(version)}, [])
        index.add("genlib", f"genlib-{version}-py3-none-any.whl", data, core_metadata("genlib", version, []))
    weights = {"broken": 30, "at-risk": 10, "clean": 40, "not-using": 10, "not-yet-affected": 10}
    expected: dict[str, str] = {}
    names = []
    for number in range(count):
        name = f"dep{number:04d}"
        bucket = rng.choices(list(weights), weights=list(weights.values()))[0]
        files, requires = dependent(name, bucket, rng)
        index.add(
            name,
            f"{name}-1.0-py3-none-any.whl",
            wheel_bytes(name, "1.0", files, requires),
            core_metadata(name, "1.0", requires),
        )
        expected[name] = bucket
        names.append(name)
    for number in range(count // 20):  # candidates that do not require genlib: dropped by discovery
        name = f"other{number:03d}"
        index.add(
            name,
            f"{name}-1.0-py3-none-any.whl",
            wheel_bytes(name, "1.0", {f"{name}.py": "x = 1\n"}, ["six"]),
            core_metadata(name, "1.0", ["six"]),
        )
        names.append(name)
    candidates = root / "candidates.txt"
    candidates.write_text("\n".join(names) + "\n", encoding="utf-8")
    return index, expected, candidates


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dependents", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    apidrift = Path(sys.executable).with_name("apidrift")
    work = Path(tempfile.mkdtemp(prefix="apidrift-impact-scale-"))
    runs = []
    try:
        index, expected, candidates = build(work, args.dependents, args.seed)
        with index:
            for workers in args.workers:
                cache, results = work / f"cache-{workers}", work / f"results-{workers}"
                summary = work / f"summary-{workers}.json"
                command = [str(apidrift), "impact", "genlib==2.0", "--discover", str(candidates), "--index-url", index.url,
                           "--cache-dir", str(cache), "--results", str(results), "-j", str(workers), "-q",
                           "--format", f"json:{summary}", "--fail-on", "never"]  # fmt: skip
                load = os.getloadavg()[0]
                started = time.perf_counter()
                times_before = os.times()
                subprocess.run(command, check=True)
                wall = time.perf_counter() - started
                times_after = os.times()
                cpu = (times_after.children_user - times_before.children_user) + (
                    times_after.children_system - times_before.children_system
                )
                data = json.loads(summary.read_text())
                got = {row["dependent"]: row["status"] for row in data["dependents"]}
                wrong = {
                    name: (bucket, got.get(name))
                    for name, bucket in expected.items()
                    if got.get(name) != bucket
                }
                walls = sorted(row["wall_seconds"] for row in data["dependents"])
                run = {
                    "workers": workers, "dependents": len(got), "dropped": len(data["dropped"]), "wall_s": round(wall, 1),
                    "cpu_s": round(cpu, 1), "per_dependent_s": round(wall / max(len(got), 1), 3),
                    "cpu_per_dependent_s": round(cpu / max(len(got), 1), 3), "dependents_per_min": round(60 * len(got) / wall, 1),
                    "job_wall_median_s": walls[len(walls) // 2] if walls else None, "load_before": round(load, 1),
                    "load_after": round(os.getloadavg()[0], 1), "wrong": len(wrong), "wrong_examples": dict(list(wrong.items())[:5]),
                    "counts": data["counts"],
                }  # fmt: skip
                runs.append(run)
                print(json.dumps(run), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = HERE / ".data" / "impact-scale.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps({"dependents": args.dependents, "seed": args.seed, "runs": runs}, indent=1),
        encoding="utf-8",
    )
    print("\n| workers | dependents | wall | CPU | per dependent | dependents/min | buckets wrong | load |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['workers']} | {r['dependents']} | {r['wall_s']} s | {r['cpu_s']} s | {r['per_dependent_s']} s | "
              f"{r['dependents_per_min']} | {r['wrong']} | {r['load_before']} -> {r['load_after']} |")  # fmt: skip
    return 0 if all(r["wrong"] == 0 for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
