"""Where a report's relative paths live on disk, for formats that must point into a repository.

Finding paths are relative to the downstream's *project root*: for a local folder the folder holding
its pyproject.toml (else the folder given), recorded as `InputInfo.root`; for a release, the release's
own top folder. Results without `root` (written by an older apidrift) are matched by looking for the
reported files under the folder given, its `src/` (or `lib/`, `python/`) sub-folder, or its parent.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from apidrift.auditor.core.results import AuditResult

_SUBROOTS = ("", "src", "lib", "python")


def source_root(result: AuditResult) -> Path | None:
    """The absolute folder the result's paths are relative to, for a local downstream; else None."""
    info = result.downstream
    if info.origin not in ("directory", "installed"):
        return None
    if info.root is not None:
        root = Path(info.root)
        return root if root.is_absolute() and root.is_dir() else None
    location = Path(info.location)
    if not location.is_absolute() or not location.is_dir():
        return None
    probes = [f.location.path for f in result.findings] + [f.path for f in result.files]
    if not probes:
        return location
    candidates = [location / sub if sub else location for sub in _SUBROOTS] + [location.parent]
    for candidate in candidates:
        if all((candidate / probe).is_file() for probe in probes[:20]):
            return candidate
    return None


def workspace_path(result: AuditResult, path: str, workspace: Path | None = None) -> str:
    """`path` relative to `workspace` (default: $GITHUB_WORKSPACE, else the current folder) when the
    downstream is a local folder inside it; otherwise `path` unchanged."""
    root = source_root(result)
    if root is None:
        return path
    if workspace is None:
        workspace = Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    try:
        prefix = root.resolve().relative_to(workspace.resolve())
    except ValueError:
        return path
    return PurePosixPath(prefix.as_posix(), path).as_posix() if prefix.parts else path
