"""## What it does
Lists uses of the upstream's private names (a leading underscore, such as
`_get_kv_cache_groups_uniform_spec`), at info level, so that a reviewer sees which internals the
downstream leans on.

## Why is this bad?
Private names carry no compatibility promise: they change or vanish in any release.

## Example
```python
from vllm.v1.core.kv_cache_utils import _get_kv_cache_groups_uniform_spec
```

## Fix
Prefer a public API; where there is none, pin the upstream tightly and ask for one.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.PRIVATE_UPSTREAM_NAME,
    name="private-upstream-name",
    severity=Severity.INFO,
    family=Family.RISK,
    summary="Use of a private upstream name",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    ref = checked.site.ref
    if isinstance(ref, AttrRef):
        name, owner = ref.name, ref.base.render()
    elif isinstance(ref, ModuleRef):
        owner, _, name = ref.path.rpartition(".")
    else:
        return
    if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
        return
    if checked.site.kind is not SiteKind.IMPORT and f".{name}" not in checked.site.code:
        return  # listed where it is imported or written out, not at every later use of the import
    yield rule.finding(
        checked,
        f"uses the private upstream name `{name}` of `{owner}`",
        symbol=f"{owner}.{name}" if owner else name,
        hint="private names carry no compatibility promise: prefer a public API or pin the upstream",
        raises=_raised_if_gone(checked),
    )


def _raised_if_gone(checked: CheckedSite) -> str | None:
    """What the use raises once the name is gone: whether a `try` around it handles that."""
    site = checked.site
    if site.kind is SiteKind.IMPORT:
        return "ModuleNotFoundError" if isinstance(site.ref, ModuleRef) else "ImportError"
    return "AttributeError" if site.kind is SiteKind.ATTRIBUTE else None
