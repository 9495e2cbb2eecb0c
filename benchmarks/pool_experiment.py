"""Would a process pool for parsing help? An experiment outside the engine (the engine is unchanged).

    python benchmarks/pool_experiment.py ROOT NAME [NAME...] [--limit N] [--workers 2] [--small 3]

Takes the files under ROOT that mention an upstream import NAME (the engine's own pre-filter), and runs
apidrift's scanner (`apidrift.auditor.downstream.scan.scan_source`, the LibCST pass of the `scan` phase) on them
serially, then in a `ProcessPoolExecutor` (fork and spawn), results sent back to the parent as the
engine would need them. Also times the same on the first `--small` files, where a pool's start-up
cost shows. Prints wall and CPU seconds; CPU includes the workers'.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

NAMES: frozenset[str] = frozenset()


def _init(names: frozenset[str]) -> None:
    global NAMES
    NAMES = names
    import apidrift.auditor.downstream.scan  # noqa: F401  (a spawned worker imports libcst once)


def _scan(item: tuple[str, str]):  # type: ignore[no-untyped-def]
    from apidrift.auditor.downstream.scan import scan_source

    return scan_source(item[0], item[1], NAMES)


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def serial(items: list[tuple[str, str]], names: frozenset[str]) -> tuple[float, float, int]:
    _init(names)
    w, c = time.perf_counter(), _cpu()
    sites = sum(len(_scan(i).sites) for i in items)
    return time.perf_counter() - w, _cpu() - c, sites


def pooled(
    items: list[tuple[str, str]], names: frozenset[str], workers: int, method: str
) -> tuple[float, float, int]:
    w, c = time.perf_counter(), _cpu()
    # Largest files first so that one big file does not finish last on its own.
    order = sorted(items, key=lambda i: -len(i[1]))
    ctx = multiprocessing.get_context(method)
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init, initargs=(names,)) as pool:
        sites = sum(
            len(scan.sites) for scan in pool.map(_scan, order, chunksize=max(1, len(order) // (workers * 8)))
        )
    return time.perf_counter() - w, _cpu() - c, sites


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("names", nargs="+")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--small", type=int, default=3)
    args = parser.parse_args()
    names = frozenset(args.names)
    mention = re.compile(r"\b(?:%s)\b" % "|".join(re.escape(n) for n in sorted(names)))
    items = []
    for path in sorted(args.root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if mention.search(text):
            items.append((path.relative_to(args.root).as_posix(), text))
    if args.limit:
        items = items[: args.limit]
    mib = sum(len(t.encode()) for _, t in items) / 2**20
    print(f"{len(items)} files, {mib:.2f} MiB; load {os.getloadavg()}")
    import apidrift.auditor.downstream.scan  # noqa: F401  (the parent has libcst loaded, as the engine would on a miss)

    for label, subset in (("all", items), (f"small ({args.small} files)", items[: args.small])):
        w, c, n = serial(subset, names)
        print(f"{label:22} serial          wall {w:7.2f}s  cpu {c:7.2f}s  sites {n}")
        for method in ("fork", "spawn"):
            w, c, n = pooled(subset, names, args.workers, method)
            print(f"{label:22} pool {args.workers} {method:6}   wall {w:7.2f}s  cpu {c:7.2f}s  sites {n}")
    print(f"load {os.getloadavg()}")


if __name__ == "__main__":
    main()
