"""Cost of `apidrift plan` on the flagship: every release of vLLM from 0.11.0 to a target, audited.

    .venv/bin/python benchmarks/plan_walk.py [--to 0.16.0] [--cache DIR] [--bisect]

Prints one line per audited release: seconds, upstream modules the audit loaded, how many of them came
from the cache (parsed for an earlier release: same content, same key) and how many were parsed anew.
The counts are read from each audit's `ApiIndex.stats` (the engine's `_index` is wrapped to see them).
Starts from an empty cache unless --cache names one.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from apidrift.auditor import engine
from apidrift.auditor.plan import PlanRequest, plan


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--to", default="0.16.0")
    parser.add_argument("--cache", type=Path)
    parser.add_argument(
        "--bisect",
        action="store_true",
        help="bisect (the default of `apidrift plan`) instead of auditing every release",
    )
    args = parser.parse_args()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="apidrift-plan-bench-"))
    indexes: list[object] = []
    original = engine._index

    def spy(tree, api_dir):  # type: ignore[no-untyped-def]
        index = original(tree, api_dir)
        indexes.append(index)
        return index

    engine._index = spy  # type: ignore[assignment]
    began = time.perf_counter()
    result = plan(
        PlanRequest("speculators==0.3.0", "vllm", to=args.to, every=not args.bisect, cache_dir=cache)
    )
    total = time.perf_counter() - began
    engine._index = original  # type: ignore[assignment]
    loaded = parsed = 0
    print(f"cache: {cache}")
    print("release  seconds  modules loaded  from cache  parsed anew")
    for row in result.rows:
        if row.status != "audited":
            print(f"{row.version:<8} {row.status}")
            continue
        mine = [i for i in indexes if getattr(i, "version", None) == row.version]
        stats = mine[0].stats if mine else None  # the first index of that version is its audit's target
        n_parsed = stats.parsed if stats else 0
        n_cached = stats.from_cache if stats else 0
        print(f"{row.version:<8} {row.seconds:7.2f}  {n_parsed + n_cached:14}  {n_cached:10}  {n_parsed:11}")
        if row.version != result.from_version:
            loaded += n_parsed + n_cached
            parsed += n_parsed
    share = 100.0 * (loaded - parsed) / loaded if loaded else 0.0
    print(
        f"total {total:.1f}s; after the first release, {loaded - parsed} of {loaded} module loads came from the cache ({share:.0f}%)"
    )
    print(result.summary())


if __name__ == "__main__":
    main()
