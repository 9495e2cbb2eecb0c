"""apidrift: a static API-drift auditor for Python.

The public surface: `audit` runs the whole pipeline on an `AuditRequest` and returns an
`AuditResult`, which every renderer in `apidrift.reports` consumes.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["AuditRequest", "AuditResult", "Finding", "Severity", "audit"]


def __getattr__(name: str) -> object:
    # Lazy, so that `import apidrift` (and `apidrift rules`) does not load libcst and griffe.
    if name in ("audit", "AuditRequest"):
        from apidrift.auditor import engine

        return getattr(engine, name)
    if name in ("AuditResult", "Finding", "Severity"):
        from apidrift.auditor import results

        return getattr(results, name)
    raise AttributeError(f"module 'apidrift' has no attribute {name!r}")
