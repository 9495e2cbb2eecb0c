"""Constructors that classes get from their fields, in one place, one style per function.

Styles: stdlib dataclasses, pydantic dataclasses, PEP 681 `dataclass_transform` (decorators, bases and
metaclasses), attrs (`@attr.s`/`attr.ib`, `@define`/`field`), pydantic `BaseModel`, `typing.NamedTuple`,
and builtin exceptions. Each turns the class-body facts the loader recorded (`FieldSpec`s, in source
order) into the `Signature` the synthesized `__init__` has, or `Unknown` when it cannot be certain.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.upstream.class_decorators import (
    ATTRS_CLASSIC,
    ATTRS_FIELD,
    ATTRS_NEXT_GEN,
    CLASSVAR,
    DATACLASS_TRANSFORM,
    KW_ONLY,
    PYDANTIC_DATACLASS,
    PYDANTIC_FIELD,
    STDLIB_DATACLASS,
    STDLIB_FIELD,
    TRANSPARENT_CLASS_DECORATORS,
)
from apidrift.auditor.upstream.model import ClassInfo, Decorator, FieldSpec, FunctionInfo
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    FunctionValue,
    InstanceValue,
    Resolution,
    Resolver,
)

# Validators that may rewrite the input before fields are checked: the constructor is then unknowable.
PRE_VALIDATORS = ("model_validator", "root_validator")


@dataclass(frozen=True)
class Style:
    kind: str  # "stdlib", "pydantic", "pep681" or "attrs"
    options: dict[str, str]  # decorator or class keywords
    field_specifiers: frozenset[str]
    strict_keywords: bool  # unexpected keywords raise (False: pydantic's default extra="ignore")
    kw_only_default: bool = False
    classic_attrs: bool = False  # `@attr.s` without auto_attribs: fields are the `attr.ib()` assignments


def instance_hands_back(target: Resolution, decorator: Decorator, resolver: Resolver) -> bool:
    """`@Appender(doc)` (a class called) or `@appender` (an instance): its `__call__` returns the function."""
    instance: Resolution | None = None
    if isinstance(target, ClassValue) and decorator.called:
        instance = resolver.call_result(target)
    elif isinstance(target, AttributeValue) and not decorator.called:
        instance = resolver.assigned_value(target)
    if not isinstance(instance, InstanceValue):
        return False
    call = resolver.attribute(instance, "__call__")
    return isinstance(call, FunctionValue) and call.info.identity


def marks_dataclass_transform(cls: ClassInfo) -> bool:
    return any(d.path in DATACLASS_TRANSFORM for d in cls.decorators)


def dataclass_style(cls: ClassInfo, mro: list[ClassInfo | str], resolver: Resolver) -> Style | Unknown | None:
    """How `cls` itself is turned into a dataclass-like class, if it is one."""
    style: Style | None = None
    for decorator in cls.decorators:
        path, keywords = decorator.path, decorator.keywords
        if path in TRANSPARENT_CLASS_DECORATORS:
            continue
        if path == STDLIB_DATACLASS:
            style = Style("stdlib", keywords, STDLIB_FIELD, True)
        elif path == PYDANTIC_DATACLASS:
            style = Style("pydantic", keywords, PYDANTIC_FIELD, "forbid" in keywords.get("config", ""))
        elif path in ATTRS_CLASSIC or path in ATTRS_NEXT_GEN:
            classic = path in ATTRS_CLASSIC and keywords.get("auto_attribs") != "True"
            style = Style("attrs", keywords, ATTRS_FIELD, True, keywords.get("kw_only") == "True", classic)
        elif path.startswith("?") or not resolver.index.owns(path):
            return Unknown(Reason.CLASS_DECORATOR, path)
        else:
            target = resolver.lookup(path)
            if isinstance(target, FunctionValue) and target.info.dataclass_transform is not None:
                options = target.info.dataclass_transform
                specifiers = frozenset(filter(None, options.get("field_specifiers", "").split(",")))
                style = Style(
                    "pep681",
                    keywords,
                    specifiers | STDLIB_FIELD,
                    True,
                    options.get("kw_only_default") == "True",
                )
            elif not (
                isinstance(target, FunctionValue)
                and (target.info.factory_identity if decorator.called else target.info.identity)
            ) and not instance_hands_back(target, decorator, resolver):
                return Unknown(Reason.CLASS_DECORATOR, path)
    if style is None:  # PEP 681 through a marked base class or metaclass
        for entry in mro[1:]:
            if isinstance(entry, ClassInfo) and marks_dataclass_transform(entry):
                return Style("pep681", dict(cls.class_keywords), STDLIB_FIELD, True)
    return style


def synthesize(mro: list[ClassInfo | str], owner: ClassInfo, resolver: Resolver) -> Signature | Unknown:
    """The `__init__` a dataclass-like class gets from its own fields and those of dataclass-like bases."""
    fields: dict[str, Parameter] = {}
    strict = True
    for entry in reversed(mro[mro.index(owner) :]):
        if isinstance(entry, str):
            return Unknown(Reason.EXTERNAL_BASE, entry)
        style = dataclass_style(entry, mro[mro.index(entry) :], resolver)
        if isinstance(style, Unknown):
            return style
        if style is None:
            continue  # annotations of plain bases are not fields
        if style.kind == "pydantic" and _has_pre_validator(entry):
            return Unknown(Reason.PYDANTIC_PRE_VALIDATOR)
        strict = style.strict_keywords
        kw_only = style.kw_only_default or style.options.get("kw_only") == "True"
        for spec in entry.fields:
            if _is_classvar(spec):
                continue
            if spec.annotation_path == KW_ONLY:
                kw_only = True
                continue
            if not (_calls(spec, style) if style.classic_attrs else spec.annotation):
                continue  # classic attrs: only `x = attr.ib()` makes a field; the others: annotated names
            parameter = _field_parameter(spec, style, kw_only)
            if isinstance(parameter, Unknown):
                return parameter
            if parameter is None:  # init=False: a field, but not a parameter
                fields.pop(spec.name, None)
            else:  # a redefinition keeps the base's position (dicts keep the first insertion's place)
                fields[spec.name] = parameter
    return _signature(list(fields.values()), strict)


def pydantic_model(mro: list[ClassInfo | str], cls: ClassInfo) -> Signature | Unknown:
    """`BaseModel.__init__(self, /, **data)`: every field by keyword; extras ignored unless forbidden."""
    fields: dict[str, Parameter] = {}
    strict = False
    below = mro[: next(i for i, e in enumerate(mro) if isinstance(e, str))]
    for entry in reversed(below):
        assert isinstance(entry, ClassInfo)
        if _has_pre_validator(entry):
            return Unknown(Reason.PYDANTIC_PRE_VALIDATOR)
        config = entry.members.get("model_config")
        config_text = (getattr(config, "value", None) or "") + entry.class_keywords.get("extra", "")
        nested = entry.members.get("Config")
        if isinstance(nested, ClassInfo):
            config_text += getattr(nested.members.get("extra"), "value", None) or ""
        if "forbid" in config_text:
            strict = True
        elif "allow" in config_text or "ignore" in config_text:
            strict = False
        for spec in entry.fields:
            if _is_classvar(spec) or spec.name.startswith("_") or spec.name == "model_config":
                continue
            parameter = _field_parameter(spec, Style("pydantic", {}, PYDANTIC_FIELD, strict), kw_only=True)
            if isinstance(parameter, Unknown):
                return parameter
            if parameter is not None:
                # pydantic v1 gives `Optional[X]` fields an implicit None default, v2 does not: not certain.
                optional = "Optional[" in spec.annotation or "None" in spec.annotation.replace(" ", "").split(
                    "|"
                )
                fields[spec.name] = (
                    parameter
                    if parameter.has_default or not optional
                    else replace(parameter, has_default=True, default="None?")
                )
    return _signature(list(fields.values()), strict, keyword_only=True)


def named_tuple(mro: list[ClassInfo | str], cls: ClassInfo) -> Signature | Unknown:
    """`class P(NamedTuple)`: one positional-or-keyword parameter per annotated field, in order."""
    if len([e for e in mro if isinstance(e, ClassInfo)]) != 1:
        return Unknown(Reason.NAMED_TUPLE_SUBCLASS)
    params = [
        Parameter(
            s.name,
            ParamKind.POSITIONAL_OR_KEYWORD,
            s.has_value,
            s.value,
            s.annotation,
            annotation_expanded=s.annotation_expanded,
        )
        for s in cls.fields
        if s.annotation and not _is_classvar(s)
    ]
    return Signature(tuple(params), "None")


def exception(mro: list[ClassInfo | str], cls: ClassInfo) -> Signature:
    """Builtin exceptions take any positional arguments and no keywords."""
    return Signature((Parameter("args", ParamKind.VAR_POSITIONAL),), "None")


def _signature(params: list[Parameter], strict: bool, keyword_only: bool = False) -> Signature:
    positional = [p for p in params if p.kind is ParamKind.POSITIONAL_OR_KEYWORD and not keyword_only]
    keyword = [
        p if not keyword_only else replace(p, kind=ParamKind.KEYWORD_ONLY)
        for p in params
        if keyword_only or p.kind is ParamKind.KEYWORD_ONLY
    ]
    result = positional + keyword
    if not strict:
        result.append(Parameter("extra", ParamKind.VAR_KEYWORD, annotation="ignored by pydantic"))
    return Signature(tuple(result), "None")


def _field_parameter(spec: FieldSpec, style: Style, kw_only: bool) -> Parameter | Unknown | None:
    has_default = spec.has_value
    default = spec.value
    name = spec.name
    if style.kind == "attrs":
        name = name.lstrip("_")  # attrs strips leading underscores from init parameter names
    if spec.call_path and is_field_specifier(spec.call_path, style.field_specifiers):
        keywords = spec.call_keywords
        if keywords.get("init") == "False":
            return None
        if "validation_alias" in keywords or ("alias" in keywords and style.kind != "attrs"):
            return Unknown(Reason.FIELD_ALIAS)
        if "alias" in keywords:
            name = keywords["alias"].strip("'\"")
        if keywords.get("kw_only") == "True":
            kw_only = True
        elif keywords.get("kw_only") == "False":
            kw_only = False
        if "default" in keywords:
            has_default, default = keywords["default"] != "...", keywords["default"]
        elif "default_factory" in keywords or "factory" in keywords:
            has_default, default = True, f"<{keywords.get('default_factory') or keywords.get('factory')}()>"
        elif style.kind in ("pydantic", "pep681") and spec.call_positional:
            # pydantic's Field(default, ...): the first positional argument is the default; `...` is none.
            has_default = not (spec.value or "").split("(", 1)[-1].startswith("...")
        elif style.kind == "attrs" and spec.call_positional:
            has_default = True  # attr.ib(default) takes the default first
        else:
            has_default, default = False, None
    return Parameter(
        name,
        ParamKind.KEYWORD_ONLY if kw_only else ParamKind.POSITIONAL_OR_KEYWORD,
        has_default=has_default,
        default=default if has_default else None,
        annotation=spec.annotation or None,
        annotation_expanded=spec.annotation_expanded,
    )


def is_field_specifier(path: str, specifiers: frozenset[str]) -> bool:
    if path in specifiers:
        return True
    # `pydantic.Field` and `pydantic.fields.Field` are one object re-exported: same package, same name.
    top, name = path.split(".")[0], path.rsplit(".", 1)[-1]
    return any(s.split(".")[0] == top and s.rsplit(".", 1)[-1] == name for s in specifiers)


def _calls(spec: FieldSpec, style: Style) -> bool:
    return bool(spec.call_path and is_field_specifier(spec.call_path, style.field_specifiers))


def _is_classvar(spec: FieldSpec) -> bool:
    return spec.annotation_path in CLASSVAR or spec.annotation.startswith(("ClassVar", "typing.ClassVar"))


def _has_pre_validator(cls: ClassInfo) -> bool:
    for member in cls.members.values():
        if not isinstance(member, FunctionInfo):
            continue
        for decorator in member.decorators:
            if decorator.path.rsplit(".", 1)[-1] not in PRE_VALIDATORS:
                continue
            mode = decorator.keywords.get("mode", "")
            if "before" in mode or "wrap" in mode or decorator.keywords.get("pre") == "True":
                return True
            if decorator.path.endswith("root_validator") and not decorator.called:
                return True
    return False
