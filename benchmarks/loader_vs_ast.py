"""How the upstream load's CPU splits, per module, on the modules an audit really loads.

    python benchmarks/loader_vs_ast.py --downstream speculators==0.3.0 --against vllm==0.16.0 \
        --cache-dir benchmarks/.data/cache/flagship [--repeat 3]

Runs the audit once (offline, with a throwaway API cache) to learn which upstream modules it loads,
then times each of those modules, CPU (`time.process_time`), best of `--repeat`:
- `ast.parse` of the source (the floor any loader pays);
- `ast_extract`: `ast.parse` plus a direct walk that collects what the model needs from the module's
  own definitions (function signatures with defaults and annotations as text, decorators, class bases
  and bodies, assignments), a stand-in for a loader written on `ast`;
- `griffe.visit` alone (griffe's own visitor, no extension);
- apidrift's `load_module` (griffe plus apidrift's extension analyses and the conversion to the model).
Each timing runs with the cycle collector paused, as the index runs a load (`_collector_paused`), after a
collection. `--per-module` prints every module's milliseconds. A script, not a test.
"""

from __future__ import annotations

import argparse
import ast
import gc
import shutil
import tempfile
import time
from pathlib import Path


def extract(tree: ast.Module) -> list[tuple]:
    """What a direct `ast` loader would read: every def's parameters (kind, default and annotation
    text), decorators, return annotation; every class's bases, keywords and body; assignments."""
    out: list[tuple] = []

    def function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple:
        a = node.args
        params = [
            (p.arg, ast.unparse(p.annotation) if p.annotation else None)
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)
        ]
        defaults = [ast.unparse(d) for d in a.defaults] + [
            ast.unparse(d) for d in a.kw_defaults if d is not None
        ]
        return ("def", node.name, params, defaults, [ast.unparse(d) for d in node.decorator_list],
                ast.unparse(node.returns) if node.returns else None)  # fmt: skip

    def body(statements: list[ast.stmt]) -> list[tuple]:
        found: list[tuple] = []
        for stmt in statements:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(function(stmt))
            elif isinstance(stmt, ast.ClassDef):
                found.append(("class", stmt.name, [ast.unparse(b) for b in stmt.bases],
                              [ast.unparse(d) for d in stmt.decorator_list], body(stmt.body)))  # fmt: skip
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                found.append(("assign", [ast.unparse(t) for t in targets],
                              ast.unparse(stmt.value)[:200] if stmt.value else None))  # fmt: skip
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                found.append(("import", [(n.name, n.asname) for n in stmt.names]))
            elif isinstance(stmt, (ast.If, ast.Try)):
                found.extend(body(stmt.body))
        return found

    out.extend(body(tree.body))
    return out


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        t = time.process_time()
        fn()
        times.append(time.process_time() - t)
        gc.enable()
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--downstream", required=True)
    parser.add_argument("--against", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", help="also write a cProfile of one load_module pass to this file")
    parser.add_argument("--per-module", action="store_true", help="print each module's milliseconds")
    args = parser.parse_args()

    import griffe

    from apidrift import AuditRequest, audit
    from apidrift.auditor.upstream import loader

    loaded: list[tuple[str, Path, str, Path]] = []
    original = loader.load_module

    def record(dotted, filepath, code, root):  # type: ignore[no-untyped-def]
        loaded.append((dotted, filepath, code, root))
        return original(dotted, filepath, code, root)

    loader.load_module = record  # type: ignore[assignment]

    cache = Path(args.cache_dir)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / "cache"
        scratch.mkdir()
        for part in ("sources", "index", "downloads"):
            if (cache / part).exists():
                (scratch / part).symlink_to((cache / part).resolve())
        audit(AuditRequest(downstream=args.downstream, against=args.against, cache_dir=scratch, offline=True))
        shutil.rmtree(scratch / "api", ignore_errors=True)
    loader.load_module = original  # type: ignore[assignment]

    totals = {"ast.parse": 0.0, "ast_extract": 0.0, "griffe.visit": 0.0, "load_module": 0.0}
    rows = []
    for dotted, filepath, code, root in loaded:
        name = dotted.rsplit(".", 1)[-1]
        row = {
            "ast.parse": best(lambda: ast.parse(code), args.repeat),
            "ast_extract": best(lambda: extract(ast.parse(code)), args.repeat),
            "griffe.visit": best(lambda: griffe.visit(name, filepath, code), args.repeat),
            "load_module": best(lambda: original(dotted, filepath, code, root), args.repeat),
        }
        for key, value in row.items():
            totals[key] += value
        rows.append((dotted, root.parent.name, len(code), row))
    if args.per_module:
        print("| module | release tree | KB | " + " | ".join(f"{k} ms" for k in totals) + " |")
        print("|---|---|---|" + "---|" * len(totals))
        for dotted, tree, size, row in rows:
            cells = " | ".join(f"{1000 * v:.1f}" for v in row.values())
            print(f"| {dotted} | {tree} | {size / 1000:.0f} | {cells} |")
    n = len(loaded)
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
        for dotted, filepath, code, root in loaded:
            original(dotted, filepath, code, root)
        profiler.disable()
        profiler.dump_stats(args.profile)
    print(f"{n} modules loaded, {sum(len(c) for _, _, c, _ in loaded) / 1e6:.2f} MB of source")
    for key, value in totals.items():
        print(f"{key:14s} {value:7.3f} s CPU  {1000 * value / max(n, 1):6.2f} ms/module  "
              f"{value / totals['ast.parse']:5.1f}x ast.parse")  # fmt: skip


if __name__ == "__main__":
    main()
