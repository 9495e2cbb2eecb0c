"""A use site checked against one or two upstream versions: the value rules read.

`check_site` resolves the site's reference, finds the first certain miss along it, and for calls
picks the signature and binds the call. Rules only read these values; they never resolve anything.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from apidrift.auditor.check.guards import Raised, raised_by
from apidrift.auditor.check.imports import ImportFailure, Requirements, import_failure
from apidrift.auditor.check.introspection import guarded_by_tests
from apidrift.auditor.core.bind import Break, CallShape, Ok, Problem, ProblemKind, Verdict, bind
from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ItemRef,
    ModuleRef,
    OpaqueRef,
    Ref,
    StarRef,
)
from apidrift.auditor.core.signature import ParamKind, Signature
from apidrift.auditor.core.sites import SiteKind, UseSite
from apidrift.auditor.downstream.reach import ClassReach
from apidrift.auditor.upstream.callables import CallTarget, bind_target, call_target
from apidrift.auditor.upstream.model import AlwaysRaises, AttributeInfo, ClassInfo, FunctionInfo
from apidrift.auditor.upstream.relocate import Relocator, kind_of, same_definition
from apidrift.auditor.upstream.replacement import (
    Replacement,
    find_replacement,
    forwarded_alias,
    forwarded_replacement,
)
from apidrift.auditor.upstream.resolve import (
    TRANSPARENT_BASES,
    AttributeValue,
    ClassValue,
    FunctionValue,
    InstanceValue,
    Missing,
    ModuleValue,
    Resolution,
    Resolver,
    ServedValue,
)


@dataclass(frozen=True)
class MovedName:
    """One name of `from gone.module import ...`: where an object of its name (and of the kind the old
    version bound) lives now, most public first, and the evidence that the first binds the old
    version's definition (`same_definition`), when there is."""

    name: str
    homes: tuple[str, ...]
    same: str | None = None


def statement_names(sites: tuple[UseSite, ...], index: int) -> tuple[str, ...]:
    """The names `from module import A, B as C` imports, for its module's site `sites[index]`: the
    scanner gives each statement's module site, then one site per name, in order."""
    site = sites[index]
    if site.kind is not SiteKind.IMPORT or not isinstance(site.ref, ModuleRef):
        return ()
    names = []
    for after in sites[index + 1 :]:
        ref = after.ref
        if not (
            after.kind is SiteKind.IMPORT
            and isinstance(ref, AttrRef)
            and isinstance(ref.base, ModuleRef)
            and ref.base.path == site.ref.path
            and after.span.line >= site.span.line
        ):
            break
        names.append(ref.name)
    return tuple(names)


def moved_names(
    module: str,
    names: tuple[str, ...],
    resolver: Resolver,
    relocator: Relocator,
    old_resolver: Resolver | None,
) -> tuple[MovedName, ...]:
    """Where the names a statement imports from the missing `module` live now, each looked for as a
    missing name of its own is (`Relocator.find`, then `same_definition` against the old version's
    `module.name`)."""
    moved = []
    for name in dict.fromkeys(names):
        before = old_resolver.resolve(AttrRef(ModuleRef(module), name)) if old_resolver is not None else None
        kind = kind_of(before)
        homes = relocator.find(name, kind, module)
        same = (
            same_definition(old_resolver, before, resolver, homes[0])
            if homes and old_resolver is not None and kind is not None
            else None
        )
        moved.append(MovedName(name, homes, same))
    return tuple(moved)


@dataclass(frozen=True)
class SiteCheck:
    """One site against one upstream version."""

    version: str  # label of the upstream version, e.g. "vllm==0.16.0"
    resolution: Resolution
    missing: Missing | None = None  # the first certain miss along the reference
    target: CallTarget | None = None  # for calls whose signature is known
    verdict: Verdict | None = None  # for calls: Ok, Break or Unknown
    unknown: Unknown | None = None  # why the site could not be checked, when it could not
    relocated: tuple[str, ...] = ()  # for a missing name: where an object of that name and kind lives now
    # For a missing name the old version bound as an alias of a sibling (`assertEquals = assertEqual`
    # in the same class or module) that this version still has: that sibling's name, the same object.
    renamed: str | None = None
    renamed_exact: bool = True  # False: only a stub says the two behave the same (an empty subclass)
    # The evidence that relocated[0] binds the definition the old version had (a re-export, the same
    # code), when there is: what makes moving the import a safe fix.
    relocated_same: str | None = None
    # For a missing or deprecated name: the replacement the upstream's own messages name, when it
    # resolves where the name was and takes the same uses (see upstream/replacement.py).
    replacement: Replacement | None = None
    # For a call passing keywords the new version rejects: those the old version's callee body
    # assigned to another of its parameters (`new = old`), as (old, new) pairs.
    keyword_aliases: tuple[tuple[str, str], ...] = ()
    # For a name a module `__getattr__` serves with a warning by handing back another module's object
    # (`click.parser.split_arg_string` is `click.shell_completion.split_arg_string`): that object's path.
    served_from: str | None = None
    # Where the old version could not type the receiver but this one can (an instance of a class): what
    # that class's member of the same name was in the old version (a property that became a method).
    member_before: Resolution | None = None
    # For overrides: the upstream's own call that no longer binds (`Option.get_help_record` calls
    # `self.get_default(ctx, call=False)`), as {"caller": path, "call": text, "lineno": n}.
    upstream_call: dict[str, object] | None = None
    # For `x.name` the upstream classes before an outside base no longer define: that base (the only
    # place the name could still come from), e.g. "unittest.TestCase".
    beyond_upstream: str | None = None
    # For `x.name` on an instance whose classes no longer define it but answer unknown names
    # themselves (pandas' `NDFrame.__getattr__` serves columns): what alone could still answer it.
    run_time_only: str | None = None
    # For a call that binds: a guard of the callee that certainly raises on the arguments it passes.
    raises: Raised | None = None
    # For a call that binds: what every call of the callee raises (its body raises unconditionally).
    always_raises: AlwaysRaises | None = None
    # For an import: the module whose top level raises when it runs (see check/imports.py).
    import_fails: ImportFailure | None = None
    # The reference along the site at which `missing` occurs (`pd.np` in `pd.np.array(...)`).
    missing_at: Ref | None = None
    # For a site not checked for certain: the references along it that resolved to a value in this
    # version (`pd.np`, served by pandas 1.5's `__getattr__`, before `.array` of it was unknown). A
    # later version missing one of them is a certain drift, whatever the rest of the site was.
    present: Mapping[Ref, Resolution] = field(default_factory=dict)
    # The site's introspection tests (`if "x" in inspect.signature(f).parameters:`) guard it in this
    # version: one is certainly false here, or not known (see check/introspection.py).
    test_guarded: bool = False
    # For a store (`x.name = value`): the read-only property (a `property` without a setter) the
    # instance's class has under that name here, whose assignment raises AttributeError.
    read_only: str | None = None
    exact: bool = False  # and the instance was built by a constructor call (not only annotated)
    # For a store of a name the instance's class does not have: that class, when it and every class
    # in its MRO list `__slots__` (none `__dict__`): its instances have no `__dict__` to hold the name.
    slots: str | None = None
    # For a hook implementation (SiteKind.HOOK): the hook specification this version declares under
    # that name and project (see upstream/analyses/hookspecs.py), None where it declares none.
    hookspec: Mapping[str, Any] | None = None
    # The site is in a property getter of a class whose MRO here defines `__getattr__` (see
    # UseSite.getattr_bases): an AttributeError it raises is answered by that `__getattr__`.
    getattr_fallback: bool = False
    # For a call of a property's value: the class every read of it builds (its getter returns
    # `Cls(...)`), and whether instances of it are certainly not callable (no `__call__` in its MRO).
    property_value: str | None = None
    not_callable: bool = False
    # For `from gone.module import A, B` where the module is missing: where each imported name lives
    # now (see `moved_names`), in the statement's order.
    moved_names: tuple[MovedName, ...] = ()

    @property
    def broken(self) -> bool:
        return self.missing is not None or isinstance(self.verdict, Break)

    @property
    def certain(self) -> bool:
        return self.unknown is None


@dataclass(frozen=True)
class CheckedSite:
    site: UseSite
    path: str  # downstream file, relative to the downstream root
    lines: tuple[str, ...]  # that file's lines
    upstream: str  # distribution name
    new: SiteCheck
    old: SiteCheck | None = None

    def source_line(self, line: int) -> str:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def as_of_old(self) -> CheckedSite | None:
        """The same site seen against the old version alone: what the rules said before the upgrade."""
        if self.old is None:
            return None
        return CheckedSite(self.site, self.path, self.lines, self.upstream, self.old)


def check_site(
    site: UseSite,
    resolver: Resolver,
    version: str,
    relocator: Relocator | None = None,
    old: SiteCheck | None = None,
    old_resolver: Resolver | None = None,
    requirements: Requirements | None = None,
    import_walk: bool = True,
) -> SiteCheck:
    """Check one site against one version; with a relocator, a missing name is looked for elsewhere,
    and the replacement the upstream names for a missing or deprecated name is looked up. With the old
    version's resolver, a name an annotated value's class lost counts as a removal even where the old
    version could not type the value (its return was not annotated). Without `import_walk`, whether an
    import raises is not read (`with_import_fails` adds it when it is asked)."""
    checked = _check_site(site, resolver, version, relocator, old, old_resolver, requirements, import_walk)
    before = _member_before(checked, old, old_resolver, resolver)
    if before is not None:
        checked = replace(checked, member_before=before)
    if site.tests and guarded_by_tests(site, resolver):
        checked = replace(checked, test_guarded=True)
    if any(_defines_getattr(base, resolver) for base in site.getattr_bases):
        checked = replace(checked, getattr_fallback=True)
    if relocator is None:
        return checked
    replacement = _replacement(site, checked, resolver, old, old_resolver)
    if replacement is not None:
        checked = replace(checked, replacement=replacement)
    aliases = _keyword_aliases(checked, old, old_resolver)
    if aliases:
        checked = replace(checked, keyword_aliases=aliases)
    served_from = _served_from(site, checked, resolver)
    return replace(checked, served_from=served_from) if served_from else checked


def _defines_getattr(base: Ref, resolver: Resolver) -> bool:
    """Whether the class `base` names has `__getattr__` in its MRO (its own or an upstream base's)."""
    value = resolver.resolve(base)
    if not isinstance(value, ClassValue):
        return False
    mro = resolver.mro(value.info)
    return mro is not None and any(
        not isinstance(entry, str) and "__getattr__" in entry.members for entry in mro
    )


def _member_before(
    checked: SiteCheck, old: SiteCheck | None, old_resolver: Resolver | None, resolver: Resolver | None = None
) -> Resolution | None:
    """The old version's member of the class whose method (or property) this site reaches, where the old
    version could not type the receiver (`arrow.utcnow()` unannotated before, `-> Arrow` now): the
    class's member is what the value's was, as a removal is read through the class (`_class_had_it`).
    A class that moved between modules is found by the name its package exports it as, in both
    versions (`telegram.Message`: `telegram.message.Message` in 12.8, `telegram._message.Message` in
    20.0)."""
    after = checked.resolution
    if old_resolver is None or old is None or not isinstance(old.resolution, Unknown):
        return None
    method = isinstance(after, FunctionValue) and after.via == "instance"
    if not (method or (isinstance(after, AttributeValue) and after.on_instance)):
        return None
    assert isinstance(after, (FunctionValue, AttributeValue))
    owner, _, name = after.path.rpartition(".")
    cls = old_resolver.lookup(owner)
    if not isinstance(cls, ClassValue) and resolver is not None and "." in owner:
        exported = f"{owner.partition('.')[0]}.{owner.rpartition('.')[2]}"
        now = resolver.lookup(exported)
        if isinstance(now, ClassValue) and now.info.path == owner:
            cls = old_resolver.lookup(exported)
    if not isinstance(cls, ClassValue):
        return None
    found = old_resolver.attribute_of_instance(cls.info, name)
    return found if isinstance(found, (FunctionValue, AttributeValue)) else None


def _served_from(site: UseSite, checked: SiteCheck, resolver: Resolver) -> str | None:
    """Where the object a module's `__getattr__` hands back with a warning lives, when it names one."""
    ref = site.ref
    if (
        not _deprecation(checked.resolution)
        or not isinstance(ref, AttrRef)
        or not isinstance(ref.base, ModuleRef)
    ):
        return None
    module = resolver.index.module(ref.base.path)
    if module is None or ref.name in module.members:
        return None
    answer = resolver.served(module, ref.name)
    target = getattr(answer, "target", None)
    if not getattr(answer, "warning", None) or not isinstance(target, str):
        return None
    return target if target != f"{ref.base.path}.{ref.name}" and resolver.index.owns(target) else None


def _keyword_aliases(
    checked: SiteCheck, old: SiteCheck | None, old_resolver: Resolver | None
) -> tuple[tuple[str, str], ...]:
    """The rejected keywords whose value the old version's callee handed to another parameter."""
    verdict = checked.verdict
    if old is None or old_resolver is None or old.target is None or not isinstance(verdict, Break):
        return ()
    rejected = [n for p in verdict.problems if p.kind is ProblemKind.UNEXPECTED_KEYWORD for n in p.names]
    found = []
    for name in rejected:
        if old.target.signature.get(name) is None:
            continue
        alias = forwarded_alias(old_resolver, old.target.defined_at, old.target.signature, name)
        if alias is not None:
            found.append((name, alias))
    return tuple(found)


def _replacement(
    site: UseSite,
    checked: SiteCheck,
    resolver: Resolver,
    old: SiteCheck | None,
    old_resolver: Resolver | None,
) -> Replacement | None:
    if site.kind is SiteKind.OVERRIDE:
        return None
    missing = checked.missing
    if missing is not None:
        ref = checked.missing_at
        if not isinstance(ref, AttrRef) or ref.name != missing.name:
            return None
        messages = []
        if missing.message and missing.message != missing.name:
            messages.append((checked.version, missing.message))
        before = before_miss(checked, old)
        said = _deprecation(before)
        if said and old is not None:
            messages.append((old.version, said))
        shape = site.shape if site.kind is SiteKind.CALL and ref == site.ref else None
        found = (
            find_replacement(
                messages,
                ref.base,
                missing.name,
                resolver,
                before,
                old_resolver,
                shape,
                old.version if old is not None else "the old version",
            )
            if messages
            else None
        )
        if found is None and old is not None and old_resolver is not None:
            # no message names one: the old version's own source may (a def that only forwards)
            found = forwarded_replacement(
                ref.base, missing.name, resolver, old_resolver, shape, old.version, checked.version
            )
        return found
    said = _deprecation(checked.resolution)
    ref = site.ref
    if not said or not isinstance(ref, AttrRef):
        return None
    shape = site.shape if site.kind is SiteKind.CALL else None
    return find_replacement(
        [(checked.version, said)],
        ref.base,
        ref.name,
        resolver,
        checked.resolution,
        resolver,
        shape,
        checked.version,
    )


def _deprecation(value: Resolution | None) -> str | None:
    if isinstance(value, ServedValue):
        return value.deprecated
    info = getattr(value, "info", None)
    said = getattr(info, "deprecated", None)
    return said if isinstance(said, str) else None


def _check_site(
    site: UseSite,
    resolver: Resolver,
    version: str,
    relocator: Relocator | None = None,
    old: SiteCheck | None = None,
    old_resolver: Resolver | None = None,
    requirements: Requirements | None = None,
    import_walk: bool = True,
) -> SiteCheck:
    if site.runs_if:  # a module imported only under a test of the upstream's major version
        imported = _defined_under(site.runs_if, resolver.index.version)
        if imported is not True:
            gated = Unknown(Reason.MODULE_NOT_IMPORTED if imported is False else Reason.MODULE_GATED)
            return SiteCheck(version, gated, unknown=gated)
    if site.kind is SiteKind.OVERRIDE:
        return _check_override(site, resolver, version, old)
    if site.kind is SiteKind.STORE:
        return _check_store(site, resolver, version)
    if site.kind is SiteKind.HOOK:
        return check_hook(site, resolver, version)
    resolution = resolver.resolve(site.ref)
    # An import reports only its own miss: `from gone import x` is one missing module, not two findings.
    missing = resolution if isinstance(resolution, Missing) else None
    missing_at: Ref | None = site.ref if missing is not None else None
    if site.kind is not SiteKind.IMPORT or isinstance(site.ref, ModuleRef):
        # `import a.b.c` with `a.b` gone fails at `a.b` (ModuleNotFoundError: No module named 'a.b');
        # `from a.b import c` reports only `c`: the module `a.b` is a site of its own.
        missing, missing_at = _first_missing_at(site.ref, resolver)
    if (
        missing is not None
        and site.kind is not SiteKind.IMPORT
        and missing.owner_kind == "module"
        and missing.owner == missing.name
        and "." not in missing.name
    ):
        # A top-level module that is gone fails where it is imported: that import is the one finding.
        return SiteCheck(version, resolution, unknown=Unknown(Reason.PARENT_MISSING))
    if missing is not None and not resolver.index.absence_is_evidence and not _found_before(old):
        # Python's standard library: only a name the older version has is evidenced gone, not a stub's silence.
        return SiteCheck(version, resolution, unknown=Unknown(Reason.NOT_IN_STDLIB_STUBS))
    if (
        missing is not None
        and not missing.exact
        and not _found_before(old)
        and not _class_had_it(missing, old_resolver)
    ):
        # Typed by an annotation only: a subclass instance may have it. Certain only as a removal.
        return SiteCheck(version, resolution, unknown=Unknown(Reason.ATTRIBUTE_OF_ANNOTATED_TYPE))
    if missing is not None:
        relocated: tuple[str, ...] = ()
        before: Resolution | None = None
        if relocator is not None:
            before = old.resolution if old is not None and missing_path_is_site(site.ref, missing) else None
            relocated = relocator.find(missing.name, kind_of(before), missing.owner)
        renamed = _alias_kept(old, missing, resolver) if old is not None else None
        same = (
            same_definition(old_resolver, before, resolver, relocated[0])
            if relocated and old_resolver is not None
            else None
        )
        return SiteCheck(
            version,
            resolution,
            missing=missing,
            relocated=relocated,
            relocated_same=same,
            missing_at=missing_at,
            renamed=renamed,
            renamed_exact=not (old is not None and isinstance(old.resolution, ClassValue)),
        )
    if isinstance(resolution, Unknown):
        return SiteCheck(
            version,
            resolution,
            unknown=resolution,
            beyond_upstream=_beyond_upstream(site.ref, resolution, resolver),
            run_time_only=_run_time_only(site.ref, resolution, resolver),
            present=_present(site.ref, resolver),
        )
    if site.kind is SiteKind.IMPORT and import_walk:
        fails = _import_fails(site.ref, resolution, resolver, requirements)
        if fails is not None:
            return SiteCheck(version, resolution, import_fails=fails)
    if site.kind is not SiteKind.CALL or site.shape is None:
        return SiteCheck(version, resolution)
    if site.subclass and isinstance(resolution, ClassValue) and resolution.info.path in _FIELD_BASES:
        # `class P(NamedTuple): x: int` then `P(x=1)`: the class's own fields make its constructor.
        return SiteCheck(version, resolution, unknown=Unknown(Reason.NAMED_TUPLE_SUBCLASS))
    target = call_target(resolution, resolver)  # type: ignore[arg-type]  # Missing and Unknown returned above: a Value
    made = resolver.property_instance(resolution) if isinstance(resolution, AttributeValue) else None
    built = made.cls if made is not None else None  # a property's value, called
    if isinstance(target, Unknown):
        return SiteCheck(
            version,
            resolution,
            unknown=target,
            present=_present(site.ref, resolver),
            property_value=built.path if built is not None else None,
            not_callable=built is not None and resolver.has_no_call(built),
        )
    verdict = bind_target(site.shape, target)
    called = target  # before keywords are followed on to another callee
    raises = raised_by(site.shape, verdict, target, resolver) if isinstance(verdict, Ok) else None
    if isinstance(verdict, Ok):
        exact = None if site.subclass else _constructed(resolution, resolver)
        followed_target, verdict = follow_kwargs(verdict, target, resolver, instance_of=exact)
        if not (isinstance(verdict, Break) and any(p.detail for p in verdict.problems)):
            target = followed_target  # a key rejected down the chain is the constructor's own problem
    unknown = verdict if isinstance(verdict, Unknown) else None
    if isinstance(verdict, Break) and typing_view(target):
        # A stub says what type checkers accept: a mismatch is a break where the Python source beside
        # it rejects the call too, or, without one (compiled code, or a decorated `def` whose spelled
        # signature rejects it as well), where the same call bound the old version's stub. A call the
        # source's `def` accepts, decorated or not, is not certainly rejected. Otherwise the rules see
        # it, graded down.
        runtime = (
            bind(site.shape, target.runtime)
            if target.runtime is not None and not target.requires_also
            else None
        )
        if runtime is not None and not isinstance(runtime, Break):
            unknown = Unknown(Reason.STUB_SIGNATURE)
        elif runtime is not None and not target.runtime_decorated:
            pass  # the source's plain `def` rejects the call too: a break
        elif not (old is not None and isinstance(old.verdict, Ok)):
            unknown = Unknown(Reason.STUB_SIGNATURE)
    if raises is not None and not isinstance(verdict, Ok):
        raises = None
    always = None
    if isinstance(verdict, Ok) and unknown is None and not site.subclass and not typing_view(called):
        # `__new__` runs before `__init__`: the first that always raises is what the call raises
        always = next(
            (t.always_raises for t in (*called.requires_also, called) if t.always_raises is not None),
            None,
        )
    present = _present(site.ref, resolver) if unknown is not None else {}
    return SiteCheck(
        version,
        resolution,
        target=target,
        verdict=verdict,
        unknown=unknown,
        raises=raises,
        present=present,
        always_raises=always,
        property_value=built.path if built is not None else None,
    )


def _check_store(site: UseSite, resolver: Resolver, version: str) -> SiteCheck:
    """`x.name = value` on an instance of an upstream class: whether the class's attribute of that name
    is a read-only property here (CPython runs the property's `__set__`, which raises without a setter).
    A class known only from a stub is not read: its properties may omit the setter the runtime has."""
    ref = site.ref
    if not isinstance(ref, AttrRef):
        return SiteCheck(version, Unknown(Reason.RECEIVER_UNKNOWN))
    if isinstance(ref.base, OpaqueRef) and ref.base.alternatives:
        # a name bound to a few values: the store fails only where it fails on each of them
        each = [
            _check_store(replace(site, ref=AttrRef(a, ref.name)), resolver, version)
            for a in ref.base.alternatives
        ]
        if any(c.unknown is not None for c in each):
            unknown = Unknown(Reason.RECEIVER_UNKNOWN)
            return SiteCheck(version, unknown, unknown=unknown)
        exact = all(c.exact for c in each)
        if len({c.read_only for c in each}) == 1 and each[0].read_only is not None:
            return replace(each[0], exact=exact)
        if len({c.slots for c in each}) == 1 and each[0].slots is not None:
            return replace(each[0], exact=exact)
        return SiteCheck(version, each[0].resolution, exact=exact)
    base = resolver.resolve(ref.base)
    if isinstance(base, AttributeValue):  # `ctx.parent`, annotated `Context | None`: a Context (or None,
        cls = resolver._annotated_class(base.info)  # whose store raises AttributeError as well)
        base = InstanceValue(cls, exact=False) if cls is not None else base
    if not isinstance(base, InstanceValue) or base.cls.typing_view:
        return SiteCheck(version, base, unknown=Unknown(Reason.RECEIVER_UNKNOWN))
    resolution = resolver.resolve(ref)
    if isinstance(resolution, Unknown):
        return SiteCheck(version, resolution, unknown=resolution)
    if isinstance(resolution, AttributeValue) and resolution.on_instance and resolution.info.read_only:
        return SiteCheck(version, resolution, read_only=resolution.path, exact=base.exact)
    if isinstance(resolution, Missing) and resolution.exact and base.exact and _slotted(base.cls, resolver):
        return SiteCheck(version, resolution, slots=base.cls.path, exact=True)
    return SiteCheck(version, resolution, exact=base.exact)


def check_hook(site: UseSite, resolver: Resolver, version: str) -> SiteCheck:
    """A function a plugin module defines under a hook's name, against this version's hook
    specifications of the project its name's prefix names (`pytest_...`: pytest's). Unknown where
    those specifications could not all be read, or where a decorator of the downstream's stands
    between the function written and the one the plugin host reads."""
    ref = site.ref
    assert isinstance(ref, AttrRef) and isinstance(ref.base, ModuleRef)
    defined = _defined_under(site.hook, resolver.index.version)
    if defined is None:  # under a test of the upstream's version, whose version is not known here
        unknown = Unknown(Reason.HOOK_IMPL_CONDITIONAL)
        return SiteCheck(version, unknown, unknown=unknown)
    if not defined:
        unknown = Unknown(Reason.HOOK_IMPL_NOT_DEFINED)  # its `def` does not run with this version
        return SiteCheck(version, unknown, unknown=unknown)
    specs = resolver.index.hookspecs()
    if specs is None or specs.unread_projects:
        unknown = Unknown(Reason.HOOK_SPECS_UNREAD)
        return SiteCheck(version, unknown, unknown=unknown)
    spec = specs.specs.get((ref.base.path, ref.name))
    if spec is None and (
        (ref.base.path, ref.name) in specs.unread or resolver.index.defines(ref.name) is not False
    ):
        # spelled like a hook but not read as a spec, or a `def` of that name is still in the package
        # (a spec whose marker is spelled in a way not read): the hook is not known to be gone
        unknown = Unknown(Reason.HOOK_SPECS_UNREAD)
        return SiteCheck(version, unknown, unknown=unknown)
    resolution: Resolution = Missing(f"{ref.base.path} hook specifications", ref.name, "hooks")
    if spec is not None:
        resolution = resolver.lookup(f"{spec['module']}.{spec['cls'] + '.' if spec['cls'] else ''}{ref.name}")
    if "+conditional" in site.hook:  # whether the `def` runs at all is not known
        unknown = Unknown(Reason.HOOK_IMPL_CONDITIONAL)
        return SiteCheck(version, resolution, unknown=unknown, hookspec=spec)
    if "+decorated" in site.hook:
        unknown = Unknown(Reason.HOOK_IMPL_DECORATED)
        return SiteCheck(version, resolution, unknown=unknown, hookspec=spec)
    return SiteCheck(version, resolution, hookspec=spec)


def _defined_under(flags: str, version: str | None) -> bool | None:
    """Whether a hook's `def`, in branches of tests of the upstream's version ("+since:7", "+before:8.1"),
    runs with this version; None where the version is not known (it may or may not run)."""
    tests = [f.split(":", 1) for f in flags.split("+") if f.startswith(("since:", "before:"))]
    if not tests:
        return True
    have = tuple(int(p) for p in re.findall(r"\d+", version or "")[:4])
    if not have:
        return None
    for kind, bound in tests:
        wanted = tuple(int(p) for p in bound.split("."))
        if (have[: len(wanted)] >= wanted) != (kind == "since"):
            return False
    return True


def _slotted(cls: ClassInfo, resolver: Resolver) -> bool:
    """Every class in `cls`'s MRO (besides `object`) is the upstream's and lists its `__slots__` as a
    literal without `__dict__`: an instance holds only those names."""
    mro = resolver.mro(cls)
    if not mro:
        return False
    for entry in mro:
        if isinstance(entry, str):
            if entry != "builtins.object":
                return False
            continue
        member = entry.members.get("__slots__")
        if not isinstance(member, AttributeInfo) or member.value is None:
            return False
        try:
            names = ast.literal_eval(member.value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return False
        names = (names,) if isinstance(names, str) else names
        if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
            return False
        if "__dict__" in names:
            return False
    return True


def with_import_fails(
    site: UseSite, checked: SiteCheck, resolver: Resolver, requirements: Requirements | None
) -> SiteCheck:
    """A check made without `import_walk`, with what it left out: whether the import raises. The same
    check as with the walk: an import site's check differs only in `import_fails`."""
    if site.kind is not SiteKind.IMPORT or checked.import_fails is not None:
        return checked
    if checked.missing is not None or checked.unknown is not None or isinstance(checked.resolution, Unknown):
        return checked  # `_check_site` returns before its walk
    fails = _import_fails(site.ref, checked.resolution, resolver, requirements)
    return replace(checked, import_fails=fails) if fails is not None else checked


def _import_fails(
    ref: Ref, resolution: Resolution, resolver: Resolver, requirements: Requirements | None
) -> ImportFailure | None:
    """`import a.b.c` runs a, a.b and a.b.c; `from a import b` runs a and, b being a module, a.b."""
    if isinstance(ref, ModuleRef):
        parts = ref.path.split(".")
        modules = [".".join(parts[: i + 1]) for i in range(len(parts))]
    elif isinstance(ref, AttrRef) and isinstance(resolution, ModuleValue):
        modules = [resolution.info.path]
    else:
        return None
    for module in modules:
        found = import_failure(module, resolver.index, requirements)
        if found is not None:
            return found
    return None


# Bases whose subclasses get a constructor made from their own annotated fields, not the base's.
_FIELD_BASES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})


def typing_view(target: CallTarget) -> bool:
    """Whether the call's signature (or one it must also bind) comes from a stub with no source behind it."""
    return target.typing_view or any(typing_view(also) for also in target.requires_also)


def follow_kwargs(
    verdict: Ok,
    target: CallTarget,
    resolver: Resolver,
    depth: int = 0,
    instance_of: ClassInfo | None = None,
) -> tuple[CallTarget, Verdict]:
    """Keywords a callee takes into `**kwargs` and hands, unchanged, to one other call: a keyword that
    call no longer accepts breaks this one. Followed only where the loader proved the hand-over. With
    the instance's exact class (a constructor call), `self.m`/`super().m` are the methods it runs, and a
    mapping handed on to a method that rejects keys without a `set_<key>` attribute is checked too."""
    var_keyword = next((p.name for p in target.signature.parameters if p.kind is ParamKind.VAR_KEYWORD), None)
    forwarded = tuple(k for k, param in verdict.assignments if isinstance(k, str) and param == var_keyword)
    if var_keyword is None or not forwarded or depth >= 4:
        return target, verdict
    defined = resolver.lookup(target.defined_at)
    if not isinstance(defined, FunctionValue):
        return target, verdict
    hand_over = defined.info.forwards
    if hand_over is None:
        rejected = _keys_rejected(forwarded, defined, var_keyword, resolver, instance_of, depth)
        if rejected is not None:
            return target, rejected
        return target, verdict
    callee = _method_run(resolver, hand_over.target, hand_over.on_self, hand_over.via_super, instance_of)
    if not isinstance(callee, (FunctionValue, ClassValue)):
        return target, verdict
    next_target = call_target(callee, resolver)
    if isinstance(next_target, Unknown):
        return target, verdict
    forwarded = tuple(k for k in forwarded if k not in hand_over.consumed)
    shape = CallShape(hand_over.positional, hand_over.keywords + forwarded, hand_over.star_args, False)
    handed = bind_target(shape, next_target)
    if isinstance(handed, Ok):
        deeper_target, deeper = follow_kwargs(
            handed, next_target, resolver, depth + 1, instance_of if hand_over.on_self else None
        )
        # Only a break further down is this call's; otherwise it keeps its own target and binding
        # (which the drift rules compare with the old version's).
        return (deeper_target, deeper) if isinstance(deeper, Break) else (target, verdict)
    if isinstance(handed, Break):
        unexpected = next((p for p in handed.problems if p.kind is ProblemKind.UNEXPECTED_KEYWORD), None)
        names = tuple(n for n in unexpected.names if n in forwarded) if unexpected else ()
        if names:
            return next_target, Break((Problem(ProblemKind.UNEXPECTED_KEYWORD, names),))
    return target, verdict


def _constructed(resolution: Resolution, resolver: Resolver) -> ClassInfo | None:
    """The exact class of the instance a call of `resolution` makes: a class built by `type.__call__`
    (no metaclass of its own, no `__new__` in its upstream MRO, no outside base)."""
    if not isinstance(resolution, ClassValue):
        return None
    mro = resolver.mro(resolution.info)
    if mro is None:
        return None
    for entry in mro:
        if isinstance(entry, str):
            if entry not in ("builtins.object", "object"):
                return None
            continue
        if entry.metaclass or "__new__" in entry.members:
            return None
    return resolution.info


def _method_run(
    resolver: Resolver, path: str, on_self: bool, via_super: bool, instance_of: ClassInfo | None
) -> Resolution | None:
    """The callee of a hand-over: `super().m` is the next class's `m` after the caller's class in the
    instance's MRO (the caller's own MRO without an exact class), `self.m` the instance's `m`."""
    if not via_super and not (on_self and instance_of is not None):
        callee = resolver.lookup(path)
        if isinstance(callee, FunctionValue) and on_self:
            callee = FunctionValue(callee.info, callee.path, "instance")
        return callee
    owner_path, name = path.rsplit(".", 1)
    if instance_of is not None:
        cls = instance_of
    else:
        owner = resolver.lookup(owner_path)
        if not isinstance(owner, ClassValue):
            return None
        cls = owner.info
    mro = resolver.mro(cls)
    if mro is None:
        return None
    paths = [e if isinstance(e, str) else e.path for e in mro]
    start = paths.index(owner_path) + 1 if via_super and owner_path in paths else 0
    if via_super and owner_path not in paths:
        return None
    for entry in mro[start:]:
        if isinstance(entry, str):
            return None
        if name in entry.members:
            if name in entry.rebound:
                return None
            found = resolver.lookup(f"{entry.path}.{name}")
            if isinstance(found, FunctionValue):
                return FunctionValue(found.info, found.path, "instance")
            return None
    return None


def _keys_rejected(
    keys: tuple[str, ...],
    func: FunctionValue,
    param: str,
    resolver: Resolver,
    instance_of: ClassInfo | None,
    depth: int,
) -> Break | None:
    """A mapping of keywords handed on, call by call, to a method that raises for a key whose
    `set_<key>` the instance lacks: a break naming those keys, when the class's namespace is complete."""
    if instance_of is None or depth >= 8:
        return None
    checks = func.info.checks_keys
    if checks is not None and checks.get("param") == param:
        names = []
        for key in keys:
            if key in checks.get("exempt", ()):
                continue
            attribute = f"{checks['prefix']}{key}{checks['suffix']}"
            if isinstance(resolver.attribute_of_instance(instance_of, attribute), Missing):
                names.append(key)
        if not names:
            return None
        where = func.path
        return Break(
            (
                Problem(
                    ProblemKind.UNEXPECTED_KEYWORD,
                    tuple(names),
                    detail=f"`{where}`, which raises for a keyword without a callable "
                    f"`{checks['prefix']}<keyword>{checks['suffix']}` on `{instance_of.path}`",
                ),
            )
        )
    handover = (func.info.hands_mapping or {}).get(param)
    if handover is None:
        return None
    keys = tuple(k for k in keys if k not in handover.get("consumed", ()))
    callee = _method_run(
        resolver, handover["target"], handover["on_self"], handover["via_super"], instance_of
    )
    if not isinstance(callee, FunctionValue) or not keys:
        return None
    positional = [p for p in callee.info.signature.parameters if p.kind in _POSITIONAL]
    static = callee.info.has_decorator("builtins.staticmethod")
    offset = 1 if callee.via in ("instance", "class") and not static else 0
    index = handover["index"] + offset
    if index >= len(positional):
        return None
    return _keys_rejected(keys, callee, positional[index].name, resolver, instance_of, depth + 1)


def _check_override(
    site: UseSite, resolver: Resolver, version: str, old: SiteCheck | None = None
) -> SiteCheck:
    """Will the upstream's own calls still bind to the downstream's override of its method?"""
    resolution = resolver.resolve(site.ref)
    if not isinstance(resolution, FunctionValue) or site.signature is None:
        if site.signature is not None and isinstance(resolution, (Missing, Unknown)):
            hooked = _hook_verdict(site, resolver, None)
            if hooked is not None:  # a method the upstream calls by name: an implicit hook
                hook_verdict, hook_call = hooked
                return SiteCheck(
                    version,
                    resolution,
                    verdict=hook_verdict,
                    unknown=hook_verdict if isinstance(hook_verdict, Unknown) else None,
                    upstream_call=hook_call or None,
                )
        return SiteCheck(
            version, resolution, unknown=Unknown(Reason.NOT_AN_UPSTREAM_METHOD)
        )  # a method of its own
    target = call_target(resolution, resolver)
    if isinstance(target, Unknown):
        return SiteCheck(version, resolution, unknown=target, present=_present(site.ref, resolver))
    verdict = _override_verdict(target, site.signature)
    if isinstance(verdict, Break) and _requires_only_optional(verdict, target.signature, site.signature):
        # The override requires what the upstream declares optional: a break only if the upstream
        # ever omits it, which its signature does not tell.
        verdict = Unknown(Reason.OVERRIDE_REQUIRES_OPTIONAL)
    upstream_call = None
    if isinstance(verdict, Break):
        # the shape the signature implies is a guess where the upstream's own calls are found: they
        # decide (Django 2.1 calls `formfield_for_dbfield` only as `partial(self.m, request=request)`)
        real = _real_call_verdict(site, target, resolver)
        if real is not None:
            verdict, upstream_call = real
    if isinstance(verdict, Ok):
        found = _breaking_self_call(site, target, resolver) or _breaking_held_call(site, target, resolver)
        if found is None:
            hooked = _hook_verdict(site, resolver, target)
            if hooked is not None and isinstance(hooked[0], Break):
                found = (hooked[0], hooked[1])  # on an object the upstream does not type: a warning
        if found is not None:
            verdict, upstream_call = found
    elif (
        isinstance(verdict, Break)
        and isinstance(site.ref, AttrRef)
        and resolver.index.absence_is_evidence
        and not resolver.index.may_call(site.ref.name)
    ):
        # No code of the upstream names the method (but its `def`s) nor looks a method up by a computed
        # name: the upstream never calls it; it breaks only where the downstream (or another package)
        # calls it the new way, a path the upstream does not take.
        upstream_call = {"reach": "never-called"}
    if (
        isinstance(verdict, Break)
        and not resolver.index.absence_is_evidence
        and typing_view(target)
        and not (old is not None and isinstance(old.verdict, Ok))
    ):
        # The standard library's stubs alone, the same in the version written for: not evidence.
        verdict = Unknown(Reason.STUB_SIGNATURE)
    unknown = verdict if isinstance(verdict, Unknown) else None
    return SiteCheck(
        version, resolution, target=target, verdict=verdict, unknown=unknown, upstream_call=upstream_call
    )


def _override_verdict(target: CallTarget, override: Signature) -> Verdict:
    """Does the override take the calls the upstream's signature implies? Against a stub with Python
    source beside it, the source's signature is the method that runs (numpy 2.0 `recarray.field`: the
    stub's overloads `(attr)` and `(attr, val)`, the source's `def field(self, attr, val=None)`). With
    overloads only, each is one way the method may be called: a break where the override takes none
    of them, unknown where it takes some."""
    if target.typing_view and target.runtime is not None:
        return bind(upstream_call_shape(target.runtime), override)
    verdicts = [bind(upstream_call_shape(v), override) for v in target.variants()]
    if all(isinstance(v, Ok) for v in verdicts):
        return verdicts[0]
    if any(isinstance(v, Ok) for v in verdicts):
        return Unknown(Reason.OVERLOADS)
    return next(v for v in verdicts if not isinstance(v, Ok))


def _breaking_self_call(
    site: UseSite, target: CallTarget, resolver: Resolver
) -> tuple[Break, dict[str, object]] | None:
    """The upstream's own `self.m(...)` calls in the classes the downstream class inherits (where that
    class's method is the one an instance runs): the first that binds to the upstream's method but not to
    the override. A call the upstream's own method refuses is not counted (unreachable or its own bug)."""
    for verdict, described in _self_call_verdicts(site, target, resolver):
        if isinstance(verdict, Break):
            return verdict, described
    return None


def _real_call_verdict(
    site: UseSite, target: CallTarget, resolver: Resolver
) -> tuple[Verdict, dict[str, object] | None] | None:
    """The override bound to the upstream's own calls of the method (`self.m(...)`, `partial(self.m,
    request=request)`, `self.m` handed over, and calls on an object another class holds, typed as one
    of the classes the downstream class inherits) instead of the shape its signature implies: the
    first that does not bind, else
    unknown where one's arguments are not all known, else fine; None when the upstream makes no such
    call (the implied shape is then all there is)."""
    verdicts = [*_self_call_verdicts(site, target, resolver), *_held_call_verdicts(site, target, resolver)]
    if not verdicts:
        return None
    for verdict, described in verdicts:
        if isinstance(verdict, Break):
            return verdict, described
    unknown = next((v for v, _ in verdicts if isinstance(v, Unknown)), None)
    return (unknown or verdicts[0][0]), None


def _inherited_classes(site: UseSite, resolver: Resolver) -> tuple[str, Signature, list[ClassInfo]] | None:
    """For an override's site (a method the downstream class defines): its name, its signature and the
    upstream classes of its receiver's MRO; None where the site is no such override or the MRO is not
    known."""
    if not isinstance(site.ref, AttrRef) or site.signature is None:
        return None
    base = resolver.resolve(site.ref.base)
    cls = base.cls if isinstance(base, InstanceValue) else None
    mro = resolver.mro(cls) if cls is not None else None
    if not mro:
        return None
    return site.ref.name, site.signature, [entry for entry in mro if not isinstance(entry, str)]


def _self_call_verdicts(
    site: UseSite, target: CallTarget, resolver: Resolver
) -> Iterator[tuple[Verdict, dict[str, object]]]:
    """Each `self.m(...)` (or `partial(self.m, ...)`) call of the classes the downstream class inherits
    that its instances run and the upstream's own method does not refuse, bound to the override."""
    found = _inherited_classes(site, resolver)
    if found is None:
        return
    name, signature, classes = found
    for entry in classes:
        for call in entry.self_calls.get(name, ()):
            runs = next((c for c in classes if call["caller"] in c.members), None)
            if runs is not entry:
                continue  # a subclass overrides the calling method: this call is not the one that runs
            shape = CallShape(
                call["positional"], tuple(call["keywords"]), call["star_args"], call["star_kwargs"]
            )
            if isinstance(bind_target(shape, target), Break):
                continue
            text = str(call.get("text") or f"self.{name}{_render_shape(shape)}")
            yield (
                bind(shape, signature),
                {
                    "caller": f"{entry.path}.{call['caller']}",
                    "call": text,
                    "lineno": call["lineno"],
                    "self": True,
                },
            )


# What CPython may run of an instance without the code naming it: building it, dropping it, a missing
# attribute's lookup, an attribute store, the class statement of a subclass.
_IMPLICIT_METHODS = (
    "__init__",
    "__new__",
    "__post_init__",
    "__del__",
    "__getattr__",
    "__getattribute__",
    "__setattr__",
    "__delattr__",
    "__init_subclass__",
    "__set_name__",
    "__class_getitem__",
)
_PLAIN_METACLASSES = (None, "abc.ABCMeta", "builtins.type")


def unentered_override(site: UseSite, resolver: Resolver, reach: ClassReach) -> dict[str, object] | None:
    """For an override the upstream calls from its own methods (`self.m(...)`): where the downstream
    never runs one of them, what to say (the upstream methods that call it, which nothing the downstream
    runs reaches); None where it may run one, or where that is not known.

    What the downstream runs of the upstream's methods: the names it uses on the class's instances
    (`reach`: every instance accounted for, none handed on), the methods CPython runs unnamed (building,
    dropping, attribute lookups and stores), then each name the upstream's methods of those names use
    on `self` or `super()`, closed over. Names are matched in every class of the MRO (whichever runs).
    Not known: a class of the MRO outside the upstream, a metaclass (class creation runs its code) or a
    class decorator, a member of such a name that is no method read from source (a descriptor, a conditional `def`), a
    method that hands `self` on or that a decorator wraps, a bound method read and not called."""
    if not isinstance(site.ref, AttrRef):
        return None
    base = resolver.resolve(site.ref.base)
    mro = resolver.mro(base.cls) if isinstance(base, InstanceValue) else None
    if not mro:
        return None
    classes: list[ClassInfo] = []
    for entry in mro:
        if isinstance(entry, str):
            if entry in TRANSPARENT_BASES:
                continue
            return None
        if (
            entry.typing_view
            or entry.open_namespace
            or entry.dynamic_attributes
            or entry.decorators
            or entry.metaclass not in _PLAIN_METACLASSES
        ):
            return None  # members added or class creation run by code not read here
        classes.append(entry)
    if reach.read & reach.defined:
        return None  # a downstream method read, not called: handed on with its instance
    name = site.ref.name
    todo = [*reach.uses, *_IMPLICIT_METHODS]
    seen: set[str] = set()
    called: set[str] = set()  # the names the upstream's methods that run use on `self`
    while todo:
        used = todo.pop()
        if used in seen:
            continue
        seen.add(used)
        for cls in classes:
            if used not in cls.members and used not in cls.self_uses:
                continue
            if used in cls.instance_attributes and used not in cls.bound_names and used not in cls.self_uses:
                continue  # a value its methods store on the instance (`self.name = name`), no code
            uses = cls.self_uses.get(used)
            if uses is None:
                return None
            member = cls.members.get(used)
            if used in reach.read and not (
                isinstance(member, FunctionInfo)
                and member.has_decorator("builtins.property", "functools.cached_property")
            ):
                return None  # a bound method handed on with its instance
            called.update(uses)
            todo.extend(uses)
    if name in called:
        return None
    callers = sorted(
        f"{cls.path}.{caller}"
        for cls in classes
        for caller, uses in cls.self_uses.items()
        if uses is not None and name in uses
    )
    return {"reach": "unentered", "callers": callers, "class": reach.cls}


MAX_HOLDER_MODULES = 40  # modules read for calls on held objects, per overridden method


def _breaking_held_call(
    site: UseSite, target: CallTarget, resolver: Resolver
) -> tuple[Break, dict[str, object]] | None:
    """The upstream's calls of the method on an object another upstream class holds, typed by an
    annotation as one of the classes the downstream class inherits (`self.widget.render(name, value,
    attrs=attrs, renderer=r)` with `widget: Widget`), in the modules of the packages those classes are
    defined in: the first that binds to the upstream's method but not to the override."""
    if not isinstance(site.ref, AttrRef) or site.signature is None:
        return None
    base = resolver.resolve(site.ref.base)
    cls = base.cls if isinstance(base, InstanceValue) else None
    mro = resolver.mro(cls) if cls is not None else None
    if not mro:
        return None
    classes = [entry for entry in mro if not isinstance(entry, str)]
    paths = {c.path for c in classes}
    held: dict[str, bool] = {}  # an annotation's path -> whether it names one of those classes

    def typed_as_one(on: str) -> bool:
        if on not in held:
            value = resolver.lookup(on)  # through re-exports: the class the annotation names
            held[on] = on in paths or (isinstance(value, ClassValue) and value.info.path in paths)
        return held[on]

    untyped: tuple[Break, dict[str, object]] | None = None
    for module in _holder_modules(classes, resolver, site.ref.name):
        info = resolver.index.module(module)
        for member in info.members.values() if info is not None else ():
            if not isinstance(member, ClassInfo):
                continue
            for call in member.held_calls:
                if call["method"] != site.ref.name or not typed_as_one(call["on"]):
                    continue
                found = _override_rejects(call, member, target, site.signature)
                if found is not None:
                    return found
            for call in member.untyped_calls if untyped is None else ():
                if call["method"] == site.ref.name:
                    untyped = _override_rejects(call, member, target, site.signature, untyped=True)
    # A call on a value the upstream does not type: the first that binds to the upstream's method
    # but not to the override (Django 2.1 `widget.render(..., renderer=...)`); a warning, not certain.
    return untyped


def _held_call_verdicts(
    site: UseSite, target: CallTarget, resolver: Resolver
) -> Iterator[tuple[Verdict, dict[str, object]]]:
    """Each call of the method on an object an upstream class holds, typed by an annotation as one of
    the classes the downstream class inherits, that the upstream's own method does not refuse, bound
    to the override (see `_breaking_held_call`)."""
    found = _inherited_classes(site, resolver)
    if found is None:
        return
    name, signature, classes = found
    paths = {c.path for c in classes}
    held: dict[str, bool] = {}
    for module in _holder_modules(classes, resolver, name):
        info = resolver.index.module(module)
        for member in info.members.values() if info is not None else ():
            if not isinstance(member, ClassInfo):
                continue
            for call in member.held_calls:
                if call["method"] != name:
                    continue
                on = call["on"]
                if on not in held:
                    value = resolver.lookup(on)
                    held[on] = on in paths or (isinstance(value, ClassValue) and value.info.path in paths)
                if not held[on]:
                    continue
                shape = CallShape(
                    call["positional"], tuple(call["keywords"]), call["star_args"], call["star_kwargs"]
                )
                if isinstance(bind_target(shape, target), Break):
                    continue
                yield (
                    bind(shape, signature),
                    {
                        "caller": f"{member.path}.{call['caller']}",
                        "call": str(call["text"]),
                        "lineno": call["lineno"],
                    },
                )


def _override_rejects(
    call: dict[str, Any], member: ClassInfo, target: CallTarget, signature: Signature, untyped: bool = False
) -> tuple[Break, dict[str, object]] | None:
    """The upstream's call, when it binds to the upstream's method and not to the override."""
    shape = CallShape(call["positional"], tuple(call["keywords"]), call["star_args"], call["star_kwargs"])
    if not isinstance(bind_target(shape, target), Ok):
        return None
    verdict = bind(shape, signature)
    if not isinstance(verdict, Break):
        return None
    found: dict[str, object] = {
        "caller": f"{member.path}.{call['caller']}",
        "call": str(call["text"]),
        "lineno": call["lineno"],
    }
    if untyped:
        found["untyped"] = True
    return verdict, found


def _hook_verdict(
    site: UseSite, resolver: Resolver, target: CallTarget | None
) -> tuple[Verdict, dict[str, object]] | None:
    """The upstream's calls of the method by name (`getattr(obj, "hook")(...)`, `obj.hook(...)` under
    `hasattr(obj, "hook")`, `self.hook(...)` in a class that does not declare it) that can reach an
    instance of the downstream class, read in the modules of the packages of the classes it inherits.

    Which calls reach it: one on `self` in a method of a class the downstream class inherits (and
    that method is the one its instances run), or one on a parameter annotated as such a class: the
    call runs on the downstream's instances whenever the upstream runs that code with them (as the
    override check assumes of `self.m(...)` calls). One on an object the upstream does not type may
    be made on instances of any class: a call that does not bind is a warning ("reach": "untyped"),
    never an error. None when the upstream calls the name nowhere in those modules.

    With `target` (the method the upstream class declares), only calls its own method takes count."""
    if not isinstance(site.ref, AttrRef) or site.signature is None:
        return None
    base = resolver.resolve(site.ref.base)
    cls = base.cls if isinstance(base, InstanceValue) else None
    mro = resolver.mro(cls) if cls is not None else None
    if not mro:
        return None
    classes = [entry for entry in mro if not isinstance(entry, str)]
    by_path = {c.path: c for c in classes}
    name = site.ref.name
    typed: dict[str, bool] = {}

    def typed_as_one(on: str) -> bool:
        if on not in typed:
            value = resolver.lookup(on)
            typed[on] = on in by_path or (isinstance(value, ClassValue) and value.info.path in by_path)
        return typed[on]

    calls: list[tuple[dict[str, object], str | None]] = []  # (call, None if it certainly reaches)
    for entry in classes:  # `self.hook(...)` of a class that does not declare `hook`
        if target is None:
            for call in entry.self_calls.get(name, ()):
                if next((c for c in classes if call["caller"] in c.members), None) is entry:
                    calls.append(({**call, "caller": f"{entry.path}.{call['caller']}"}, None))
    for module in _holder_modules(classes, resolver, name):
        info = resolver.index.module(module)
        for call in info.hook_calls if info is not None else ():
            if call["method"] != name:
                continue
            caller = f"{module}.{call['caller']}"
            if call["receiver"] == "self":
                holder = by_path.get(str(call["cls"]))
                if holder is None:
                    continue  # a method of a class the downstream class does not inherit
                runs = next((c for c in classes if caller.rpartition(".")[2] in c.members), None)
                if runs is not holder:
                    continue  # overridden on the way: that call is not the one that runs
                calls.append(({**call, "caller": caller}, None))
            elif call["receiver"] == "typed":
                if typed_as_one(str(call["on"])):
                    calls.append(({**call, "caller": caller}, None))
            else:
                calls.append(({**call, "caller": caller}, "untyped"))
    if not calls:
        return None
    unknown: Unknown | None = None
    found: tuple[Break, dict[str, object]] | None = None
    for call, reach in calls:
        shape = CallShape(
            int(call["positional"]),  # type: ignore[call-overload]  # stored as an int
            tuple(call["keywords"]),  # type: ignore[arg-type]  # stored as a list of names
            bool(call["star_args"]),
            bool(call["star_kwargs"]),
        )
        if target is not None and not isinstance(bind_target(shape, target), Ok):
            continue
        verdict = bind(shape, site.signature)
        if isinstance(verdict, Break):
            described: dict[str, object] = {
                "caller": call["caller"],
                "call": str(call.get("text") or f"self.{name}{_render_shape(shape)}"),
                "lineno": call["lineno"],
                "hook": target is None,
                "reach": reach,
            }
            if reach is None:
                return verdict, described
            found = found or (verdict, described)
        elif isinstance(verdict, Unknown):
            unknown = unknown or verdict
    if found is not None:
        return found
    if target is not None:
        return None
    return (unknown or Ok(()), {})


def _holder_modules(classes: list[ClassInfo], resolver: Resolver, name: str) -> list[str]:
    """The modules of the classes' packages (each class's module and its siblings), in a stable order,
    at most MAX_HOLDER_MODULES, less those whose files never spell `name`: a call of the method, on a
    held object or by name, writes it. The files' text is read, not their models (loading a model is
    what costs)."""
    return [m for m in _package_modules(classes, resolver) if _spells(resolver, m, name)]


def _spells(resolver: Resolver, module: str, name: str) -> bool:
    """Whether the module's source (its stub and its Python source) contains `name`; True where a
    file cannot be read or is too large to read (then its model says)."""
    found = resolver.index.module_file(module)
    if found is None:
        return True
    files = [found]
    if found.suffix == ".pyi" and found.with_suffix(".py").is_file():
        files.append(found.with_suffix(".py"))
    return any(_file_spells(f, name) is not False for f in files)


_MAX_SCANNED_BYTES = 4 * 1024 * 1024


@functools.lru_cache(maxsize=8192)
def _file_spells(path: Path, name: str) -> bool | None:
    """Whether a module file's bytes contain `name`; None when it is unreadable or too large."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_SCANNED_BYTES:
            return None
        return name.encode() in path.read_bytes()
    except OSError:
        return None


def _package_modules(classes: list[ClassInfo], resolver: Resolver) -> list[str]:
    """The modules of the classes' packages (each class's module and its siblings), in a stable order,
    at most MAX_HOLDER_MODULES."""
    index = resolver.index
    found: dict[str, None] = {}
    for cls in classes:
        module = cls.path.rsplit(".", 1)[0]
        while module and index.module(module) is None and "." in module:
            module = module.rsplit(".", 1)[0]
        found[module] = None
        package = module.rsplit(".", 1)[0] if "." in module else module
        folder = index.module_file(package)
        if folder is None:
            continue
        folder = folder if folder.is_dir() else folder.parent
        try:
            names = sorted(p.stem for p in folder.iterdir() if p.suffix == ".py" and p.stem.isidentifier())
        except OSError:
            continue
        for name in names:
            found[package if name == "__init__" else f"{package}.{name}"] = None
            if len(found) >= MAX_HOLDER_MODULES:
                return list(found)
    return list(found)


def _render_shape(shape: CallShape) -> str:
    parts = ["\u2026"] * shape.positional + (["*\u2026"] if shape.star_args else [])
    parts += [f"{k}=\u2026" for k in shape.keywords] + (["**\u2026"] if shape.star_kwargs else [])
    return f"({', '.join(parts)})"


def _requires_only_optional(verdict: Break, upstream: Signature, override: Signature) -> bool:
    """Every problem is a parameter the override requires where the upstream's method has an optional
    one: of the same name, at the same position, or its `*args`/`**kwargs` (scipy's `_pdf(self, x,
    *args)`, which the upstream calls with however many shape parameters the subclass declares)."""
    positions = [p for p in upstream.parameters if p.kind in _POSITIONAL]
    override_positions = [p.name for p in override.parameters if p.kind in _POSITIONAL]
    for problem in verdict.problems:
        if problem.kind is not ProblemKind.MISSING_ARGUMENT:
            return False
        for name in problem.names:
            mine = override.get(name)
            positional = mine is not None and mine.kind in _POSITIONAL
            if positional and upstream.accepts_any_positional:
                continue
            if (
                mine is not None
                and mine.kind is not ParamKind.POSITIONAL_ONLY
                and upstream.accepts_any_keyword
            ):
                continue
            param = upstream.get(name)
            if param is None and positional:
                index = override_positions.index(name)
                param = positions[index] if index < len(positions) else None
            if param is None or not param.has_default:
                return False
    return True


def upstream_call_shape(signature: Signature) -> CallShape:
    """How the upstream calls its own method at the least: every required parameter, as declared."""
    positional = sum(1 for p in signature.parameters if p.required and p.kind in _POSITIONAL)
    keywords = tuple(p.name for p in signature.parameters if p.required and p.kind is ParamKind.KEYWORD_ONLY)
    return CallShape(positional, keywords)


_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)


def _alias_kept(old: SiteCheck, missing: Missing, resolver: Resolver) -> str | None:
    """The sibling the missing name was an alias of in the old version (`X = Y` in the same class or
    module, so the same object), when the new version still has it: the name to use instead."""
    before = old.resolution
    if isinstance(before, ClassValue):
        return _empty_subclass_kept(before.info, missing, resolver)
    if not isinstance(before, AttributeValue) or not before.info.value_path:
        return None
    if before.path.rpartition(".")[2] != missing.name:
        return None
    owner, _, sibling = before.info.value_path.rpartition(".")
    if owner != before.path.rpartition(".")[0] or sibling == missing.name or not sibling.isidentifier():
        return None
    now = resolver.lookup(f"{missing.owner}.{sibling}")
    return sibling if isinstance(now, (FunctionValue, ClassValue, AttributeValue)) else None


def _empty_subclass_kept(cls: ClassInfo, missing: Missing, resolver: Resolver) -> str | None:
    """`class SafeConfigParser(ConfigParser): ...` deprecated with "Use `ConfigParser` instead": a class
    that declares nothing of its own over one base of its module, the base its deprecation names and
    the new version still has. A stub's word only (the runtime's body may differ): `renamed_unsafe`."""
    module, _, name = cls.path.rpartition(".")
    if name != missing.name or len(cls.bases) != 1 or cls.members or not cls.deprecated:
        return None
    base_module, _, base = cls.bases[0].rpartition(".")
    if base_module != module or f"`{base}`" not in cls.deprecated:
        return None
    now = resolver.lookup(f"{missing.owner}.{base}")
    return base if isinstance(now, ClassValue) else None


def _class_had_it(missing: Missing, old_resolver: Resolver | None) -> bool:
    """Whether the class an annotated value is an instance of had the name in the old version: the
    class lost it (`Engine.execute`, SQLAlchemy 2.0), whatever the old version typed the value as."""
    if old_resolver is None or missing.owner_kind != "instance" or missing.owner.startswith("builtins."):
        return False
    cls = old_resolver.lookup(missing.owner)
    if not isinstance(cls, ClassValue):
        return False
    return not isinstance(old_resolver.attribute_of_instance(cls.info, missing.name), (Missing, Unknown))


def _found_before(old: SiteCheck | None) -> bool:
    return old is not None and old.missing is None and not isinstance(old.resolution, (Missing, Unknown))


def missing_path_is_site(ref: Ref, missing: Missing) -> bool:
    """Whether the miss is the site's own name (so the old resolution of the site tells its kind)."""
    if isinstance(ref, (AttrRef, StarRef)):
        return ref.name == missing.name
    return isinstance(ref, ModuleRef) and ref.path == f"{missing.owner}.{missing.name}"


def _beyond_upstream(ref: Ref, resolution: Unknown, resolver: Resolver) -> str | None:
    """The outside base class `ref`'s last name can only come from now, when the reference up to it
    resolves and no upstream class in front of that base defines the name."""
    if resolution.reason is not Reason.EXTERNAL_BASE or not isinstance(ref, AttrRef) or not resolution.detail:
        return None
    base = resolver.resolve(ref.base)
    return resolution.detail if isinstance(base, (ClassValue, InstanceValue)) else None


def _run_time_only(ref: Ref, resolution: Unknown, resolver: Resolver) -> str | None:
    """What alone could still answer `x.name` at run time, when `x` is an instance of an upstream class
    no class of whose MRO (all upstream classes) defines the name, and the class answers unknown
    names itself: "`pkg.Base.__getattr__`" (pandas' `NDFrame.__getattr__` serves columns), or
    "attributes `pkg.Base` sets on its instances at run time" (a method writes the instance's
    `__dict__` under computed names)."""
    if resolution.reason not in (Reason.CLASS_GETATTR, Reason.DYNAMIC_ATTRIBUTES) or not isinstance(
        ref, AttrRef
    ):
        return None
    base = resolver.resolve(ref.base)
    if not isinstance(base, InstanceValue):
        return None
    mro = resolver.mro(base.cls)
    classes = [entry for entry in mro or () if isinstance(entry, ClassInfo)]
    if mro is None or len(classes) != len(mro):
        return None
    hooks = [f"`{entry.path}.__getattr__`" for entry in classes if "__getattr__" in entry.members][:1]
    writers = [e.path for e in classes if e.dynamic_attributes or "__getattribute__" in e.members]
    if writers:
        hooks.append(f"attributes `{writers[0]}` sets on its instances at run time")
    return " or ".join(hooks) or None


def first_missing(ref: Ref, resolver: Resolver) -> Missing | None:
    """The innermost certain miss along a reference (`a.b.c` with `b` gone: the miss of `b`)."""
    return _first_missing_at(ref, resolver)[0]


def _first_missing_at(ref: Ref, resolver: Resolver) -> tuple[Missing | None, Ref | None]:
    """first_missing, with the reference along `ref` at which it occurs."""
    resolution = resolver.resolve(ref)
    if isinstance(resolution, Missing):
        return resolution, ref
    if isinstance(resolution, Unknown) and resolution.reason in (
        Reason.PARENT_MISSING,
        Reason.CALLEE_UNRESOLVED,
    ):
        inner = _inner(ref)
        return _first_missing_at(inner, resolver) if inner is not None else (None, None)
    return None, None


def _present(ref: Ref, resolver: Resolver) -> dict[Ref, Resolution]:
    """The references along `ref` (itself included) that resolve to a value, with it: they exist in
    this version (resolutions are memoized, so this walk costs no new lookups)."""
    found: dict[Ref, Resolution] = {}
    current: Ref | None = ref
    while current is not None and len(found) < 64:
        resolution = resolver.resolve(current)
        if not isinstance(resolution, (Missing, Unknown)):
            found[current] = resolution
        current = _inner(current)
    return found


def before_miss(new: SiteCheck, old: SiteCheck | None) -> Resolution | None:
    """What the old version had where the new one misses a name: the old resolution of the reference
    at which the new miss occurs (the site's own when the miss is the site, or not recorded)."""
    if old is None:
        return None
    if new.missing_at is not None and new.missing_at in old.present:
        return old.present[new.missing_at]
    return old.resolution


def _inner(ref: Ref) -> Ref | None:
    if isinstance(ref, (AttrRef, ItemRef)):
        return ref.base
    if isinstance(ref, CallRef):
        return ref.func
    if isinstance(ref, InstanceRef):
        return ref.cls
    if isinstance(ref, ModuleRef) and "." in ref.path:
        return ModuleRef(ref.path.rpartition(".")[0])
    return None


class SiteChecks:
    """Each use site checked against both versions once, as `audit` checks it."""

    def __init__(self, old: Resolver, new: Resolver) -> None:
        self.old, self.new = old, new
        self._done: dict[int, tuple[SiteCheck, SiteCheck]] = {}

    def __call__(self, site: UseSite) -> tuple[SiteCheck, SiteCheck]:
        key = id(site)
        if key not in self._done:
            before = check_site(site, self.old, "old")
            self._done[key] = (before, check_site(site, self.new, "new", None, before))
        return self._done[key]


__all__ = [
    "Break",
    "CheckedSite",
    "Ok",
    "SiteCheck",
    "SiteChecks",
    "before_miss",
    "check_site",
    "first_missing",
]
