"""Writing the fixed files: only into a local tree the user named (never a release from an index, an
installed distribution or apidrift's cache), in the encoding read, atomically, and only where the
file is still what was read.
"""

from __future__ import annotations

import io
import sysconfig
import tokenize
from pathlib import Path

from apidrift.auditor.downstream.notebook import NotebookError, bounded_json
from apidrift.auditor.files import atomic_write_bytes
from apidrift.auditor.fix.model import FileChange, FixError, FixResult
from apidrift.auditor.pysource import decode_source


def not_local_reason(origin: str, root: Path, cache_root: Path | None = None) -> str | None:
    """Why apidrift must not write into `root`, or None for a local source tree the user named."""
    if origin == "index":
        return "it is a release fetched from the package index"
    if origin == "installed":
        return "it is an installed distribution"
    if origin != "directory":
        return f"it is not a local source tree (origin {origin})"
    resolved = root.resolve()
    if cache_root is not None and _within(resolved, cache_root.resolve()):
        return f"it is inside apidrift's cache ({cache_root})"
    for key in ("purelib", "platlib"):
        site = sysconfig.get_paths().get(key)
        if site and _within(resolved, Path(site).resolve()):
            return f"it is inside this environment's installed packages ({site})"
    if any(part in ("site-packages", "dist-packages") for part in resolved.parts):
        return "it is inside a folder of installed packages"
    return None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def source_encoding(data: bytes) -> str:
    """The encoding to write a file back in: its PEP 263 cookie or BOM, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return "utf-8"
    return encoding


def write_changes(result: FixResult) -> list[Path]:
    """Write each changed file in place (atomically, mode kept); only into a local tree."""
    if not result.local:
        raise FixError(f"refusing to write: {result.not_local_reason or 'not a local source tree'}")
    root = result.root.resolve()
    targets = []
    for change in result.changes:  # every check first: a refusal writes nothing at all
        target = result.root / change.path
        if target.is_symlink() or not target.is_file() or not _within(target.resolve(), root):
            raise FixError(f"refusing to write {change.path}: it is not a file inside {result.root}")
        if _current_text(target, change) != change.before:
            raise FixError(f"{change.path} changed since it was read; nothing written, run again")
        targets.append((target, change.after.encode(change.encoding)))
    for target, data in targets:
        atomic_write_bytes(target, data, mode=target.stat().st_mode & 0o7777, suffix=".apidrift-fix")
    return [target for target, _ in targets]


def _current_text(target: Path, change: FileChange) -> str:
    data = target.read_bytes()
    if change.path.endswith(".ipynb"):
        try:
            return bounded_json(data)
        except NotebookError:
            return ""
    return decode_source(data)
