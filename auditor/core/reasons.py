"""Why a use site could not be checked: one registry of reasons (code, human text, counted as resolved).

Every "not checkable" answer of the pipeline is an `Unknown(reason, detail)`: the resolver's, the
constructor analysis', the binder's and the site checker's alike. Coverage counts sites by
`Unknown.label` (the code, with the detail after a colon: `external-base:msgspec.Struct`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Reason(Enum):
    """A reason a site is not checkable. `resolved`: the target itself is known (only this call is not)."""

    code: str
    text: str
    resolved: bool

    def __new__(cls, code: str, text: str, resolved: bool = False) -> Reason:
        member = object.__new__(cls)
        member._value_ = code
        member.code = code
        member.text = text
        member.resolved = resolved
        return member

    # -- resolving a reference ------------------------------------------------------------------------
    NOT_UPSTREAM = ("not-upstream", "the module is not part of the upstream package")
    COMPILED_MODULE = ("compiled-module", "a compiled extension module: there is no Python source to read")
    PARENT_MISSING = ("parent-missing", "an enclosing name is missing (reported once, there)")
    CALLEE_UNRESOLVED = ("callee-unresolved", "the object called could not be resolved")
    EXTERNAL_CLASS = ("external-class", "annotated with a class outside the upstream package")
    ANNOTATION_NOT_A_CLASS = ("annotation-not-a-class", "the annotation does not name a class")
    ALIAS_CYCLE = ("alias-cycle", "the name is an alias of itself, through other aliases")
    UNTYPED_ATTRIBUTE = ("untyped-attribute", "an attribute whose type is not known")
    EXTERNAL = ("external", "an attribute of an object outside the upstream package")
    ATTRIBUTE_OF_FUNCTION = ("attribute-of-function", "an attribute of a function object")
    DEFINED_MORE_THAN_ONCE = (
        "defined-more-than-once",
        "the name is bound in several ways: which one runs is unknown",
    )
    MODULE_DUNDER = ("module-dunder", "a module dunder attribute, set by the import system")
    STAR_IMPORT = ("star-import", "the name may come from a star import the analysis cannot read")
    STAR_IMPORT_COMPILED = (
        "star-import-compiled",
        "the name can only come from a star import of a compiled module, whose names cannot be read",
    )
    DYNAMIC_BINDING = ("dynamic-binding", "the module binds the name dynamically (globals(), setattr, ...)")
    INSTALLED_MODULE = (
        "installed-module",
        "a module without a file that the package's code may install (an importer, a sys.modules store)",
    )
    NAMESPACE_PACKAGE = (
        "namespace-package",
        "a module of a namespace package (PEP 420) that this distribution does not ship: another may",
    )
    NOT_IN_STUB = (
        "not-in-stub",
        "the Python source beside the stub defines the name, which the stub does not declare",
    )
    NOT_IN_STDLIB_STUBS = (
        "not-in-stdlib-stubs",
        "the standard library's stubs do not declare the name in the version written for either: its absence is not evidenced",
    )
    MODULE_GETATTR = ("module-getattr", "the module answers unknown names itself (module __getattr__)")
    EVALUATION_LIMIT = (
        "evaluation-limit",
        "evaluating the module's __getattr__ for the name reached a bound of the analysis (steps, work, time, size)",
    )
    SERVED_BY_GETATTR = (
        "served-by-getattr",
        "served by the module's __getattr__: what it hands back is not an object the analysis reads",
    )
    UNRESOLVABLE_MRO = ("unresolvable-mro", "the class's method resolution order cannot be computed")
    LOAD_BUDGET = (
        "load-budget",
        "the module took longer than its load budget to read: its names are unknown",
    )
    TOO_DEEP = ("too-deep", "resolving the name goes through more levels than the analysis follows")
    ENUM_API = ("enum-api", "part of the enum machinery's own API")
    EXTERNAL_BASE = ("external-base", "inherited from a base class outside the upstream package")
    INSTANCE_ATTRIBUTE = ("instance-attribute", "an instance attribute set in a method: its type is unknown")
    DUNDER = ("dunder", "a dunder attribute that the object model may provide")
    CLASS_GETATTR = (
        "class-getattr",
        "the class answers unknown attributes itself (__getattr__ and the like)",
    )
    DYNAMIC_ATTRIBUTES = (
        "dynamic-attributes",
        "the class's methods (of the class named after the colon) set instance attributes under names "
        "computed at run time (setattr with a computed name, writes to __dict__): any name may exist",
    )
    DECORATOR_ADDS_ATTRIBUTES = (
        "decorator-adds-attributes",
        "a class decorator sets attributes on the class (setattr)",
    )
    METACLASS_ATTRIBUTE = ("metaclass-attribute", "the class's metaclass may provide the attribute")
    BROKEN_ALIAS = ("broken-alias", "an import that does not resolve (TYPE_CHECKING-only or optional)")
    METACLASS = ("metaclass", "a metaclass decides what calling the class does")
    RETURN_NOT_A_CLASS = ("return-not-a-class", "the return annotation does not name a class")
    UNKNOWN_RETURN = ("unknown-return", "what the call returns is not known")
    COROUTINE = ("coroutine", "an `async def` called without `await`: the value is a coroutine")
    ASSIGNED_BY_ANOTHER_MODULE = (
        "assigned-by-another-module",
        "another module of the upstream stores the name on this module at run time (`mail.outbox = []`)",
    )
    RECEIVER_UNKNOWN = (
        "receiver-unknown",
        "a value that may be an upstream object, but which one the analysis cannot say (a name bound to "
        "different values, a Union annotation; `untyped-parameter`: a parameter without annotation whose "
        "callers in the file pass different values, or that may be called otherwise: read as a value, "
        "decorated, called with *args/**kwargs or through a receiver not followed; `too-many-callers`, "
        "`parameter-depth`: a limit of following parameters through their callers; `value-depth`, "
        "`too-many-bindings`: values nested deeper, or names bound more often, than the analysis reads; "
        "a value of another module of the downstream not followed: `returns-disagree`, `generator`, "
        "`decorated` (also a decorated subclass of an upstream class: what calling it runs), "
        "`cross-module-depth`, `cross-module-cycle`)",
    )
    UNTYPED_PARAMETER = (
        "untyped-parameter",
        "a parameter of an override that the upstream's method does not annotate with one class (or at "
        "another place): what the upstream hands it is not known",
    )
    ITEM_UNKNOWN = (
        "item-unknown",
        "what subscription, iteration or `with` hands out of the value is not known (no container "
        "annotation, no annotated `__getitem__`, `__iter__`, `__next__` or `__enter__`)",
    )
    # -- the signature a call binds against -----------------------------------------------------------
    NOT_CALLABLE = ("not-callable", "the object called is not known to be callable")
    INSTANCE_CALL = ("instance-call", "an instance whose class has no __call__ the analysis can read")
    INTERFACE_METHOD = (
        "interface-method",
        "a method of a zope.interface declaration: the object is any provider of it, whose own method "
        "binds the call (the declaration omits `self` and binds nothing at run time)",
    )
    DECORATOR = ("decorator", "a decorator whose effect on the signature is unknown")
    PYDANTIC_DATACLASS_WITH_INIT = (
        "pydantic-dataclass-with-__init__",
        "a pydantic dataclass that defines __init__",
    )
    INIT_NOT_A_FUNCTION = ("__init__-not-a-function", "the class's __init__ is not a plain function")
    FACTORY_NEW = (
        "factory-new",
        "the class's __new__ may construct another class, which the analysis cannot tell",
    )
    NEW_NOT_A_FUNCTION = ("__new__-not-a-function", "the class's __new__ is not a plain function")
    CLASS_DECORATOR = ("class-decorator", "a class decorator whose effect on the constructor is unknown")
    PYDANTIC_PRE_VALIDATOR = (
        "pydantic-pre-validator",
        "a pydantic model whose pre-validator may rewrite the arguments",
    )
    NAMED_TUPLE_SUBCLASS = ("named-tuple-subclass", "a subclass of a named tuple class")
    FIELD_ALIAS = ("field-alias", "a field with an alias: the keyword it takes is not certain")
    # -- binding the call (the target is known) -------------------------------------------------------
    STAR_ARGUMENTS = ("star-arguments", "the call unpacks *args or **kwargs whose contents are unknown", True)
    INVALID_SIGNATURE = ("invalid-signature", "the signature is not one a def can produce", True)
    INVALID_CALL = ("invalid-call", "the call repeats a keyword (a SyntaxError)", True)
    OVERLOADS = ("overloads", "the call may match an overload: none is certain to bind or to break", True)
    STUB_SIGNATURE = (
        "stub-signature",
        "the signature is a stub's typing view: the Python source beside it accepts the call, or there is none and the old version's stub did not bind it either",
        True,
    )
    # -- the site as a whole --------------------------------------------------------------------------
    ATTRIBUTE_OF_ANNOTATED_TYPE = (
        "attribute-of-annotated-type",
        "missing from a type known by annotation only: a subclass instance may have it",
    )
    OVERRIDE_REQUIRES_OPTIONAL = (
        "override-requires-optional",
        "the override requires a parameter the upstream's method makes optional: whether the upstream omits it is unknown",
        True,
    )
    NOT_AN_UPSTREAM_METHOD = (
        "not-an-upstream-method",
        "a method of the downstream's own, overriding nothing upstream",
    )
    HOOK_SPECS_UNREAD = (
        "hook-specs-unread",
        "the upstream's hook specifications could not all be read (bounds, compiled code, a marker's project not literal, a name of a spec module spelled like a hook under a decorator not read as a marker)",
    )
    HOOK_IMPL_DECORATED = (
        "hook-impl-decorated",
        "a hook implementation under a decorator of the downstream's: the function the plugin host reads is not the one written",
    )
    HOOK_IMPL_CONDITIONAL = (
        "hook-impl-conditional",
        "a hook implementation defined in a branch of a test the analysis does not evaluate",
    )
    HOOK_IMPL_NOT_DEFINED = (
        "hook-impl-not-defined",
        "a hook implementation defined only under a version test this version of the upstream fails",
    )
    MODULE_NOT_IMPORTED = (
        "module-not-imported",
        "a module of the downstream that its other modules import only under a test of the upstream's "
        "major version this version fails (`if _get_click_major() < 8: from ._click7 import ...`): "
        "it never runs",
    )
    MODULE_GATED = (
        "module-version-gated",
        "a module of the downstream imported only under a test of the upstream's major version, whose "
        "version is not known here: it may not run",
    )
    UNPARSABLE_FILE = (
        "unparsable-file",
        "the downstream file could not be parsed: its use sites are unknown",
    )
    NOTEBOOK_MAGIC = (
        "notebook-magic",
        "an IPython magic, shell escape or help request in a notebook cell: not Python, not read",
    )


@dataclass(frozen=True)
class Unknown:
    """Not checkable, and why; `detail` names the object at fault (a base, a decorator) when there is one."""

    reason: Reason
    detail: str = ""

    @property
    def label(self) -> str:
        """How coverage counts it: `star-arguments`, `external-base:msgspec.Struct`."""
        return f"{self.reason.code}:{self.detail}" if self.detail else self.reason.code

    @property
    def resolved(self) -> bool:
        return self.reason.resolved


__all__ = ["Reason", "Unknown"]
