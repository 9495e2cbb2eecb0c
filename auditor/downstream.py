"""The downstream side: walk a source tree, read each Python file, and scan those that mention the upstream.

Input: a folder (or one file) and the upstream's import names. Output: the `FileScan`s and, for every
file, a `FileOutcome` (scanned, skipped with a reason, failed with the error): one bad file never
stops the audit. Scans are cached per file content, so a warm run never loads the parser.
"""

from __future__ import annotations

import fnmatch
import hashlib
import io
import json
import re
import tokenize
from pathlib import Path

from apidrift.auditor.cache import atomic_write_text
from apidrift.auditor.results import FileOutcome
from apidrift.auditor.sites import FileScan, site_from_data, site_to_data

# Folders of a local tree that hold no code of the project itself.
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "node_modules", "__pycache__", "build", "dist",
     ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages"}
)
MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are generated code: skipped, and said so
SCAN_VERSION = 3  # part of the scan cache key: bump when the scanner's output changes


def scan_downstream(
    root: Path, upstream_names: frozenset[str], cache_dir: Path, exclude: tuple[str, ...] = ()
) -> tuple[list[FileScan], list[FileOutcome]]:
    """Parse only the files that mention an upstream import name; every file gets an outcome."""
    outcomes: list[FileOutcome] = []
    mention = re.compile(r"\b(?:%s)\b" % "|".join(re.escape(n) for n in sorted(upstream_names))) if upstream_names else None
    scans = []
    for path in _python_files(root):
        relative = path.name if path == root else path.relative_to(root).as_posix()
        if any(fnmatch.fnmatchcase(relative, pattern) or relative.startswith(pattern.rstrip("/") + "/") for pattern in exclude):
            outcomes.append(FileOutcome(relative, "skipped", "excluded by configuration"))
            continue
        try:
            data = path.read_bytes()
        except OSError as error:
            outcomes.append(FileOutcome(relative, "failed", f"unreadable: {error.strerror}"))
            continue
        if len(data) > MAX_FILE_BYTES:
            outcomes.append(FileOutcome(relative, "skipped", f"larger than {MAX_FILE_BYTES // 1024 // 1024} MiB"))
            continue
        try:
            text = _decode(data)
        except (UnicodeDecodeError, SyntaxError, LookupError) as error:
            outcomes.append(FileOutcome(relative, "failed", f"cannot decode: {error}"))
            continue
        if mention is None or not mention.search(text):
            outcomes.append(FileOutcome(relative, "skipped", "does not mention the upstream"))
            continue
        scan = _scan_file(relative, data, text, upstream_names, cache_dir)
        if isinstance(scan, str):
            outcomes.append(FileOutcome(relative, "failed", scan))
            continue
        outcomes.append(FileOutcome(relative, "scanned", use_sites=len(scan.sites)))
        scans.append(scan)
    return scans, outcomes


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
    """Source bytes to text, honouring a PEP 263 coding cookie."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)
