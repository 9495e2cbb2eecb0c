"""`apidrift diff`: the API changes between two upstream versions, optionally only those a downstream uses.

Input: two `ApiIndex`es (and, with `--used-by`, the downstream's use sites). Output: `ApiChange`
values: removed, moved, signature changes (removed, added-required, renamed, reordered, kind and
default changes), and new deprecations. Without `--used-by` every module of the old version is
loaded; with it, only what the downstream reaches (the same lazy loading and cache as `audit`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from enum import Enum
from typing import Any, Protocol

from apidrift.auditor.core.bind import Ok
from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.refs import ModuleRef
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.callables import call_target
from apidrift.auditor.upstream.model import ClassInfo
from apidrift.auditor.upstream.relocate import Relocator, kind_of
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    FunctionValue,
    Missing,
    ModuleValue,
    Resolver,
    Value,
    value_path,
)


class ChangeKind(str, Enum):
    """What changed about one upstream path between the two versions."""

    REMOVED = "removed"  # gone, with no new home found
    MOVED = "moved"  # gone from here, importable elsewhere
    KIND_CHANGED = "kind-changed"  # a class now a function, say
    DEPRECATED = "deprecated"  # newly deprecated
    PARAMETER_REMOVED = "parameter-removed"
    PARAMETER_ADDED_REQUIRED = "parameter-added-required"
    PARAMETER_ADDED = "parameter-added"  # optional
    # removed, and another added at its place with its annotation or a similar name: perhaps a rename,
    # perhaps not (a guess: never offered as a fix)
    PARAMETER_RENAMED = "parameter-replaced"
    PARAMETER_MOVED = "parameter-moved"  # reordered among the positional parameters
    PARAMETER_KIND_CHANGED = "parameter-kind-changed"  # e.g. now keyword-only
    PARAMETER_NOW_REQUIRED = "parameter-now-required"  # lost its default
    DEFAULT_CHANGED = "default-changed"


@dataclass(frozen=True)
class ApiChange:
    kind: ChangeKind
    path: str  # dotted path in the old version
    detail: str
    breaking: bool
    old: str | None = None  # old signature or location
    new: str | None = None
    # "path:line" of downstream uses, with --used-by: for a breaking kind of change, exactly the use
    # sites it breaks (then `breaking` says whether it breaks any); otherwise the uses it touches.
    uses: tuple[str, ...] = field(default=())
    breaks_some_callers: bool | None = None  # with --used-by: whether it would break some caller, in general
    names: tuple[str, ...] = field(default=(), compare=False)  # the parameters it is about

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "path": self.path,
            "detail": self.detail,
            "breaking": self.breaking,
            "old": self.old,
            "new": self.new,
            "uses": list(self.uses),
            "breaks_some_callers": self.breaking
            if self.breaks_some_callers is None
            else self.breaks_some_callers,
        }


def all_paths(resolver: Resolver) -> list[str]:
    """Every module-level class and function, and every class's methods, of one version."""
    relocator = Relocator(resolver)
    paths: list[str] = []
    for dotted, _ in relocator._modules():
        value = resolver.resolve(ModuleRef(dotted))
        if not isinstance(value, ModuleValue):
            continue
        for name, member in value.info.members.items():
            if isinstance(member, ClassInfo):
                paths.append(f"{dotted}.{name}")
                paths.extend(
                    f"{dotted}.{name}.{m}" for m, inner in member.members.items() if inner.kind == "function"
                )
            elif member.kind == "function":
                paths.append(f"{dotted}.{name}")
    return paths


def diff(
    old: Resolver,
    new: Resolver,
    paths: Iterable[str],
    uses: dict[str, list[str]] | None = None,
    sites: dict[str, list[Use]] | None = None,
    checks: SiteChecks | None = None,
) -> list[ApiChange]:
    """Compare each old path with the new version. `uses` maps a path to the downstream sites using
    it ("file:line"); `sites` (with --used-by) maps it to the use sites themselves, so that each change
    lists exactly the sites it breaks and is breaking only when it breaks one; `checks` gives a use
    site's check against the old and the new version (`check.checked.SiteChecks`), needed with `sites`."""
    relocator = Relocator(new)
    changes: dict[
        tuple[str, str, str], ApiChange
    ] = {}  # one change, seen through several paths, is one entry
    for path in dict.fromkeys(paths):
        canonical = _canonical(old, path)
        for change in _changes_of(path, old, new, relocator, tuple((uses or {}).get(path, ()))):
            if sites is not None:
                if checks is None:
                    raise ValueError("diff() needs `checks` to attribute changes to use sites")
                change = _attributed(change, sites.get(path, []), checks)
            what = (
                change.detail
                if change.kind not in (ChangeKind.REMOVED, ChangeKind.MOVED)
                else change.new or change.path
            )
            key = (
                canonical if change.kind not in (ChangeKind.REMOVED, ChangeKind.MOVED) else path,
                change.kind,
                what,
            )
            if key in changes:
                before = changes[key]
                merged = tuple(sorted(set(before.uses) | set(change.uses), key=_site_order))
                changes[key] = replace(before, uses=merged, breaking=before.breaking or change.breaking)
            else:
                changes[key] = change
    return list(changes.values())


def _canonical(resolver: Resolver, path: str) -> str:
    value = resolver.lookup(path)
    if isinstance(value, (ClassValue, FunctionValue, ModuleValue, AttributeValue)):
        return value_path(value)
    return path


def _site_order(site: str) -> tuple[str, int]:
    file, _, line = site.rpartition(":")
    return file, int(line) if line.isdigit() else 0


@dataclass(frozen=True)
class Use:
    where: str  # "file:line"
    site: Any  # UseSite


class SiteChecks(Protocol):
    """A use site's check against the old and the new version, each once (`check.checked.SiteChecks`)."""

    def __call__(self, site: Any) -> tuple[Any, Any]: ...


_WHOLE_OBJECT = (ChangeKind.REMOVED, ChangeKind.MOVED)
_TOUCHES_EVERY_USE = (ChangeKind.DEPRECATED, ChangeKind.KIND_CHANGED)


def _attributed(change: ApiChange, uses: list[Use], checks: SiteChecks) -> ApiChange:
    """`change` with the use sites it breaks (or, for a change that breaks nobody, touches)."""
    general = change.breaking
    hit: list[str] = []
    for use in uses:
        before, after = checks(use.site)
        if change.kind in _WHOLE_OBJECT:
            if after.missing is not None and before.missing is None:
                hit.append(use.where)
        elif change.kind in _TOUCHES_EVERY_USE or _site_feels(change, use.site, before, after):
            hit.append(use.where)  # where CPython fails, as `audit` reports it (a keyword's call too)
    ordered = tuple(sorted(set(hit), key=_site_order))
    breaking = (general and bool(ordered) and change.kind not in _TOUCHES_EVERY_USE) or (
        change.kind is ChangeKind.KIND_CHANGED and bool(ordered)
    )
    return replace(change, uses=ordered, breaking=breaking, breaks_some_callers=general)


def _site_feels(change: ApiChange, site: Any, before: Any, after: Any) -> bool:
    """Whether this call site is broken (or, for a change that breaks nobody, affected) by `change`:
    judged on the arguments as the old version bound them, against the signatures this site meets."""

    if site.kind is not SiteKind.CALL or site.shape is None or not isinstance(before.verdict, Ok):
        return False  # not a call, or not one that worked before: no change of a signature breaks it
    if before.target is None or after.target is None:
        return False
    shape = site.shape
    old_sig, new_sig = before.target.signature, after.target.signature
    mine = {(kind, names) for kind, _, _, names in _signature_changes(old_sig, new_sig)}
    if (change.kind, change.names) not in mine:
        return False  # this site binds a signature where this change does not show (an override, a forward)
    assigned = before.verdict.assignments
    by_position = {int(k): p for k, p in assigned if isinstance(k, int)}
    by_keyword = {p for k, p in assigned if isinstance(k, str)}
    filled = set(by_position.values()) | by_keyword
    name = change.names[0] if change.names else ""
    if change.kind is ChangeKind.PARAMETER_REMOVED:
        return name in filled
    if change.kind is ChangeKind.PARAMETER_RENAMED:
        return name in by_keyword
    if change.kind is ChangeKind.PARAMETER_ADDED_REQUIRED:
        return not shape.star_kwargs and not shape.star_args
    if change.kind is ChangeKind.PARAMETER_NOW_REQUIRED:
        return name not in filled and not shape.star_kwargs and not shape.star_args
    if change.kind is ChangeKind.PARAMETER_KIND_CHANGED:
        param = new_sig.get(name)
        if param is None:
            return False
        if param.kind is ParamKind.POSITIONAL_ONLY and name in by_keyword:
            return True
        return param.kind is ParamKind.KEYWORD_ONLY and name in by_position.values()
    if change.kind in (ChangeKind.PARAMETER_MOVED, ChangeKind.PARAMETER_ADDED):
        return _remapped(by_position, old_sig, new_sig, name)
    if change.kind is ChangeKind.DEFAULT_CHANGED:
        return name not in filled and not shape.star_kwargs
    return False


def _remapped(by_position: dict[int, str], old: Signature, new: Signature, name: str) -> bool:
    """Whether a positional argument of this call lands in another parameter now, because of `name`."""
    positional = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    new_positional = [p.name for p in new.parameters if p.kind in positional]
    star = next((p.name for p in new.parameters if p.kind is ParamKind.VAR_POSITIONAL), None)
    renamed = {
        a: b
        for kind, _, _, names in _signature_changes(old, new)
        if kind is ChangeKind.PARAMETER_RENAMED
        for a, b in [names]
    }
    for index, param in by_position.items():
        lands = new_positional[index] if index < len(new_positional) else star
        if lands != renamed.get(param, param) and name in (param, lands, *new_positional[: index + 1]):
            return True
    return False


def _changes_of(
    path: str, old: Resolver, new: Resolver, relocator: Relocator, sites: tuple[str, ...]
) -> list[ApiChange]:
    before = _lookup(old, path)
    if not isinstance(before, (ClassValue, FunctionValue, ModuleValue, AttributeValue)):
        return []
    after = _lookup(new, path)
    if isinstance(after, Unknown):
        return []
    if not isinstance(after, Missing):
        return _compare(path, before, after, old, new, sites)
    name, owner = path.rsplit(".", 1)[-1], path.rpartition(".")[0]
    moved = relocator.find(name, kind_of(before), owner)
    if moved:
        return [
            ApiChange(ChangeKind.MOVED, path, f"now importable as `{moved[0]}`", True, path, moved[0], sites)
        ]
    deprecated = getattr(before.info, "deprecated", None)
    note = f" (deprecated before: {deprecated})" if deprecated else ""
    return [ApiChange(ChangeKind.REMOVED, path, f"`{path}` no longer exists{note}", True, path, None, sites)]


def _lookup(resolver: Resolver, path: str) -> Any:
    value = resolver.lookup(path)
    if isinstance(value, Unknown) and value.reason is Reason.PARENT_MISSING:
        return Missing(path.rpartition(".")[0], path.rsplit(".", 1)[-1], "module")
    return value


def _compare(
    path: str, before: Value, after: Value, old: Resolver, new: Resolver, sites: tuple[str, ...]
) -> list[ApiChange]:
    changes: list[ApiChange] = []
    if kind_of(before) and kind_of(after) and kind_of(before) != kind_of(after):
        changes.append(
            ApiChange(
                ChangeKind.KIND_CHANGED,
                path,
                f"was a {kind_of(before)}, now a {kind_of(after)}",
                True,
                uses=sites,
            )
        )
        return changes
    old_deprecated = getattr(getattr(before, "info", None), "deprecated", None)
    new_deprecated = getattr(getattr(after, "info", None), "deprecated", None)
    if new_deprecated and not old_deprecated:
        changes.append(ApiChange(ChangeKind.DEPRECATED, path, new_deprecated, False, uses=sites))
    if isinstance(before, (ClassValue, FunctionValue)) and isinstance(after, (ClassValue, FunctionValue)):
        old_target = call_target(before, old)
        new_target = call_target(after, new)
        if not isinstance(old_target, Unknown) and not isinstance(new_target, Unknown):
            for kind, detail, breaking, names in _signature_changes(
                old_target.signature, new_target.signature
            ):
                changes.append(
                    ApiChange(
                        kind,
                        path,
                        detail,
                        breaking,
                        old_target.signature.render(),
                        new_target.signature.render(),
                        sites,
                        names=names,
                    )
                )
    return changes


def compare_signatures(old: Signature, new: Signature) -> list[tuple[ChangeKind, str, bool]]:
    """(kind, detail, breaking) for each difference a caller can feel."""
    return [(kind, detail, breaking) for kind, detail, breaking, _ in _signature_changes(old, new)]


_Change = tuple[ChangeKind, str, bool, tuple[str, ...]]  # (kind, detail, breaking, parameter names)
_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)


def _signature_changes(old: Signature, new: Signature) -> list[_Change]:
    """(kind, detail, breaking, the parameter names it is about) for each difference a caller can feel."""
    found: list[_Change] = []
    renamed = _renamed_parameters(old, new, found)
    _removed_parameters(old, new, renamed, found)
    _added_parameters(old, new, renamed, found)
    _changed_parameters(old, new, renamed, found)
    _moved_parameters(old, new, renamed, found)
    return found


def _renamed_parameters(old: Signature, new: Signature, found: list[_Change]) -> dict[str, str]:
    """A parameter removed where another of the same kind was added, same annotation or a similar name:
    old name -> new name."""
    old_names = [p.name for p in old.parameters]
    new_names = [p.name for p in new.parameters]
    renamed: dict[str, str] = {}
    for index, before in enumerate(old.parameters):
        if before.name in new_names or index >= len(new.parameters):
            continue
        after = new.parameters[index]
        if after.name in old_names or after.kind is not before.kind:
            continue
        same_annotation = bool(before.annotation) and before.annotation == after.annotation
        if same_annotation or SequenceMatcher(None, before.name, after.name).ratio() >= 0.6:
            renamed[before.name] = after.name
            found.append(
                (
                    ChangeKind.PARAMETER_RENAMED,
                    f"`{before.name}` removed, `{after.name}` added at its place"
                    f" ({'same annotation' if same_annotation else 'a similar name'}): they may differ in meaning",
                    True,
                    (before.name, after.name),
                )
            )
    return renamed


def _removed_parameters(
    old: Signature, new: Signature, renamed: dict[str, str], found: list[_Change]
) -> None:
    new_names = [p.name for p in new.parameters]
    for before in old.parameters:
        if before.name not in new_names and before.name not in renamed:
            if before.kind is ParamKind.VAR_KEYWORD:
                found.append(
                    (
                        ChangeKind.PARAMETER_REMOVED,
                        f"no longer takes arbitrary keywords (`**{before.name}`)",
                        True,
                        (before.name,),
                    )
                )
            elif before.kind is ParamKind.VAR_POSITIONAL:
                found.append(
                    (
                        ChangeKind.PARAMETER_REMOVED,
                        f"no longer takes extra positional arguments (`*{before.name}`)",
                        True,
                        (before.name,),
                    )
                )
            else:
                found.append((ChangeKind.PARAMETER_REMOVED, f"`{before.name}` removed", True, (before.name,)))


def _added_parameters(old: Signature, new: Signature, renamed: dict[str, str], found: list[_Change]) -> None:
    old_names = [p.name for p in old.parameters]
    positional = _POSITIONAL
    new_positional = [p.name for p in new.parameters if p.kind in positional]
    for after in new.parameters:
        if after.name in old_names or after.name in renamed.values():
            continue
        shifted = after.kind in positional and any(
            n in old_names or n in renamed.values()
            for n in new_positional[new_positional.index(after.name) + 1 :]
        )
        shift = " (shifts the positional arguments after it)" if shifted else ""
        if after.required:
            detail = f"new required parameter `{after.render()}`{_position(new, after)}{shift}"
            found.append((ChangeKind.PARAMETER_ADDED_REQUIRED, detail, True, (after.name,)))
        elif after.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
            found.append(
                (
                    ChangeKind.PARAMETER_ADDED,
                    f"new optional parameter `{after.render()}`{shift}",
                    bool(shifted),
                    (after.name,),
                )
            )


def _changed_parameters(
    old: Signature, new: Signature, renamed: dict[str, str], found: list[_Change]
) -> None:
    """Kind, default required, default value: of each parameter both versions have."""
    for before in old.parameters:
        now = new.get(renamed.get(before.name, before.name))
        if now is None:
            continue
        after = now
        if before.kind is not after.kind:
            found.append(
                (
                    ChangeKind.PARAMETER_KIND_CHANGED,
                    f"`{before.name}` was {before.kind.value}, now {after.kind.value}",
                    True,
                    (after.name,),
                )
            )
        if (
            before.has_default
            and not after.has_default
            and after.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
        ):
            found.append(
                (
                    ChangeKind.PARAMETER_NOW_REQUIRED,
                    f"`{before.name}` lost its default {before.default}",
                    True,
                    (after.name,),
                )
            )
        elif (
            before.has_default
            and after.has_default
            and _literal_differs(before.default, after.default)
            # a `None` the body replaces at once is the value it is replaced by (as AD202 reads it)
            and _literal_differs(before.replaced_by or before.default, after.replaced_by or after.default)
        ):
            found.append(
                (
                    ChangeKind.DEFAULT_CHANGED,
                    f"default of `{before.name}`: {before.default} -> {after.default}",
                    False,
                    (after.name,),
                )
            )


def _moved_parameters(old: Signature, new: Signature, renamed: dict[str, str], found: list[_Change]) -> None:
    positional = _POSITIONAL
    new_positional = [p.name for p in new.parameters if p.kind in positional]
    # A reorder is a change in the relative order of the positional parameters both versions have.
    old_order = [renamed.get(p.name, p.name) for p in old.parameters if p.kind in positional]
    common = [n for n in old_order if n in new_positional]
    new_order = [n for n in new_positional if n in common]
    if common != new_order:
        matcher = SequenceMatcher(None, common, new_order, autojunk=False)
        kept = {
            name for block in matcher.get_matching_blocks() for name in common[block.a : block.a + block.size]
        }
        for name in (n for n in common if n not in kept):
            detail = f"`{name}` moved from position {old_order.index(name) + 1} to {new_positional.index(name) + 1}"
            found.append((ChangeKind.PARAMETER_MOVED, detail, True, (name,)))


def _position(signature: Signature, param: Parameter) -> str:
    names = [p.name for p in signature.parameters]
    index = names.index(param.name)
    return f", after `{names[index - 1]}`" if index > 0 else ", first"


def _literal_differs(old: str | None, new: str | None) -> bool:
    try:
        return ast.literal_eval(old or "") != ast.literal_eval(new or "")
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def used_sites(
    sites_by_file: Iterable[tuple[str, Iterable[Any]]],
    old: Resolver,
    place: Callable[[str, int], str | None] | None = None,
) -> dict[str, list[Use]]:
    """Old-version paths the downstream uses (as written, and where defined), each with its use sites
    (`path:line`, or what `place` says for a file and line: a notebook's cell and line)."""
    uses: dict[str, list[Use]] = {}
    for path, sites in sites_by_file:
        for site in sites:
            value = old.resolve(site.ref)
            if not isinstance(value, (ClassValue, FunctionValue, ModuleValue, AttributeValue)):
                continue
            line = site.place.line  # where CPython fails on it, as `audit` reports it
            use = Use((place(path, line) if place else None) or f"{path}:{line}", site)
            # The path as the downstream writes it (a re-export can vanish while its target stays)...
            written = site.ref.render()
            if "(" not in written and "<" not in written:
                uses.setdefault(written, []).append(use)
            # ...and where the object is defined.
            canonical = value_path(value)
            if canonical != written:
                uses.setdefault(canonical, []).append(use)
    return uses


def used_paths(sites_by_file: Iterable[tuple[str, Iterable[Any]]], old: Resolver) -> dict[str, list[str]]:
    """Old-version canonical paths the downstream uses, each with its "file:line" use sites."""
    return {
        path: sorted({u.where for u in uses}, key=_site_order)
        for path, uses in used_sites(sites_by_file, old).items()
    }
