"""apidrift: a static API-drift auditor for Python.

The public surface: `audit` runs the whole pipeline on an `AuditRequest` and returns an
`AuditResult`, which every renderer in `apidrift.reports` consumes.
"""

from __future__ import annotations

from apidrift.auditor.core.version import __version__ as __version__

__all__ = ["AuditRequest", "AuditResult", "Finding", "Severity", "audit"]


def __getattr__(name: str) -> object:
    # Lazy, so that `import apidrift` (and `apidrift rules`) does not load libcst and griffe.
    if name in ("audit", "AuditRequest"):
        # lazy: `import apidrift` does not load the pipeline (0.15 s) before `audit` is called
        from apidrift.auditor import engine

        return getattr(engine, name)
    if name in ("AuditResult", "Finding", "Severity"):
        # lazy: `import apidrift` does not load the pipeline (0.15 s) before `audit` is called
        from apidrift.auditor.core import results

        return getattr(results, name)
    raise AttributeError(f"module 'apidrift' has no attribute {name!r}")
