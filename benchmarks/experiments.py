"""Where the cold time goes, stage by stage: experiments outside the engine (which is unchanged).

    python benchmarks/experiments.py scan ROOT NAME [--limit N]
        The downstream files under ROOT that mention NAME, parsed by stdlib `ast`, by LibCST alone,
        with LibCST's PositionProvider, with ExpressionContextProvider too, and by apidrift's LibCST
        path (LibCST's tree converted to CPython's by `cst_to_ast`, then `astscan`): CPU seconds and
        CPU seconds per MiB of source.

    python benchmarks/experiments.py perfile ROOT NAME
        apidrift's LibCST path (as `scan`) on every file under ROOT that mentions NAME, one after the other in one
        process (keeping the results, as the engine does): CPU seconds per MiB by quarter of the file
        list, and the slowest files, to tell content from accumulation effects.

    python benchmarks/experiments.py api DOWNSTREAM UPSTREAM --cache-dir DIR
        Runs the audit once with an empty API cache to learn which upstream modules it parses, then
        times, over exactly those modules: `ast.parse`; griffe's visitor alone; griffe with apidrift's
        `_FactsExtension`; apidrift's whole `load_module` (conversion included); reading them back from
        the JSON API cache. DIR must already hold the sources (run `benchmarks/run.py` first).

Repeats each measurement (`--repeat`, default 3) and keeps the fastest (the least disturbed by other load).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path


def best(repeat: int, fn) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def scan(args: argparse.Namespace) -> None:
    import libcst as cst
    from libcst.metadata import ExpressionContextProvider, MetadataWrapper, PositionProvider

    scan_source = _libcst_scan

    mention = re.compile(r"\b%s\b" % re.escape(args.name))
    texts = []
    for path in sorted(Path(args.root).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if mention.search(text):
            texts.append(text)
    if args.limit:
        texts = texts[: args.limit]
    mib = sum(len(t.encode()) for t in texts) / 2**20
    names = frozenset({args.name})
    print(f"{len(texts)} files, {mib:.2f} MiB, load {os.getloadavg()[0]:.2f}")

    def positions(text: str) -> None:
        MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True).resolve(PositionProvider)

    def both(text: str) -> None:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        wrapper.resolve(PositionProvider)
        wrapper.resolve(ExpressionContextProvider)

    stages = [
        ("ast.parse (stdlib)", ast.parse),
        ("libcst parse_module", cst.parse_module),
        ("  + PositionProvider", positions),
        ("  + ExpressionContextProvider", both),
        ("scan_source (whole scanner)", lambda t: scan_source("f.py", t, names)),
    ]
    for label, fn in stages:
        cpu = best(args.repeat, lambda fn=fn: [fn(t) for t in texts])
        print(f"{label:32} cpu {cpu:7.3f} s   {cpu / mib:6.2f} s/MiB")


def _libcst_scan(path: str, text: str, names: frozenset[str]):  # type: ignore[no-untyped-def]
    """What the audit does with a file CPython's parser refuses: LibCST's tree, as CPython's, scanned."""
    from apidrift.auditor.downstream import astscan
    from apidrift.auditor.downstream.cst_to_ast import parse

    return astscan.scan_source(path, text, names, tree=parse(text))


def _texts(root: str, name: str, limit: int) -> list[str]:
    mention = re.compile(r"\b%s\b" % re.escape(name))
    texts = []
    for path in sorted(Path(root).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if mention.search(text):
            texts.append(text)
    return texts[:limit] if limit else texts


def perfile(args: argparse.Namespace) -> None:
    import gc

    scan_source = _libcst_scan

    mention = re.compile(r"\b%s\b" % re.escape(args.name))
    items = []
    for path in sorted(Path(args.root).rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if mention.search(text):
            items.append((path.relative_to(args.root).as_posix(), text))
    names = frozenset({args.name})
    kept, rows = [], []
    start = time.process_time()
    for relative, text in items:
        t = time.process_time()
        kept.append(scan_source(relative, text, names))
        rows.append((relative, len(text.encode()), time.process_time() - t))
    total = time.process_time() - start
    mib = sum(r[1] for r in rows) / 2**20
    print(f"{len(rows)} files, {mib:.2f} MiB, cpu {total:.1f} s, {total / mib:.2f} s/MiB, load {os.getloadavg()[0]:.2f}; "
          f"gc collections {[g['collections'] for g in gc.get_stats()]}")  # fmt: skip
    quarter = max(1, len(rows) // 4)
    for i in range(4):
        part = rows[i * quarter : (i + 1) * quarter]
        m, c = sum(r[1] for r in part) / 2**20, sum(r[2] for r in part)
        print(f"quarter {i}: {len(part)} files, {m:.2f} MiB, cpu {c:.1f} s, {c / m:.2f} s/MiB")
    for relative, size, cpu in sorted(rows, key=lambda r: -r[2])[:8]:
        print(f"{relative}: {size / 1024:.0f} KiB, {cpu:.2f} s, {cpu / (size / 2**20):.1f} s/MiB")


def api(args: argparse.Namespace) -> None:
    import griffe

    from apidrift import AuditRequest, audit
    from apidrift.auditor.upstream import loader
    from apidrift.auditor.upstream.analyses import decorators, deprecations, namespace
    from apidrift.auditor.upstream.model import ModuleInfo

    seen: list[tuple[str, Path, str, Path]] = []
    original = loader.load_module

    def record(dotted, filepath, code, root):  # type: ignore[no-untyped-def]
        seen.append((dotted, filepath, code, root))
        return original(dotted, filepath, code, root)

    loader.load_module = record
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "cache"
        shutil.copytree(Path(args.cache_dir) / "sources", work / "sources")
        audit(AuditRequest(args.downstream, args.against, cache_dir=work, offline=True))
    loader.load_module = original
    kib = sum(len(code.encode()) for _, _, code, _ in seen) / 1024
    print(f"{len(seen)} upstream modules parsed, {kib:.0f} KiB, load {os.getloadavg()[0]:.2f}")

    def visit(extensions):  # type: ignore[no-untyped-def]
        for dotted, filepath, code, root in seen:
            parent = loader._parent_chain(dotted, root)
            griffe.visit(dotted.rsplit(".", 1)[-1], filepath, code, parent=parent, extensions=extensions)

    def visit_ext() -> None:
        visit(griffe.load_extensions(loader._FactsExtension))

    infos = []

    def full() -> None:
        infos.clear()
        for dotted, filepath, code, root in seen:
            infos.append(loader.load_module(dotted, filepath, code, root))

    stages = [
        ("ast.parse (stdlib)", lambda: [ast.parse(code) for _, _, code, _ in seen]),
        ("griffe visit, no extension", lambda: visit(griffe.load_extensions())),
        ("griffe visit + _FactsExtension", visit_ext),
        ("load_module (+ conversion)", full),
    ]
    for label, fn in stages:
        cpu = best(args.repeat, fn)
        print(f"{label:32} cpu {cpu:7.3f} s   {1000 * cpu / len(seen):6.1f} ms/module")
    # apidrift's griffe extension, function by function, on the same modules' ASTs.
    trees = [ast.parse(code) for _, _, code, _ in seen]
    classes = [n for t in trees for n in ast.walk(t) if isinstance(n, ast.ClassDef)]
    functions = [
        n for t in trees for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]

    class _Mod:  # what _star_imports reads of a griffe module
        path = "pkg.mod"
        is_init_module = False

    parts = [
        ("  _top_level_names", lambda: [namespace._top_level_names(t) for t in trees]),
        ("  _star_imports", lambda: [namespace._star_imports(t, _Mod()) for t in trees]),
        ("  _instance_attributes (classes)", lambda: [namespace._instance_attributes(c) for c in classes]),
        (
            "  _deprecation (classes, methods)",
            lambda: [deprecations._deprecation(n) for n in classes + functions],
        ),
        ("  _is_identity (functions)", lambda: [decorators._is_identity(f) for f in functions]),
        ("  _is_forwarding_wrapper", lambda: [decorators._is_forwarding_wrapper(f) for f in functions]),
    ]
    print(f"the extension's parts ({len(classes)} classes, {len(functions)} functions):")
    for label, fn in parts:
        cpu = best(args.repeat, fn)
        print(f"{label:32} cpu {cpu:7.3f} s")
    blobs = [json.dumps(i.as_dict()) for i in infos]
    cpu = best(args.repeat, lambda: [ModuleInfo.from_dict(json.loads(b)) for b in blobs])
    print(f"{'JSON cache read (decode+build)':32} cpu {cpu:7.3f} s   {1000 * cpu / len(seen):6.1f} ms/module"
          f"   ({sum(map(len, blobs)) / 1024:.0f} KiB of JSON)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scan")
    s.add_argument("root")
    s.add_argument("name")
    s.add_argument("--limit", type=int, default=0)
    s.add_argument("--repeat", type=int, default=3)
    f = sub.add_parser("perfile")
    f.add_argument("root")
    f.add_argument("name")
    a = sub.add_parser("api")
    a.add_argument("downstream")
    a.add_argument("against")
    a.add_argument("--cache-dir", required=True)
    a.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    {"scan": scan, "perfile": perfile, "api": api}[args.command](args)


if __name__ == "__main__":
    main()
