"""Plan an upgrade: audit a downstream against every upstream release from the version it was written
for to a target, and tell each finding's history.

`plan(request)` lists the upstream's releases on the index, audits the ends of the range with the
engine's `audit`, and bisects: where two audited releases have the same findings, the releases between
them are not audited (they are inferred, and the result says so); where they differ, the middle release
is audited, until every change of findings lies between two neighbouring releases. `every=True` audits
every release. Each audit reuses the caches (extracted releases, the downstream's scan, and the parsed
API of every module whose source did not change, keyed by its content), so the cost of a release grows
with what changed since its neighbour.

For each finding of the target release the history says: the release where it first appeared (the
first of the unbroken run that ends at the target), the release where its target was first deprecated
(the deprecation the engine reads, `@deprecated`/`warnings.warn`/`.. deprecated::`, on the callee or a
member named like the keyword; or a deprecation warning inside the callee that names the parameter), and
the migration window: the releases before the break that already accept the new way while the old one
still works (a new parameter present before it became required, a removed keyword optional before it
went, the new name of a renamed keyword or of a moved import already there). Releases between audited
ones are looked at for these questions by bisection too, assuming what is added stays until the break.

The package: `model` (the request, the result and its rows, events, histories and bisections),
`releases` (the upstream's releases on the index and the range picked from them), `walk` (`plan`:
the audits, the bisection between them), `history` (each finding's history: first appearance,
deprecation, migration window) and `audit_history` (`audit --history`: an audit's findings given
their history).
"""

from __future__ import annotations

from .audit_history import audit_history
from .model import (
    PLAN_SCHEMA_VERSION,
    Bisection,
    Event,
    History,
    PlanError,
    PlanRequest,
    PlanResult,
    Progress,
    ReleaseRow,
    finding_key,
)
from .walk import plan

__all__ = [
    "PLAN_SCHEMA_VERSION",
    "Bisection",
    "Event",
    "History",
    "PlanError",
    "PlanRequest",
    "PlanResult",
    "Progress",
    "ReleaseRow",
    "audit_history",
    "finding_key",
    "plan",
]
