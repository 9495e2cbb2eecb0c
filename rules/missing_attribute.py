"""## What it does
Finds uses of an attribute of an upstream module or class (`module.name`, `Class.name`, including
calls such as `module.func(...)`) that the target version no longer defines.

## Why is this bad?
The access raises `AttributeError` when that line runs, which may be long after start-up.

## Example
```python
import vllm.utils
vllm.utils.removed_function()
```

## Fix
Use the attribute's replacement or its new location.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Applicability, Finding, FixKind, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules import _names
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MISSING_ATTRIBUTE,
    name="missing-attribute",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Attribute of an upstream module or class does not exist",
    since="0.1.0",
    raises="AttributeError",
    fixes=(
        *_names.RENAME_ATTRIBUTE_OFFERS,
        FixOffer(
            FixKind.REPLACE_NAME,
            Applicability.SAFE,
            "the upstream's own message names the replacement (a deprecation warning, a module __getattr__), it resolves where the name was and takes the same uses",
        ),
        FixOffer(
            FixKind.MANUAL,
            Applicability.MANUAL,
            "the upstream's own message says what to use instead, but not as a name shown to take the same uses: the step quotes it",
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    missing = _names.miss(checked)
    if missing is None or checked.site.kind is SiteKind.IMPORT or missing.owner_kind in ("instance", "star"):
        return
    kind = "module" if missing.owner_kind == "module" else "class"
    yield rule.finding(
        checked,
        f"{kind} `{missing.owner}` has no attribute `{missing.name}` in {checked.new.version}",
        symbol=_names.missing_path(missing),
        hint=_names.hint(checked, missing, f"`{missing.name}` was removed from `{missing.owner}`"),
        fix=_names.rename_fix(checked, missing)
        or _names.replacement_fix(checked, missing.name, None)
        or _names.message_step(checked, missing),
    )
