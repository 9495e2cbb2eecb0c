"""## What it does
Warns where a downstream module uses a name that nothing binds but a star import of a compiled
upstream module (`from pkg._native import *`), whose names cannot be read without running it.

## Why is this bad?
Whether the name still exists cannot be checked: if the compiled module stopped exporting it, the
use raises `NameError`, and no report will say so beforehand.

## Example
```python
from pkg._speedups import *

fast_encode(data)  # bound only if the extension module still exports it
```

## Fix
Import the name explicitly (`from pkg._speedups import fast_encode`), so that its absence fails at
import time with a clear message, or from the package's Python API.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.reasons import Reason
from apidrift.auditor.core.refs import StarRef
from apidrift.auditor.core.results import Finding, Severity
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.STAR_IMPORT_FROM_COMPILED,
    name="star-import-from-compiled",
    severity=Severity.WARNING,
    family=Family.RISK,
    summary="A name only a star import of a compiled module can provide",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    unknown = checked.new.unknown
    ref = checked.site.ref
    if unknown is None or unknown.reason is not Reason.STAR_IMPORT_COMPILED or not isinstance(ref, StarRef):
        return
    yield rule.finding(
        checked,
        f"`{ref.name}` is bound by nothing but `from {unknown.detail} import *`, a compiled module whose "
        f"names cannot be read ({checked.new.version})",
        symbol=f"{unknown.detail}.{ref.name}",
        hint=f"import it by name: from {unknown.detail} import {ref.name}",
    )
