"""Decorators typed `def d(f: F) -> F` (or a factory `-> Callable[[F], F]`) with a TypeVar F: the
contract type checkers rely on that the decorated object keeps its signature.
"""

from __future__ import annotations

import re

import griffe

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
    if isinstance(member, griffe.Alias):
        return member.target_path.rsplit(".", 1)[-1] == name and bool(_TYPEVAR_NAME.match(name))
    value = str(getattr(member, "value", "") or "")
    return value.startswith(("TypeVar(", "typing.TypeVar(", "typing_extensions.TypeVar("))
