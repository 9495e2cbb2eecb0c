"""One instrumented apidrift run, in its own process (started by `benchmarks/run.py`, never by the tests).

Runs `apidrift.audit(AuditRequest(...))` through the public Python API, renders the text report, and
writes one JSON object to `--out`: the engine's own phase timings (`AuditResult.timings`), plus what
this wrapper times around it without changing the engine:

- `import`: importing the engine (libcst and griffe are imported lazily, on cache misses only);
- `download` / `extract`: inside the `fetch` phase, the archive download and its extraction;
- `api_load`: time spent in `ApiIndex._load` (cache read or griffe parse), which the engine counts
  inside `resolve`; `resolve_only` is `resolve` minus it;
- `render`: `apidrift.reports.render(result, "text")`;
- counters: files parsed with LibCST (`scan_parses`: scan-cache entries written), upstream modules parsed by griffe and read
  from the API cache, use sites and findings.

`--profile FILE` also writes a cProfile of the whole run (import to render).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

T0 = time.perf_counter()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--downstream", required=True)
    parser.add_argument("--against", required=True)
    parser.add_argument("--from", dest="old")
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--offline", action="store_true")
    parser.add_argument("--out", required=True)
    parser.add_argument("--keep-archives", help="copy each downloaded archive into this folder")
    parser.add_argument("--profile", help="write a cProfile of the run to this file")
    args = parser.parse_args()

    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()

    extra: dict[str, float] = {"download": 0.0, "extract": 0.0, "api_load": 0.0}
    counts = {"scan_parses": 0, "api_parsed": 0, "api_from_cache": 0}

    t = time.perf_counter()
    import apidrift.reports
    from apidrift import AuditRequest, audit
    from apidrift.auditor import engine  # noqa: F401  (the import cost, measured)
    from apidrift.auditor.downstream import walk as downstream
    from apidrift.auditor.sources import locate as sources
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.upstream import api_index as api_index

    extra["import"] = time.perf_counter() - t

    # --- instrumentation: wrappers only, the engine is unchanged --------------------------------
    original_load = api_index.ApiIndex._load
    indexes: list[api_index.ApiIndex] = []
    original_init = api_index.ApiIndex.__init__

    def init(self, *a, **k):  # type: ignore[no-untyped-def]
        original_init(self, *a, **k)
        indexes.append(self)

    per_index: dict[str, float] = {}

    def load(self, dotted):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original_load(self, dotted)
        finally:
            spent = time.perf_counter() - start
            extra["api_load"] += spent
            per_index[self.label] = per_index.get(self.label, 0.0) + spent

    api_index.ApiIndex.__init__ = init  # type: ignore[method-assign]
    api_index.ApiIndex._load = load  # type: ignore[method-assign]

    # Each file parsed with LibCST writes one scan-cache entry (a cache hit writes none), so counting
    # these writes counts parses without importing libcst here (a warm run never loads it).
    original_write = downstream.atomic_write_text

    def write_scan_entry(*a, **k):  # type: ignore[no-untyped-def]
        counts["scan_parses"] += 1
        return original_write(*a, **k)

    downstream.atomic_write_text = write_scan_entry

    original_extract = sources._extract

    def extract(archive, dest, *a, **k):  # type: ignore[no-untyped-def]
        if args.keep_archives:
            keep = Path(args.keep_archives)
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy2(archive, keep / archive.name)
        start = time.perf_counter()
        try:
            return original_extract(archive, dest, *a, **k)
        finally:
            extra["extract"] += time.perf_counter() - start

    sources._extract = extract

    original_download = IndexClient.download

    def download(self, *a, **k):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original_download(self, *a, **k)
        finally:
            extra["download"] += time.perf_counter() - start

    IndexClient.download = download  # type: ignore[method-assign]

    # --- the run --------------------------------------------------------------------------------
    request = AuditRequest(
        downstream=args.downstream,
        against=args.against,
        old=args.old,
        cache_dir=Path(args.cache_dir),
        offline=args.offline,
    )
    t = time.perf_counter()
    result = audit(request)
    audit_wall = time.perf_counter() - t
    t = time.perf_counter()
    report = apidrift.reports.render(result, "text")
    extra["render"] = time.perf_counter() - t
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile)

    by_version = {}
    for index in indexes:
        counts["api_parsed"] += index.stats.parsed
        counts["api_from_cache"] += index.stats.from_cache
        by_version[index.label] = {"parsed": index.stats.parsed, "from_cache": index.stats.from_cache,
                                   "seconds": per_index.get(index.label, 0.0)}  # fmt: skip
    timings = dict(result.timings)
    extra["resolve_only"] = timings.get("resolve", 0.0) - extra["api_load"]
    extra["fetch_only"] = timings.get("fetch", 0.0) - extra["download"] - extra["extract"]
    outcomes: dict[str, int] = {}
    for outcome in result.files:
        outcomes[outcome.status] = outcomes.get(outcome.status, 0) + 1
    coverage = result.coverage[0] if result.coverage else None
    data = {
        "timings": timings,
        "extra": extra,
        "counts": counts,
        "api_by_version": by_version,
        "audit_wall": audit_wall,
        "in_process": time.perf_counter() - T0,
        "files": outcomes,
        "use_sites": coverage.found if coverage else 0,
        "checked": coverage.checked if coverage else 0,
        "findings": len(result.findings),
        "report_bytes": len(report.encode()),
        "downstream": {"name": result.downstream.name, "version": result.downstream.version,
                       "import_names": list(result.downstream.import_names)},
        "upstream": {"name": result.upstream.name, "version": result.upstream.version},
        "old_upstream": ({"name": result.old_upstream.name, "version": result.old_upstream.version}
                         if result.old_upstream else None),
    }  # fmt: skip
    Path(args.out).write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    sys.exit(main())
