"""The signature a call binds against, for a resolved callee: functions, methods, `__call__`, constructors.

Constructors are synthesized here, in one place: `__init__`/`__new__` through the MRO, stdlib
dataclasses, pydantic dataclasses, and classes built by any decorator, base class or metaclass marked
with PEP 681 `dataclass_transform`. A callee whose signature cannot be known exactly gives `Unknown`.
"""

from __future__ import annotations

from dataclasses import dataclass

from apidrift.auditor.api.model import ClassInfo, Decorator, FieldSpec, FunctionInfo
from apidrift.auditor.resolve import (
    ClassValue,
    FunctionValue,
    InstanceValue,
    Resolver,
    Unknown,
    Value,
)
from apidrift.auditor.signature import Parameter, ParamKind, Signature

# Decorators that leave a function's call signature as it is.
TRANSPARENT_DECORATORS = frozenset(
    {
        "builtins.staticmethod",
        "builtins.classmethod",
        "abc.abstractmethod",
        "typing.overload",
        "typing.final",
        "typing_extensions.final",
        "typing.override",
        "typing_extensions.override",
        "typing.no_type_check",
        "typing_extensions.deprecated",
        "warnings.deprecated",
        "functools.cache",
        "functools.lru_cache",
        "contextlib.contextmanager",
        "contextlib.asynccontextmanager",
    }
)
# Class decorators that leave the constructor as it is.
TRANSPARENT_CLASS_DECORATORS = frozenset(
    {
        "typing.final",
        "typing_extensions.final",
        "typing.runtime_checkable",
        "typing_extensions.runtime_checkable",
        "functools.total_ordering",
        "enum.unique",
        "typing_extensions.deprecated",
        "warnings.deprecated",
        "typing.type_check_only",
    }
)
# Metaclasses whose `__call__` is type's own.
PLAIN_METACLASSES = frozenset({"builtins.type", "abc.ABCMeta"})
STDLIB_DATACLASS = "dataclasses.dataclass"
PYDANTIC_DATACLASS = "pydantic.dataclasses.dataclass"
CLASSVAR = frozenset({"typing.ClassVar", "typing_extensions.ClassVar"})
INITVAR = "dataclasses.InitVar"
KW_ONLY = "dataclasses.KW_ONLY"
STDLIB_FIELD = frozenset({"dataclasses.field"})  # every dataclass-like machinery also honours it
PYDANTIC_FIELD = frozenset({"pydantic.Field", "pydantic.fields.Field", "dataclasses.field"})


@dataclass(frozen=True)
class CallTarget:
    """What a call site binds against: the signature as the caller sees it (self already bound)."""

    signature: Signature
    description: str  # e.g. "constructor of vllm...Scheduler (__init__)" for messages
    defined_at: str  # dotted path of the function or class that defines it


@dataclass(frozen=True)
class _DataclassStyle:
    kind: str  # "stdlib", "pydantic" or "pep681"
    options: dict[str, str]  # decorator or class keywords
    field_specifiers: frozenset[str]
    strict_keywords: bool  # unexpected keywords raise (False: pydantic's default extra="ignore")
    kw_only_default: bool = False


def call_target(value: Value, resolver: Resolver) -> CallTarget | Unknown:
    if isinstance(value, FunctionValue):
        return _function_target(value, resolver)
    if isinstance(value, ClassValue):
        return constructor(value.info, resolver)
    if isinstance(value, InstanceValue):
        call = resolver.attribute(ClassValue(value.cls), "__call__")
        if isinstance(call, FunctionValue):
            return _function_target(FunctionValue(call.info, call.path, "instance"), resolver)
        return Unknown("instance-call")
    return Unknown("not-callable")


def _function_target(value: FunctionValue, resolver: Resolver) -> CallTarget | Unknown:
    func = value.info
    unknown = _unknown_decorator(func.decorators, resolver, TRANSPARENT_DECORATORS)
    if unknown:
        return Unknown(f"decorator:{unknown}")
    signature = func.signature
    if func.overloads and not func.signature.parameters and not func.has_decorator("typing.overload"):
        return Unknown("overloads-only")
    is_static = func.has_decorator("builtins.staticmethod")
    is_class = func.has_decorator("builtins.classmethod")
    if (value.via == "instance" and not is_static) or (value.via == "class" and is_class):
        signature = signature.bound()
    return CallTarget(signature, f"{value.path}", value.path)


def _unknown_decorator(decorators: tuple[Decorator, ...], resolver: Resolver, transparent: frozenset[str]) -> str | None:
    """The first decorator whose effect on the signature is not known to be nil."""
    for decorator in decorators:
        if decorator.path in transparent:
            continue
        if decorator.path.startswith("?") or not resolver.index.owns(decorator.path):
            return decorator.path
        target = resolver.lookup(decorator.path)
        if isinstance(target, FunctionValue) and target.info.identity and not decorator.called:
            continue
        return decorator.path
    return None


# -- constructors ---------------------------------------------------------------------------------


def constructor(cls: ClassInfo, resolver: Resolver) -> CallTarget | Unknown:
    mro = resolver.mro(cls)
    if mro is None:
        return Unknown("unresolvable-mro")
    metaclass = _metaclass(mro, resolver)
    if isinstance(metaclass, Unknown):
        return metaclass
    for entry in mro:
        if isinstance(entry, str):
            return Unknown(f"external-base:{entry}")
        style = _dataclass_style(entry, mro, resolver)
        if isinstance(style, Unknown):
            return style
        if "__new__" in entry.members:
            return Unknown("custom-__new__")
        init = entry.members.get("__init__")
        if isinstance(init, FunctionInfo):
            if style is not None and style.kind == "pydantic":
                return Unknown("pydantic-dataclass-with-__init__")
            target = _function_target(FunctionValue(init, f"{entry.path}.__init__", "instance"), resolver)
            if isinstance(target, Unknown):
                return target
            return CallTarget(target.signature, f"{cls.path} (__init__ of {entry.path})", f"{entry.path}.__init__")
        if init is not None:
            return Unknown("__init__-not-a-function")
        if style is not None and style.options.get("init", "True") != "False":
            synthesized = _synthesize(mro, entry, resolver)
            if isinstance(synthesized, Unknown):
                return synthesized
            return CallTarget(synthesized, f"{cls.path} (fields of {style.kind} dataclass)", entry.path)
    # Only object's __init__ is left: the class takes no arguments.
    return CallTarget(Signature(()), f"{cls.path} (object.__init__)", cls.path)


def _metaclass(mro: list[ClassInfo | str], resolver: Resolver) -> None | Unknown:
    for entry in mro:
        if isinstance(entry, ClassInfo) and entry.metaclass:
            if entry.metaclass in PLAIN_METACLASSES:
                continue
            target = resolver.lookup(entry.metaclass) if not entry.metaclass.startswith("?") else None
            if isinstance(target, ClassValue):
                call = resolver.attribute(target, "__call__")
                if isinstance(call, Unknown) and call.reason == "dunder":
                    continue  # the metaclass does not define __call__: type.__call__ applies
                if _marks_dataclass_transform(target.info):
                    continue
            return Unknown(f"metaclass:{entry.metaclass}")
    return None


def _marks_dataclass_transform(cls: ClassInfo) -> bool:
    return any(d.path in ("typing.dataclass_transform", "typing_extensions.dataclass_transform") for d in cls.decorators)


def _dataclass_style(cls: ClassInfo, mro: list[ClassInfo | str], resolver: Resolver) -> _DataclassStyle | Unknown | None:
    """How `cls` itself is turned into a dataclass-like class, if it is one."""
    style: _DataclassStyle | None = None
    for decorator in cls.decorators:
        if decorator.path in TRANSPARENT_CLASS_DECORATORS:
            continue
        if decorator.path == STDLIB_DATACLASS:
            style = _DataclassStyle("stdlib", decorator.keywords, STDLIB_FIELD, True)
            continue
        if decorator.path == PYDANTIC_DATACLASS:
            config = decorator.keywords.get("config", "")
            strict = "forbid" in config
            style = _DataclassStyle("pydantic", decorator.keywords, PYDANTIC_FIELD, strict)
            continue
        if decorator.path.startswith("?") or not resolver.index.owns(decorator.path):
            return Unknown(f"class-decorator:{decorator.path}")
        target = resolver.lookup(decorator.path)
        if isinstance(target, FunctionValue) and target.info.dataclass_transform is not None:
            options = target.info.dataclass_transform
            style = _DataclassStyle(
                "pep681",
                decorator.keywords,
                frozenset(filter(None, options.get("field_specifiers", "").split(","))) | STDLIB_FIELD,
                True,
                options.get("kw_only_default", "False") == "True",
            )
            continue
        if isinstance(target, FunctionValue) and target.info.identity and not decorator.called:
            continue
        return Unknown(f"class-decorator:{decorator.path}")
    if style is None:  # PEP 681 through a marked base class or metaclass
        for entry in mro[1:]:
            if isinstance(entry, ClassInfo) and _marks_dataclass_transform(entry):
                return _DataclassStyle("pep681", dict(cls.class_keywords), frozenset(), True)
    return style


def _synthesize(mro: list[ClassInfo | str], owner: ClassInfo, resolver: Resolver) -> Signature | Unknown:
    """The `__init__` a dataclass-like class gets from its own fields and those of dataclass-like bases."""
    fields: dict[str, Parameter] = {}
    start = mro.index(owner)
    strict = True
    for entry in reversed(mro[start:]):
        if isinstance(entry, str):
            return Unknown(f"external-base:{entry}")
        style = _dataclass_style(entry, mro[mro.index(entry) :], resolver)
        if isinstance(style, Unknown):
            return style
        if style is None:
            continue  # annotations of plain bases are not fields
        strict = style.strict_keywords
        kw_only = style.kw_only_default or style.options.get("kw_only") == "True"
        for spec in entry.fields:
            if spec.annotation_path in CLASSVAR or spec.annotation.startswith(("ClassVar", "typing.ClassVar")):
                continue
            if spec.annotation_path == KW_ONLY:
                kw_only = True
                continue
            parameter = _field_parameter(spec, style, kw_only)
            if isinstance(parameter, Unknown):
                return parameter
            if parameter is None:  # init=False: a field, but not a parameter
                fields.pop(spec.name, None)
            else:  # a redefinition keeps the base's position (dicts keep the first insertion's place)
                fields[spec.name] = parameter
    positional = [p for p in fields.values() if p.kind is ParamKind.POSITIONAL_OR_KEYWORD]
    keyword = [p for p in fields.values() if p.kind is ParamKind.KEYWORD_ONLY]
    params = positional + keyword
    if not strict:
        params.append(Parameter("extra", ParamKind.VAR_KEYWORD, annotation="ignored by pydantic"))
    return Signature(tuple(params), "None")


def _field_parameter(spec: FieldSpec, style: _DataclassStyle, kw_only: bool) -> Parameter | None | Unknown:
    has_default = spec.has_value
    default = spec.value
    if spec.call_path and _is_field_specifier(spec.call_path, style.field_specifiers):
        keywords = spec.call_keywords
        if keywords.get("init") == "False":
            return None
        if "alias" in keywords or "validation_alias" in keywords:
            return Unknown("field-alias")
        if keywords.get("kw_only") == "True":
            kw_only = True
        elif keywords.get("kw_only") == "False":
            kw_only = False
        if "default" in keywords:
            has_default, default = keywords["default"] != "...", keywords["default"]
        elif "default_factory" in keywords or "factory" in keywords:
            has_default, default = True, f"<{keywords.get('default_factory') or keywords.get('factory')}()>"
        elif style.kind != "stdlib" and spec.call_positional:
            # pydantic's Field(default, ...): the first positional argument is the default; `...` is none.
            has_default = not (spec.value or "").split("(", 1)[-1].startswith("...")
        else:
            has_default, default = False, None
    annotation = spec.annotation
    return Parameter(
        spec.name,
        ParamKind.KEYWORD_ONLY if kw_only else ParamKind.POSITIONAL_OR_KEYWORD,
        has_default=has_default,
        default=default if has_default else None,
        annotation=annotation,
    )


def _is_field_specifier(path: str, specifiers: frozenset[str]) -> bool:
    if path in specifiers:
        return True
    # `pydantic.Field` and `pydantic.fields.Field` are one object re-exported: same package, same name.
    top, name = path.split(".")[0], path.rsplit(".", 1)[-1]
    return any(s.split(".")[0] == top and s.rsplit(".", 1)[-1] == name for s in specifiers)
