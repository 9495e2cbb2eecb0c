"""## What it does
Finds imports of upstream modules whose top level raises in the target version: a module that only
works with another distribution (`try: import pandas` / `except ImportError: raise ImportError("...
pip install "dask[dataframe]"")`) where the downstream's requirements provide neither that extra nor
the distribution, and a module kept only to raise (`raise ImportError("pkg.legacy was removed")`).
Quotes the upstream's message and names the extra.

Where the downstream requires other distributions besides the upstream, one of them may install the
missing one in turn (their own requirements are not read): the finding is then a warning.

## Why is this bad?
The import raises as soon as the importing module loads, so nothing in it runs. Installing the
downstream does not install what the module needs.

## Example
```python
import dask.dataframe as dd  # requirements: dask (without [dataframe]) and no pandas
# ImportError: Dask dataframe requirements are not installed. ... pip install "dask[dataframe]"
```

## Fix
Require the extra the message names (`dask[dataframe]`), or move to the replacement it names.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MODULE_RAISES_ON_IMPORT,
    name="module-raises-on-import",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Imported upstream module raises on import (needs an extra the downstream does not require)",
    since="0.1.0",
)

_MESSAGE_LENGTH = 300


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    fails = checked.new.import_fails
    if checked.site.kind is not SiteKind.IMPORT or fails is None:
        return
    exception = fails.exception.rsplit(".", 1)[-1]
    message = " ".join((fails.message or "").split())
    if len(message) > _MESSAGE_LENGTH:
        message = message[: _MESSAGE_LENGTH - 1] + "\u2026"
    said = f": {message!r}" if message else ""
    via = f" (through `{fails.through}`)" if fails.through and fails.through != fails.module else ""
    if fails.missing:
        needs = ", ".join(f"`{name}`" for name in fails.missing)
        provide = "do not provide"
        if fails.others:
            others = ", ".join(f"`{name}`" for name in fails.others[:3]) + (
                ", ..." if len(fails.others) > 3 else ""
            )
            provide = f"do not name (unless {others} installs it)"
        text = (
            f"importing `{fails.module}`{via} raises {exception} in {checked.new.version} unless {needs} is"
            f" installed, which the downstream's requirements {provide}{said} (`{fails.module}`, line {fails.line})"
        )
        hint = f"require `{checked.upstream}[{fails.extra}]`" if fails.extra else f"require {needs}"
    else:
        text = f"importing `{fails.module}`{via} always raises {exception} in {checked.new.version}{said} (`{fails.module}`, line {fails.line})"
        hint = "move to the replacement the message names" if message else "the module cannot be imported"
    finding = rule.finding(
        checked,
        text,
        symbol=fails.module,
        hint=hint,
        raises=exception if exception in ("ImportError", "ModuleNotFoundError", "RuntimeError") else None,
    )
    if fails.others and finding.severity.rank > Severity.WARNING.rank:
        # another requirement may install the distribution (requirements are read one level deep)
        finding = replace(finding, severity=Severity.WARNING)
    yield finding
