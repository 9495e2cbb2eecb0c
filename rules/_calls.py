"""Shared helpers of the call rules: the problem of one kind in a call's verdict, and how to say it."""

from __future__ import annotations

import ast
from difflib import SequenceMatcher

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Break, CallShape, Ok, Problem, ProblemKind
from apidrift.auditor.core.results import Applicability, Fix, FixKind, PositionalToKeyword
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.core.sites import SiteKind, Span
from apidrift.auditor.upstream.callables import bind_target
from apidrift.auditor.upstream.model import FunctionInfo
from apidrift.auditor.upstream.resolve import ClassValue, FunctionValue


def problem(checked: CheckedSite, kind: ProblemKind) -> Problem | None:
    verdict = checked.new.verdict
    if checked.site.kind is not SiteKind.CALL or not isinstance(verdict, Break):
        return None
    found = next((p for p in verdict.problems if p.kind is kind), None)
    forwarded = checked.site.forwarded
    if (forwarded or checked.site.through_init) and found is not None:
        # Through a forwarding `__init__`: only the keywords this call hands on are its own problem,
        # and a parameter the upstream requires that neither the call nor the `super()` call passes
        # (one the call could pass by keyword: not positional-only).
        if kind is ProblemKind.MISSING_ARGUMENT:
            target = checked.new.target
            keyword_able = {
                p.name
                for p in (target.signature.parameters if target else ())
                if p.kind is not ParamKind.POSITIONAL_ONLY
            }
            names = tuple(n for n in found.names if n in keyword_able)
        elif kind is ProblemKind.UNEXPECTED_KEYWORD:
            names = tuple(n for n in found.names if n in forwarded)
        else:
            return None
        if not names:
            return None
        found = Problem(kind, names, detail=found.detail)
    return found


def callee(checked: CheckedSite) -> str:
    target = checked.new.target
    return target.defined_at if target else checked.site.ref.render()


def display(checked: CheckedSite) -> str:
    """`Scheduler()`: how the callee reads in a message."""
    target = checked.new.target
    path = target.description.split(" ")[0] if target else checked.site.ref.render()
    return f"{path.rsplit('.', 1)[-1] if '.' in path else path}()"


def keyword_span(checked: CheckedSite, name: str) -> Span | None:
    return next((span for keyword, span in checked.site.keyword_spans if keyword == name), None)


def keyword_place(checked: CheckedSite, name: str) -> Span | None:
    """Where a finding about keyword `name` goes: the keyword, when it is written on the line where
    CPython raises the call's TypeError (`UseSite.place`: where the call starts, or its method's name);
    else None, the call's place (a keyword on a later line of a multi-line call is no line CPython names)."""
    span = keyword_span(checked, name)
    return span if span is not None and span.line == checked.site.place.line else None


def names(items: tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in items)


def added_where_removed(checked: CheckedSite, name: str) -> tuple[str, str] | None:
    """A parameter absent from the old signature that now stands where `name` stood, with the old
    one's annotation or a similar name: (its name, why it is paired). A guess, never evidence: the
    two may differ in meaning (click 8.2.0 put `catch_exceptions` where `mix_stderr` was)."""
    old, new = checked.old, checked.new
    if old is None or old.target is None or new.target is None:
        return None
    old_params, new_params = old.target.signature.parameters, new.target.signature.parameters
    old_names = {p.name for p in old_params}
    position = next((i for i, p in enumerate(old_params) if p.name == name), None)
    if position is None or position >= len(new_params):
        return None
    before, after = old_params[position], new_params[position]
    if after.name in old_names or (after.kind is not before.kind and "var" in after.kind.value):
        return None
    if before.annotation and before.annotation == after.annotation:
        return after.name, f"same position, same annotation `{after.annotation}`"
    similarity = SequenceMatcher(None, before.name, after.name).ratio()
    if similarity >= 0.6:
        return after.name, f"same position, similar name ({similarity:.0%} alike)"
    return None


def proven_rename(checked: CheckedSite, name: str) -> tuple[str, str] | None:
    """The parameter the upstream itself says `name=` became, and the evidence: the old version
    accepted both spellings for one parameter (a decorator of its own passing `name=` on as the new
    keyword, matplotlib's `rename_parameter`), and the call, renamed, binds the new signature."""
    old, new = checked.old, checked.new
    if old is None or old.target is None or new.target is None or checked.site.shape is None:
        return None
    renamed = dict(old.target.renamed_keywords)
    target = renamed.get(name)
    how = f"its decorator passes `{name}=` on as `{target}=`"
    if target is None:
        target = dict(new.keyword_aliases).get(name)
        how = f"its body hands `{name}` to `{target}` (`{target} = {name}`)"
    if target is None or new.target.signature.get(target) is None:
        return None
    shape = checked.site.shape
    if target in shape.keywords:
        return None
    keywords = tuple(target if k == name else k for k in shape.keywords)

    verdict = bind_target(
        CallShape(shape.positional, keywords, shape.star_args, shape.star_kwargs, shape.values), new.target
    )
    if not isinstance(verdict, Ok):
        return None
    evidence = (
        f"{old.version} accepts both spellings: {how}"
        f" ({old.target.defined_at}), and the renamed call binds {new.version}'s signature"
    )
    return target, evidence


def deprecated_member(checked: CheckedSite, name: str) -> str | None:
    """For a constructor call: the deprecation message of a class member named like the keyword."""
    value = checked.new.resolution
    members = getattr(getattr(value, "info", None), "members", None)
    if not isinstance(members, dict) or name not in members:
        return None
    return getattr(members[name], "deprecated", None)


def keyword_conversion(checked: CheckedSite) -> tuple[tuple[tuple[int, str], ...], str] | None:
    """The positional arguments of a call that the new version takes by keyword only, each with the
    parameter the old version bound it to, and the evidence: the old binding names the parameter, the
    new signature has it, keyword-only, and the converted call binds the new signature."""
    old, new, shape = checked.old, checked.new, checked.site.shape
    if (
        old is None
        or shape is None
        or shape.star_args
        or not isinstance(old.verdict, Ok)
        or new.target is None
        or checked.site.forwarded
        or checked.site.through_init
    ):
        return None
    by_position = {key: name for key, name in old.verdict.assignments if isinstance(key, int)}
    signature = new.target.signature
    accepted = sum(
        1
        for p in signature.parameters
        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    )
    if shape.positional <= accepted or any(p.kind is ParamKind.VAR_POSITIONAL for p in signature.parameters):
        return None
    moved: list[tuple[int, str]] = []
    for index in range(accepted, shape.positional):
        name = by_position.get(index)
        param = signature.get(name) if name is not None else None
        if (
            name is None
            or param is None
            or param.kind is not ParamKind.KEYWORD_ONLY
            or name in shape.keywords
        ):
            return None
        moved.append((index, name))
    if len({name for _, name in moved}) != len(moved):
        return None
    converted = CallShape(
        accepted, (*shape.keywords, *(name for _, name in moved)), shape.star_args, shape.star_kwargs
    )

    if not isinstance(bind_target(converted, new.target), Ok):
        return None
    names_text = ", ".join(f"argument {index + 1} to `{name}`" for index, name in moved)
    evidence = (
        f"{old.version} bound {names_text}; {new.version} takes "
        f"{'it' if len(moved) == 1 else 'them'} by keyword only, and the converted call binds its signature"
    )
    return tuple(moved), evidence


def remap_conversion(checked: CheckedSite, first: int) -> tuple[tuple[tuple[int, str], ...], str] | None:
    """For a call whose positional argument `first` (0-based) now lands in another parameter: every
    positional argument from `first` on, passed by keyword under the parameter the old version bound
    it to (a keyword cannot precede a positional argument), and the evidence: the old binding names
    each parameter, the new signature has a parameter of that name taking a keyword, and the
    converted call binds the new signature with each argument in its old parameter."""
    old, new, shape = checked.old, checked.new, checked.site.shape
    if (
        old is None
        or shape is None
        or shape.star_args
        or not isinstance(old.verdict, Ok)
        or new.target is None
        or checked.site.forwarded
        or checked.site.through_init
        or not 0 <= first < shape.positional
    ):
        return None
    by_position = {key: name for key, name in old.verdict.assignments if isinstance(key, int)}
    signature = new.target.signature
    moved: list[tuple[int, str]] = []
    for index in range(first, shape.positional):
        name = by_position.get(index)
        param = signature.get(name) if name is not None else None
        if (
            name is None
            or param is None
            or param.kind not in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)
            or name in shape.keywords
        ):
            return None
        moved.append((index, name))
    if len({name for _, name in moved}) != len(moved):
        return None
    converted = CallShape(
        first, (*shape.keywords, *(name for _, name in moved)), shape.star_args, shape.star_kwargs
    )

    verdict = bind_target(converted, new.target)
    if not isinstance(verdict, Ok):
        return None
    bound = dict(verdict.assignments)
    if any(bound.get(name) != name for _, name in moved):
        return None  # a keyword the new signature takes under another parameter (**kwargs): not proven
    names_text = ", ".join(f"argument {index + 1} to `{name}`" for index, name in moved)
    evidence = (
        f"{old.version} bound {names_text}; {new.version} has "
        f"{'a parameter of that name' if len(moved) == 1 else 'parameters of those names'} taking a keyword, "
        "and the converted call binds its signature"
    )
    return tuple(moved), evidence


def first_moved_position(checked: CheckedSite) -> int | None:
    """The first positional argument of the call that the new version's signature puts in another
    parameter than the old version's binding did (by position among its positional parameters)."""
    old, new, shape = checked.old, checked.new, checked.site.shape
    if old is None or shape is None or not isinstance(old.verdict, Ok) or new.target is None:
        return None
    by_position = {key: name for key, name in old.verdict.assignments if isinstance(key, int)}
    positional = [
        p.name
        for p in new.target.signature.parameters
        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    ]
    for index in range(shape.positional):
        name = by_position.get(index)
        if name is None:
            return None
        if index >= len(positional) or positional[index] != name:
            return index
    return None


def drop_conversion(
    checked: CheckedSite,
) -> tuple[tuple[tuple[int, str], ...], tuple[tuple[int, str], ...], str] | None:
    """For a call some of whose positional arguments went to parameters the new version no longer
    has: those arguments dropped, and every other positional argument from the first one the new
    signature places elsewhere passed by keyword under the parameter the old version bound it to (a
    keyword cannot precede a positional argument). Returns (converted, dropped, evidence) when the old
    binding names every parameter, each dropped one is gone from the new signature, each kept one is
    there taking a keyword, and the converted call binds the new signature with each argument in its
    old parameter. The value of a dropped argument is lost: an unsafe fix."""
    old, new, shape = checked.old, checked.new, checked.site.shape
    if (
        old is None
        or shape is None
        or shape.star_args
        or not isinstance(old.verdict, Ok)
        or new.target is None
        or checked.site.forwarded
        or checked.site.through_init
    ):
        return None
    first = first_moved_position(checked)
    if first is None:
        return None
    by_position = {key: name for key, name in old.verdict.assignments if isinstance(key, int)}
    signature = new.target.signature
    if any(p.kind is ParamKind.VAR_KEYWORD for p in signature.parameters):
        return None  # the new version may still read a dropped name out of **kwargs
    kept: list[tuple[int, str]] = []
    dropped: list[tuple[int, str]] = []
    for index in range(first, shape.positional):
        name = by_position.get(index)
        if name is None or name in shape.keywords:
            return None
        before = old.target.signature.get(name) if old.target is not None else None
        if before is None or before.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
            return None
        param = signature.get(name)
        if param is None:
            dropped.append((index, name))
        elif param.kind in (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY):
            kept.append((index, name))
        else:
            return None
    if not dropped or len({name for _, name in kept}) != len(kept):
        return None
    # A keyword the new version rejects is its own finding with its own fix (AD101): the conversion is
    # checked on the call without it, as the fixes leave it together.
    rejected = {
        n
        for p in (new.verdict.problems if isinstance(new.verdict, Break) else ())
        if p.kind is ProblemKind.UNEXPECTED_KEYWORD
        for n in p.names
    }
    keywords = tuple(k for k in shape.keywords if k not in rejected)
    converted = CallShape(first, (*keywords, *(name for _, name in kept)), shape.star_args, shape.star_kwargs)

    verdict = bind_target(converted, new.target)
    if not isinstance(verdict, Ok):
        return None
    bound = dict(verdict.assignments)
    if any(bound.get(name) != name for _, name in kept):
        return None
    gone = ", ".join(f"argument {index + 1} to `{name}`" for index, name in dropped)
    evidence = f"{old.version} bound {gone}; {new.version} has no parameter of that name"
    if kept:
        evidence += "; " + ", ".join(f"argument {index + 1} keeps `{name}`" for index, name in kept)
    evidence += ", and the converted call binds its signature"
    if rejected & set(shape.keywords):
        gone_too = tuple(f"{k}=" for k in shape.keywords if k in rejected)
        evidence += (
            f" once {names(gone_too)} {'is' if len(gone_too) == 1 else 'are'} dropped (a fix of its own)"
        )
    return tuple(kept), tuple(dropped), evidence


def keyword_fix(
    checked: CheckedSite, converted: tuple[tuple[tuple[int, str], ...], str] | None
) -> Fix | None:
    """The safe fix passing positional arguments by keyword (`converted`: the arguments with their
    parameters, and the evidence), else the unsafe fix of `drop_conversion`, or None."""
    if converted is None:
        return drop_fix(checked)
    arguments, evidence = converted
    call = checked.site.span
    return Fix(
        FixKind.POSITIONAL_TO_KEYWORD,
        Applicability.SAFE,
        "pass " + ", ".join(f"argument {i + 1} as `{name}=`" for i, name in arguments),
        PositionalToKeyword((call.line, call.column), arguments),
        evidence=evidence,
    )


def drop_fix(checked: CheckedSite) -> Fix | None:
    """The unsafe fix of `drop_conversion`, or None."""
    converted = drop_conversion(checked)
    if converted is None:
        return None
    kept, dropped, evidence = converted
    call = checked.site.span
    said = [f"drop argument {i + 1} (it went to `{name}`, which is gone)" for i, name in dropped]
    said += [f"pass argument {i + 1} as `{name}=`" for i, name in kept]
    defaults = [passes_old_default(checked, index) for index, _ in dropped]
    safe = all(d is not None for d in defaults)
    if safe:
        evidence += "; " + "; ".join(d for d in defaults if d is not None)
    return Fix(
        FixKind.POSITIONAL_TO_KEYWORD,
        Applicability.SAFE if safe else Applicability.UNSAFE,
        "; ".join(said),
        PositionalToKeyword((call.line, call.column), kept, dropped),
        evidence=evidence,
    )


DROP_DEFAULT_OFFER_TEXT = (
    "each argument whose parameter is gone is a constant equal to the old version's default for it and "
    "nothing wraps the old callee (the old call ran as one without them): they are dropped, the other "
    "arguments from the first moved one on keep their old parameters by keyword, and the converted call binds"
)
DROP_OFFER_TEXT = (
    "the old binding names the parameter each dropped argument went to and the new version has none of "
    "that name (its value is lost); the other arguments from the first moved one on keep their old "
    "parameters by keyword, and the converted call binds"
)


_TRANSPARENT_METACLASSES = (None, "builtins.type", "abc.ABCMeta")
# Decorators that hand the call to the def's body as it was made (the def itself, or a descriptor of it)
_HANDS_ON = frozenset(
    {
        "builtins.staticmethod",
        "builtins.classmethod",
        "abc.abstractmethod",
        "typing.final",
        "typing_extensions.final",
        "typing.override",
        "typing_extensions.override",
        "typing.no_type_check",
    }
)


def passes_old_default(checked: CheckedSite, key: int | str) -> str | None:
    """Why the argument `key` (a position, or a keyword's name) changes nothing in the old version: it
    is a plain constant equal to the default of the parameter the old binding gave it (`skiprows=0`
    where numpy 1.9.3 has `skiprows=0`), and the old callee is an undecorated function (or a class
    of no base but `object` with its own undecorated `__init__`, no `__new__`, decorator or metaclass), so
    nothing between the call and the body can tell the argument from its absence. Dropping it then
    keeps the old call's meaning. None unless all of that is shown."""
    old, shape = checked.old, checked.site.shape
    if (
        old is None
        or shape is None
        or not shape.literals
        or checked.site.forwarded
        or checked.site.through_init
    ):
        return None
    target, verdict = old.target, old.verdict
    if target is None or not isinstance(verdict, Ok):
        return None
    if (
        target.alternatives
        or target.requires_also
        or target.typing_view
        or target.runtime_decorated
        or target.renamed_keywords
        or target.shims
    ):
        return None
    if not _undecorated(old.resolution):
        return None
    if isinstance(key, int):
        index = key if key < shape.positional else -1
    else:
        index = shape.positional + shape.keywords.index(key) if key in shape.keywords else -1
    if not 0 <= index < len(shape.literals) or not shape.literals[index]:
        return None
    param_name = dict(verdict.assignments).get(key)
    param = target.signature.get(param_name) if param_name is not None else None
    if (
        param is None
        or not param.has_default
        or param.default is None
        or param.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
    ):
        return None
    written = shape.literals[index]
    try:
        default = ast.literal_eval(param.default)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if default is Ellipsis or repr(default) != written:
        return None
    passed = f"`{key}={written}`" if isinstance(key, str) else f"`{written}` as argument {key + 1}"
    return (
        f"the call passes {passed}, {old.version}'s default for `{param.name}` "
        f"(`{param.name}={param.default}` in `{target.defined_at}`, which no decorator wraps): "
        "the old call ran as one without it"
    )


def _undecorated(resolution: object) -> bool:
    """Whether a callee is a plain function, or a class of no base but `object` whose own `__init__`
    is: nothing but its body sees how it was called."""
    if isinstance(resolution, FunctionValue):
        return all(d.path in _HANDS_ON for d in resolution.info.decorators)
    if isinstance(resolution, ClassValue):
        # no base but `object`: no inherited `__new__` (one taking `*args, **kwargs` is not among the
        # targets a call must bind) nor inherited metaclass sees the arguments before `__init__`
        info = resolution.info
        init = info.members.get("__init__")
        return (
            not info.decorators
            and not info.source_decorators
            and info.metaclass in _TRANSPARENT_METACLASSES
            and not info.class_keywords
            and set(info.bases) <= {"builtins.object", "object"}
            and "__new__" not in info.members
            and isinstance(init, FunctionInfo)
            and all(d.path in _HANDS_ON for d in init.decorators)
        )
    return False
