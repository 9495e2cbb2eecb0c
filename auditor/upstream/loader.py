"""Load one upstream module statically with griffe and convert it into apidrift's model (`ModuleInfo`).

griffe does the parsing and name resolution (canonical paths of imports, bases, decorators); a small
griffe extension records the facts griffe does not keep (class-body field order, `self.x` assignments,
every name a module binds, identity decorators). Nothing is imported or executed.

Input: one module's dotted name, file and text, and the root it was read under. Output: its
`ModuleInfo`. This module holds the entry point (`load_module`, with its time budget), the griffe
extension and the conversion of griffe's objects into the model; the AST analyses the extension runs
are in `analyses/` (namespace, exports, stubs, deprecations, decorators, calls).
"""

from __future__ import annotations

import ast
import builtins
import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import griffe

from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.upstream.analyses.aliases import expand, type_aliases
from apidrift.auditor.upstream.analyses.calls import (
    _held_calls,
    _kwargs_forwarding,
    _makes_metaclass_base,
    _returned_class,
    _returns_constructed,
    _self_calls,
    _self_uses,
    property_constructs,
    property_literal_type,
)
from apidrift.auditor.upstream.analyses.class_getattr import getattr_serves, single_constructor_return
from apidrift.auditor.upstream.analyses.decorators import (
    _container_stores,
    _decorator_facts,
    _hands_back_fget,
    _is_forwarding_wrapper,
    _is_identity,
    _keeps_signature,
    _reapplies_registered,
    _registers_self,
    _returns_identity_decorator,
    _returns_package_decorator,
    _sets_attributes_of_arguments,
    _stores_fget,
)
from apidrift.auditor.upstream.analyses.defaults import replaced_defaults
from apidrift.auditor.upstream.analyses.deprecations import _deprecation
from apidrift.auditor.upstream.analyses.exports import _computes_all
from apidrift.auditor.upstream.analyses.guards import raising_guards
from apidrift.auditor.upstream.analyses.hooks import hook_calls
from apidrift.auditor.upstream.analyses.hookspecs import hookspec_facts
from apidrift.auditor.upstream.analyses.mappings import added_names, checked_keys, mapping_handovers
from apidrift.auditor.upstream.analyses.module_aliases import module_aliases
from apidrift.auditor.upstream.analyses.namespace import (
    _DYNAMIC_BINDING,
    _body_bound_names,
    _class_patches,
    _computed_namespace,
    _getattr_program,
    _import_twins,
    _instance_attributes,
    _open_module_namespace,
    _rebound_names,
    _star_imports,
    _top_level_names,
    _unpacked_names,
    _uses_namespace_functions,
    _without_main_blocks,
)
from apidrift.auditor.upstream.analyses.needs import import_failure, own_imports
from apidrift.auditor.upstream.analyses.nodes import (
    _OWN_NODES,
    _class_statements,
    _last_name_of,
    _module_statements,
    _resolve_text,
)
from apidrift.auditor.upstream.analyses.raises import always_raises
from apidrift.auditor.upstream.analyses.stubs import (
    Decorated,
    _source_classes,
    _source_definitions,
    _source_getattr,
    _source_names,
    _source_star_imports,
    _source_text,
)
from apidrift.auditor.upstream.factory_new import UNKNOWN, Construct, new_constructs
from apidrift.auditor.upstream.model import (
    BUDGET_MESSAGE,
    AliasInfo,
    AlwaysRaises,
    AttributeInfo,
    ClassInfo,
    Decorator,
    FieldSpec,
    Forwarding,
    FunctionInfo,
    GuardTest,
    Member,
    ModuleInfo,
    RaisingGuard,
)

_Agent = griffe.Visitor | griffe.Inspector  # what walks the tree when a hook runs

_KINDS = {
    "positional-only": ParamKind.POSITIONAL_ONLY,
    "positional or keyword": ParamKind.POSITIONAL_OR_KEYWORD,
    "variadic positional": ParamKind.VAR_POSITIONAL,
    "keyword-only": ParamKind.KEYWORD_ONLY,
    "variadic keyword": ParamKind.VAR_KEYWORD,
}


_DATACLASS_TRANSFORM = frozenset({"typing.dataclass_transform", "typing_extensions.dataclass_transform"})


_OPTIONAL = frozenset({"typing.Optional", "typing_extensions.Optional"})
_ANNOTATED = frozenset({"typing.Annotated", "typing_extensions.Annotated"})


_DYNAMIC_MARKERS = ("globals()", "sys.modules[", "setattr(sys.modules", "vars()")
# Code that makes modules exist without files: a store into `sys.modules`, an importer on
# `sys.meta_path` or a path hook (six installs `six.moves` and its children that way).
_INSTALLS_MODULES = re.compile(
    r"sys\.modules\[[^\]\n]+\]\s*=(?!=)|sys\.modules\.(?:setdefault|update)\(|sys\.meta_path\.(?:append|insert|extend)\("
    r"|sys\.path_hooks\.(?:append|insert)\("
)
# A package `__path__` other folders join (`pkgutil.extend_path`, `pkg_resources.declare_namespace`,
# a `__path__` change): a namespace shared with other distributions.
_SHARES_PATH = re.compile(
    r"\bextend_path\(|\bdeclare_namespace\(|^__path__\s*(?:\+?=(?!=)|\.(?:append|extend|insert)\()", re.M
)
# Uses of the module's namespace that only read it (numpy's `__dir__` returns `globals().keys() | {...}`):
# they bind no name.
_NAMESPACE_READ = re.compile(
    r"\b(?:globals|vars)\(\)\s*\.\s*(?:keys|items|values|get|copy)\b"
    r"|\b(?:list|sorted|set|frozenset|tuple|len|iter)\(\s*(?:globals|vars)\(\)\s*\)"
    # `__import__(name, globals(), locals(), [])` reads `__name__`/`__package__` and binds nothing
    r"|\b__import__\((?:[^()]|\([^()]*\))*\)"
)


_FACTS = "apidrift"  # key of our facts in griffe objects' `extra`


logging.getLogger("griffe").setLevel(logging.ERROR)  # griffe warns about unparsable docstrings etc.


# --- bounds on one module's load ------------------------------------------------------------------

DEFAULT_LOAD_SECONDS = 20.0  # one module's load; after it, the module's names are "not checkable"


LOAD_SECONDS_VARIABLE = "APIDRIFT_MODULE_LOAD_SECONDS"


class LoadBudgetExceeded(Exception):
    """The module's load ran past its budget: its names are unknown, not missing."""


class _Budget(griffe.Extension):
    """Checked at every node griffe visits (modules, classes, functions, attributes, type aliases)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds

    def on_node(self, *, node: ast.AST | griffe.ObjectNode, agent: _Agent, **kwargs: Any) -> None:
        self.check()

    def on_alias_instance(self, **kwargs: Any) -> None:
        self.check()

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise LoadBudgetExceeded(
                f"{BUDGET_MESSAGE} of {self.seconds:g} s (set {LOAD_SECONDS_VARIABLE} to change it)"
            )


def load_seconds() -> float:
    text = os.environ.get(LOAD_SECONDS_VARIABLE, "").strip()
    try:
        value = float(text) if text else DEFAULT_LOAD_SECONDS
    except ValueError:
        value = DEFAULT_LOAD_SECONDS
    return value if value > 0 else DEFAULT_LOAD_SECONDS


_SIBLINGS: dict[int, tuple[ast.AST, list[ast.AST], dict[int, int]]] = {}


def _next_sibling(node: ast.AST) -> ast.AST:
    """griffe's `ast_next` in constant time: it rescans the parent's children on every call, which made a
    module of n top-level assignments O(n^2) to load (20,000 of them ran past 5 minutes)."""
    # lazy: griffe's private layout, there only when _install_linear_next found it
    from griffe._internal.agents.nodes.ast import ast_children

    parent = node.parent  # type: ignore[attr-defined]  # griffe's visitor links each AST node to its parent
    cached = _SIBLINGS.get(id(parent))
    if cached is None or cached[0] is not parent:
        children = list(ast_children(parent))
        cached = (parent, children, {id(child): at for at, child in enumerate(children)})
        _SIBLINGS[id(parent)] = cached
    _, children, positions = cached
    at = positions.get(id(node))
    if at is None or at + 1 >= len(children):
        raise griffe.LastNodeError("there is no next node")
    return children[at + 1]


def _install_linear_next() -> None:
    try:
        # lazy: griffe's private layout, which another griffe version may not have
        from griffe._internal.agents import visitor
    except ImportError:  # another griffe layout: keep its own (slower) lookup
        return
    if hasattr(visitor, "ast_next"):
        visitor.ast_next = _next_sibling


_install_linear_next()


def load_module(dotted: str, filepath: Path, code: str, root: Path) -> ModuleInfo:
    """Parse `code` (the module `dotted`, read from `filepath` under `root`) into a `ModuleInfo`.

    Raises `LoadBudgetExceeded` when the load runs past its budget (`APIDRIFT_MODULE_LOAD_SECONDS`).
    """
    parent = _parent_chain(dotted, root)
    name = dotted.rsplit(".", 1)[-1]
    budget = _Budget(load_seconds())
    extensions = griffe.load_extensions(_FactsExtension, budget)
    code = _without_main_blocks(code)
    try:
        module = griffe.visit(name, filepath, code, parent=parent, extensions=extensions)
    finally:
        _OWN_NODES.clear()
        _SIBLINGS.clear()
    budget.check()
    facts = module.extra.get(_FACTS, {})
    members = {}
    for member_name, member in module.members.items():
        converted = _convert_member(member, f"{dotted}.{member_name}")
        if converted is not None:
            members[member_name] = converted
    members.update(_overload_only(module, members))
    for unpacked, lineno in facts.get("unpacked", ()):
        members.setdefault(unpacked, AttributeInfo(unpacked, lineno=lineno))
    for class_name, patch in facts.get("class_patches", {}).items():
        cls_info = members.get(class_name)
        if isinstance(cls_info, ClassInfo):
            members[class_name] = replace(
                cls_info,
                bound_names=cls_info.bound_names | frozenset(patch["names"]),
                open_namespace=cls_info.open_namespace or (_DYNAMIC_BINDING if patch["open"] else None),
            )
    if filepath.suffix == ".pyi":
        # A stub is a typing view: what type checkers accept, stricter than the runtime may be. Where
        # Python source beside it defines a function, that source's signature is the runtime's.
        backed = _source_definitions(filepath)
        members = {n: _typing_view(m, backed.get(n)) for n, m in members.items()}
        # A class the source beside defines may hold more than the stub declares (deprecated methods,
        # aliases a class decorator adds): its names are bound, its decorators the source's, and its
        # plain methods bind as the source spells them.
        for class_name, extra in _source_classes(filepath, dotted).items():
            declared = members.get(class_name)
            if isinstance(declared, ClassInfo):
                # A plain method only the source defines binds as that source spells it.
                added = {
                    name: FunctionInfo(name, signature, tuple(Decorator(path) for path in decorators))
                    for name, (signature, decorators) in extra["methods"].items()
                    if name not in declared.members
                }
                members[class_name] = replace(
                    declared,
                    members={**declared.members, **added},
                    source_only=frozenset(extra["names"]) - set(declared.members),
                    open_namespace=declared.open_namespace or (_DYNAMIC_BINDING if extra["open"] else None),
                    source_decorators=tuple(Decorator(path, called) for path, called in extra["decorators"]),
                )
    program = facts.get("getattr") if filepath.suffix == ".py" else None
    program_code = code
    if filepath.suffix == ".pyi":
        beside = _source_getattr(filepath)
        if beside is not None:
            program, program_code = beside
    if program is not None and program["source"] is None:
        program = None  # too deeply nested to copy: the `__getattr__` is not read
    if program is not None:
        # The module's own `__getattr__` (and the helpers building it) may play with globals() or
        # sys.modules for the names it serves: the evaluator reads them. Elsewhere such games make
        # any name possible.
        # `locals()` too: at module level it is the module's namespace, handed to who knows what
        # (`__go(locals())`); the evaluator's "not served" needs every other writer of names ruled out.
        outside = _NAMESPACE_READ.sub("", _blank_lines(program_code, program["helper_lines"]))
        dynamic = any(marker in outside for marker in (*_DYNAMIC_MARKERS, "locals()"))
    else:
        dynamic = (
            any(marker in code for marker in _DYNAMIC_MARKERS)
            or "__getattr__" in members
            or bool(facts.get("getattr"))
        )
    # Names bound through `globals()` in ways the evaluator reads: where they are the only open door,
    # the resolver evaluates them and the namespace is complete if it can.
    computed = facts.get("computed") if filepath.suffix == ".py" else None
    if computed is not None and dynamic and not facts.get("open_namespace"):
        blank = computed["lines"] + (program["helper_lines"] if program is not None else [])
        rest = _NAMESPACE_READ.sub("", _blank_lines(program_code if program is not None else code, blank))
        closes = not any(marker in rest for marker in (*_DYNAMIC_MARKERS, "locals()"))
        if program is None and ("__getattr__" in members or facts.get("getattr")):
            closes = False
        if not closes:
            computed = None
    else:
        computed = None
    # `__all__ = [n for n in dir() ...]` or `a.__all__ + b.__all__`: the export list is not read, and a
    # star import from here takes every public name the module has (found through its own imports).
    computed_all = facts.get("computed_all", False)
    bound = set(facts.get("bound_names", ()))
    if program is not None:
        bound.update(program.get("written_names", ()))  # `globals()["x"] = ...`: maybe bound
    runtime_code = code if filepath.suffix == ".py" else _source_text(filepath)  # the code that runs
    star_imports = list(facts.get("star_imports", ()))
    if filepath.suffix == ".pyi":
        bound |= _source_names(filepath)  # what the stub omits may still be there at run time
        # and what the source star-imports (after the stub's own: a stub's names are checked first)
        star_imports += [m for m in _source_star_imports(filepath, dotted) if m not in star_imports]
    return ModuleInfo(
        path=dotted,
        filepath=filepath.relative_to(root).as_posix()
        if filepath.is_relative_to(root)
        else filepath.as_posix(),
        is_package=filepath.stem == "__init__",
        is_stub=filepath.suffix == ".pyi",
        members=members,
        exports=None if computed_all else _exports(module),
        star_imports=tuple(star_imports),
        bound_names=frozenset(bound),
        rebound=frozenset(facts.get("rebound", ())),
        dynamic_namespace=dynamic,
        # (a namespace opened only by names bound in ways the evaluator reads is the resolver's to open)
        open_namespace=facts.get("open_namespace")
        or (_DYNAMIC_BINDING if dynamic and "__getattr__" not in members and computed is None else None),
        getattr_source=program["source"] if program is not None else None,
        namespace_source=computed["source"] if computed is not None else None,
        enum_members={k: tuple(v) for k, v in computed["enums"].items()} if computed is not None else {},
        installs_modules=_INSTALLS_MODULES.search(runtime_code) is not None,
        shares_path=filepath.stem == "__init__" and _SHARES_PATH.search(runtime_code) is not None,
        import_fails=facts.get("import_fails") if filepath.suffix == ".py" else None,
        own_imports=tuple(facts.get("own_imports", ())) if filepath.suffix == ".py" else (),
        module_aliases=tuple((a, t) for a, t in facts.get("module_aliases", ())),
        hook_calls=tuple(_hook_calls_of(module, dotted, facts.get("hook_calls", ()))),
        hookspecs=_hookspecs_of(module, facts.get("hookspecs")),
        twins={name: (pair[0], pair[1]) for name, pair in facts.get("twins", {}).items()},
    )


def _hookspecs_of(module: Any, found: Any) -> dict[str, Any] | None:
    """The module's hook markers and specifications, the names they are given as resolved through the
    module's imports (`@hookspec` imported from another module, `HookspecMarker(NAME)`). A function
    decorated by a name from outside the package (`@contextmanager`) is no spec: a marker is the
    package's own."""
    if not found:
        return None
    root = module.path.split(".")[0]
    markers = [
        {**m, "project_path": _resolve_text(module, m["project_ref"]) if m["project_ref"] else ""}
        for m in found["markers"]
    ]
    specs = []
    for spec in found["specs"]:
        path = _resolve_text(module, spec["decorator"])
        if path.split(".")[0] == root:
            warn = _resolve_text(module, spec["warn_ref"]) if spec["warn_ref"] else ""
            specs.append({**spec, "decorator_path": path, "warn_path": warn})
    if not (markers or specs or found["impl_prefixes"] or found["spec_prefixes"]):
        return None
    return {**found, "markers": markers, "specs": specs}


def _hook_calls_of(module: Any, dotted: str, calls: Any) -> Iterator[dict[str, Any]]:
    """The module's calls by name, the annotation a typed receiver has resolved through its imports."""
    for call in calls:
        on = call["on"]
        if call["receiver"] == "typed":
            on = _resolve_text(module, on)
            if on.startswith("?"):
                call = {**call, "receiver": "untyped"}
                on = ""
        yield {**call, "on": on, "cls": f"{dotted}.{call['cls']}" if call["cls"] else ""}


def _blank_lines(code: str, ranges: list[tuple[int, int]]) -> str:
    lines = code.splitlines()
    for start, end in ranges:
        for index in range(start - 1, min(end, len(lines))):
            lines[index] = ""
    return "\n".join(lines)


def _parent_chain(dotted: str, root: Path) -> griffe.Module | None:
    """griffe resolves relative imports through real parents: give it the package chain, empty."""
    parts = dotted.split(".")[:-1]
    parent: griffe.Module | None = None
    folder = root
    for part in parts:
        folder = folder / part
        init = next((folder / f for f in ("__init__.pyi", "__init__.py") if (folder / f).exists()), None)
        module = griffe.Module(part, filepath=init if init else [folder], parent=parent)
        if parent is not None:
            parent.set_member(part, module)
        parent = module
    return parent


def _exports(module: griffe.Module) -> tuple[str, ...] | None:
    exports = module.exports
    if exports is None:
        return None
    declared = module.members.get("__all__")
    if (
        not exports
        and declared is not None
        and not declared.is_alias
        and getattr(declared, "value", None) is None
    ):
        return None  # `__all__: list[str]` in a stub (numpy 2.0 `_core/records.pyi`): declared, not listed
    names = [item for item in exports if isinstance(item, str)]
    return tuple(names) if len(names) == len(exports) else None


def _convert_member(obj: Any, path: str) -> Member | None:
    if obj.is_alias:
        return AliasInfo(obj.name, obj.target_path, obj.alias_lineno)
    if obj.is_class:
        return _convert_class(obj, path)
    if obj.is_function:
        return _convert_function(obj)
    if obj.is_attribute:
        value = obj.value
        named = isinstance(value, (griffe.ExprName, griffe.ExprAttribute))
        annotation = obj.annotation if obj.annotation is not None else _parameter_annotation(obj, value)
        return AttributeInfo(
            name=obj.name,
            annotation=_text(annotation),
            annotation_path=_class_path(annotation)
            if annotation is not None
            else obj.extra.get(_FACTS, {}).get("literal_type"),
            items=_item_paths(annotation),
            value=_text(value),
            lineno=obj.lineno,
            value_path=_path_or_text(value) if named else None,
            value_call=_path_or_text(value.function) if isinstance(value, griffe.ExprCall) else None,
            read_only="property" in obj.labels and not {"writable", "cached"} & obj.labels,
            constructs=_resolve_text(obj, obj.extra[_FACTS]["constructs"])
            if annotation is None and obj.extra.get(_FACTS, {}).get("constructs")
            else None,
        )
    if obj.is_module:  # a submodule griffe attached: the index finds submodules itself
        return None
    return None  # type aliases and other kinds: nothing to check against


def _convert_class(cls: griffe.Class, path: str) -> ClassInfo:
    facts = cls.extra.get(_FACTS, {})
    members: dict[str, Member] = {}
    deprecations = facts.get("member_deprecations", {})
    for name, member in cls.members.items():
        converted = _convert_member(member, f"{path}.{name}")
        if (
            isinstance(converted, (AttributeInfo, FunctionInfo))
            and name in deprecations
            and not converted.deprecated
        ):
            converted = replace(converted, deprecated=deprecations[name])
        if converted is not None:
            members[name] = converted
    members.update(_overload_only(cls, members))
    for unpacked, lineno in facts.get("unpacked", ()):
        members.setdefault(unpacked, AttributeInfo(unpacked, lineno=lineno))
    keywords = dict(cls.keywords) if getattr(cls, "keywords", None) else {}
    metaclass = keywords.pop("metaclass", None)
    return ClassInfo(
        name=cls.name,
        path=path,
        bases=tuple(_base_path(base) for base in cls.bases),
        metaclass=_path_or_text(metaclass) if metaclass is not None else None,
        class_keywords={k: _text(v) or "" for k, v in keywords.items()},
        decorators=tuple(_decorator(d.value) for d in cls.decorators),
        members=members,
        fields=tuple(_field_spec(cls, *fact) for fact in facts.get("fields", ())),
        instance_attributes=frozenset(facts.get("instance_attributes", ())),
        dynamic_attributes=facts.get("dynamic_attributes", False),
        lineno=cls.lineno,
        deprecated=facts.get("deprecated"),
        rebound=frozenset(facts.get("rebound", ())),
        bound_names=frozenset(facts.get("bound_names", ())),
        open_namespace=facts.get("open_namespace"),
        self_calls={name: tuple(calls) for name, calls in facts.get("self_calls", {}).items()},
        self_uses={
            name: None if uses is None else tuple(uses) for name, uses in facts.get("self_uses", {}).items()
        },
        type_params=_type_params(cls),
        held_calls=tuple(
            {**call, "on": on}
            for call in facts.get("held_calls", ())
            if not (on := _resolve_text(cls, call["on"])).startswith("?")
        ),
        base_call=_base_call(cls.bases),
        untyped_calls=tuple(facts.get("untyped_calls", ())),
    )


def _overload_only(owner: Any, members: dict[str, Member]) -> dict[str, Member]:
    """Functions declared only by `@overload`s (stubs): griffe keeps them aside, without an implementation."""
    found: dict[str, Member] = {}
    for name, overloads in getattr(owner, "overloads", {}).items():
        if name in members or not overloads:
            continue
        last = overloads[-1]
        converted = _convert_function(last)
        # Deprecated only when every overload is: one deprecated way of calling (typeshed's
        # `@deprecated` overload taking the old keyword) says nothing of the calls the others take.
        messages = _overload_deprecations(overloads)
        found[name] = replace(
            converted,
            overloads=tuple(_signature(o) for o in overloads),
            deprecated=converted.deprecated if all(messages) else None,
            overload_deprecations=messages if any(messages) else (),
        )
    return found


def _overload_deprecations(overloads: Any) -> tuple[str | None, ...]:
    """Each `@overload`'s own `@deprecated` message (or None), in order."""
    return tuple((o.extra.get(_FACTS) or {}).get("deprecated") for o in overloads)


def _field_spec(cls: griffe.Class, name: str, lineno: int, annotation: str, head: str | None) -> FieldSpec:
    # The annotation comes from the AST: griffe unwraps `ClassVar[...]`, which synthesis must see.
    attr = cls.members.get(name)
    value = getattr(attr, "value", None)
    call_path = None
    keywords: dict[str, str] = {}
    positional = 0
    if isinstance(value, griffe.ExprCall):
        call_path = _path_or_text(value.function)
        for argument in value.arguments:
            if isinstance(argument, griffe.ExprKeyword):
                keywords[argument.name] = _text(argument.value) or ""
            else:
                positional += 1
    return FieldSpec(
        name=name,
        annotation=annotation,
        annotation_path=_resolve_text(cls, head) if head else None,
        has_value=value is not None,
        value=_text(value),
        call_path=call_path,
        call_keywords=keywords,
        call_positional=positional,
        lineno=lineno,
        annotation_expanded=expand(
            annotation, cls.module.extra.get(_FACTS, {}).get("type_aliases") or {}, frozenset(cls.members)
        ),
    )


def _convert_function(func: griffe.Function) -> FunctionInfo:
    facts = func.extra.get(_FACTS, {})
    decorators = tuple(_decorator(d.value) for d in func.decorators)
    transform = None
    for decorator, raw in zip(decorators, func.decorators):
        if decorator.path in _DATACLASS_TRANSFORM:
            transform = dict(decorator.keywords)
            value = raw.value
            if isinstance(value, griffe.ExprCall):
                specifiers = next(
                    (
                        a.value
                        for a in value.arguments
                        if isinstance(a, griffe.ExprKeyword) and a.name == "field_specifiers"
                    ),
                    None,
                )
                if specifiers is not None:
                    transform["field_specifiers"] = ",".join(_tuple_paths(specifiers))
    overloads = tuple(_signature(o) for o in (func.overloads or ()))
    overload_messages = _overload_deprecations(func.overloads or ())
    keeps = _keeps_signature(func)
    # `-> Callable[[F], F]` promises the signature kept; a wrapper whose code renames a keyword on the
    # way (pandas `deprecate_kwarg`) says what CPython does: its effect wins, checked at each use
    keeps = (
        keeps[0] and not (facts.get("effect") or "").startswith("rename-keyword:"),
        keeps[1] and not (facts.get("factory_effect") or "").startswith("rename-keyword:"),
    )
    return FunctionInfo(
        name=func.name,
        signature=_signature(func),
        decorators=decorators,
        overloads=overloads,
        overload_deprecations=overload_messages if any(overload_messages) else (),
        returns_path=_class_path(func.returns) if func.returns is not None else _inferred_return(func, facts),
        returns_items=_item_paths(func.returns),
        returns_args=_generic_args(func.returns),
        param_paths=_param_paths(func),
        is_async="async" in func.labels,
        returns_super=func.returns is None
        and facts.get("returns") == "super"
        and func.parent is not None
        and func.parent.is_class,
        forwards=_forwarding_target(func, facts.get("forwards")),
        constructs=_canonical_constructs(func, facts.get("constructs")),
        identity=facts.get("identity", False) or keeps[0],
        factory_identity=keeps[1] or facts.get("factory", False),
        keeps_through=None if keeps[0] else facts.get("through"),
        factory_keeps_through=None if keeps[1] else facts.get("factory_through"),
        keeps_effect=None if keeps[0] else facts.get("effect"),
        adds_attributes=facts.get("adds_attributes", False),
        added_names=tuple(facts["added_names"]) if facts.get("added_names") is not None else None,
        hands_mapping=_mapping_targets(func, facts.get("hands_mapping")),
        checks_keys=facts.get("checks_keys"),
        returns_fget=facts.get("returns_fget", False),
        stores_fget=facts.get("stores_fget", False),
        getattr_serves=_canonical_serves(func, facts.get("getattr_serves")),
        item_constructs=_canonical_callee(func, facts.get("item_constructs")),
        returns_exact=facts.get("returns_exact", False),
        factory_keeps_effect=None if keeps[1] else facts.get("factory_effect"),
        keeps_warning=facts.get("warning"),
        factory_keeps_warning=facts.get("factory_warning"),
        registers_in=_resolve_text(func, facts["registers_in"]) if facts.get("registers_in") else None,
        reapplies=_canonical_reapplies(func, facts.get("reapplies")),
        stores=tuple(_resolve_text(func, t) for t in facts["stores"])
        if facts.get("stores") is not None
        else None,
        dataclass_transform=transform,
        lineno=func.lineno,
        deprecated=facts.get("deprecated"),
        raises_when=_canonical_guards(func, facts.get("raises_when")),
        always_raises=_canonical_always_raises(func, facts.get("always_raises")),
        makes_metaclass_base=facts.get("makes_metaclass_base", False),
    )


def _canonical_reapplies(func: griffe.Function, reapplies: Any) -> dict[str, Any] | None:
    """The registry and the first decorators a re-applying factory names, as canonical paths."""
    if not reapplies:
        return None
    return {
        "registry": _resolve_text(func, reapplies["registry"]),
        "initial": [_resolve_text(func, text) for text in reapplies["initial"]],
    }


def _canonical_guards(func: griffe.Function, guards: Any) -> tuple[RaisingGuard, ...]:
    """The raising guards read from the source, with their names resolved to canonical paths."""
    found = []
    for guard in guards or ():
        tests = tuple(
            GuardTest(param, compared if compared == "None" else _resolve_text(func, compared), same, is_not)
            for param, compared, same, is_not in guard["tests"]
        )
        found.append(
            RaisingGuard(
                tests,
                _resolve_text(func, guard["exception"]),
                guard["message"],
                f"{func.module.path}.{guard['where']}",
            )
        )
    return tuple(found)


def _canonical_always_raises(func: griffe.Function, found: Any) -> AlwaysRaises | None:
    """What every call of the function raises, read from the source, with its names resolved."""
    if not found:
        return None
    through = _resolve_text(func, found["through"]) if found.get("through") else None
    exception = _resolve_text(func, found["exception"]) if found.get("exception") else None
    if exception is None and (through is None or through.startswith("?")):
        return None
    return AlwaysRaises(
        exception,
        found.get("message"),
        f"{func.path}:{found['where'].rpartition(':')[2]}" if found.get("where") else func.path,
        tuple(found.get("fields", ())),
        through if through is not None and not through.startswith("?") else None,
        tuple(sorted(found.get("arguments", {}).items())),
    )


def _module_node(node: ast.AST) -> ast.Module | None:
    """The module a node griffe visited sits in (griffe links each node to its parent)."""
    current: Any = node
    for _ in range(100):
        current = getattr(current, "parent", None)
        if current is None or isinstance(current, ast.Module):
            return current
    return None


def _signature(func: griffe.Function) -> Signature:
    params = []
    replaced = func.extra.get(_FACTS, {}).get("replaced_defaults") or {}
    aliases = func.module.extra.get(_FACTS, {}).get("type_aliases") or {}
    owner = func.parent
    shadowed = frozenset(owner.members) if owner is not None and owner.is_class else frozenset()
    for param in func.parameters:
        kind = _KINDS[param.kind.value]
        is_variadic = kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
        has_default = param.default is not None and not is_variadic
        params.append(
            Parameter(
                name=param.name,
                kind=kind,
                has_default=has_default,
                default=_text(param.default) if has_default else None,
                annotation=_text(param.annotation),
                replaced_by=replaced.get(param.name) if has_default else None,
                annotation_expanded=expand(_text(param.annotation), aliases, shadowed),
            )
        )
    return Signature(tuple(params), _text(func.returns))


def _decorator(value: Any) -> Decorator:
    if isinstance(value, griffe.ExprCall):
        keywords = {
            a.name: _text(a.value) or "" for a in value.arguments if isinstance(a, griffe.ExprKeyword)
        }
        args = tuple(
            f"?{a}" if isinstance(a, str) else _path_or_text(a)
            for a in value.arguments
            if not isinstance(a, griffe.ExprKeyword)
        )
        # every positional argument's source text, in order (string literals included); none after a `*`
        positional = [a for a in value.arguments if not isinstance(a, griffe.ExprKeyword)]
        literals = (
            ()
            if any(isinstance(a, griffe.ExprVarPositional) for a in positional)
            else tuple(str(a) for a in positional)
        )
        return Decorator(_path_or_text(value.function), True, keywords, args, literals)
    return Decorator(_path_or_text(value))


def _tuple_paths(value: Any) -> list[str]:
    elements = getattr(value, "elements", None)
    if elements is None:
        return [_path_or_text(value)]
    return [_path_or_text(e) for e in elements]


def _parameter_annotation(obj: Any, value: Any) -> Any:
    """`self.command = command` in `__init__(self, command: Command)`: the attribute holds what the
    parameter is annotated with (griffe writes the value's path as `pkg.Context(command)`)."""
    if not isinstance(value, griffe.ExprName):
        return None
    cls = obj.parent
    if cls is None or not getattr(cls, "is_class", False):
        return None
    try:
        path = value.canonical_path
        init = cls.members.get("__init__")
    except Exception:  # an alias griffe cannot resolve: no annotation to take
        return None
    if not path.endswith(f"({value.name})") or init is None or not getattr(init, "is_function", False):
        return None
    for parameter in init.parameters:
        if parameter.name == value.name:
            return parameter.annotation
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _path_or_text(value: Any) -> str:
    """The canonical dotted path an expression names; builtins get their `builtins.` prefix."""
    if isinstance(value, (griffe.ExprName, griffe.ExprAttribute)):
        path = value.canonical_path
        if "." not in path and hasattr(builtins, path):
            return f"builtins.{path}"
        return path
    return f"?{value}"


def _head_text(annotation: ast.expr) -> str | None:
    """`InitVar[int]` -> `InitVar`; `t.ClassVar[int]` -> `t.ClassVar`; a string annotation is parsed."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        return ast.unparse(annotation)
    return None


def _base_call(bases: list[Any]) -> tuple[str, tuple[str, ...]] | None:
    """`class C(with_metaclass(Meta, Base))`: the callee's path and its arguments' paths, when the one
    base is a call of a named function with named positional arguments only."""
    if len(bases) != 1 or not isinstance(bases[0], griffe.ExprCall):
        return None
    call = bases[0]
    arguments = [_path_or_text(a) for a in call.arguments]
    callee = _path_or_text(call.function)
    if callee.startswith("?") or not arguments or any(a.startswith("?") for a in arguments):
        return None
    return callee, tuple(arguments)


def _base_path(value: Any) -> str:
    if isinstance(value, griffe.ExprSubscript):  # Generic[T], Base[int]: the class is the head
        value = value.left
    return _path_or_text(value)


# Generic containers by what their protocols hand out: (subscription, iteration, next()) from which
# type argument (an index), or None where the protocol is not theirs or its result is not one argument.
_SEQUENCES = (
    "builtins.list",
    "typing.List",
    "typing.Sequence",
    "collections.abc.Sequence",
    "typing.MutableSequence",
    "collections.abc.MutableSequence",
    "collections.deque",
    "typing.Deque",
)
_ITERABLES = (
    "builtins.set",
    "builtins.frozenset",
    "typing.Set",
    "typing.FrozenSet",
    "typing.AbstractSet",
    "collections.abc.Set",
    "collections.abc.MutableSet",
    "typing.MutableSet",
    "typing.Iterable",
    "collections.abc.Iterable",
    "typing.Collection",
    "collections.abc.Collection",
)
_ITERATORS = ("typing.Iterator", "collections.abc.Iterator", "typing.Generator", "collections.abc.Generator")
_MAPPINGS = ("builtins.dict", "typing.Dict", "typing.Mapping", "collections.abc.Mapping", "typing.MutableMapping",
             "collections.abc.MutableMapping", "collections.OrderedDict", "typing.OrderedDict",
             "collections.defaultdict", "typing.DefaultDict")  # fmt: skip
_CONTAINERS: dict[str, tuple[int | None, int | None, int | None]] = {
    **dict.fromkeys(_SEQUENCES, (0, 0, None)),
    **dict.fromkeys(_ITERABLES, (None, 0, None)),
    **dict.fromkeys(_ITERATORS, (None, 0, 0)),
    **dict.fromkeys(_MAPPINGS, (1, 0, None)),
}


def _item_paths(value: Any) -> tuple[tuple[str, str], ...]:
    """What a container annotation's protocols hand out, as (protocol, class path) pairs: `list[Row]`
    gives `(("item", "pkg.Row"), ("iter", "pkg.Row"))`, `dict[str, Row]` its items, `Iterator[Row]`
    what iteration and `next()` give, `tuple[Row, ...]` both; through `Optional[...]` and `X | None`.
    Empty where the annotation is no such container or an element is no plain class."""
    if value is None:
        return ()
    if isinstance(value, griffe.ExprBinOp) and value.operator == "|":
        sides = [s for s in (value.left, value.right) if str(s) != "None"]
        return _item_paths(sides[0]) if len(sides) == 1 else ()
    if not isinstance(value, griffe.ExprSubscript):
        return ()
    head = _path_or_text(value.left)
    if head in _OPTIONAL:
        return _item_paths(value.slice)
    arguments = list(value.slice.elements) if isinstance(value.slice, griffe.ExprTuple) else [value.slice]
    if head in ("builtins.tuple", "typing.Tuple"):  # `tuple[C, ...]` is a sequence of one type
        if len(arguments) != 2 or str(arguments[1]) != "...":  # `tuple[A, B]`: what unpacking gives
            places = ((f"unpack:{i}", _class_path(a)) for i, a in enumerate(arguments))
            return tuple((k, p) for k, p in places if p is not None and not p.startswith("?"))
        indexes: tuple[int | None, int | None, int | None] = (0, 0, None)
    elif head in _CONTAINERS:
        indexes = _CONTAINERS[head]
    else:
        return ()
    found = []
    for protocol, index in zip(("item", "iter", "next"), indexes):
        if index is None or index >= len(arguments):
            continue
        path = _class_path(arguments[index])
        if path is not None and not path.startswith("?"):
            found.append((protocol, path))
    return tuple(found)


_GENERIC_BASES = frozenset(
    {"typing.Generic", "typing_extensions.Generic", "typing.Protocol", "typing_extensions.Protocol"}
)


def _type_params(cls: Any) -> tuple[str, ...]:
    """`class Page(Generic[T, U])` (or `Protocol[T]`): ("T", "U"); () when it declares none."""
    for base in cls.bases:
        if isinstance(base, griffe.ExprSubscript) and _path_or_text(base.left) in _GENERIC_BASES:
            arguments = base.slice.elements if isinstance(base.slice, griffe.ExprTuple) else [base.slice]
            names = tuple(a.name for a in arguments if isinstance(a, griffe.ExprName))
            return names if len(names) == len(arguments) else ()
    return ()


def _generic_args(value: Any) -> tuple[str, ...]:
    """The type arguments of a generic class of the code's own an annotation names (`Page[Item]`,
    `Optional[Page[Item]]`): each argument's class path, "" where it names no plain class."""
    if value is None:
        return ()
    if isinstance(value, griffe.ExprBinOp) and value.operator == "|":
        sides = [s for s in (value.left, value.right) if str(s) != "None"]
        return _generic_args(sides[0]) if len(sides) == 1 else ()
    if not isinstance(value, griffe.ExprSubscript):
        return ()
    head = _path_or_text(value.left)
    if head in _OPTIONAL:
        return _generic_args(value.slice)
    if head.startswith(("?", "builtins.", "typing.", "typing_extensions.", "collections.", "types.")):
        return ()
    arguments = value.slice.elements if isinstance(value.slice, griffe.ExprTuple) else [value.slice]
    return tuple(_class_path(a) or "" for a in arguments)


def _param_paths(func: griffe.Function) -> tuple[tuple[str, str], ...]:
    """(name, class path) of each parameter annotated with one plain class of the code read."""
    found = []
    for param in func.parameters:
        path = _class_path(param.annotation) if param.annotation is not None else None
        if path and not path.startswith("?") and path not in ("typing.Any", "builtins.object"):
            found.append((param.name, path))
    return tuple(found)


def _class_path(value: Any) -> str | None:
    """The class an annotation names when it is plain, `X | None` or `Optional[X]`; else None."""
    if value is None:
        return None
    if isinstance(value, (griffe.ExprName, griffe.ExprAttribute)):
        path = _path_or_text(value)
        return None if path in ("builtins.None",) else path
    if isinstance(value, griffe.ExprSubscript) and _path_or_text(value.left) in _OPTIONAL:
        return _class_path(value.slice)
    if isinstance(value, griffe.ExprSubscript) and _path_or_text(value.left) in _ANNOTATED:
        arguments = value.slice.elements if isinstance(value.slice, griffe.ExprTuple) else [value.slice]
        return _class_path(arguments[0]) if arguments else None
    if isinstance(value, griffe.ExprSubscript) and isinstance(
        value.left, (griffe.ExprName, griffe.ExprAttribute)
    ):
        # A generic class of the code's own (`Row[_TP]`, `Database[_DocumentType]`): the class. Not a
        # special form or a standard container (`Union[...]`, `list[...]`, `Callable[...]`): no one class.
        head = _path_or_text(value.left)
        if not head.startswith(("?", "builtins.", "typing.", "typing_extensions.", "collections.", "types.")):
            return head
    if isinstance(value, griffe.ExprBinOp) and value.operator == "|":
        sides = [s for s in (value.left, value.right) if str(s) != "None"]
        if len(sides) == 1:
            return _class_path(sides[0])
    return None


class _FactsExtension(griffe.Extension):
    """Records, from the AST griffe already parsed, what its model does not keep."""

    def on_module_instance(
        self, *, node: ast.AST | griffe.ObjectNode, mod: griffe.Module, agent: _Agent, **kwargs: Any
    ) -> None:
        if isinstance(node, ast.Module):
            mod.extra[_FACTS] = {
                "bound_names": sorted(_top_level_names(node)),
                "star_imports": _star_imports(node, mod),
                "rebound": sorted(_rebound_names(node.body)),
                "twins": _import_twins(node.body, mod.path, mod.is_init_module),
                "computed_all": _computes_all(node),
                "unpacked": _unpacked_names(list(_module_statements(node))),
                "class_patches": _class_patches(node),
                "open_namespace": _open_module_namespace(node),
                "getattr": _getattr_program(node),
                "type_aliases": type_aliases(node),
                "computed": _computed_namespace(node),
                "import_fails": import_failure(node, mod.path, mod.is_init_module),
                "own_imports": own_imports(node, mod.path, mod.is_init_module),
                "module_aliases": module_aliases(node),
                "hook_calls": hook_calls(node),
                "hookspecs": hookspec_facts(node),
            }

    def on_class_members(
        self, *, node: ast.AST | griffe.ObjectNode, cls: griffe.Class, agent: _Agent, **kwargs: Any
    ) -> None:
        if not isinstance(node, ast.ClassDef):
            return
        fields = []
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                fields.append(
                    (stmt.target.id, stmt.lineno, ast.unparse(stmt.annotation), _head_text(stmt.annotation))
                )
            elif (  # `x = attr.ib()`: a field of classic attrs classes, unannotated
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call)
            ):
                fields.append((stmt.targets[0].id, stmt.lineno, "", None))
        instance, dynamic = _instance_attributes(node)
        held, untyped = _held_calls(node)
        body = list(_class_statements(node))
        cls.extra[_FACTS] = {
            "unpacked": _unpacked_names(body),
            "bound_names": sorted(_body_bound_names(body)),
            "open_namespace": _DYNAMIC_BINDING if _uses_namespace_functions(body) else None,
            "rebound": sorted(_rebound_names(node.body)),
            "self_calls": _self_calls(node),
            "self_uses": _self_uses(node),
            "held_calls": held,
            "untyped_calls": untyped,
            "fields": fields,
            "instance_attributes": sorted(instance),
            "dynamic_attributes": dynamic,
            "deprecated": _deprecation(node),
            # griffe turns properties into attributes: keep their getters' deprecations by name.
            "member_deprecations": {
                stmt.name: message
                for stmt in node.body
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                and (message := _deprecation(stmt))
            },
        }

    def on_attribute_instance(
        self, *, node: ast.AST | griffe.ObjectNode, attr: griffe.Attribute, agent: _Agent, **kwargs: Any
    ) -> None:
        # griffe turns a property into an attribute: an unannotated getter's literal returns tell its type
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is None:
            literal = property_literal_type(node)
            if literal is not None:
                attr.extra[_FACTS] = {"literal_type": literal}
            constructs = property_constructs(node) if literal is None else None
            if constructs is not None:  # `return ContainerCollection(client=self)`, resolved once loaded
                attr.extra[_FACTS] = {"constructs": constructs}

    def on_function_instance(
        self, *, node: ast.AST | griffe.ObjectNode, func: griffe.Function, agent: _Agent, **kwargs: Any
    ) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_class = func.parent is not None and func.parent.is_class
            static = any(_last_name_of(d) == "staticmethod" for d in node.decorator_list)
            identity = _is_identity(node, 1 if in_class and not static else 0) or _is_forwarding_wrapper(node)
            factory = _returns_identity_decorator(node) or _returns_package_decorator(node, func)
            keeping = _decorator_facts(node, 1 if in_class and not static else 0, func)
            # a wrapper renaming a keyword (read from its code) wins over the looser forwarding reading
            if (keeping.get("effect") or "").startswith("rename-keyword:"):
                identity = False
            if (keeping.get("factory_effect") or "").startswith("rename-keyword:"):
                factory = False
            func.extra[_FACTS] = {
                "identity": identity
                or (
                    keeping.get("identity", False)
                    and not keeping.get("through")
                    and not keeping.get("effect")
                ),
                "factory": factory
                or (
                    keeping.get("factory", False)
                    and not keeping.get("factory_through")
                    and not keeping.get("factory_effect")
                ),
                # kept only when the callable the function is handed to keeps it too (checked on resolution)
                "through": None if identity else keeping.get("through"),
                "factory_through": None if factory else keeping.get("factory_through"),
                "adds_attributes": _sets_attributes_of_arguments(node),
                "added_names": added_names(node) if _sets_attributes_of_arguments(node) else None,
                "hands_mapping": mapping_handovers(node) or None,
                "checks_keys": checked_keys(node) if in_class and not static else None,
                "returns_fget": in_class and node.name == "__get__" and _hands_back_fget(node),
                "stores_fget": in_class and node.name == "__init__" and _stores_fget(node),
                "getattr_serves": getattr_serves(node) if in_class and node.name == "__getattr__" else None,
                "item_constructs": single_constructor_return(node)
                if in_class and node.name == "__getitem__"
                else None,
                "effect": None if identity else keeping.get("effect"),
                "factory_effect": None if factory else keeping.get("factory_effect"),
                # the wrapper warns when given more positional arguments than a threshold it reads
                "warning": keeping.get("warning"),
                "factory_warning": keeping.get("factory_warning"),
                "registers_in": _registers_self(node),
                "stores": _container_stores(node) if not in_class else None,
                "reapplies": _reapplies_registered(node),
                "deprecated": _deprecation(node),
                "returns": _returned_class(node),
                "returns_exact": func.returns is None and _returns_constructed(node),
                "forwards": _kwargs_forwarding(node),
                "raises_when": raising_guards(node, _module_node(node)) if not _in_stub(func) else [],
                # what an omitted `None` default means, from the body (Python source only)
                "replaced_defaults": replaced_defaults(
                    node, _owner_class(node) if in_class and not static else None
                )
                if not _in_stub(func)
                else None,
                "always_raises": always_raises(node) if not _in_stub(func) else None,
                "makes_metaclass_base": not in_class and _makes_metaclass_base(node),
                # A `__new__` in Python source: which class it constructs (a stub's body says nothing).
                "constructs": new_constructs(node)
                if in_class and node.name == "__new__" and not _in_stub(func)
                else None,
            }


def _owner_class(node: ast.AST) -> ast.ClassDef | None:
    """The class statement a method's `def` sits in directly (griffe links each node to its parent)."""
    parent = getattr(node, "parent", None)
    return parent if isinstance(parent, ast.ClassDef) else None


def _in_stub(func: griffe.Function) -> bool:
    filepath = func.module.filepath
    return isinstance(filepath, Path) and filepath.suffix == ".pyi"


def _canonical_callee(func: griffe.Function, text: str | None) -> str | None:
    """A callee written in `func`'s module, as a canonical path (None when it does not resolve)."""
    if not text:
        return None
    path = _resolve_text(func, text)
    return None if path.startswith("?") else path


def _canonical_serves(func: griffe.Function, serves: dict[str, Any] | None) -> dict[str, Any] | None:
    """A `__getattr__`'s answer (analyses/class_getattr.py) with the class it builds made canonical."""
    if not serves:
        return None
    if serves["returns"] == "item":
        return serves
    path = _canonical_callee(func, serves["returns"])
    return {**serves, "returns": path} if path is not None else None


def _canonical_constructs(func: griffe.Function, constructs: Any) -> tuple[Construct, ...] | None:
    """The decision list of a `__new__` with its class names resolved to canonical paths."""
    if not constructs:
        return None

    def canonical(text: str) -> str:
        return text if text in ("cls", "none", UNKNOWN) else _resolve_text(func, text)

    return tuple(
        (tuple((op, _resolve_text(func, name)) for op, name in conditions), canonical(result))
        for conditions, result in constructs
    )


def _typing_view(member: Member, source: Any = None) -> Member:
    """The member (and a class's members) marked as declared by a stub: a typing view. `source` is what
    the Python source beside the stub defines under that name (a signature, or a class's methods)."""
    if isinstance(member, FunctionInfo):
        if isinstance(source, Decorated):
            return replace(
                member, typing_view=True, runtime_signature=source.signature, runtime_decorated=True
            )
        runtime = source if isinstance(source, Signature) else None
        return replace(member, typing_view=True, runtime_signature=runtime)
    if isinstance(member, ClassInfo):
        methods = source if isinstance(source, dict) else {}
        return replace(
            member,
            typing_view=True,
            members={n: _typing_view(m, methods.get(n)) for n, m in member.members.items()},
        )
    return member


def _mapping_targets(func: griffe.Function, handovers: dict[str, Any] | None) -> dict[str, Any] | None:
    """Each parameter's mapping hand-over with its callee as a canonical path (or dropped, unknown)."""
    found: dict[str, Any] = {}
    for param, handover in (handovers or {}).items():
        forwarding = _forwarding_target(
            func,
            {"target": handover["target"], "positional": 0, "keywords": [], "star_args": False},
        )
        if forwarding is not None:
            found[param] = {
                "target": forwarding.target,
                "index": handover["index"],
                "consumed": list(handover.get("consumed", ())),
                "on_self": forwarding.on_self,
                "via_super": forwarding.via_super,
            }
    return found or None


def _forwarding_target(func: griffe.Function, forwards: dict[str, Any] | None) -> Forwarding | None:
    if not forwards:
        return None
    target = forwards["target"]
    if target.startswith("super()."):
        owner = func.parent if func.parent is not None and func.parent.is_class else None
        name = target[len("super().") :]
        if owner is None or "." in name or "(" in name:
            return None
        return Forwarding.from_dict(
            {**forwards, "target": f"{owner.path}.{name}", "on_self": True, "via_super": True}
        )
    first = target.split(".")[0]
    if first == "self":
        owner = func.parent if func.parent is not None and func.parent.is_class else None
        if owner is None or target.count(".") != 1:
            return None
        resolved = f"{owner.path}.{target.split('.', 1)[1]}"
        return Forwarding.from_dict({**forwards, "target": resolved, "on_self": True})
    if first in {p.name for p in func.parameters}:
        return None  # a callable passed in: unknowable
    resolved = _resolve_text(func, target)
    return (
        None
        if resolved.startswith("?")
        else Forwarding.from_dict({**forwards, "target": resolved, "on_self": False})
    )


def _inferred_return(func: griffe.Function, facts: dict[str, Any]) -> str | None:
    returned = facts.get("returns")
    if not returned or returned == "super":
        return None
    if returned in ("builtins.str", "builtins.bytes"):
        return str(returned)  # a literal (see _returned_class)
    owner = func.parent if func.parent is not None and func.parent.is_class else None
    if returned == "self":
        plain_method = "classmethod" not in func.labels and "staticmethod" not in func.labels
        return owner.path if owner is not None and plain_method else None
    if returned == "cls":
        return owner.path if owner is not None and "classmethod" in func.labels else None
    if returned.split(".")[0] in {p.name for p in func.parameters} or returned.split(".")[0] in (
        "self",
        "cls",
    ):
        return None  # a call of a parameter (a factory passed in): its result is unknowable here
    path = _resolve_text(func, returned)
    return None if path.startswith("?") else path
