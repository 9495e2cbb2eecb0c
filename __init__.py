"""apidrift: a static API-drift auditor for Python.

The public surface: `audit` runs the whole pipeline on an `AuditRequest` and returns an
`AuditResult`, which every renderer in `apidrift.reports` consumes.
"""

from __future__ import annotations

__version__ = "0.1.0"
