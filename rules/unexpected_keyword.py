"""## What it does
Finds calls that pass a keyword argument the target version's signature does not accept (a removed
or renamed parameter), where the callee takes no `**kwargs`.

## Why is this bad?
The call raises `TypeError: got an unexpected keyword argument` when it runs; for a pydantic or
PEP 681 dataclass with extra fields forbidden, a validation error.

## Example
```python
get_kv_cache_config_from_groups(vllm_config=c, kv_cache_groups=g, kv_cache_specs=s, available_memory=m)
# vllm 0.16.0 removed `kv_cache_specs`
```

## Fix
Drop the keyword, or pass its value under the parameter's new name. Dropping it keeps the call's
meaning where it passes the old version's default for that parameter.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import ProblemKind
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    Applicability,
    Finding,
    Fix,
    FixKind,
    ManualStep,
    RemoveKeyword,
    RenameKeyword,
    Severity,
)
from apidrift.rules import _calls
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta
from apidrift.rules.missing_argument import _parameter

RULE = RuleMeta(
    code=RuleCode.UNEXPECTED_KEYWORD,
    name="unexpected-keyword",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call passes a keyword argument the callee no longer accepts",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.RENAME_KEYWORD,
            Applicability.SAFE,
            "the old version accepted both spellings (its own decorator passed the old keyword on as the new one, or its body handed a deprecated alias on: `if old is not None: warn(...); new = old`) and the renamed call binds",
        ),
        FixOffer(
            FixKind.REMOVE_KEYWORD,
            Applicability.SAFE,
            "the keyword passes a constant equal to the old version's default for it, and nothing wraps the old callee: the old call ran as one without it",
        ),
        FixOffer(
            FixKind.REMOVE_KEYWORD,
            Applicability.UNSAFE,
            "the parameter is gone: the value is no longer passed anywhere",
        ),
        FixOffer(
            FixKind.MANUAL,
            Applicability.MANUAL,
            "the parameter is gone and the call lacks one the new version requires: drop it and pass that one",
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    problem = _calls.problem(checked, ProblemKind.UNEXPECTED_KEYWORD)
    if problem is None:
        return
    for name in problem.names:
        yield rule.finding(
            checked,
            f"{_calls.display(checked)} got an unexpected keyword argument `{name}` in {checked.new.version}",
            symbol=_calls.callee(checked),
            span=_calls.keyword_place(checked, name),
            hint=_hint(checked, name, problem.detail),
            fix=_fix(checked, name),
        )


def _fix(checked: CheckedSite, name: str) -> Fix:
    call = checked.site.place
    where = (call.line, call.column)  # the call's own position: a missing argument there may be this keyword
    written = _calls.keyword_span(checked, name)
    at = (written.line, written.column) if written is not None else None
    proven = _calls.proven_rename(checked, name)
    if proven is not None:
        new_name, evidence = proven
        param = checked.new.target.signature.get(new_name) if checked.new.target else None
        return Fix(
            FixKind.RENAME_KEYWORD,
            Applicability.SAFE,
            f"rename `{name}=` to `{new_name}=`",
            # a positional-only parameter cannot take the renamed keyword
            RenameKeyword(name, new_name, where, param.kind if param is not None else None, at),
            evidence=evidence,
        )
    missing = _calls.problem(checked, ProblemKind.MISSING_ARGUMENT)
    target = checked.new.target
    if missing is not None and target is not None:
        # dropping the keyword leaves the call without a parameter the new version requires (rich 11.0
        # `Syntax(lexer_name=...)`, now `lexer` and required): no edit makes it run, a step says both

        names = [p.name for p in target.signature.parameters]
        return Fix(
            FixKind.MANUAL,
            Applicability.MANUAL,
            f"drop `{name}=` and pass {_calls.names(missing.names)} (required in {checked.new.version}) "
            f"to {_calls.display(checked)}",
            ManualStep(
                _calls.callee(checked),
                tuple(_parameter(checked, target.signature, names, n) for n in missing.names),
            ),
        )
    default = _calls.passes_old_default(checked, name)
    if default is not None:
        return Fix(
            FixKind.REMOVE_KEYWORD,
            Applicability.SAFE,
            f"drop `{name}=`: it passes the old default",
            RemoveKeyword(name, where, at),
            evidence=default,
        )
    return Fix(
        FixKind.REMOVE_KEYWORD,
        Applicability.UNSAFE,
        f"drop `{name}=`: its value is no longer passed anywhere",
        RemoveKeyword(name, where, at),
    )


def _hint(checked: CheckedSite, name: str, detail: str | None = None) -> str:
    if detail is not None:
        # taken into `**kwargs` and rejected further down, by a key check rather than a signature
        return f"remove `{name}=`: it goes through `**kwargs` to {detail}, and {checked.new.version} has none for `{name}`"
    proven = _calls.proven_rename(checked, name)
    if proven is not None:
        return f"pass `{proven[0]}=` instead: {proven[1]}"
    hint = f"remove `{name}=`: {checked.new.version} has no parameter of that name"
    guessed = _calls.added_where_removed(checked, name)
    if guessed is not None:
        # a guess, worded as one: never a rename, in any output
        hint += (
            f"; a parameter `{guessed[0]}` was added where `{name}` was ({guessed[1]}); "
            "they may differ in meaning"
        )
    remains = _calls.deprecated_member(checked, name)
    if remains:
        hint += f"; a deprecated `{name}` attribute remains on the class: “{remains}”"
    return hint
