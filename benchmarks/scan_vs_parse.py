"""The downstream scan's per-file cost against `ast.parse` of the same files, and the pool threshold.

    python benchmarks/scan_vs_parse.py ratio ROOT NAME [--repeat N]
        Over the files under ROOT that mention NAME (read and decoded once, outside the timing), CPU
        seconds of: `ast.parse` alone; `astscan.scan_source` (parse, visit, evaluate); the LibCST
        scanner (`--libcst`, slow); and the walker's whole cold scan in this process
        (`scan_downstream` with the pool off: listing, reading, hashing, decoding, scanning, writing
        the cache). Per file and as a ratio to `ast.parse`.

    python benchmarks/scan_vs_parse.py pool ROOT NAME [--sizes 4,8,...]
        Wall time of a cold `scan_downstream` of the first N files, in this process and with the fork
        pool (both cores), for each N: where the pool starts to pay.

Best of `--repeat` (default 3) for each figure: the least disturbed by other load on the machine.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import tempfile
import time
from pathlib import Path

from apidrift.auditor.downstream import astscan, walk
from apidrift.auditor.pysource import decode_source


def files_of(root: Path, name: str) -> list[tuple[Path, str]]:
    found = []
    for path, _relative in walk._python_files(root)[0]:
        try:
            text = decode_source(path.read_bytes())
        except Exception:
            continue
        if name in text:
            found.append((path, text))
    return found


def best(repeat: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.process_time()
        fn()
        times.append(time.process_time() - started)
    return min(times)


def ratio(args: argparse.Namespace) -> None:
    files = files_of(args.root, args.name)
    names = frozenset({args.name})
    mib = sum(len(t.encode()) for _, t in files) / 2**20
    print(f"{len(files)} files, {mib:.2f} MiB")

    def parse_each() -> None:
        for _, text in files:
            ast.parse(text)  # each tree dropped at once (keeping 10,000 trees would time the GC instead)

    rows = [("ast.parse", best(args.repeat, parse_each))]
    rows.append(
        (
            "astscan.scan_source",
            best(args.repeat, lambda: [astscan.scan_source(str(p), t, names) for p, t in files]),
        )
    )
    if args.libcst:
        from apidrift.auditor.downstream.cst_to_ast import parse

        rows.append(
            (
                "LibCST + cst_to_ast + astscan",
                best(1, lambda: [astscan.scan_source(str(p), t, names, tree=parse(t)) for p, t in files]),
            )
        )
    walk.POOL_MIN_FILES = 10**9  # in this process: CPU time of the whole walk

    def cold_walk() -> None:
        cache = Path(tempfile.mkdtemp())
        try:
            walk.scan_downstream(args.root, names, cache)
        finally:
            shutil.rmtree(cache)

    rows.append(("scan_downstream, cold, one process", best(args.repeat, cold_walk)))
    base = rows[0][1]
    print("| stage | CPU (s) | per file (ms) | x ast.parse |\n|---|---|---|---|")
    for label, cpu in rows:
        print(f"| {label} | {cpu:.2f} | {1000 * cpu / len(files):.2f} | {cpu / base:.2f} |")


def pool(args: argparse.Namespace) -> None:
    names = frozenset({args.name})
    everything = walk._python_files(args.root)[0]
    print("| files | in process (s) | fork pool (s) |\n|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            down = Path(folder) / "down"
            for path, relative in everything[:n]:
                target = down / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
            timings = []
            for threshold in (10**9, 2):
                walk.POOL_MIN_FILES = threshold
                walk.POOL_MIN_CHARS = 0
                runs = []
                for i in range(args.repeat):
                    cache = Path(folder) / f"cache-{threshold}-{i}"
                    started = time.perf_counter()
                    walk.scan_downstream(down, names, cache)
                    runs.append(time.perf_counter() - started)
                timings.append(min(runs))
            print(f"| {n} | {timings[0]:.3f} | {timings[1]:.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("mode", choices=("ratio", "pool"))
    parser.add_argument("root", type=Path)
    parser.add_argument("name")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--libcst", action="store_true")
    parser.add_argument("--sizes", default="2,4,8,16,32,64,128,256")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}")
    ratio(args) if args.mode == "ratio" else pool(args)


if __name__ == "__main__":
    main()
