"""The replacement the upstream itself names for a name it removed or deprecated, and the proof that
it takes the same uses.

Input: the texts the upstream wrote about the name (the new version's `__getattr__` message for a
removed name, the old version's deprecation warning, the new version's own deprecation), the
reference the downstream wrote, and both versions' resolvers. Output: a `Replacement` when one of
those texts names a replacement (`'contextfunction' is renamed to 'pass_context'`, "Use `np.float64`
instead", "Please use `prod` instead"), the replacement resolves in the new version where the old
name was looked up (`jinja2.pass_context`), and it accepts the same uses: the call written binds its
signature, every call the old signature accepted binds the new one (same parameters, same kinds,
nothing new required), or the old version bound both names to one object. A text naming two
replacements, a replacement that is itself an expression (`-np.inf`), or one that does not resolve,
is no evidence: the message stays a hint. Nothing is imported or run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from apidrift.auditor.core.bind import CallShape, Ok
from apidrift.auditor.core.reasons import Unknown
from apidrift.auditor.core.refs import AttrRef, ModuleRef, Ref
from apidrift.auditor.core.signature import ParamKind, Signature
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.upstream.callables import CallTarget, bind_target, call_target
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    ExternalValue,
    FunctionValue,
    Missing,
    ModuleValue,
    Resolution,
    Resolver,
    ServedValue,
    value_path,
)

MAX_MESSAGE = 2_000  # characters of a message read for a replacement
_QUOTED = re.compile(
    r"``([^`]{1,200})``|`([^`]{1,200})`|'([^'\s]{1,200})'|\"([^\"\s]{1,200})\""
    r"|(?<![\w.`'\"])([A-Za-z_][\w.]{0,200}\(\))"  # or unquoted, as a call: "use helper()"
)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# Words that, just before a quoted name, make it the replacement ("use", "renamed to"...) ...
_CUE_BEFORE = re.compile(
    r"(?<!not )(?<!n't )(?<!never )"
    r"(?:\buse|\busing|\brenamed\s+to|\breplaced\s+(?:by|with)|\bin\s+favou?r\s+of|\bmoved\s+to|"
    r"\bsuperseded\s+by|\bswitch\s+to|\bimport)\s+(?:the\s+)?"
    r"(?:(?:new|function|method|class|attribute|constant|alias|name|module)\s+)?$",
    re.I,
)
# ... or just after it ("`np.nan` instead").
_CUE_AFTER = re.compile(r"^\s*(?:\(\))?\s*instead\b", re.I)


@dataclass(frozen=True)
class Replacement:
    name: str  # the replacement's name, looked up where the old name was (`pass_context` in `jinja2`)
    path: str  # what it is, canonically (`jinja2.utils.pass_context`)
    evidence: str  # the upstream's own words and the check that the uses carry over, for the user


def named_in(message: str, old: str) -> list[str]:
    """The dotted names a message presents as the replacement of `old`, in order, without repeats."""
    message = message[:MAX_MESSAGE]
    found: list[str] = []
    for match in _QUOTED.finditer(message):
        token = next(g for g in match.groups() if g is not None).strip()
        if token.endswith("()"):
            token = token[:-2]
        if not _DOTTED.fullmatch(token) or token.rsplit(".", 1)[-1] == old:
            continue
        before = message[max(0, match.start() - 40) : match.start()]
        sentence = re.split(r"[.;:!?]\s", before)[-1]
        if _CUE_BEFORE.search(sentence) or _CUE_AFTER.match(message[match.end() :]):
            if token not in found:
                found.append(token)
    return found


def find_replacement(
    messages: list[tuple[str, str]],
    base: Ref,
    old_name: str,
    new: Resolver,
    before: Resolution | None,
    old: Resolver | None,
    shape: CallShape | None,
    old_label: str = "the old version",
) -> Replacement | None:
    """The one replacement the upstream's `messages` ((who says it, text)) name for `base.old_name`
    that resolves as `base.<replacement>` in the new version and takes the same uses; else None.

    `before` is what the old version had (for a deprecation in the new version: the new resolution);
    `shape` the call written, when the reference is the callee."""
    owner = _owner_path(base)
    candidates: dict[str, tuple[str, str, str, Resolution]] = {}
    aliases: dict[str, str] = {}
    for said_by, text in messages:
        for token in named_in(text, old_name):
            *prefix, name = token.split(".")
            if prefix and not _names_owner(prefix, owner):
                continue  # another module's name: not reachable where the old name was
            written = new.resolve(AttrRef(base, name))
            value = same_definition_alias(new, written)
            if isinstance(value, (Missing, Unknown)) or _deprecated(value):
                continue
            if value is not written and isinstance(written, AttributeValue):
                aliases[name] = (
                    f"`{name}` is `{written.info.value}` (`{name} = {written.info.value}` in "
                    f"`{written.path.rpartition('.')[0]}`: one object under two names); "
                )
            candidates.setdefault(name, (said_by, text, token, value))
    if len(candidates) != 1:
        return None
    name, (said_by, text, token, value) = next(iter(candidates.items()))
    proof = _same_uses(value, name, base, old_name, new, before, old, shape, old_label)
    if proof is None:
        return None
    path = value_path(value) if not isinstance(value, (Missing, Unknown)) else name
    quoted = " ".join(text.split())
    if len(quoted) > 300:
        quoted = quoted[:297] + "..."
    return Replacement(
        name,
        path,
        f"{said_by} names `{token}` as the replacement (\u201c{quoted}\u201d); {aliases.get(name, '')}{proof}",
    )


MAX_ALIAS_HOPS = 4


def same_definition_alias(resolver: Resolver, value: Resolution) -> Resolution:
    """What a module-level alias of another name of its own module stands for: `round = around` in
    numpy 2.0's `fromnumeric.pyi` binds `round` to the very function `around` (one object, two names),
    so `round` is `around`'s definition. Only a plain name with no annotation, assigned at module level
    and defined in the same module, is followed (a few hops at most); anything else is returned as is."""
    for _ in range(MAX_ALIAS_HOPS):
        if not isinstance(value, AttributeValue) or value.on_instance:
            return value
        info = value.info
        text = info.value
        if info.annotation is not None or text is None or not text.isidentifier() or text == info.name:
            return value
        module = value.path.rpartition(".")[0]
        if not module or info.value_path not in (None, text, f"{module}.{text}"):
            return value  # the loader qualified it to something else: not a same-module name
        found = resolver.resolve(AttrRef(ModuleRef(module), text))
        if isinstance(found, (Missing, Unknown)):
            return value
        value = found
    return value


def _owner_path(base: Ref) -> str | None:
    if isinstance(base, ModuleRef):
        return base.path
    if isinstance(base, AttrRef):
        inner = _owner_path(base.base)
        return f"{inner}.{base.name}" if inner else None
    return None


def _names_owner(prefix: list[str], owner: str | None) -> bool:
    """Whether `np` in `np.float64` (or `jinja2`, `Environment`) stands for where the old name was: the
    owner itself, its last part, or (for a top-level module) an abbreviation of it."""
    if owner is None:
        return False
    dotted = ".".join(prefix)
    parts = owner.split(".")
    return (
        dotted == owner
        or dotted == parts[-1]
        or (len(prefix) == 1 and len(parts) == 1 and _abbreviates(dotted, owner))
    )


def _abbreviates(short: str, name: str) -> bool:
    """`np` for `numpy`, `pd` for `pandas`: the same first letter, the rest in order within the name."""
    if not short or short[0].lower() != name[0].lower():
        return False
    rest = iter(name.lower())
    return all(letter in rest for letter in short.lower())


def _deprecated(value: Resolution) -> bool:
    if isinstance(value, ServedValue):
        return bool(value.deprecated)
    info = getattr(value, "info", None)
    return bool(getattr(info, "deprecated", None))


def _same_uses(
    value: Resolution,
    name: str,
    base: Ref,
    old_name: str,
    new: Resolver,
    before: Resolution | None,
    old: Resolver | None,
    shape: CallShape | None,
    old_label: str,
) -> str | None:
    """Why the replacement takes the uses the old name had, or None when that is not shown."""

    if old is not None and before is not None and not isinstance(before, (Missing, Unknown)):
        also = old.resolve(AttrRef(base, name))
        if (
            not isinstance(also, (Missing, Unknown))
            and isinstance(also, (ClassValue, FunctionValue, ModuleValue))
            and type(also) is type(before)
            and value_path(also) == value_path(before)
        ):
            return f"{old_label} binds `{old_name}` and `{name}` to one object (`{value_path(also)}`)"
    origin = _alias_origin(value)
    if origin is not None and origin == _alias_origin(before):
        # `float_ = floating[_NBitDouble]` before, `float64 = floating[_64Bit]` now: one class
        # behind both names, so a call or a use of one is a call or use of the same class
        return (
            f"`{old_name}` was `{_alias_text(before)}` and `{name}` is `{_alias_text(value)}`: "
            f"both stand for the class `{origin}`"
        )
    callable_value = isinstance(value, (FunctionValue, ClassValue))
    if shape is not None:
        if not callable_value:
            return None
        target = call_target(value, new)  # type: ignore[arg-type]
        if not isinstance(target, CallTarget):
            return None
        if isinstance(bind_target(shape, target), Ok):
            return f"the call binds `{name}`'s signature in the new version"
        return None
    if callable_value:
        if before is None or type(before) is not type(value):
            return None
        old_target = call_target(before, old) if old is not None else None  # type: ignore[arg-type]
        new_target = call_target(value, new)  # type: ignore[arg-type]
        if not isinstance(old_target, CallTarget) or not isinstance(new_target, CallTarget):
            return None
        if old_target.alternatives or new_target.alternatives or new_target.requires_also:
            return None
        if accepts_every_call(old_target.signature, new_target.signature):
            return f"`{name}` accepts every call `{old_name}` accepted (same parameters: {new_target.signature.render()})"
        return None
    if isinstance(value, (AttributeValue, ExternalValue, ServedValue)) and not isinstance(
        before, (FunctionValue, ClassValue, ModuleValue)
    ):
        return "a value, not called here"
    return None


def accepts_every_call(old: Signature, new: Signature) -> bool:
    """Whether every call that binds `old` binds `new` to the same parameters: the same parameters in
    the same order and kinds (names too, wherever a keyword can reach them), variadics kept, and any
    parameter `new` adds optional and after them."""
    positional = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    olds, news = list(old.parameters), list(new.parameters)
    if len(news) < len(olds):
        return False
    for before, after in zip(olds, news):
        if before.kind is not after.kind:
            return False
        if before.kind is not ParamKind.POSITIONAL_ONLY and before.name != after.name:
            return False
        if (
            before.has_default
            and not after.has_default
            and before.kind
            not in (
                ParamKind.VAR_POSITIONAL,
                ParamKind.VAR_KEYWORD,
            )
        ):
            return False
    for extra in news[len(olds) :]:
        if extra.kind in positional or extra.kind is ParamKind.KEYWORD_ONLY:
            if not extra.has_default:
                return False
    return True


_SUBSCRIPTED = re.compile(r"([A-Za-z_][\w.]*)\[[^\[\]]*\]")


def _alias_origin(value: Resolution | None) -> str | None:
    """The class a module-level alias subscripts (`floating` for `float64 = floating[_64Bit]`)."""
    text = _alias_text(value)
    match = _SUBSCRIPTED.fullmatch(text) if text else None
    return match.group(1) if match else None


def _alias_text(value: Resolution | None) -> str:
    if not isinstance(value, AttributeValue) or value.on_instance:
        return ""
    return value.info.value or ""


MAX_ALIAS_SOURCE = 5 * 1024 * 1024  # a module larger than this is not read for a keyword alias


def forwarded_alias(resolver: Resolver, defined_at: str, signature: Signature, name: str) -> str | None:
    """The parameter the callee `defined_at` hands `name`'s value to, where its own body does so as a
    deprecated alias (`if old is not None: warnings.warn(...); new = old`: a branch testing `name`
    that warns and assigns it to another parameter): two spellings of one parameter, in the version
    `resolver` reads. None unless exactly one such parameter of `signature` is found. The module is
    parsed, never run."""
    value = resolver.lookup(defined_at)
    if isinstance(value, ClassValue):
        value = resolver.attribute(value, "__init__")
    if not isinstance(value, FunctionValue) or value.info.lineno is None:
        return None
    parts = value.path.split(".")
    file = None
    for cut in range(len(parts) - 1, 0, -1):
        file = resolver.index.module_file(".".join(parts[:cut]))
        if file is not None and file.is_file() and file.suffix == ".py":
            break
        file = None
    if file is None:
        return None
    try:
        data = file.read_bytes()[: MAX_ALIAS_SOURCE + 1]
        if len(data) > MAX_ALIAS_SOURCE:
            return None
        tree = ast.parse(decode_source(data))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, SourceDecodeError):
        return None
    lineno = value.info.lineno
    function = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and lineno in (node.lineno, *(d.lineno for d in node.decorator_list))
        ),
        None,
    )
    if function is None:
        return None
    params = {p.name for p in signature.parameters}
    targets = set()
    for branch in ast.walk(function):
        # `if old is not None: warnings.warn(...); new = old`: a deprecated alias, handed on
        if not isinstance(branch, ast.If) or not any(
            isinstance(n, ast.Name) and n.id == name for n in ast.walk(branch.test)
        ):
            continue
        warns = any(
            isinstance(n, ast.Call) and "warn" in _called(n.func).lower()
            for s in branch.body
            for n in ast.walk(s)
        )
        for statement in branch.body:
            if (
                warns
                and isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Name)
                and statement.value.id == name
                and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id in params
                and statement.targets[0].id != name
            ):
                targets.add(statement.targets[0].id)
    return next(iter(targets)) if len(targets) == 1 else None


def _called(func: object) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""
