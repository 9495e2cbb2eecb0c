"""## What it does
Finds imports of upstream modules that do not exist in the target version.

## Why is this bad?
`import pkg.gone` or `from pkg.gone import x` raises `ModuleNotFoundError` as soon as the importing
module loads, so nothing in it runs.

## Example
```python
from vllm.engine.old_module import helper  # vllm.engine.old_module was removed
```

## Fix
Import from the module's new location, or guard the import and fall back.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.rules import _names
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MISSING_MODULE,
    name="missing-module",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Imported upstream module does not exist",
    since="0.1.0",
    raises="ModuleNotFoundError",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    missing = _names.miss(checked)
    if missing is None or not _names.is_module_import(checked):
        return
    module = _names.missing_path(missing)
    yield rule.finding(
        checked,
        f"module `{module}` does not exist in {checked.new.version}",
        symbol=module,
        hint=_names.hint(
            checked,
            missing,
            f"`{module}` is no longer in the standard library of {checked.new.version} (typeshed's VERSIONS "
            f"ends its range before it): move to its replacement, or to a distribution that provides it"
            if checked.upstream == "python"
            else f"find where `{module}`'s contents moved in {checked.new.version}, or pin the old version",
        ),
    )
