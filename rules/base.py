"""What a rule is: stable metadata, docs taken from its module docstring, and one pure check."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from types import ModuleType
from typing import TYPE_CHECKING, Any

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.reasons import Reason
from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.results import Applicability, Finding, FixKind, Location, Severity
from apidrift.auditor.downstream.shared import handles

if TYPE_CHECKING:
    from apidrift.auditor.check.checked import CheckedSite
    from apidrift.auditor.core.results import Finding, Fix
    from apidrift.auditor.core.sites import Span, UseSite

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix")


class Family(str, Enum):
    """A group of rules, named in ignores and re-gradings for all of them; each owns a code prefix
    (`rules.registry.FAMILIES`)."""

    NAMES = "names"  # imports and attributes
    CALLS = "calls"  # call signatures
    DRIFT = "drift"  # calls that still bind but mean something else
    RISK = "risk"  # uses that may break without notice
    INPUT = "input"  # downstream files that could not be checked


@dataclass(frozen=True)
class FixOffer:
    """A fix a rule can make, how applicable it is, and on what evidence (for `apidrift rules`)."""

    kind: FixKind
    applicability: Applicability
    when: str  # the evidence it rests on, or why it is unsafe

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "applicability": self.applicability.value, "when": self.when}


@dataclass(frozen=True)
class RuleMeta:
    """A rule's stable metadata, declared by its module as `RULE`."""

    code: RuleCode  # stable, never reused: "AD101"
    name: str  # kebab-case, reads after "allow": "unexpected-keyword"
    severity: Severity  # default severity
    family: Family  # usable in ignores for the whole family
    summary: str  # one line, for tables and SARIF shortDescription
    since: str  # apidrift version that introduced the rule
    # The builtin exception class a use this rule finds raises under CPython, where it is one class
    # (`ImportError` for a name a `from` import no longer finds): a `try` around the use handles it
    # only if a handler catches that class. None: any of the guarding exceptions handles it.
    raises: str | None = None
    # The fixes the rule can attach to its findings; a finding's fix is always one of these kinds.
    fixes: tuple[FixOffer, ...] = ()


@dataclass(frozen=True)
class Rule:
    code: RuleCode  # stable, never reused: "AD101"
    name: str  # kebab-case, reads after "allow": "unexpected-keyword"
    severity: Severity  # default severity
    summary: str  # one line, for tables and SARIF shortDescription
    family: Family  # usable in ignores for the whole family
    since: str  # apidrift version that introduced the rule
    check: Callable[[Rule, CheckedSite], Iterator[Finding]]
    docs: str  # markdown with the four DOC_SECTIONS
    raises: str | None = None  # what a failing use raises (see RuleMeta)
    fixes: tuple[FixOffer, ...] = ()  # the fixes it can make (see RuleMeta)

    def run(self, checked: CheckedSite) -> Iterator[Finding]:
        return self.check(self, checked)

    def finding(self, checked: CheckedSite, message: str, **details: Any) -> Finding:
        fix = details.get("fix")
        if fix is not None and (fix.kind, fix.applicability) not in {
            (o.kind, o.applicability) for o in self.fixes
        }:
            raise ValueError(
                f"{self.code} makes a {fix.applicability.value} {fix.kind.value} fix it does not declare"
            )
        return make_finding(self, checked, message, **details)

    def section(self, title: str) -> str:
        """The body of one `## title` section of the docs, or an empty string."""
        match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", self.docs, re.S | re.M)
        return match.group(1).strip() if match else ""


def rule_from_module(module: ModuleType) -> Rule:
    """Each rule module holds its `RULE` metadata, a `check` function and its docs as docstring."""
    meta = module.RULE
    if not isinstance(meta, RuleMeta):
        raise TypeError(f"{module.__name__}.RULE is not a RuleMeta")
    return Rule(
        code=meta.code,
        name=meta.name,
        severity=meta.severity,
        summary=meta.summary,
        family=meta.family,
        since=meta.since,
        check=module.check,
        docs=(module.__doc__ or "").strip(),
        raises=meta.raises,
        fixes=meta.fixes,
    )


_MISSING_NAME_RAISES = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError"})
_ATTRIBUTE_ERROR = frozenset({"AttributeError"})


def _imported_part(site: UseSite, symbol: str) -> bool:
    """Whether the missing `symbol` is what the import of the use's first name binds, or a module on
    its path (`try: from up.gone import f` then `f.a.b`: `up.gone` or `up.gone.f`, never `...f.a`)."""
    if not site.import_attrs:
        return True  # the bare name: whatever is missing of it, its import raised first
    ref = site.ref
    for _ in range(site.import_attrs):
        if not isinstance(ref, AttrRef):
            return False
        ref = ref.base
    if not isinstance(ref, (ModuleRef, AttrRef)):
        return False
    imported = ref.render()
    return imported == symbol or imported.startswith(symbol + ".")


def make_finding(
    rule: Rule,
    checked: CheckedSite,
    message: str,
    *,
    symbol: str,
    span: Span | None = None,
    hint: str | None = None,
    fix: Fix | None = None,
    raises: str | None = None,
    severity: Severity | None = None,
) -> Finding:
    """A finding at `span` (default: where CPython fails on the use, `UseSite.place`), with both
    versions' signatures when known; `severity` grades it below the rule's own (never above)."""
    where = span or checked.site.place
    new_target = checked.new.target
    old_target = checked.old.target if checked.old is not None else None
    severity = severity if severity is not None and severity.rank < rule.severity.rank else rule.severity
    unknown = checked.new.unknown
    if (
        unknown is not None
        and unknown.reason is Reason.STUB_SIGNATURE
        and severity.rank > Severity.WARNING.rank
    ):
        severity = Severity.WARNING  # a typing view: the runtime may accept the call
        message += " (by the stub: the runtime may accept it)"
    site = checked.site
    raised = raises or rule.raises
    guarded = (
        site.guarded
        or checked.new.test_guarded
        or handles(site.caught, raised)
        # a name its `try` imports, missing: the import raised ImportError first, which the `try` handles
        or (site.import_caught and raised in _MISSING_NAME_RAISES and _imported_part(site, symbol))
        # in a property getter: the class's `__getattr__` answers for the property instead
        or (checked.new.getattr_fallback and raised is not None and handles(_ATTRIBUTE_ERROR, raised))
    )
    if site.caught and not guarded and raised and severity.rank > Severity.INFO.rank:
        handlers = ", ".join(sorted(site.caught))
        caught = f"`except {handlers}:`" if len(site.caught) == 1 else f"`except ({handlers}):`"
        hint = f"{hint}; " if hint else ""
        hint += f"it raises `{raised}`, which the {caught} around it does not catch"
    if guarded:
        severity = Severity.INFO  # the downstream expects this may fail and handles it
        message += " (guarded: the code handles its absence)"
    return Finding(
        code=rule.code,
        rule=rule.name,
        severity=severity,
        message=message,
        location=Location(
            path=checked.path,
            line=where.line,
            column=where.column,
            end_line=where.end_line,
            end_column=where.end_column,
            source_line=checked.source_line(where.line),
        ),
        symbol=symbol,
        upstream=checked.upstream,
        new_signature=new_target.signature.render() if new_target else None,
        old_signature=old_target.signature.render() if old_target else None,
        hint=hint,
        fix=fix,
        guarded=guarded,
        **_context(checked, where, checked.site.span),
    )


CONTEXT_LINES = 2  # lines shown before and after a use in the HTML report
MAX_CONTEXT_LINES = 40


def _context(checked: CheckedSite, where: Span, use: Span) -> dict[str, Any]:
    """The whole use (every line of the call or import, and of the finding's span within it) with
    CONTEXT_LINES around it, bounded."""
    lines = checked.lines
    if not lines:
        return {}
    top, bottom = min(where.line, use.line), max(where.end_line, where.line, use.end_line)
    first = max(1, min(top, where.line) - CONTEXT_LINES)
    if where.line - first >= MAX_CONTEXT_LINES:  # a very long call: start near the finding
        first = max(1, where.line - CONTEXT_LINES)
    last = min(len(lines), bottom + CONTEXT_LINES, first + MAX_CONTEXT_LINES - 1)
    return {"context": tuple(line[:500] for line in lines[first - 1 : last]), "context_start": first}
