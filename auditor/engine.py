"""The audit pipeline: specs -> sources -> scan / api -> resolve -> bind -> rules -> `AuditResult`.

`audit(request)` is the one engine entry point; the CLI only builds the request and renders.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from apidrift import __version__
from apidrift.auditor.api.index import ApiIndex
from apidrift.auditor.cache import Cache, atomic_write_text
from apidrift.auditor.checked import CheckedSite, check_site
from apidrift.auditor.resolve import Resolver
from apidrift.auditor.results import AuditResult, Coverage, FileOutcome, Finding, InputInfo
from apidrift.auditor.sites import FileScan, site_from_data, site_to_data
from apidrift.auditor.sources import SourceTree, locate
from apidrift.rules.registry import all_rules

# Folders of a local tree that hold no code of the project itself.
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages"}
)
MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are generated code: skipped, and said so
SCAN_VERSION = 1  # part of the scan cache key: bump when the scanner's output changes


@dataclass(frozen=True)
class AuditRequest:
    downstream: str
    against: str
    old: str | None = None  # `--from`: the upstream version the downstream was written for
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None


@dataclass
class _Timer:
    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start


def audit(request: AuditRequest) -> AuditResult:
    """Run the whole audit. Raises `SpecError`/`SourceError` when an input cannot be had at all."""
    timer = _Timer()
    cache = Cache(request.cache_dir)
    with timer.phase("fetch"):
        new_tree = locate(request.against, role="upstream", cache=cache, index_url=request.index_url, offline=request.offline)
        old_tree = (
            locate(request.old, role="upstream", cache=cache, index_url=request.index_url, offline=request.offline)
            if request.old
            else None
        )
        down_tree = locate(request.downstream, role="downstream", cache=cache, index_url=request.index_url, offline=request.offline)
    result = AuditResult(
        downstream=_input(down_tree),
        upstream=_input(new_tree),
        old_upstream=_input(old_tree) if old_tree else None,
        tool_version=__version__,
    )
    upstream_names = frozenset(new_tree.import_names) | frozenset(old_tree.import_names if old_tree else ())

    with timer.phase("scan"):
        scans = _scan_downstream(down_tree.root, upstream_names, result, cache.dir("scan"))
    api_dir = cache.dir("api")
    new_resolver = Resolver(_index(new_tree, api_dir))
    old_resolver = Resolver(_index(old_tree, api_dir)) if old_tree else None
    coverage = Coverage(upstream=new_tree.name)
    rules = all_rules()
    with timer.phase("resolve"):
        checked_sites = []
        for scan in scans:
            for site in scan.sites:
                new = check_site(site, new_resolver, _label(new_tree))
                old = check_site(site, old_resolver, _label(old_tree)) if old_resolver and old_tree else None
                checked_sites.append(CheckedSite(site, scan.path, scan.lines, new_tree.name, new, old))
                _count(coverage, new)
    with timer.phase("rules"):
        findings: list[Finding] = []
        for checked in checked_sites:
            for rule in rules:
                findings.extend(rule.run(checked))
    result.findings = sorted(findings, key=lambda f: (f.location.path, f.location.line, f.location.column, f.code))
    result.coverage.append(coverage)
    for resolver in filter(None, (new_resolver, old_resolver)):
        for module, error in sorted(resolver.index.stats.failed.items()):
            result.notes.append(f"{resolver.index.label}: module {module} could not be parsed ({error}); its names are not checked")
    result.timings = timer.timings
    return result


def _index(tree: SourceTree, api_dir: Path) -> ApiIndex:
    return ApiIndex(
        tree.root,
        tree.import_names,
        name=tree.name,
        version=tree.version,
        compiled_modules=tree.compiled_modules,
        cache_dir=api_dir,
    )


def _count(coverage: Coverage, check) -> None:  # type: ignore[no-untyped-def]
    coverage.found += 1
    if check.certain:
        coverage.resolved += 1
        coverage.checked += 1
    else:
        reason = check.unknown_reason or "unknown"
        if check.target is not None or reason in ("star-arguments", "invalid-signature"):
            coverage.resolved += 1  # the target is known; only this call's arguments are not
        coverage.count_unchecked(reason)


def _scan_downstream(root: Path, upstream_names: frozenset[str], result: AuditResult, cache_dir: Path) -> list[FileScan]:
    """Parse only the files that mention an upstream import name; every file gets an outcome."""
    mention = re.compile(r"\b(?:%s)\b" % "|".join(re.escape(n) for n in sorted(upstream_names))) if upstream_names else None
    scans = []
    for path in _python_files(root):
        relative = path.name if path == root else path.relative_to(root).as_posix()
        try:
            data = path.read_bytes()
        except OSError as error:
            result.files.append(FileOutcome(relative, "failed", f"unreadable: {error.strerror}"))
            continue
        if len(data) > MAX_FILE_BYTES:
            result.files.append(FileOutcome(relative, "skipped", f"larger than {MAX_FILE_BYTES // 1024 // 1024} MiB"))
            continue
        try:
            text = _decode(data)
        except (UnicodeDecodeError, SyntaxError, LookupError) as error:
            result.files.append(FileOutcome(relative, "failed", f"cannot decode: {error}"))
            continue
        if mention is None or not mention.search(text):
            result.files.append(FileOutcome(relative, "skipped", "does not mention the upstream"))
            continue
        scan = _scan_file(relative, data, text, upstream_names, cache_dir)
        if isinstance(scan, str):
            result.files.append(FileOutcome(relative, "failed", scan))
            continue
        result.files.append(FileOutcome(relative, "scanned", use_sites=len(scan.sites)))
        scans.append(scan)
    return scans


def _scan_file(relative: str, data: bytes, text: str, upstream_names: frozenset[str], cache_dir: Path) -> FileScan | str:
    """One file's use sites, from the scan cache when its content was scanned before; else why it failed."""
    key = hashlib.sha256(f"{SCAN_VERSION}\0{','.join(sorted(upstream_names))}\0{relative}\0".encode() + data).hexdigest()
    entry = cache_dir / key[:2] / f"{key}.json"
    try:
        sites = tuple(site_from_data(d) for d in json.loads(entry.read_text(encoding="utf-8")))
        return FileScan(relative, sites, tuple(text.splitlines()))
    except FileNotFoundError:
        pass
    except (ValueError, KeyError, TypeError, IndexError):
        pass  # a torn or stale entry: scan again and overwrite it
    import libcst  # only on a cache miss: a warm run never loads the parser

    from apidrift.auditor.scan import scan_source

    try:
        scan = scan_source(relative, text, upstream_names)
    except libcst.ParserSyntaxError as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "syntax error"
        return f"syntax error: {first}"
    except RecursionError:
        return "nesting too deep to parse"
    try:
        atomic_write_text(entry, json.dumps([site_to_data(s) for s in scan.sites]))
    except OSError:
        pass  # a read-only cache must not stop the audit
    return scan


def _python_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    files = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts[:-1]
        if any(part in SKIPPED_DIRS or part.endswith(".egg-info") for part in parts):
            continue
        if path.is_file() and not path.is_symlink():
            files.append(path)
    return files


def _decode(data: bytes) -> str:
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def _input(tree: SourceTree) -> InputInfo:
    return InputInfo(
        name=tree.name,
        version=tree.version,
        origin=tree.origin,
        location=tree.location,
        sha256=tree.sha256,
        import_names=tuple(tree.import_names),
        note=tree.note,
    )


def _label(tree: SourceTree | None) -> str:
    if tree is None:
        return ""
    return f"{tree.name}=={tree.version}" if tree.version else tree.name
