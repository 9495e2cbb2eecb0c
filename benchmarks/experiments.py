"""Where the cold time goes, stage by stage: experiments outside the engine (which is unchanged).

    python benchmarks/experiments.py scan ROOT NAME [--limit N]
        The downstream files under ROOT that mention NAME, parsed by stdlib `ast`, by LibCST alone,
        with LibCST's PositionProvider, with ExpressionContextProvider too, and by apidrift's whole
        scanner (`scan_source`): CPU seconds and CPU seconds per MiB of source.

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

    from apidrift.auditor.scan import scan_source

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


def api(args: argparse.Namespace) -> None:
    import griffe

    from apidrift import AuditRequest, audit
    from apidrift.auditor.api import loader
    from apidrift.auditor.api.model import ModuleInfo

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
    blobs = [json.dumps(i.as_dict()) for i in infos]
    cpu = best(args.repeat, lambda: [ModuleInfo.from_dict(json.loads(b)) for b in blobs])
    print(f"{'JSON cache read (decode+build)':32} cpu {cpu:7.3f} s   {1000 * cpu / len(seen):6.1f} ms/module"
          f"   ({sum(map(len, blobs)) / 1024:.0f} KiB of JSON)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("scan")
    s.add_argument("root")
    s.add_argument("name")
    s.add_argument("--limit", type=int, default=0)
    s.add_argument("--repeat", type=int, default=3)
    a = sub.add_parser("api")
    a.add_argument("downstream")
    a.add_argument("against")
    a.add_argument("--cache-dir", required=True)
    a.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    {"scan": scan, "api": api}[args.command](args)


if __name__ == "__main__":
    main()
