"""What both downstream scanners share, whichever parser read the file (`astscan` with CPython's
`ast`, `scan` with LibCST): the exceptions that guard a use, the names that tell a version or feature
test, the builtins a star import never binds, what a use site's value may be, and keyword forwarding
through a downstream `__init__`. No parser is imported here.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass

from apidrift.auditor.check.bind import CallShape, Ok, bind
from apidrift.auditor.downstream.refs import AttrRef, CallRef, InstanceRef, ModuleRef, StarRef
from apidrift.auditor.downstream.sites import Span
from apidrift.auditor.upstream.signature import Signature

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
VERSIONISH = re.compile(
    r"(?i)(__version__|version_info|version|\b_?vers\b|\b(?:py|sqla|sa|np|pd|v|is_py|pydantic_v)_?\d+\b|\bhas_\w+|_available\b)"
)


# What a use site's reference may be (anything else a name evaluates to is downstream).
REFS = (ModuleRef, AttrRef, CallRef, InstanceRef, StarRef)
# Decorators under which a method keeps the signature the upstream calls it with.
OVERRIDE_DECORATORS = frozenset({"classmethod", "staticmethod", "override", "abstractmethod", "final"})


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
