"""## What it does
Finds calls that bind under both the old and the new version, but where a positional argument now
lands in a different parameter: parameters were reordered, or one was inserted before it. A
parameter renamed in place (same position, old name gone) is not a remap.

## Why is this bad?
Nothing raises: the value silently means something else, which is the hardest kind of break to
find by running the program.

## Example
```python
resize(img, 64)  # old: resize(img, size, scale=1.0); new: resize(img, scale=1.0, size=None)
```

## Fix
Pass the argument by keyword, under the parameter it was meant for.
"""

from __future__ import annotations

from collections.abc import Iterator
from difflib import SequenceMatcher

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Ok, bind
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Applicability, Finding, Fix, FixKind, Severity
from apidrift.auditor.core.signature import ParamKind, Signature
from apidrift.rules import _calls, _drift
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.POSITIONAL_ARGUMENT_REMAPPED,
    name="positional-argument-remapped",
    severity=Severity.ERROR,
    family=Family.DRIFT,
    summary="A positional argument now lands in a different parameter",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.POSITIONAL_TO_KEYWORD,
            Applicability.SAFE,
            "the old binding names the parameter each argument from the first remapped one on went to, the "
            "new version has a parameter of each name taking a keyword, and the converted call binds",
        ),
        FixOffer(FixKind.POSITIONAL_TO_KEYWORD, Applicability.SAFE, _calls.DROP_DEFAULT_OFFER_TEXT),
        FixOffer(FixKind.POSITIONAL_TO_KEYWORD, Applicability.UNSAFE, _calls.DROP_OFFER_TEXT),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    bound = _drift.both_bound(checked)
    if bound is None:
        return
    old_ok, new_ok, old_signature, new_signature = bound
    old_names = {p.name for p in old_signature.parameters}
    new_names = {p.name for p in new_signature.parameters}
    old_by_index = {index: name for index, name in old_ok.assignments if isinstance(index, int)}
    moves = []
    for index, new_name in new_ok.assignments:
        if not isinstance(index, int) or index not in old_by_index:
            continue
        old_name = old_by_index[index]
        if old_name == new_name:
            continue
        before = old_signature.get(old_name)
        if before is not None and before.kind is ParamKind.VAR_POSITIONAL:
            # `Column(*args, **kw)` -> `Column(__name_pos=None, __type_pos=None, *args, ...)`: the old
            # body read its meaning out of `args`, which the signature does not show: no change seen
            continue
        if _some_overload_keeps(checked, index, old_name):
            continue  # overloads: another that binds the call takes it as before (typeshed's renames)
        if (
            old_name not in new_names
            and new_name not in old_names
            and _renamed(old_signature, new_signature, old_name, new_name)
        ):
            continue  # renamed in place: the same parameter under a new name
        if new_name not in old_names and _renamed_keeping_alias(
            old_signature, new_signature, old_name, new_name
        ):
            continue
        if old_name not in new_names and _renamed_keeping_alias(
            new_signature, old_signature, new_name, old_name
        ):
            continue  # the same rename seen backwards (auditing against the older version)
        moves.append((index, old_name, new_name))
    if not moves:
        return
    described = "; ".join(f"argument {i + 1} went to `{old}`, now to `{new}`" for i, old, new in moves)
    yield rule.finding(
        checked,
        f"{_calls.display(checked)}: positional arguments land in other parameters in {checked.new.version} ({described})",
        symbol=_calls.callee(checked),
        hint="pass " + ", ".join(f"`{old}=` by keyword" for _, old, _ in moves) + " to keep the old meaning",
        fix=_fix(checked, min(index for index, _, _ in moves)),
    )


def _fix(checked: CheckedSite, first: int) -> Fix | None:
    converted = _calls.remap_conversion(checked, first)
    return _calls.keyword_fix(checked, converted)


def _some_overload_keeps(checked: CheckedSite, index: int, old_name: str) -> bool:
    """Whether one of the new version's overloads that bind the call puts argument `index` in the
    parameter it went to before: which overload describes the runtime is not known, so no remap is
    certain (`files(package=None)`, deprecated, beside `files(anchor=None)`)."""
    target, shape = checked.new.target, checked.site.shape
    if target is None or shape is None or not target.alternatives:
        return False
    for variant in target.alternatives:
        verdict = bind(shape, variant)
        if isinstance(verdict, Ok) and dict(verdict.assignments).get(index) == old_name:
            return True
    return False


def _renamed_keeping_alias(
    old_signature: Signature, new_signature: Signature, old_name: str, new_name: str
) -> bool:
    """Renamed in place with the old name kept only as a keyword-only alias (`reshape(a, newshape)` ->
    `reshape(a, /, shape=None, *, newshape=None)`, the old name deprecated): the name must say so
    (similar, or the same annotation); a parameter moved behind `*args` stays a remap."""
    before, after, alias = (
        old_signature.get(old_name),
        new_signature.get(new_name),
        new_signature.get(old_name),
    )
    if before is None or after is None or alias is None or alias.kind is not ParamKind.KEYWORD_ONLY:
        return False
    if after.kind not in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD):
        return False
    similar = SequenceMatcher(None, old_name, new_name).ratio() >= 0.6
    return similar or bool(before.annotation and before.annotation == after.annotation)


def _renamed(old_signature: Signature, new_signature: Signature, old_name: str, new_name: str) -> bool:
    """A parameter that took another's place is a rename when something besides the place says so: a
    similar name, the same annotation, or the same default (both required counts). Otherwise it is a
    new parameter, and the argument now means something else (`weighted=False` replaced by `nodes=None`)."""
    before, after = old_signature.get(old_name), new_signature.get(new_name)
    if before is None or after is None:
        return False
    if after.kind is ParamKind.VAR_POSITIONAL:
        return True  # folded into *args, which the body reads: not a new meaning we can see
    if before.required and not after.required:
        return True  # `secho(text)` -> `secho(message=None)`: the same first argument, now optional
    if SequenceMatcher(None, old_name, new_name).ratio() >= 0.6:
        return True
    if before.annotation and before.annotation == after.annotation:
        return True
    return before.has_default == after.has_default and before.default == after.default
