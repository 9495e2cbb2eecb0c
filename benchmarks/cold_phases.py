"""Where an audit's CPU goes, by phase, cold or warm: CPU seconds (`time.process_time`), not wall.

    python benchmarks/cold_phases.py --cache-dir benchmarks/.data/cache/flagship --runs 3 \
        [--downstream speculators==0.3.0 --against vllm==0.16.0] [--state cold|warm] [--json OUT]

Each run is a process of its own (`--child`); `cold` empties the cache's `api` folder (models, import
facts, attribute-store indexes) and `scan` folder first, keeping the extracted sources, as
`benchmarks/run.py` does. The child wraps, without changing them, the engine's upstream entry points
and counts CPU exclusive of the wrapped calls nested in it:

- `import`: importing the engine; `fetch`, `scan`, `rules`: the engine's own phases (its timer made to
  read CPU time);
- `griffe+analyses`: `load_module` (griffe's visit with apidrift's extension analyses, and the
  conversion to the model), with `griffe parse+visit` the part of it in `griffe.visit` outside the
  extension hooks;
- `model cache`: `ApiIndex._load` outside `load_module` (reading the file, hashing, the cache read and
  write);
- `import facts`: the import-failure walk's reads (`ApiIndex._read_import_facts`);
- `attribute stores`, `spelled names`: the whole-tree reads (`_attribute_store_files`, `_read_spelled`);
- `resolve (rest)`: the resolve phase's CPU outside all of the above;
- counts: griffe parses, model-cache hits, import-facts files read.

To compare two commits on one machine, run the other commit's sources with `PYTHONPATH` pointing at
a folder holding them as `apidrift/` (`git archive COMMIT | tar -x -C DIR/apidrift`). A script, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PHASES = ("import", "fetch", "scan", "griffe parse+visit", "griffe+analyses", "model cache", "import facts",
          "attribute stores", "spelled names", "resolve (rest)", "rules", "total CPU")  # fmt: skip


def child(args: argparse.Namespace) -> None:
    start = time.process_time()
    from apidrift import AuditRequest, audit
    from apidrift.auditor.upstream import api_index

    imported = time.process_time() - start
    spent: dict[str, float] = {}
    counts: dict[str, int] = {}
    stack: list[float] = []

    def wrap(owner: object, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:
            return

        def timed(*a: object, **k: object) -> object:
            t = time.process_time()
            stack.append(0.0)
            try:
                return original(*a, **k)
            finally:
                took = time.process_time() - t
                inner = stack.pop()
                spent[label] = spent.get(label, 0.0) + took - inner
                counts[label] = counts.get(label, 0) + 1
                if stack:
                    stack[-1] += took

        setattr(owner, name, timed)

    from contextlib import contextmanager

    from apidrift.auditor import engine

    @contextmanager
    def phase(self, name):  # type: ignore[no-untyped-def]  # the engine's phases, in CPU seconds
        t = time.process_time()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.process_time() - t

    engine._Timer.phase = phase  # type: ignore[method-assign]
    wrap(api_index.ApiIndex, "_load", "model cache")
    wrap(api_index.ApiIndex, "_read_import_facts", "import facts")
    wrap(api_index.ApiIndex, "_attribute_store_files", "attribute stores")
    wrap(api_index.ApiIndex, "_read_spelled", "spelled names")
    import griffe

    from apidrift.auditor.upstream import loader

    wrap(loader, "load_module", "griffe+analyses")
    wrap(griffe, "visit", "griffe parse+visit")
    for hook in ("on_module_instance", "on_class_members", "on_function_instance"):
        wrap(loader._FactsExtension, hook, "griffe+analyses")  # the hooks count as analyses, not griffe
    t = time.process_time()
    result = audit(AuditRequest(downstream=args.downstream, against=args.against,
                                cache_dir=Path(args.cache_dir), offline=True))  # fmt: skip
    total = time.process_time() - t
    timings = dict(result.timings)
    wrapped = sum(spent.values())
    out = {"import": imported, "fetch": timings.get("fetch", 0.0), "scan": timings.get("scan", 0.0),
           "rules": timings.get("rules", 0.0), **spent,
           "resolve (rest)": total - wrapped - timings.get("fetch", 0.0) - timings.get("scan", 0.0)
           - timings.get("rules", 0.0),
           "total CPU": time.process_time() - start,
           "counts": {"griffe parses": counts.get("griffe parse+visit", 0),
                      "models asked": counts.get("model cache", 0),
                      "import-facts files": counts.get("import facts", 0)},
           "findings": len(result.findings),
           "sites": [result.coverage[0].found, result.coverage[0].checked] if result.coverage else []}  # fmt: skip
    Path(args.json).write_text(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--downstream", default="speculators==0.3.0")
    parser.add_argument("--against", default="vllm==0.16.0")
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--state", choices=("cold", "warm"), default="cold")
    parser.add_argument("--json", help="write every run's figures here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    cache = Path(args.cache_dir)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as after any install: compiled modules kept
    runs = []
    if args.state == "warm":  # one unmeasured run fills the caches
        subprocess.run([sys.executable, __file__, "--child", "--cache-dir", str(cache), "--downstream",
                        args.downstream, "--against", args.against, "--json", os.devnull], env=env, check=True)  # fmt: skip
    for _ in range(args.runs):
        if args.state == "cold":
            for sub in ("api", "scan"):
                shutil.rmtree(cache / sub, ignore_errors=True)
        out = cache.parent / f".cold_phases-{os.getpid()}.json"
        subprocess.run([sys.executable, __file__, "--child", "--cache-dir", str(cache), "--downstream",
                        args.downstream, "--against", args.against, "--json", str(out)], env=env, check=True)  # fmt: skip
        runs.append(json.loads(out.read_text()))
        out.unlink()
    print(f"{args.state}, {args.runs} runs, CPU seconds (median; min-max)")
    for phase in PHASES:
        values = [r.get(phase, 0.0) for r in runs]
        print(f"  {phase:20s} {statistics.median(values):6.3f}  ({min(values):.3f}-{max(values):.3f})")
    print("  counts:", runs[0]["counts"], "findings:", runs[0]["findings"], "sites:", runs[0]["sites"])
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
