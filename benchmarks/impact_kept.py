"""CPU per dependent of `apidrift impact`'s jobs with the upstream model kept in the worker, and rebuilt.

    python benchmarks/impact_kept.py --cache-dir benchmarks/.data/cache/flagship --dependents 50

The dependents are synthetic: copies of a real downstream's source tree (speculators 0.3.0, from the
cache), each a local folder, audited against vllm 0.16.0 with vllm 0.11.0 as the old version (the
flagship). Each job runs as in an impact worker: `jobs.run_job` in this process (the worker), the audit
in a fork of it. CPU = user + system of this process and its reaped children, per dependent. The API
cache is warm (one audit first): what is measured is what keeping saves, not parsing. Rows must be equal
in both modes (checked). A script, not a test.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--dependents", type=int, default=50)
    parser.add_argument("--downstream", default="speculators")
    parser.add_argument("--release", default="vllm==0.16.0")
    parser.add_argument("--old", default="vllm==0.11.0")
    args = parser.parse_args()

    from apidrift.auditor.impact import run as impact_run
    from apidrift.auditor.impact.jobs import Job, run_job
    from apidrift.auditor.upstream import kept

    impact_run._warm()
    source = next(Path(args.cache_dir, "sources", args.downstream).glob("*/tree"))
    name, version = args.release.split("==")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp, "cache")
        cache.mkdir()
        for part in ("sources", "index", "downloads", "api"):
            if Path(args.cache_dir, part).exists():
                shutil.copytree(Path(args.cache_dir, part), cache / part, symlinks=True)
        folders = []
        for number in range(args.dependents):
            folder = Path(tmp, f"dep{number:03d}")
            shutil.copytree(source, folder)
            folders.append(folder)

        def job(folder: Path) -> Job:
            return Job(key=folder.name, dependent=str(folder), label=folder.name, latest=False,
                       release=args.release, old=args.old, upstream=name, upstream_version=version,
                       cache_dir=str(cache), offline=True)  # fmt: skip

        kept.enable(False)
        run_job(job(folders[0]))  # the API cache warm
        results = {}
        for mode in ("rebuilt", "kept", "rebuilt", "kept"):
            kept.enable(mode == "kept")
            rows = []
            start, wall = cpu(), time.perf_counter()
            for folder in folders:
                row = run_job(job(folder))
                rows.append({k: v for k, v in row.items() if k not in ("wall_seconds", "worker", "timings")})
            spent, wall = cpu() - start, time.perf_counter() - wall
            assert not any(r["status"] in ("error", "timeout", "memory") for r in rows), [
                r.get("error") for r in rows
            ][:3]
            results.setdefault(mode, []).append((spent / len(folders), wall / len(folders), rows))
            print(f"{mode:8s} {spent / len(folders):.4f} CPU-s/dependent  {wall / len(folders):.4f} s wall/dependent",
                  flush=True)  # fmt: skip
        same = json.dumps(results["kept"][0][2], sort_keys=True) == json.dumps(
            results["rebuilt"][0][2], sort_keys=True
        )
        print(f"rows identical in both modes: {same}; first row: {rows[0]['status']}, {rows[0]['errors']} errors, "
              f"{rows[0]['warnings']} warnings")  # fmt: skip
        best = {mode: min(r[0] for r in runs) for mode, runs in results.items()}
        print(f"best: rebuilt {best['rebuilt']:.4f}, kept {best['kept']:.4f} CPU-s/dependent "
              f"({best['rebuilt'] / best['kept']:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
