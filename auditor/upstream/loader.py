"""Load one upstream module statically with griffe and convert it into apidrift's model (`ModuleInfo`).

griffe does the parsing and name resolution (canonical paths of imports, bases, decorators); a small
griffe extension records the facts griffe does not keep (class-body field order, `self.x` assignments,
every name a module binds, identity decorators). Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import builtins
import copy
import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import griffe

from apidrift.auditor.upstream import dynamic as dynamic_eval
from apidrift.auditor.upstream.api_index import BUDGET_MESSAGE
from apidrift.auditor.upstream.factory_new import UNKNOWN, Construct, new_constructs
from apidrift.auditor.upstream.model import (
    AliasInfo,
    AttributeInfo,
    ClassInfo,
    Decorator,
    FieldSpec,
    Forwarding,
    FunctionInfo,
    Member,
    ModuleInfo,
)
from apidrift.auditor.upstream.signature import Parameter, ParamKind, Signature

_KINDS = {
    "positional-only": ParamKind.POSITIONAL_ONLY,
    "positional or keyword": ParamKind.POSITIONAL_OR_KEYWORD,
    "variadic positional": ParamKind.VAR_POSITIONAL,
    "keyword-only": ParamKind.KEYWORD_ONLY,
    "variadic keyword": ParamKind.VAR_KEYWORD,
}
_DATACLASS_TRANSFORM = frozenset({"typing.dataclass_transform", "typing_extensions.dataclass_transform"})
_OPTIONAL = frozenset({"typing.Optional", "typing_extensions.Optional"})
_DYNAMIC_MARKERS = ("globals()", "sys.modules[", "setattr(sys.modules", "vars()")
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

    def on_node(self, *, node: ast.AST, agent: Any, **kwargs: Any) -> None:
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
    from griffe._internal.agents.nodes.ast import ast_children

    parent = node.parent  # type: ignore[attr-defined]
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
    program = facts.get("getattr") if filepath.suffix == ".py" else None
    if program is not None and program["source"] is None:
        program = None  # too deeply nested to copy: the `__getattr__` is not read
    if program is not None:
        # The module's own `__getattr__` (and the helpers building it) may play with globals() or
        # sys.modules for the names it serves: the evaluator reads them. Elsewhere such games make
        # any name possible.
        # `locals()` too: at module level it is the module's namespace, handed to who knows what
        # (`__go(locals())`); the evaluator's "not served" needs every other writer of names ruled out.
        outside = _blank_lines(code, program["helper_lines"])
        dynamic = any(marker in outside for marker in (*_DYNAMIC_MARKERS, "locals()"))
    else:
        dynamic = (
            any(marker in code for marker in _DYNAMIC_MARKERS)
            or "__getattr__" in members
            or bool(facts.get("getattr"))
        )
    # `__all__ = [n for n in dir() ...]` or `a.__all__ + b.__all__`: the export list is not read, and a
    # star import from here takes every public name the module has (found through its own imports).
    computed_all = facts.get("computed_all", False)
    bound = set(facts.get("bound_names", ()))
    if filepath.suffix == ".pyi":
        bound |= _source_names(filepath)  # what the stub omits may still be there at run time
    return ModuleInfo(
        path=dotted,
        filepath=filepath.relative_to(root).as_posix()
        if filepath.is_relative_to(root)
        else filepath.as_posix(),
        is_package=filepath.stem == "__init__",
        is_stub=filepath.suffix == ".pyi",
        members=members,
        exports=None if computed_all else _exports(module),
        star_imports=tuple(facts.get("star_imports", ())),
        bound_names=frozenset(bound),
        rebound=frozenset(facts.get("rebound", ())),
        dynamic_namespace=dynamic,
        open_namespace=facts.get("open_namespace")
        or (_DYNAMIC_BINDING if dynamic and "__getattr__" not in members else None),
        getattr_source=program["source"] if program is not None else None,
    )


def _blank_lines(code: str, ranges: list[tuple[int, int]]) -> str:
    lines = code.splitlines()
    for start, end in ranges:
        for index in range(start - 1, min(end, len(lines))):
            lines[index] = ""
    return "\n".join(lines)


def _getattr_program(node: ast.Module) -> dict[str, Any] | None:
    """What the `__getattr__` evaluator needs of a module that binds one: its pruned source, and the
    lines of the functions that build or serve it (their globals()/sys.modules use is the evaluator's)."""
    if not dynamic_eval.defines_getattr(node):
        return None
    helpers = dynamic_eval.getattr_helpers(node)
    lines = [
        (stmt.lineno, stmt.end_lineno or stmt.lineno)
        for stmt in node.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in helpers
    ]
    try:
        source = dynamic_eval.program_source(copy.deepcopy(node))
    except (RecursionError, MemoryError):
        source = None
    return {"source": source, "helper_lines": lines}


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
        return AttributeInfo(
            name=obj.name,
            annotation=_text(obj.annotation),
            annotation_path=_class_path(obj.annotation),
            value=_text(value),
            lineno=obj.lineno,
            value_path=_path_or_text(value) if named else None,
            value_call=_path_or_text(value.function) if isinstance(value, griffe.ExprCall) else None,
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
    )


def _overload_only(owner: Any, members: dict[str, Member]) -> dict[str, Member]:
    """Functions declared only by `@overload`s (stubs): griffe keeps them aside, without an implementation."""
    found: dict[str, Member] = {}
    for name, overloads in getattr(owner, "overloads", {}).items():
        if name in members or not overloads:
            continue
        last = overloads[-1]
        converted = _convert_function(last)
        found[name] = replace(converted, overloads=tuple(_signature(o) for o in overloads))
    return found


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
    keeps = _keeps_signature(func)
    return FunctionInfo(
        name=func.name,
        signature=_signature(func),
        decorators=decorators,
        overloads=overloads,
        returns_path=_class_path(func.returns) if func.returns is not None else _inferred_return(func, facts),
        forwards=_forwarding_target(func, facts.get("forwards")),
        constructs=_canonical_constructs(func, facts.get("constructs")),
        identity=facts.get("identity", False) or keeps[0],
        factory_identity=keeps[1] or facts.get("factory", False),
        keeps_through=None if keeps[0] else facts.get("through"),
        factory_keeps_through=None if keeps[1] else facts.get("factory_through"),
        keeps_effect=None if keeps[0] else facts.get("effect"),
        adds_attributes=facts.get("adds_attributes", False),
        factory_keeps_effect=None if keeps[1] else facts.get("factory_effect"),
        dataclass_transform=transform,
        lineno=func.lineno,
        deprecated=facts.get("deprecated"),
    )


def _signature(func: griffe.Function) -> Signature:
    params = []
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
            )
        )
    return Signature(tuple(params), _text(func.returns))


def _decorator(value: Any) -> Decorator:
    if isinstance(value, griffe.ExprCall):
        keywords = {
            a.name: _text(a.value) or "" for a in value.arguments if isinstance(a, griffe.ExprKeyword)
        }
        args = tuple(
            _path_or_text(a) for a in value.arguments if not isinstance(a, (griffe.ExprKeyword, str))
        )
        return Decorator(_path_or_text(value.function), True, keywords, args)
    return Decorator(_path_or_text(value))


def _tuple_paths(value: Any) -> list[str]:
    elements = getattr(value, "elements", None)
    if elements is None:
        return [_path_or_text(value)]
    return [_path_or_text(e) for e in elements]


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


def _resolve_text(scope: griffe.Object, dotted: str) -> str:
    """Resolve a dotted name written in `scope`'s module through that module's imports."""
    first, _, rest = dotted.partition(".")
    module = scope.module
    member = module.members.get(first)
    if member is not None and member.is_alias:
        base = member.target_path
    elif member is not None:
        base = f"{module.path}.{first}"
    elif hasattr(builtins, first):
        base = f"builtins.{first}"
    else:
        return f"?{dotted}"
    return f"{base}.{rest}" if rest else base


def _base_path(value: Any) -> str:
    if isinstance(value, griffe.ExprSubscript):  # Generic[T], Base[int]: the class is the head
        value = value.left
    return _path_or_text(value)


def _class_path(value: Any) -> str | None:
    """The class an annotation names when it is plain, `X | None` or `Optional[X]`; else None."""
    if value is None:
        return None
    if isinstance(value, (griffe.ExprName, griffe.ExprAttribute)):
        path = _path_or_text(value)
        return None if path in ("builtins.None",) else path
    if isinstance(value, griffe.ExprSubscript) and _path_or_text(value.left) in _OPTIONAL:
        return _class_path(value.slice)
    if isinstance(value, griffe.ExprBinOp) and value.operator == "|":
        sides = [s for s in (value.left, value.right) if str(s) != "None"]
        if len(sides) == 1:
            return _class_path(sides[0])
    return None


class _FactsExtension(griffe.Extension):
    """Records, from the AST griffe already parsed, what its model does not keep."""

    def on_module_instance(self, *, node: ast.AST, mod: griffe.Module, **kwargs: Any) -> None:
        if isinstance(node, ast.Module):
            mod.extra[_FACTS] = {
                "bound_names": sorted(_top_level_names(node)),
                "star_imports": _star_imports(node, mod),
                "rebound": sorted(_rebound_names(node.body)),
                "computed_all": _computes_all(node),
                "unpacked": _unpacked_names(list(_module_statements(node))),
                "class_patches": _class_patches(node),
                "open_namespace": _open_module_namespace(node),
                "getattr": _getattr_program(node),
            }

    def on_class_members(self, *, node: ast.AST, cls: griffe.Class, **kwargs: Any) -> None:
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
        body = list(_class_statements(node))
        cls.extra[_FACTS] = {
            "unpacked": _unpacked_names(body),
            "bound_names": sorted(_body_bound_names(body)),
            "open_namespace": _DYNAMIC_BINDING if _uses_namespace_functions(body) else None,
            "rebound": sorted(_rebound_names(node.body)),
            "self_calls": _self_calls(node),
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

    def on_function_instance(self, *, node: ast.AST, func: griffe.Function, **kwargs: Any) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_class = func.parent is not None and func.parent.is_class
            static = any(_last_name_of(d) == "staticmethod" for d in node.decorator_list)
            identity = _is_identity(node, 1 if in_class and not static else 0) or _is_forwarding_wrapper(node)
            factory = _returns_identity_decorator(node) or _returns_package_decorator(node, func)
            keeping = _decorator_facts(node, 1 if in_class and not static else 0, func)
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
                "effect": None if identity else keeping.get("effect"),
                "factory_effect": None if factory else keeping.get("factory_effect"),
                "deprecated": _deprecation(node),
                "returns": _returned_class(node),
                "forwards": _kwargs_forwarding(node),
                # A `__new__` in Python source: which class it constructs (a stub's body says nothing).
                "constructs": new_constructs(node)
                if in_class and node.name == "__new__" and not _in_stub(func)
                else None,
            }


_DYNAMIC_BINDING = "dynamic-binding"  # a Reason code (auditor/reasons.py)
_NAMESPACE_FUNCTIONS = frozenset({"locals", "vars", "globals", "exec"})


def _class_statements(node: ast.ClassDef) -> Iterator[ast.stmt]:
    """Statements of a class body, inside if/try/with/for/while too, but not inside defs or classes."""
    return _block_statements(node.body)


def _unpacked_names(statements: list[ast.stmt]) -> list[tuple[str, int]]:
    """Names bound by unpacking assignments (`(DEBUG, INFO) = range(2)`, `a, *rest = ...`): plain
    attributes of the namespace, which griffe does not record."""
    found: list[tuple[str, int]] = []
    for stmt in statements:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, (ast.Tuple, ast.List)):
                    found.extend((name, stmt.lineno) for name in _target_names(target))
    return found


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _target_names(element)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _body_bound_names(statements: list[ast.stmt]) -> set[str]:
    """Every name a class body binds, whatever the statement (for, with, walrus, del, imports...)."""
    names: set[str] = set()
    for stmt in statements:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*")
            continue
        for field_name in ("body", "orelse", "finalbody", "handlers"):
            if isinstance(getattr(stmt, field_name, None), list):
                break  # a compound statement: its own statements come separately; read its header only
        else:
            field_name = ""
        parts = (
            [stmt]
            if not field_name
            else [
                getattr(stmt, f)
                for f in ("target", "test", "iter", "items", "subject")
                if getattr(stmt, f, None) is not None
            ]
        )
        for part in parts:
            for inner in (
                ast.walk(part) if isinstance(part, ast.AST) else (n for item in part for n in ast.walk(item))
            ):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                    names.add(inner.id)
        if isinstance(stmt, ast.Try):
            names.update(h.name for h in stmt.handlers if h.name)
    return names


def _uses_namespace_functions(statements: list[ast.stmt]) -> bool:
    """A class body that calls locals()/vars()/exec(): it may bind any name."""
    for stmt in statements:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        headers = (
            [stmt]
            if not any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse", "handlers"))
            else [
                getattr(stmt, f)
                for f in ("target", "test", "iter", "subject")
                if getattr(stmt, f, None) is not None
            ]
        )
        for header in headers:
            for inner in ast.walk(header):
                if (
                    isinstance(inner, ast.Call)
                    and isinstance(inner.func, ast.Name)
                    and inner.func.id in _NAMESPACE_FUNCTIONS
                ):
                    return True
    return False


def _open_module_namespace(module: ast.Module) -> str | None:
    """A module whose top-level code calls locals()/vars()/exec() (globals() is already a marker)."""
    for stmt in _module_statements(module):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for inner in ast.walk(stmt):
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id in ("locals", "vars", "exec")
            ):
                return _DYNAMIC_BINDING
    return None


def _class_patches(module: ast.Module) -> dict[str, dict[str, Any]]:
    """What the module's code (functions included) does to its own top-level classes from outside their
    bodies: `Cls.name = ...` and `setattr(Cls, "name", ...)` bind `name`; `setattr(Cls, expr, ...)`,
    `Cls.__dict__`/`vars(Cls)` games bind unknown names (the class's namespace is open)."""
    classes = {stmt.name for stmt in _module_statements(module) if isinstance(stmt, ast.ClassDef)}
    patches: dict[str, dict[str, Any]] = {}
    if not classes:
        return patches
    for inner in ast.walk(module):
        owner, name = None, None
        if (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.value, ast.Name)
            and inner.value.id in classes
        ):
            if isinstance(inner.ctx, (ast.Store, ast.Del)):
                owner, name = inner.value.id, inner.attr
            elif inner.attr == "__dict__":
                owner = inner.value.id
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id in ("setattr", "vars")
            and inner.args
            and isinstance(inner.args[0], ast.Name)
            and inner.args[0].id in classes
        ):
            owner = inner.args[0].id
            second = inner.args[1] if inner.func.id == "setattr" and len(inner.args) > 1 else None
            if isinstance(second, ast.Constant) and isinstance(second.value, str):
                name = second.value
        if owner is None:
            continue
        patch = patches.setdefault(owner, {"names": [], "open": False})
        if name is not None:
            patch["names"].append(name)
        else:
            patch["open"] = True
    return patches


def _in_stub(func: griffe.Function) -> bool:
    filepath = func.module.filepath
    return isinstance(filepath, Path) and filepath.suffix == ".pyi"


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


_MAX_SELF_CALLS = 8  # per method called: the shapes kept of the class's own calls


def _self_calls(node: ast.ClassDef) -> dict[str, list[dict[str, Any]]]:
    """`self.m(...)` calls in the class's plain methods (the shapes the upstream calls its hooks with)."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        if any(_last_name_of(d) in ("staticmethod", "classmethod") for d in method.decorator_list):
            continue
        self_name = method.args.args[0].arg
        for inner in _own_nodes(method):
            if not (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and isinstance(inner.func.value, ast.Name)
                and inner.func.value.id == self_name
            ):
                continue
            found = calls.setdefault(inner.func.attr, [])
            if len(found) >= _MAX_SELF_CALLS:
                continue
            shape = {
                "caller": method.name,
                "positional": sum(1 for a in inner.args if not isinstance(a, ast.Starred)),
                "keywords": [k.arg for k in inner.keywords if k.arg is not None],
                "star_args": any(isinstance(a, ast.Starred) for a in inner.args),
                "star_kwargs": any(k.arg is None for k in inner.keywords),
                "lineno": inner.lineno,
                "text": ast.unparse(inner)[:120],
            }
            key = {k: v for k, v in shape.items() if k not in ("lineno", "text")}
            if not any({k: v for k, v in f.items() if k not in ("lineno", "text")} == key for f in found):
                found.append(shape)
    return calls


def _top_level_names(module: ast.Module) -> set[str]:
    """Every name bound at module level, whatever the statement (for, with, walrus, global...)."""
    names: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for stmt in statements:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(stmt.name)
                functions = (
                    [stmt]
                    if not isinstance(stmt, ast.ClassDef)
                    else [f for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
                )
                for function in functions:  # `global x` in a function binds a module name
                    for inner in _own_nodes(function):
                        if isinstance(inner, ast.Global):
                            names.update(inner.names)
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if alias.name != "*":
                        names.add(alias.asname or alias.name.split(".")[0])
                continue
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                    names.add(inner.id)
                elif isinstance(inner, ast.ExceptHandler) and inner.name:
                    names.add(inner.name)
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                nested = getattr(stmt, field_name, None)
                if isinstance(nested, list):
                    visit([s for s in nested if isinstance(s, ast.stmt)])
            if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
                for handler in stmt.handlers:  # type: ignore[attr-defined]
                    visit(handler.body)
            if type(stmt).__name__ == "Match":
                for case in stmt.cases:  # type: ignore[attr-defined]
                    visit(case.body)

    visit(module.body)
    return names


def _without_main_blocks(code: str) -> str:
    """The source with its `if __name__ == "__main__":` blocks blanked (line numbers kept): they never run
    on import, so nothing they bind is a module attribute."""
    if "__main__" not in code:
        return code
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code  # griffe reports the error itself
    lines = code.splitlines(keepends=True)
    for stmt in tree.body:
        if _is_main_block(stmt) and stmt.end_lineno is not None:
            for index in range(stmt.lineno - 1, stmt.end_lineno):
                lines[index] = "\n"
    return "".join(lines)


def _is_main_block(stmt: ast.stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _computes_all(module: ast.Module) -> bool:
    """Whether `__all__` is built by code (a comprehension, a call, a concatenation of non-literals)."""
    for stmt in _module_statements(module):
        if isinstance(stmt, ast.Expr):
            stmt = stmt.value  # type: ignore[assignment]  # `__all__.extend(...)`
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        elif isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute):
            owner = stmt.func.value
            if (
                isinstance(owner, ast.Name)
                and owner.id == "__all__"
                and stmt.func.attr in ("extend", "append", "insert")
            ) and not all(_is_literal_strings(a) for a in stmt.args):
                return True
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and value is not None:
            if not _is_literal_strings(value):
                return True
    # a module-level function that adds to the module's `__all__` when called (numpy 1.14
    # `core/numeric.py`: `def extend_all(module): ... __all__.append(a)`, then `extend_all(arrayprint)`)
    for function in module.body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local = any(
                isinstance(n, ast.Name) and n.id == "__all__" and isinstance(n.ctx, ast.Store)
                for n in _own_nodes(function)
            ) and not any(isinstance(n, ast.Global) and "__all__" in n.names for n in _own_nodes(function))
            for node in _own_nodes(function):
                if local:
                    break
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "__all__"
                    and node.func.attr in ("extend", "append", "insert", "__iadd__")
                ) or (
                    isinstance(node, ast.AugAssign)
                    and isinstance(node.target, ast.Name)
                    and node.target.id == "__all__"
                ):
                    return True
    return False


def _is_literal_strings(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_is_literal_strings(e) for e in node.elts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_literal_strings(node.left) and _is_literal_strings(node.right)
    return False


def _source_names(stub: Path) -> set[str]:
    """The top-level names of the `.py` beside a `.pyi`, if there is one and it parses."""
    source = stub.with_suffix(".py")
    if not source.is_file():
        return set()
    try:
        return _top_level_names(ast.parse(source.read_bytes()))
    except (SyntaxError, ValueError, RecursionError, OSError):
        return set()


_PLAIN_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "overload", "abstractmethod", "final", "override"}
)


def _source_definitions(stub: Path) -> dict[str, Any]:
    """What the `.py` beside a `.pyi` defines in Python at top level: each function's signature (None when
    a decorator may change it), each class's methods' signatures the same way, in a dict by name."""
    source = stub.with_suffix(".py")
    if not source.is_file():
        return {}
    try:
        tree = ast.parse(source.read_bytes())
    except (SyntaxError, ValueError, RecursionError, OSError):
        return {}
    found: dict[str, Any] = {}
    for stmt in _module_statements(tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[stmt.name] = None if stmt.name in found else _ast_signature(stmt)  # defined twice: unknown
        elif isinstance(stmt, ast.ClassDef):
            methods: dict[str, Signature | None] = {}
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods[inner.name] = None if inner.name in methods else _ast_signature(inner)
            found[stmt.name] = None if stmt.name in found else methods
    return found


def _ast_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Signature | None:
    """The signature a plain `def` has at run time; None when a decorator may change it."""
    if any(_last_name_of(d) not in _PLAIN_DECORATORS for d in node.decorator_list):
        return None
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = []
    for index, arg in enumerate(positional):
        kind = ParamKind.POSITIONAL_ONLY if index < len(args.posonlyargs) else ParamKind.POSITIONAL_OR_KEYWORD
        default = args.defaults[index - first_default] if index >= first_default else None
        params.append(
            Parameter(
                arg.arg, kind, default is not None, ast.unparse(default) if default is not None else None
            )
        )
    if args.vararg is not None:
        params.append(Parameter(args.vararg.arg, ParamKind.VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append(
            Parameter(
                arg.arg,
                ParamKind.KEYWORD_ONLY,
                default is not None,
                ast.unparse(default) if default is not None else None,
            )
        )
    if args.kwarg is not None:
        params.append(Parameter(args.kwarg.arg, ParamKind.VAR_KEYWORD))
    return Signature(tuple(params))


def _typing_view(member: Member, source: Any = None) -> Member:
    """The member (and a class's members) marked as declared by a stub: a typing view. `source` is what
    the Python source beside the stub defines under that name (a signature, or a class's methods)."""
    if isinstance(member, FunctionInfo):
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


def _rebound_names(body: list[ast.stmt]) -> set[str]:
    """Names a body binds more than once to a function, class or import (per branch of `if`/`try`
    included): which definition runs depends on the platform or on what imported, so no one is certain.
    Overloads and property setters are one definition, not several."""
    counts: dict[str, int] = {}

    def count(statements: list[ast.stmt]) -> None:
        for stmt in statements:
            if _is_main_block(stmt):
                continue  # `if __name__ == "__main__":` never runs on import
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not any(
                    _last_name_of(d) in ("overload", "setter", "deleter", "getter")
                    for d in stmt.decorator_list
                ):
                    counts[stmt.name] = counts.get(stmt.name, 0) + 1
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    if alias.name != "*":
                        name = alias.asname or alias.name.split(".")[0]
                        counts[name] = counts.get(name, 0) + 1
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and target.id in counts:
                        counts[target.id] += 1  # `f = wrap(f)` after `def f`: rebound
            for field_name in ("body", "orelse", "finalbody"):
                nested = getattr(stmt, field_name, None)
                if isinstance(nested, list) and not isinstance(
                    stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
                ):
                    count(nested)
            for handler in getattr(stmt, "handlers", []) or []:
                count(handler.body)

    count(body)
    return {name for name, n in counts.items() if n > 1}


def _last_name_of(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    return _last_name(node)


def _star_imports(node: ast.Module, mod: griffe.Module) -> list[str]:
    paths = []
    for stmt in sorted(_module_statements(node), key=lambda s: (s.lineno, s.col_offset)):
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            if stmt.level:
                base = mod.path.split(".")
                keep = len(base) - stmt.level + (1 if mod.is_init_module else 0)
                prefix = base[:keep]
                paths.append(".".join(prefix + ([stmt.module] if stmt.module else [])))
            elif stmt.module:
                paths.append(stmt.module)
    return paths


def _instance_attributes(node: ast.ClassDef) -> tuple[set[str], bool]:
    names: set[str] = set()
    dynamic = False
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        self_name = method.args.args[0].arg
        for inner in _all_nodes(method):
            if (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.ctx, ast.Store)
                and isinstance(inner.value, ast.Name)
                and inner.value.id == self_name
            ):
                names.add(inner.attr)
            elif (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id == "setattr"
            ) or (isinstance(inner, ast.Attribute) and inner.attr == "__dict__"):
                dynamic = True
    return names, dynamic


def _is_identity(node: ast.FunctionDef | ast.AsyncFunctionDef, position: int = 0) -> bool:
    """A decorator that hands back what it was given: every `return` returns the parameter at `position`
    (the first; after `self` for a `__call__`), which the body never rebinds (registration decorators
    such as `def register(cls): REGISTRY.add(cls); return cls`)."""
    if isinstance(node, ast.AsyncFunctionDef) or len(node.args.args) <= position:
        return False
    first = node.args.args[position].arg
    returns = []
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Return):
            returns.append(inner)
        elif (
            isinstance(inner, ast.Name) and inner.id == first and not isinstance(inner.ctx, ast.Load)
        ) or isinstance(inner, (ast.Yield, ast.YieldFrom)):
            return False
    return bool(returns) and all(isinstance(r.value, ast.Name) and r.value.id == first for r in returns)


def _is_forwarding_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def deco(f): @functools.wraps(f) def w(*a, **k): ...; return f(*a, **k) ...; return w`:
    the wrapper hands every argument to the function unchanged, so a call binds as the function's own."""
    if not node.args.args:
        return False
    first = node.args.args[0].arg
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    returned = [
        r.value.id for r in _own_nodes(node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)
    ]
    if len(returned) != 1 or returned[0] not in inner:
        return False
    wrapper = inner[returned[0]]
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == first
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return False
    star, double = args.vararg.arg, args.kwarg.arg
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == first
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == star
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == double
        for call in ast.walk(wrapper)
    )


# -- what a decorator provably does to the signature of the function it is given ---------------------


def _keeping(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    position: int,
    func: griffe.Function,
    outer: frozenset[str] = frozenset(),
    depth: int = 0,
) -> tuple[bool, str | None, bool, str | None]:
    """As a decorator given the function at parameter `position`: (keeps its signature for binding,
    `through`, self-partial, effect). Every reachable `return` (with the function given: a branch
    `if func is None:` is not taken) must give the function itself, a `@wraps(f)` wrapper that hands
    `*args, **kwargs` to it unchanged, a call handing the function as the first argument to a nested
    decorator or a callable that keeps it (`through`: `mod.deco` or `mod.Cls:method` for a method of
    a local instance, checked when the callee is resolved), or code generated from the function's own
    signature (`Maker.create(f, "... %(shortsignature)s ...")`, the `decorator` package's template
    contract). `self-partial`: a reachable return gives `functools.partial(<this function>, ...)`.
    `effect` is "positional-by-name" for a wrapper that names positional arguments after the
    function's own parameters (`kwargs.update(zip(signature(f).parameters, args)); f(**kwargs)`)."""
    failed: tuple[bool, str | None, bool, str | None] = (False, None, False, None)
    args = node.args.posonlyargs + node.args.args
    if isinstance(node, ast.AsyncFunctionDef) or len(args) <= position or depth > 2:
        return failed
    param = args[position].arg
    params = {
        a.arg for a in args + node.args.kwonlyargs
    } | outer  # an enclosing function's names are no imports
    own = _own_nodes(node)
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assigned = _local_assignments(node)
    for stmt in own:
        if isinstance(stmt, (ast.Yield, ast.YieldFrom)):
            return failed
        if isinstance(stmt, ast.Name) and stmt.id == param and not isinstance(stmt.ctx, ast.Load):
            return failed
    returns = _reachable_returns(node.body, param)
    if not returns:
        return failed
    throughs: set[str] = set()
    effects: set[str | None] = set()
    self_partial = False
    kept = 0
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Name) and value.id != param and len(assigned.get(value.id, ())) == 1:
            value = assigned[value.id][0]  # `fun = Maker.create(func, ...); return fun`
        if isinstance(value, ast.Name) and value.id == param:
            kept += 1
            effects.add(None)
            continue
        if isinstance(value, ast.Name) and value.id in inner and value.id not in assigned:
            if _forwards_to(inner[value.id], param):
                effects.add(None)
            elif _binds_by_name(inner[value.id], param, assigned):
                effects.add("positional-by-name")
            else:
                return failed
            kept += 1
            continue
        if not isinstance(value, ast.Call):
            return failed
        callee = value.func
        if (
            _last_name(callee) == "partial"
            and value.args
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == node.name
            and not (func.parent is not None and func.parent.is_class)
        ):
            self_partial = True
            continue
        if not value.args or not isinstance(value.args[0], ast.Name) or value.args[0].id != param:
            return failed
        if (
            len(value.args) == 1
            and not value.keywords
            and isinstance(callee, ast.Name)
            and callee.id in inner
            and callee.id not in assigned
        ):
            # `if func is not None: return _inner(func)`: the nested decorator decides
            enclosing = params | set(assigned) | set(inner)
            keeps, through, partial_, effect = _keeping(
                inner[callee.id], 0, func, frozenset(enclosing), depth + 1
            )
            if not keeps or partial_:
                return failed
            if through:
                throughs.add(through)
            effects.add(effect)
            kept += 1
            continue
        if (
            isinstance(callee, ast.Attribute)
            and callee.attr == "create"
            and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and "%(shortsignature)s" in a.value
                for a in value.args[1:2]
            )
        ):
            kept += 1
            effects.add(None)
            continue
        through = _through_path(callee, params, assigned, inner, func)
        if through is None:
            return failed
        throughs.add(through)
        effects.add(None)
        kept += 1
    if len(throughs) > 1 or len(effects) > 1 or not kept or (throughs and effects != {None}):
        return False, None, self_partial, None
    return True, (throughs.pop() if throughs else None), self_partial, effects.pop()


def _local_assignments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr]]:
    """Each local name with the values assigned to it (a placeholder for augmented or unpacked ones)."""
    assigned: dict[str, list[ast.expr]] = {}
    for stmt in _own_nodes(node):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        assigned.setdefault(name.id, []).append(
                            stmt.value if target is name else ast.Constant(None)
                        )
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
            assigned.setdefault(stmt.target.id, []).extend([ast.Constant(None), ast.Constant(None)])
        elif isinstance(stmt, (ast.For, ast.With, ast.NamedExpr, ast.comprehension)):
            for name in ast.walk(getattr(stmt, "target", stmt)):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                    assigned.setdefault(name.id, []).extend([ast.Constant(None), ast.Constant(None)])
    return assigned


def _none_test(test: ast.expr, param: str) -> bool | None:
    """True for `param is None`, False for `param is not None`, None for any other test."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == param
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if isinstance(test.ops[0], ast.Is):
            return True
        if isinstance(test.ops[0], ast.IsNot):
            return False
    return None


def _reachable_returns(body: list[ast.stmt], param: str, is_none: bool = False) -> list[ast.Return]:
    """The `return`s of a function body that can run when `param is None` is `is_none`: a top-level
    `if param is None:` / `if param is not None:` branch is followed only when it is taken."""
    found: list[ast.Return] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and (test := _none_test(stmt.test, param)) is not None:
            taken = stmt.body if test == is_none else stmt.orelse
            found.extend(_reachable_returns(taken, param, is_none))
            if taken and isinstance(taken[-1], (ast.Return, ast.Raise)):
                return found
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack: list[ast.AST] = [stmt]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Return):
                found.append(current)
            if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(current))
        if isinstance(stmt, (ast.Return, ast.Raise)):
            break
    return found


def _binds_by_name(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str, enclosing: dict[str, list[ast.expr]]
) -> bool:
    """`sig = signature(f)` in the decorator, then `@wraps(f) def w(*args, **kwargs): ...;
    kwargs.update(zip(sig.parameters, args)); return f(**kwargs)` (or `f(*args, **kwargs)` untouched):
    each positional argument is passed by the name of `f`'s parameter at its place, so keyword-only
    parameters take positional arguments too and extra ones are dropped (zip stops at the shorter)."""
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == param
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return False
    star, double = args.vararg.arg, args.kwarg.arg
    signatures = {
        name
        for name, values in enclosing.items()
        if len(values) == 1
        and isinstance(values[0], ast.Call)
        and _last_name(values[0].func) == "signature"
        and len(values[0].args) == 1
        and isinstance(values[0].args[0], ast.Name)
        and values[0].args[0].id == param
    }

    def names_positionals(arg: ast.expr) -> bool:
        # zip(sig.parameters, args), or {k: a for k, a in zip(sig.parameters, args)}
        if isinstance(arg, ast.DictComp) and len(arg.generators) == 1:
            gen = arg.generators[0]
            if not (isinstance(gen.target, ast.Tuple) and len(gen.target.elts) == 2 and not gen.ifs):
                return False
            k, a = gen.target.elts
            if not (
                isinstance(arg.key, ast.Name)
                and isinstance(k, ast.Name)
                and arg.key.id == k.id
                and isinstance(arg.value, ast.Name)
                and isinstance(a, ast.Name)
                and arg.value.id == a.id
            ):
                return False
            arg = gen.iter
        return (
            isinstance(arg, ast.Call)
            and _last_name(arg.func) == "zip"
            and len(arg.args) == 2
            and not arg.keywords
            and isinstance(arg.args[0], ast.Attribute)
            and arg.args[0].attr == "parameters"
            and isinstance(arg.args[0].value, ast.Name)
            and arg.args[0].value.id in signatures
            and isinstance(arg.args[1], ast.Name)
            and arg.args[1].id == star
        )

    updated = False
    for inner in ast.walk(wrapper):
        if (
            isinstance(inner, ast.Name)
            and inner.id in (star, double, param)
            and not isinstance(inner.ctx, ast.Load)
        ):
            return False
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
            and inner.func.value.id in (star, double)
        ):
            if inner.func.attr != "update" or inner.func.value.id != double:
                if inner.func.attr in ("pop", "setdefault", "clear", "popitem", "__setitem__", "__delitem__"):
                    return False
                continue
            if len(inner.args) != 1 or inner.keywords or not names_positionals(inner.args[0]):
                return False
            updated = True
        if (
            isinstance(inner, (ast.Subscript,))
            and isinstance(inner.value, ast.Name)
            and inner.value.id == double
            and not isinstance(inner.ctx, ast.Load)
        ):
            return False
    calls = [
        c
        for c in ast.walk(wrapper)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == param
    ]

    def forwards(call: ast.Call) -> bool:
        spread = (
            len(call.keywords) == 1
            and call.keywords[0].arg is None
            and isinstance(call.keywords[0].value, ast.Name)
            and call.keywords[0].value.id == double
        )
        if not spread:
            return False
        if not call.args:
            return True  # f(**kwargs), after the positional arguments were named
        return (
            len(call.args) == 1
            and isinstance(call.args[0], ast.Starred)
            and isinstance(call.args[0].value, ast.Name)
            and call.args[0].value.id == star
        )

    return updated and bool(calls) and all(forwards(c) for c in calls)


def _through_path(
    callee: ast.expr,
    params: set[str],
    assigned: dict[str, list[ast.expr]],
    inner: dict[str, Any],
    func: griffe.Function,
) -> str | None:
    """The canonical path of the callable a decorator hands the function to: a module-level name or
    dotted import (`mod.deco`), or `mod.Cls:method` for `lock = Cls(...); return lock.method(f)`."""
    if isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name):
        local = callee.value.id
        values = assigned.get(local, ())
        if (
            len(values) == 1
            and isinstance(values[0], ast.Call)
            and isinstance(values[0].func, (ast.Name, ast.Attribute))
        ):
            built = ast.unparse(values[0].func)
            if (
                built.split(".")[0] in params
                or built.split(".")[0] in assigned
                or built.split(".")[0] in inner
            ):
                return None
            resolved = _resolve_text(func, built)
            return None if resolved.startswith("?") else f"{resolved}:{callee.attr}"
    if not isinstance(callee, (ast.Name, ast.Attribute)):
        return None
    text = ast.unparse(callee)
    head = text.split(".")[0]
    if head in params or head in assigned or head in inner or head in ("self", "cls"):
        return None
    resolved = _resolve_text(func, text)
    return None if resolved.startswith("?") else resolved


def _forwards_to(wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """`@wraps(param) def w(*a, **k): ... return param(*a, **k)`: binds as `param`'s own signature."""
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == param
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return False
    star, double = args.vararg.arg, args.kwarg.arg
    calls = [
        c
        for c in ast.walk(wrapper)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == param
    ]
    # Every call of the function forwards the arguments as received; `*a` and `**k` are never rebound.
    for inner in ast.walk(wrapper):
        if (
            isinstance(inner, ast.Name)
            and inner.id in (star, double, param)
            and not isinstance(inner.ctx, ast.Load)
        ):
            return False
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
            and inner.func.value.id in (star, double)
            and inner.func.attr in ("update", "pop", "setdefault", "clear", "popitem")
        ):
            return False
    return bool(calls) and all(
        len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == star
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == double
        for call in calls
    )


def _sets_attributes_of_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`setattr(cls, ...)` or `cls.name = ...` (a name that is not a dunder) on one of the function's
    parameters, here or in a function nested in it (matplotlib `_define_aliases` adds `set_lw`)."""
    params = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    params.discard("self")
    for inner in ast.walk(node):
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == "setattr"
            and inner.args
            and isinstance(inner.args[0], ast.Name)
            and inner.args[0].id in params
        ):
            return True
        if (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.ctx, ast.Store)
            and isinstance(inner.value, ast.Name)
            and inner.value.id in params
            and not (inner.attr.startswith("__") and inner.attr.endswith("__"))
        ):
            return True
    return False


def _self_partial_arity(node: ast.FunctionDef | ast.AsyncFunctionDef, func: griffe.Function) -> int | None:
    """`def deco(a, b, func=None): ... return functools.partial(deco, a, b)`: how many positional
    arguments every such partial fills (the decorated function is the next parameter), if the same."""
    if func.parent is not None and func.parent.is_class:
        return None
    values = [r.value for r in _own_nodes(node) if isinstance(r, ast.Return) and r.value is not None]
    values += [s.value for s in _own_nodes(node) if isinstance(s, ast.Assign)]
    arities = {
        len(v.args) - 1
        for v in values
        if isinstance(v, ast.Call)
        and _last_name(v.func) == "partial"
        and v.args
        and isinstance(v.args[0], ast.Name)
        and v.args[0].id == node.name
        and not any(isinstance(a, ast.Starred) for a in v.args)
    }
    args = node.args.posonlyargs + node.args.args
    if len(arities) != 1:
        return None
    filled = arities.pop()
    if filled >= len(args):
        return None
    # a keyword of the partial must not fill the function's own parameter (`**kwargs` holds the rest)
    for v in values:
        if isinstance(v, ast.Call) and _last_name(v.func) == "partial":
            if any(k.arg == args[filled].arg for k in v.keywords):
                return None
            if any(
                k.arg is None
                and not (
                    node.args.kwarg and isinstance(k.value, ast.Name) and k.value.id == node.args.kwarg.arg
                )
                for k in v.keywords
            ):
                return None
    # the function's parameter is optional (`func=None`): absent, the partial is what comes back
    return filled if len(args) - filled <= len(node.args.defaults) else None


def _decorator_facts(
    node: ast.FunctionDef | ast.AsyncFunctionDef, position: int, func: griffe.Function
) -> dict[str, Any]:
    """identity / factory (with their `through` callables and effects) from what every path returns."""
    facts: dict[str, Any] = {}
    filled = _self_partial_arity(node, func)
    if filled is not None:  # `@deco(a, b)` gives partial(deco, a, b): the function comes in after them
        keeps, through, self_partial, effect = _keeping(node, filled, func)
        if keeps and not self_partial:
            facts.update(factory=True, factory_through=through, factory_effect=effect)
        return facts
    keeps, through, self_partial, effect = _keeping(node, position, func)
    if keeps and not self_partial:
        facts.update(identity=True, through=through, effect=effect)
    # `@deco(...)`: what comes back without the function (`def deco(func=None, *, v=...)` returns the
    # nested decorator when `func is None`; a plain factory returns it always)
    args = node.args.posonlyargs + node.args.args
    param = args[position].arg if len(args) > position else None
    given_none = param is not None and len(args) - position <= len(node.args.defaults)
    returns = (
        _reachable_returns(node.body, param, True)
        if given_none and param
        else [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
    )
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if len(returns) == 1 and isinstance(returns[0].value, ast.Name) and returns[0].value.id in inner:
        enclosing = {
            n.id for n in _own_nodes(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        }
        enclosing |= {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs} | set(
            inner
        )
        keeps, through, self_partial, effect = _keeping(
            inner[returns[0].value.id], 0, func, frozenset(enclosing)
        )
        if keeps and not self_partial:
            facts.update(factory=True, factory_through=through, factory_effect=effect)
    return facts


def _kwargs_forwarding(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """`def f(..., **kw): ...; g(x, y=1, **kw)`: the one call `**kw` goes to, unchanged (kw is used
    nowhere else, so nothing is popped or added on the way)."""
    kwarg = node.args.kwarg
    if kwarg is None:
        return None
    name = kwarg.arg
    # A bare truth test (`if kwargs: ...`) reads the mapping without changing it: not a use.
    tested = {
        id(n.test)
        for n in _own_nodes(node)
        if isinstance(n, (ast.If, ast.While, ast.Assert)) and isinstance(n.test, ast.Name)
    } | {id(n.operand) for n in _own_nodes(node) if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    uses = [n for n in _own_nodes(node) if isinstance(n, ast.Name) and n.id == name and id(n) not in tested]
    calls = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == name for k in c.keywords)
    ]
    # `kw.pop("legacy", None)` takes a named keyword out before the hand-over: it is consumed here.
    pops = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr == "pop"
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == name
        and c.args
        and isinstance(c.args[0], ast.Constant)
        and isinstance(c.args[0].value, str)
    ]
    if len(uses) != 1 + len(pops) or len(calls) != 1:
        return None
    call = calls[0]
    if (
        not isinstance(call.func, (ast.Name, ast.Attribute))
        or sum(1 for k in call.keywords if k.arg is None) != 1
    ):
        return None
    return {
        "target": ast.unparse(call.func),
        "positional": sum(1 for a in call.args if not isinstance(a, ast.Starred)),
        "keywords": [k.arg for k in call.keywords if k.arg is not None],
        "star_args": any(isinstance(a, ast.Starred) for a in call.args),
        "consumed": [p.args[0].value for p in pops],  # type: ignore[attr-defined]
    }


def _forwarding_target(func: griffe.Function, forwards: dict[str, Any] | None) -> Forwarding | None:
    if not forwards:
        return None
    target = forwards["target"]
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


def _returned_class(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """For a function without a return annotation: what every `return` gives, when it is one thing:
    a call of one dotted name (`DataFrame(...)`, `cls(...)`), or `self`. `return None` is passed over."""
    if isinstance(node, ast.AsyncFunctionDef):
        return None  # calling it gives a coroutine
    found: set[str] = set()
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if not isinstance(inner, ast.Return) or inner.value is None:
            continue
        value = inner.value
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
            found.add(ast.unparse(value.func))
        elif isinstance(value, ast.Name) and value.id == "self":
            found.add("self")
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _inferred_return(func: griffe.Function, facts: dict[str, Any]) -> str | None:
    returned = facts.get("returns")
    if not returned:
        return None
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


def _returns_identity_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`def derived_from(original): def wrapper(method): ...; return method; return wrapper`: calling it
    gives a decorator that hands back what it is given."""
    inner = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    returned = [
        r.value.id for r in _own_nodes(node) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)
    ]
    returns_all = [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
    return (
        len(returned) == 1 == len(returns_all)
        and returned[0] in inner
        and (_is_identity(inner[returned[0]]) or _is_forwarding_wrapper(inner[returned[0]]))
    )


_OWN_NODES: dict[int, tuple[ast.AST, ...]] = {}  # per loaded module: several analyses walk one body


def _returns_package_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef, func: griffe.Function) -> bool:
    """A factory whose one `return` gives a caller built by the `decorator` package (`@decorator def
    caller(func, *args, **kw)`): the package's contract is that the decorated function keeps its signature."""
    inner = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
    returns = [r for r in _own_nodes(node) if isinstance(r, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Name) or returns[0].value.id not in inner:
        return False
    builders = (
        ast.unparse(d)
        for d in inner[returns[0].value.id].decorator_list
        if isinstance(d, (ast.Name, ast.Attribute))
    )
    return any(_resolve_text(func, b) in ("decorator.decorator", "decorator.decorate") for b in builders)


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[ast.AST, ...]:
    """The nodes of a function's body, not those of functions or classes nested in it."""
    cached = _OWN_NODES.get(id(function))
    if cached is not None:
        return cached
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    _OWN_NODES[id(function)] = result = tuple(found)
    return result


def _all_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """A function's nodes, those of the functions nested in it included (each walked once, cached)."""
    for node in _own_nodes(function):
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _all_nodes(node)
        elif isinstance(node, ast.Lambda):
            yield from ast.walk(node.body)


def _module_statements(module: ast.Module) -> Iterator[ast.stmt]:
    """Statements at module level, inside if/try/with/for/while too, but not inside defs or classes."""
    return _block_statements(module.body)


def _block_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` and of the blocks nested in them, not inside defs or classes."""
    stack: list[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            stack.extend(s for s in getattr(stmt, name, ()) or () if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()) or ():
            stack.extend(handler.body)


_TYPEVAR_NAME = re.compile(r"^_?[A-Z][A-Za-z0-9_]{0,9}$")


def _keeps_signature(func: griffe.Function) -> tuple[bool, bool]:
    """(as a decorator, as a decorator factory): typed `def d(f: F) -> F` or `-> Callable[[F], F]` with a
    TypeVar F (or `Type[T]` for class decorators), in the implementation or any of its overloads: the
    contract type checkers rely on that the decorated object keeps its signature."""
    plain = called = False
    is_method = bool(func.parent is not None and func.parent.is_class and "staticmethod" not in func.labels)
    for variant in (func, *(func.overloads or ())):
        params = list(variant.parameters)[1:] if is_method else list(variant.parameters)
        returns = _typevar_form(str(variant.returns) if variant.returns is not None else "")
        first = (
            _typevar_form(str(params[0].annotation)) if params and params[0].annotation is not None else ""
        )
        if first and first == returns and _is_typevar(func, _typevar_name(first)):
            plain = True
        factory = re.fullmatch(r"Callable\[\[(.+)\], (.+)\]", returns)
        if (
            factory
            and factory.group(1) == factory.group(2)
            and _is_typevar(func, _typevar_name(factory.group(1)))
        ):
            called = True
    return plain, called


def _typevar_form(annotation: str) -> str:
    """`Optional[Type[T]]` -> `Type[T]`; `typing.Callable[...]` -> `Callable[...]`; `type[T]` -> `Type[T]`."""
    text = annotation.replace("typing.", "").replace("typing_extensions.", "").replace("type[", "Type[")
    optional = re.fullmatch(r"Optional\[(.+)\]", text) or re.fullmatch(r"(.+) \| None", text)
    return optional.group(1) if optional else text


def _typevar_name(form: str) -> str:
    match = re.fullmatch(r"Type\[(\w+)\]", form)
    return match.group(1) if match else form


def _is_typevar(func: griffe.Function, name: str) -> bool:
    member = func.module.members.get(name)
    if member is None:
        return False
    if member.is_alias:
        return member.target_path.rsplit(".", 1)[-1] == name and bool(_TYPEVAR_NAME.match(name))
    value = str(getattr(member, "value", "") or "")
    return value.startswith(("TypeVar(", "typing.TypeVar(", "typing_extensions.TypeVar("))


_DEPRECATION_CATEGORIES = ("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning")


def _deprecation(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
    """The message of a deprecation declared by PEP 702 `@deprecated(...)`, a `warnings.warn(...,
    DeprecationWarning)` at the top of the body, or a `.. deprecated::` docstring directive."""
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and _last_name(decorator.func) == "deprecated" and decorator.args:
            return _message(decorator.args[0])
    body = node.body
    docstring = ast.get_docstring(node) if not isinstance(node, ast.ClassDef) or body else None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not isinstance(node, ast.ClassDef):
        for stmt in body[:3]:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if not isinstance(call, ast.Call) or _last_name(call.func) != "warn" or not call.args:
                continue
            category = (
                call.args[1]
                if len(call.args) > 1
                else next((k.value for k in call.keywords if k.arg == "category"), None)
            )
            if category is not None and _last_name(category) in _DEPRECATION_CATEGORIES:
                return _message(call.args[0])
    if docstring and ".. deprecated::" in docstring:
        # Only a directive at the docstring's top level deprecates the object; one nested under a
        # parameter's description deprecates that parameter.
        lines = docstring.splitlines()
        for index, line in enumerate(lines):
            if line.startswith(".. deprecated::"):
                rest = [
                    line[len(".. deprecated::") :].strip(),
                    *(following.strip() for following in lines[index + 1 : index + 3]),
                ]
                return " ".join(part for part in rest if part) or "deprecated"
    return None


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _message(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ast.unparse(node)
