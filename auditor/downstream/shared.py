"""What the downstream scanner (`astscan`) knows without a parser: the exceptions that guard a use,
the names that tell a version or feature test, the builtins a star import never binds, what a use site's value may be, and keyword forwarding
through a downstream `__init__`. No parser is imported here.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from apidrift.auditor.core.bind import CallShape, Ok, bind
from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ItemRef,
    ModuleRef,
    OpaqueRef,
    StarRef,
    root_module,
)
from apidrift.auditor.core.signature import Signature
from apidrift.auditor.core.sites import NOTHING_CAUGHT, Span

# Exceptions whose handler makes a use "guarded": the code expects it may not exist or bind.
GUARD_EXCEPTIONS = frozenset(
    {
        "ImportError",
        "ModuleNotFoundError",
        "AttributeError",
        "TypeError",
        "Exception",
        "BaseException",
        "NameError",
    }
)


def builtin_exception(dotted: str) -> str | None:
    """The builtin exception class a handler's dotted name spells (`ImportError`,
    `builtins.ImportError`), or None for any other name, whose class is not known here."""
    name = dotted[len("builtins.") :] if dotted.startswith("builtins.") else dotted
    if "." in name or name in _NOT_BUILTIN_EXCEPTIONS:
        return None
    value = getattr(builtins, name, None)
    return name if isinstance(value, type) and issubclass(value, BaseException) else None


# Builtin names that are no exception class of every Python (3.11's `EncodingWarning` is one class of
# 3.10 on, `ExceptionGroup` of 3.11 on): a handler naming one reads the same under each.
_NOT_BUILTIN_EXCEPTIONS = frozenset({"ExceptionGroup", "BaseExceptionGroup", "EncodingWarning"})


def precise_catches(handler_names: list[list[str | None]]) -> frozenset[str] | None:
    """The builtin exception classes a `try`'s handlers catch, given each handler's dotted class
    names (an empty list for a bare `except:`, which catches `BaseException`; None for an expression
    that is no dotted name); None when any handler names another class or an expression, whose
    reach is not known (such a `try` guards as any of its names in GUARD_EXCEPTIONS says)."""
    caught: set[str] = set()
    for names in handler_names:
        if not names:
            caught.add("BaseException")
            continue
        for dotted in names:
            name = builtin_exception(dotted) if dotted else None
            if name is None:
                return None
            caught.add(name)
    return frozenset(caught)


def handles(caught: frozenset[str], raises: str | None) -> bool:
    """Whether handlers catching the builtin classes `caught` catch what a failing use raises: the
    builtin exception class `raises` (`ImportError` for a name a `from` import no longer finds, which
    `except ModuleNotFoundError:` lets through), or, where the failure's class is not known, any of
    GUARD_EXCEPTIONS."""
    if not caught:
        return False
    raised = getattr(builtins, raises, None) if raises else None
    if not (isinstance(raised, type) and issubclass(raised, BaseException)):
        return not caught.isdisjoint(GUARD_EXCEPTIONS)
    return any(issubclass(raised, getattr(builtins, name)) for name in caught)


class _HasBindings(Protocol):
    @property
    def parent(self) -> _HasBindings | None: ...
    @property
    def bindings(self) -> Mapping[str, object]: ...


def site_guard(guarded: bool | frozenset[str], scope: _HasBindings | None) -> tuple[bool, frozenset[str]]:
    """A use site's `guarded` and `caught`, from what the collector saw around it: True, the builtin
    exception classes the `try` statements around it catch, or False. A class name the file rebinds
    where the use sees it (`ModuleNotFoundError = ImportError`) is no longer known to be the builtin:
    such a site is guarded as its handlers' names say."""
    if guarded is True or guarded is False:
        return guarded, NOTHING_CAUGHT
    current = scope
    while current is not None:
        if not guarded.isdisjoint(current.bindings):
            return handles(guarded, None), NOTHING_CAUGHT
        current = current.parent
    return False, guarded


# Calls that bind names by code: a name bound nowhere may still exist.
NAME_MAKERS = frozenset({"globals", "vars", "locals", "exec", "eval", "__import__"})


# Builtins of other Python versions than the one running, and names tools install into builtins.
OTHER_BUILTINS = frozenset(
    {
        "ExceptionGroup",
        "BaseExceptionGroup",
        "EncodingWarning",
        "aiter",
        "anext",
        "PythonFinalizationError",
        "_IncompleteInputError",
        "WindowsError",
        "unicode",
        "basestring",
        "long",
        "xrange",
        "unichr",
        "raw_input",
        "reduce",
        "file",
        "execfile",
        "reload",
        "cmp",
        "buffer",
        "reveal_type",
        "reveal_locals",
        "display",
        "get_ipython",
    }
)


def is_builtin(name: str) -> bool:
    """A builtin (of any Python version), a dunder, or a private name (`_` is gettext's, installed into
    builtins): never taken for a name a star import binds."""
    return hasattr(builtins, name) or name in OTHER_BUILTINS or name.startswith("_")


# Names that tell a feature or version test: `sqla_14`, `PY38`, `HAS_FOO`, `_vers`, `IS_PYDANTIC_V2`...
# A version or feature test by its spelling: `__version__`, `sys.version_info`, `PY38`, `HAS_X`, `x_available`,
# comparison flags that name a version (`NUMPY_LT_2_0`, `SCIPY_GE_1_11`, `_TORCH_GTE_2`: astropy
# imports its `NUMPY_LT_2_0 = not minversion(np, "2.0.dev")` from a compat module into every file), and
# a major version by name (`CLICK_MAJOR`, `_get_click_major()`: typer 0.9.0 imports the latter from a
# compat module and tests `_get_click_major() > 7` around its uses of click 7's `_bashcomplete`).
VERSIONISH = re.compile(
    r"(?i)(__version__|version_info|version|\b_?vers\b|\b(?:py|sqla|sa|np|pd|v|is_py|pydantic_v)_?\d+\b|\bhas_\w+|_available\b"
    r"|\b\w*?_(?:lt|le|gt|ge|lte|gte)_?v?\d|\w_major\b)"
)


# What a use site's reference may be (anything else a name evaluates to is downstream).
REFS = (ModuleRef, AttrRef, CallRef, InstanceRef, StarRef, ItemRef, OpaqueRef)
# Decorators under which a method keeps the signature the upstream calls it with.
OVERRIDE_DECORATORS = frozenset({"classmethod", "staticmethod", "override", "abstractmethod", "final"})


def may_override(name: str, decorators: frozenset[str]) -> bool:
    """Whether a method of this name and these decorators (last names) is a plain method that may
    override an upstream one and be called by it with the upstream's values: not a dunder, no
    decorator but `@override`/`@abstractmethod`/`@final`."""
    if name.startswith("__") and name.endswith("__"):
        return False
    return not (decorators - {"override", "abstractmethod", "final"})


def code_at(lines: tuple[str, ...], span: Span) -> str:
    """The code a site shows: the span's text on its first line (the whole line if that is blank)."""
    if 0 < span.line <= len(lines):
        line = lines[span.line - 1]
        end = span.end_column - 1 if span.end_line == span.line else len(line)
        return line[span.column - 1 : end].strip() or line.strip()
    return ""


@dataclass(frozen=True)
class Forwarding:
    """`def __init__(self, own..., **kwargs): ...; super().__init__(args..., **kwargs)`, with
    `kwargs.setdefault("key", value)` statements before it."""

    own: Signature  # the downstream __init__, self bound
    kwargs: str  # the name of its `**kwargs`
    super_shape: CallShape  # what the super() call itself passes, besides **kwargs
    # Keys `kwargs.setdefault("key", ...)` statements before the super() call add to what it hands on.
    defaults: tuple[str, ...] = ()

    def shape_for(self, call: CallShape) -> tuple[CallShape, tuple[str, ...]] | None:
        """The upstream call a `Cls(...)` call makes, and the keywords it hands on; None if unknowable."""
        verdict = bind(call, self.own)
        if not isinstance(verdict, Ok):
            return None  # the call fails (or may) on the downstream's own signature: not ours to report
        forwarded = tuple(
            k for k, param in verdict.assignments if isinstance(k, str) and param == self.kwargs
        )
        keywords = self.super_shape.keywords + forwarded
        keywords += tuple(d for d in self.defaults if d not in keywords)
        return CallShape(
            self.super_shape.positional, keywords, self.super_shape.star_args, call.star_kwargs
        ), forwarded


def holds_no_upstream(bindings: Sequence[Any] | None, upstream_names: frozenset[str]) -> bool:
    """Whether a name bound (so far) by these bindings certainly holds no upstream object: each is an
    unannotated parameter, the `self` of a downstream class's method, or an import of another
    distribution's module. A `hasattr()` test of such an object is no test of the upstream."""
    if not bindings:
        return False
    for binding in bindings:
        value = binding.value
        if value is None:
            if not binding.parameter or binding.hook_param is not None:
                return False  # an override's parameter may hold what the upstream hands it
        elif isinstance(value, (ModuleRef, AttrRef)):
            if root_module(value) in upstream_names:
                return False
        elif type(value).__name__ != "_SelfOf":
            return False
    return True


def chain_attributes(names: Iterable[str], tested: Iterable[frozenset[str]]) -> bool:
    """Whether a use whose reference goes through the attribute `names` is one that `hasattr()` tests
    of other objects (each testing the attribute names of one set) guard: it uses a tested name."""
    used = set(names)
    return any(not used.isdisjoint(attributes) for attributes in tested)


def unalias(dotted: str, aliases: tuple[tuple[str, str], ...]) -> str:
    """The module an import of `dotted` runs where another module registered an upstream module under
    a name it starts with (`requests.packages.urllib3.util` -> `urllib3.util`)."""
    for alias, target in aliases:
        if dotted == alias or dotted.startswith(alias + "."):
            return target + dotted[len(alias) :]
    return dotted
