"""The class decorators and field specifiers the analysis knows by name (what they do to a class's
constructor and members), read by the resolver (does a class keep its member list?) and by
`synthesis` (which constructor does a dataclass-like class get?)."""

from __future__ import annotations

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
        # PEP 800's marker, in typeshed's stubs of the standard library's classes: returns the class
        "typing_extensions.disjoint_base",
        "typing.disjoint_base",
    }
)
STDLIB_DATACLASS = "dataclasses.dataclass"
PYDANTIC_DATACLASS = "pydantic.dataclasses.dataclass"
ATTRS_CLASSIC = frozenset({"attr.s", "attr.attrs", "attr.attributes", "attrs.attrs"})
ATTRS_NEXT_GEN = frozenset(
    {
        "attr.define",
        "attr.mutable",
        "attr.frozen",
        "attrs.define",
        "attrs.mutable",
        "attrs.frozen",
        "attr.dataclass",
    }
)
DATACLASS_TRANSFORM = frozenset({"typing.dataclass_transform", "typing_extensions.dataclass_transform"})
CLASSVAR = frozenset({"typing.ClassVar", "typing_extensions.ClassVar"})
KW_ONLY = "dataclasses.KW_ONLY"
STDLIB_FIELD = frozenset({"dataclasses.field"})  # every dataclass-like machinery also honours it
PYDANTIC_FIELD = frozenset({"pydantic.Field", "pydantic.fields.Field", "dataclasses.field"})
ATTRS_FIELD = frozenset({"attr.ib", "attr.attrib", "attr.attr", "attr.field", "attrs.field"})
PYDANTIC_MODELS = frozenset({"pydantic.BaseModel", "pydantic.main.BaseModel"})
NAMED_TUPLES = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
# Class decorators whose added members are dunders or the fields the body declares: a class's member
# list stays complete for every other name.
MEMBER_KEEPING_CLASS_DECORATORS = (
    TRANSPARENT_CLASS_DECORATORS
    | ATTRS_CLASSIC
    | ATTRS_NEXT_GEN
    | {
        STDLIB_DATACLASS,
        PYDANTIC_DATACLASS,
        "typing.dataclass_transform",
        "typing_extensions.dataclass_transform",
    }
    | {"functools.total_ordering", "abc.abstractmethod", "enum.verify"}
)
