"""What the collector records and the evaluator reads: scopes, bindings, the values a name can have
(an upstream `Ref`, a downstream class, an instance of one, `super()`) and candidate use sites."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from apidrift.auditor.downstream.refs import Ref


def _attribute_names(node: cst.CSTNode) -> list[str]:
    """The attribute names along an expression (`a.b().c` -> c, b)."""
    names: list[str] = []
    while True:
        if isinstance(node, cst.Attribute):
            names.append(node.attr.value)
            node = node.value
        elif isinstance(node, cst.Call):
            node = node.func
        else:
            return names


@dataclass
class _SelfOf:
    """An instance of a downstream class: `self` in its methods, or what calling it returns."""

    cls: _ClassScope


@dataclass
class _DownClass:
    """A class defined in the downstream (possibly a subclass of an upstream class)."""

    cls: _ClassScope


@dataclass
class _SuperOf:
    """`super()` in a method of a downstream class."""

    cls: _ClassScope


_Value = Union[Ref, _SelfOf, _DownClass, _SuperOf, None]


@dataclass(eq=False)
class _Scope:
    parent: _Scope | None
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    is_class: bool = False
    narrowed: set[str] = field(default_factory=set)  # names tested with isinstance(): types not followed
    owner: _ClassScope | None = None  # for a method's scope: its class (what `super()` refers to)
    # For the module scope: its star imports in order, the upstream module each reads (None for one the
    # analysis cannot follow: not upstream, relative, nested in a block, or names made by globals()/exec).
    star_modules: list[str | None] | None = None
    type_checking: int = 0  # inside how many `if TYPE_CHECKING:` bodies the collector is, in this scope

    def bind(self, name: str, binding: _Binding) -> None:
        binding.type_checking = self.type_checking > 0
        self.bindings.setdefault(name, []).append(binding)


@dataclass(eq=False)
class _ClassScope(_Scope):
    self_attributes: dict[str, list[_Binding]] = field(default_factory=dict)
    node: cst.ClassDef | None = None
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)


@dataclass(eq=False)
class _Binding:
    """How a name got its value: a ready value, an expression to evaluate, or an annotation."""

    scope: _Scope
    value: _Value = None
    expression: cst.BaseExpression | None = None
    annotation: cst.BaseExpression | None = None
    type_checking: bool = False  # made under `if TYPE_CHECKING:`: never runs
    parameter: bool = False  # an unannotated parameter of a function
    # For an unannotated parameter of a plain method: (its class, the method's name, the parameter's
    # name, its place among the positional parameters after `self`, -1 for a keyword-only one). If the
    # method overrides an upstream one, the upstream's annotation of that parameter tells its value.
    hook_param: tuple[_ClassScope, str, str, int] | None = None


@dataclass(frozen=True)
class _Candidate:
    kind: str
    node: cst.CSTNode
    scope: _Scope
    guarded: bool | frozenset[str]  # True, or the builtin exception classes caught around it (see UseSite)
    module: str | None = None  # for imports: the module imported from


def _method_owner(scope: _Scope) -> _ClassScope | None:
    current: _Scope | None = scope
    while current is not None:
        if current.owner is not None:
            return current.owner
        current = current.parent
    return None
