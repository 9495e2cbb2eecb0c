"""Bind a call's shape to a signature as CPython's `inspect.Signature.bind` does: Ok, Break or Unknown."""

from __future__ import annotations

import inspect
import keyword
from dataclasses import dataclass
from enum import Enum
from typing import Union

from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature

_PO = ParamKind.POSITIONAL_ONLY
_PK = ParamKind.POSITIONAL_OR_KEYWORD
_VP = ParamKind.VAR_POSITIONAL
_KO = ParamKind.KEYWORD_ONLY
_VK = ParamKind.VAR_KEYWORD
_KIND_ORDER = {_PO: 0, _PK: 1, _VP: 2, _KO: 3, _VK: 4}


@dataclass(frozen=True)
class CallShape:
    positional: int  # plain positional arguments written at the call (not counting *-unpackings)
    keywords: tuple[str, ...]  # explicit keyword argument names, in call order
    star_args: bool = False  # the call has at least one `*iterable`
    star_kwargs: bool = False  # the call has at least one `**mapping`
    # What each explicit argument is, one letter per plain positional argument then per keyword, in
    # call order: "n" the literal None, "l" another literal (a constant or a display: a value of a
    # builtin type made at the call), "?" anything else; "" when not recorded.
    values: str = ""
    # The same arguments' values where each is a plain immutable constant (None, a bool, a number, a
    # string or bytes, or a negated number), as `repr` spells it; "" for any other argument; () when
    # not recorded. What makes a dropped argument provably the old default (see rules/_calls.py).
    literals: tuple[str, ...] = ()

    def render(self) -> str:
        """`(<2 positional>, *..., a=..., **...)`: the call as Python orders it, values elided."""
        parts: list[str] = []
        if self.positional:
            parts.append(f"<{self.positional} positional>")
        if self.star_args:
            parts.append("*...")
        parts.extend(f"{name}=..." for name in self.keywords)
        if self.star_kwargs:
            parts.append("**...")
        return "(" + ", ".join(parts) + ")"


class ProblemKind(str, Enum):
    MISSING_ARGUMENT = "missing-argument"
    UNEXPECTED_KEYWORD = "unexpected-keyword"
    TOO_MANY_POSITIONAL = "too-many-positional"
    POSITIONAL_ONLY_AS_KEYWORD = "positional-only-as-keyword"
    MULTIPLE_VALUES = "multiple-values"


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    # missing: the missing required parameters (signature order); unexpected: the keywords (call order);
    # positional-only-as-keyword: those keywords (signature order); multiple-values: those parameters;
    # too-many-positional: ().
    names: tuple[str, ...] = ()
    given: int | None = None  # too-many-positional: positional arguments given (with `*`: the plain ones)
    accepted: int | None = None  # too-many-positional: the most positional arguments the signature takes
    detail: str | None = None  # unexpected: where the keyword is rejected when not by a signature


@dataclass(frozen=True)
class Ok:
    # Each explicit argument -> the parameter it lands in: a positional index (0-based, among the plain
    # positional arguments) -> its parameter or the *args parameter; a keyword -> its parameter or the
    # **kwargs parameter. With `*`/`**` at the call, only the arguments whose parameter is certain.
    assignments: tuple[tuple[int | str, str], ...]


@dataclass(frozen=True)
class Break:
    # Every problem of the call; problems[0] is the one inspect raises. With `*`/`**` at the call: the
    # problems certain whatever the unpackings hold, in the order inspect would meet them.
    problems: tuple[Problem, ...]


Verdict = Union[Ok, Break, Unknown]


class _Flavor(Enum):
    """How the running `inspect` treats a keyword naming a positional-only parameter not filled positionally.

    The other rules of `Signature.bind` are the same in 3.10-3.14; this one changed twice, in patch releases.
    """

    LEGACY = "legacy"  # always "'a' parameter is positional only, but was passed as a keyword"
    # gh-103404 (3.13, backported to 3.12): the binding loop skips such a parameter and leaves the keyword
    # for **kwargs (an error only when there is none), even a required parameter, which is then never
    # reported missing; and a positional-only parameter after a defaulted one that was not given is
    # simply bound by keyword.
    DEFERRED = "deferred"
    # gh-130192 (3.14, backported): as DEFERRED, but a skipped required parameter is reported missing.
    FIXED = "fixed"


def _probe_flavor() -> _Flavor:
    # Probing beats parsing version numbers: both changes landed in patch releases of several branches.
    def binds(params: list[inspect.Parameter], **kwargs: object) -> bool:
        try:
            inspect.Signature(params).bind(**kwargs)
        except TypeError:
            return False
        return True

    var_kw = inspect.Parameter("kw", inspect.Parameter.VAR_KEYWORD)
    optional = inspect.Parameter("a", inspect.Parameter.POSITIONAL_ONLY, default=None)
    required = inspect.Parameter("a", inspect.Parameter.POSITIONAL_ONLY)
    if not binds([optional, var_kw], a=1):
        return _Flavor.LEGACY
    return _Flavor.DEFERRED if binds([required, var_kw], a=1) else _Flavor.FIXED


_FLAVOR = _probe_flavor()

# An atom is one problem about one name (None for too-many-positional), in the order inspect meets it.
_Atom = tuple[ProblemKind, str | None]


# The verdict is a function of the call's shape (not of its argument values) and of the parameters'
# names, kinds and defaults' presence: one call shape meets the same signature thousands of times in
# a large downstream (pandas against numpy: 235,000 bindings, about 9,000 distinct). Verdicts are frozen.
_MEMO: dict[tuple[object, ...], Verdict] = {}
MAX_MEMO = 100_000  # entries kept; then the memo starts again


class _Parameters:
    """A signature's parameters as the memo's key, their hash computed once: hashing the tuple (each
    `Parameter`'s fields) at every one of the 235,000 bindings took 0.3 to 0.5 s of pandas' warm run.
    Equal as the tuples are; made again, hash and all, when unpickled."""

    __slots__ = ("hash", "parameters")

    def __init__(self, parameters: tuple[Parameter, ...]) -> None:
        self.parameters = parameters
        self.hash = hash(parameters)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return other is self or (
            isinstance(other, _Parameters) and self.hash == other.hash and self.parameters == other.parameters
        )

    def __reduce__(self) -> tuple[type[_Parameters], tuple[tuple[Parameter, ...]]]:
        return _Parameters, (self.parameters,)


# One key per distinct parameter list, so that the memo's lookups meet the same object (compared by
# identity, not field by field); cleared with the memo's bound.
_KEYS: dict[_Parameters, _Parameters] = {}


def _memo_parameters(signature: Signature) -> _Parameters:
    found = signature.__dict__.get("_memo_parameters")
    if found is None:
        made = _Parameters(signature.parameters)
        found = _KEYS.get(made)
        if found is None:
            if len(_KEYS) >= MAX_MEMO:
                _KEYS.clear()
            found = _KEYS[made] = made
        signature.__dict__["_memo_parameters"] = found  # not a field: equality and hashing ignore it
    return found


def bind(shape: CallShape, signature: Signature) -> Verdict:
    """Bind `shape` to `signature` exactly as `inspect.Signature.bind` of the running Python would."""
    key = (shape.positional, shape.keywords, shape.star_args, shape.star_kwargs, _memo_parameters(signature))
    verdict = _MEMO.get(key)
    if verdict is None:
        if len(_MEMO) >= MAX_MEMO:
            _MEMO.clear()
        verdict = _MEMO[key] = _bind(shape, signature, _FLAVOR)
    return verdict


def _bind(shape: CallShape, signature: Signature, flavor: _Flavor) -> Verdict:
    params = signature.parameters
    if not _valid_signature(params):
        return Unknown(Reason.INVALID_SIGNATURE)
    if shape.positional < 0 or len(set(shape.keywords)) != len(shape.keywords):
        return Unknown(
            Reason.INVALID_CALL
        )  # a repeated keyword is a SyntaxError: no real call has this shape
    if not (shape.star_args or shape.star_kwargs):
        atoms, assignments = _simulate(params, shape.positional, shape.keywords, flavor)
        if atoms:
            return Break(_group(atoms, shape.positional, params))
        return Ok(_ordered(assignments, shape.keywords))
    atoms = _certain_atoms(params, shape, flavor)
    if atoms:
        return Break(_group(atoms, shape.positional, params))
    certain = _certain_assignments(params, shape)
    if certain is not None:
        return Ok(_ordered(certain, shape.keywords))
    return Unknown(Reason.STAR_ARGUMENTS)


def _valid_signature(params: tuple[Parameter, ...]) -> bool:
    """What `inspect.Signature(...)` accepts, which is what a `def` can produce."""
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        return False
    if any(not name.isidentifier() or keyword.iskeyword(name) for name in names):
        return False
    kinds = [_KIND_ORDER[p.kind] for p in params]
    if kinds != sorted(kinds) or kinds.count(_KIND_ORDER[_VP]) > 1 or kinds.count(_KIND_ORDER[_VK]) > 1:
        return False
    if any(p.has_default and p.kind in (_VP, _VK) for p in params):
        return False
    positional = [p for p in params if p.kind in (_PO, _PK)]
    first_default = next((i for i, p in enumerate(positional) if p.has_default), len(positional))
    return all(p.has_default for p in positional[first_default:])


def _simulate(
    params: tuple[Parameter, ...], given: int, keywords: tuple[str, ...], flavor: _Flavor
) -> tuple[list[_Atom], list[tuple[int | str, str]]]:
    """Run inspect's `_bind` on a concrete call, but note each error and carry on instead of raising.

    The first atom is the error inspect raises; the later ones are what the call would hit next.
    """
    atoms: list[_Atom] = []
    assignments: list[tuple[int | str, str]] = []
    pending = dict.fromkeys(keywords)  # keywords not consumed yet; a dict keeps the call order
    var_kw = next((p.name for p in params if p.kind is _VK), None)

    # Phase 1: positional arguments fill parameters in order.
    rest = 0  # index of the first parameter left for the keyword phases
    for index in range(given):
        param = params[index] if index < len(params) else None
        if param is None or param.kind in (_KO, _VK):
            atoms.append((ProblemKind.TOO_MANY_POSITIONAL, None))
            rest = index
            break
        if param.kind is _VP:
            assignments.extend((i, param.name) for i in range(index, given))
            rest = index + 1
            break
        # A keyword naming a positional-only parameter is not a second value: it stays for **kwargs.
        if param.kind is not _PO and param.name in pending:
            atoms.append((ProblemKind.MULTIPLE_VALUES, param.name))
            del pending[param.name]  # reported; not also an unexpected keyword
        assignments.append((index, param.name))
    else:
        rest = given
    remaining = params[rest:]

    # Phase 2 (DEFERRED/FIXED only): at the end of the positional arguments, positional-only parameters
    # named by a keyword are skipped and the keyword is left in kwargs. Only phase 1 can leave
    # positional-only parameters in `remaining`, and only by running out of arguments.
    skipped: list[str] = []
    if flavor is not _Flavor.LEGACY:
        while remaining and remaining[0].kind is _PO and remaining[0].name in pending:
            param = remaining[0]
            if flavor is _Flavor.FIXED and not param.has_default:
                atoms.append((ProblemKind.MISSING_ARGUMENT, param.name))
                del pending[param.name]
            else:
                skipped.append(param.name)
            remaining = remaining[1:]

    # Phase 3: every parameter left takes its keyword, its default, or is missing.
    for param in remaining:
        if param.kind in (_VP, _VK):
            continue
        if param.name in pending:
            del pending[param.name]
            if param.kind is _PO and flavor is _Flavor.LEGACY:
                atoms.append((ProblemKind.POSITIONAL_ONLY_AS_KEYWORD, param.name))
            else:
                assignments.append((param.name, param.name))  # DEFERRED/FIXED bind even positional-only here
        elif not param.has_default:
            atoms.append((ProblemKind.MISSING_ARGUMENT, param.name))

    # Phase 4: keywords nobody took go to **kwargs, or are an error.
    if pending:
        if var_kw is not None:
            assignments.extend((name, var_kw) for name in pending)
        else:
            # DEFERRED/FIXED blame the skipped positional-only names before any unexpected keyword.
            atoms.extend((ProblemKind.POSITIONAL_ONLY_AS_KEYWORD, name) for name in skipped)
            atoms.extend((ProblemKind.UNEXPECTED_KEYWORD, name) for name in pending if name not in skipped)
    return atoms, assignments


def _certain_atoms(params: tuple[Parameter, ...], shape: CallShape, flavor: _Flavor) -> list[_Atom]:
    """The problems the call has whatever its `*iterable` and `**mapping` hold, in inspect's order.

    With `*`, the call passes N >= n positional arguments (n = the plain ones); with `**`, extra keywords
    (none repeating an explicit one: that fails before binding). Each rule below holds for every N and
    every such mapping; when the outcome depends on the contents, no rule fires.
    """
    n, names = shape.positional, set(shape.keywords)
    star, double_star = shape.star_args, shape.star_kwargs
    positional = [p for p in params if p.kind in (_PO, _PK)]
    has_var_pos = any(p.kind is _VP for p in params)
    has_var_kw = any(p.kind is _VK for p in params)
    atoms: list[_Atom] = []

    # The first n parameters always receive positional arguments, whatever the unpacking holds.
    for param in positional[:n]:
        if param.kind is _PK and param.name in names:
            atoms.append((ProblemKind.MULTIPLE_VALUES, param.name))
    if n > len(positional) and not has_var_pos:
        atoms.append((ProblemKind.TOO_MANY_POSITIONAL, None))

    for index, param in enumerate(params):
        named = param.name in names
        if param.kind is _KO:
            # Only a `**mapping` could supply it.
            if not param.has_default and not named and not double_star:
                atoms.append((ProblemKind.MISSING_ARGUMENT, param.name))
        elif param.kind is _PK:
            if index < n or param.has_default or named or double_star:
                continue  # filled, optional, named, or maybe in the mapping
            # Only a `*iterable` could fill it, and only by also filling every parameter before it: if one
            # of those is named at the call, that one then gets multiple values.
            named_before = any(p.kind is _PK and p.name in names for p in positional[n:index])
            if not star or named_before:
                atoms.append((ProblemKind.MISSING_ARGUMENT, param.name))
        elif param.kind is _PO and index >= n:
            atom = _positional_only_atom(param, named, star, double_star, has_var_kw, flavor)
            if atom is not None:
                atoms.append(atom)

    if not has_var_kw:
        by_name = {p.name: i for i, p in enumerate(params) if p.kind not in (_VP, _VK)}
        for name in shape.keywords:
            found = by_name.get(name)
            # No parameter of that name (the *args/**kwargs names do not count), or a positional-only one
            # always filled positionally: the keyword is left over in every flavor.
            if found is None or (params[found].kind is _PO and found < n):
                atoms.append((ProblemKind.UNEXPECTED_KEYWORD, name))
    return atoms


def _positional_only_atom(
    param: Parameter, named: bool, star: bool, double_star: bool, has_var_kw: bool, flavor: _Flavor
) -> _Atom | None:
    """The certain problem of a positional-only parameter that the plain positional arguments do not reach."""
    missing = (ProblemKind.MISSING_ARGUMENT, param.name)
    as_keyword = (ProblemKind.POSITIONAL_ONLY_AS_KEYWORD, param.name)
    if star:
        # The unpacking may fill it. If not, LEGACY rejects the keyword; if so, the keyword is left over.
        # DEFERRED/FIXED may bind a defaulted one by keyword instead, so no rule for them.
        if named and not has_var_kw and flavor is _Flavor.LEGACY:
            return as_keyword
        return None
    if not param.has_default:
        if not named and not double_star:
            return missing  # nothing can supply it, in every flavor
        if flavor is _Flavor.LEGACY:
            return as_keyword if named else missing  # in kwargs: rejected; not: missing
        if flavor is _Flavor.FIXED:
            # The first positional-only parameter left is required: named, it is reported missing;
            # not named, it is missing. So the call fails, and this parameter is not given positionally.
            return missing
        if named and not has_var_kw:
            # DEFERRED: skipped and left over with no **kwargs, or an earlier required one is missing.
            return as_keyword
        return None
    if named and flavor is _Flavor.LEGACY:
        return as_keyword
    return None


def _certain_assignments(
    params: tuple[Parameter, ...], shape: CallShape
) -> list[tuple[int | str, str]] | None:
    """The explicit arguments' parameters if the call binds whatever its unpackings hold, else None.

    The conditions keep every positional-only name out of kwargs unless its parameter is filled
    positionally, where all flavors agree, so LEGACY reasoning is enough.
    """
    n, names = shape.positional, set(shape.keywords)
    star, double_star = shape.star_args, shape.star_kwargs
    positional = [p for p in params if p.kind in (_PO, _PK)]
    var_pos = next((p.name for p in params if p.kind is _VP), None)
    var_kw = next((p.name for p in params if p.kind is _VK), None)

    if (star or n > len(positional)) and var_pos is None:
        return None  # an unbounded (or too large) number of positional arguments
    for index, param in enumerate(positional):
        named = param.name in names
        maybe_named = named or double_star
        reached = star or index < n  # some content fills it positionally
        if param.kind is _PK:
            if maybe_named and reached:
                return None  # multiple values for it
            if index >= n and not param.has_default and (not named or star):
                return None  # maybe missing (or, named with `*`, maybe multiple values)
        elif index >= n and (maybe_named or not param.has_default):
            return None  # maybe passed by keyword, or maybe missing
    for param in params:
        if param.kind is _KO and not param.has_default and param.name not in names:
            return None  # the mapping may not hold it
    keyword_params = {p.name for p in params if p.kind in (_PK, _KO)}
    leftovers = double_star or any(name not in keyword_params for name in names)
    if leftovers and var_kw is None:
        return None

    assignments: list[tuple[int | str, str]] = []
    for index in range(n):
        if index >= len(positional):
            if var_pos is not None:  # always, as checked above
                assignments.append((index, var_pos))
        elif not star:
            # With `*`, where a plain argument lands depends on how many unpacked ones precede it.
            assignments.append((index, positional[index].name))
    for name in shape.keywords:
        if name in keyword_params:
            assignments.append((name, name))
        elif var_kw is not None:  # always, as checked above
            assignments.append((name, var_kw))
    return assignments


def _group(atoms: list[_Atom], given: int, params: tuple[Parameter, ...]) -> tuple[Problem, ...]:
    """One Problem per kind, kinds in the order first met, names in the order met."""
    grouped: dict[ProblemKind, list[str]] = {}
    for kind, name in atoms:
        names = grouped.setdefault(kind, [])
        if name is not None and name not in names:
            names.append(name)
    accepted = sum(1 for p in params if p.kind in (_PO, _PK))
    return tuple(
        Problem(kind, tuple(names), given, accepted)
        if kind is ProblemKind.TOO_MANY_POSITIONAL
        else Problem(kind, tuple(names))
        for kind, names in grouped.items()
    )


def _ordered(
    assignments: list[tuple[int | str, str]], keywords: tuple[str, ...]
) -> tuple[tuple[int | str, str], ...]:
    """Positional arguments by index, then keywords in call order."""
    rank = {name: i for i, name in enumerate(keywords)}

    def key(item: tuple[int | str, str]) -> tuple[int, int]:
        argument = item[0]
        return (0, argument) if isinstance(argument, int) else (1, rank[argument])

    return tuple(sorted(assignments, key=key))
