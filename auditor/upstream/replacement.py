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
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from apidrift.auditor.core.bind import CallShape, Ok
from apidrift.auditor.core.reasons import Unknown
from apidrift.auditor.core.refs import AttrRef, ModuleRef, Ref
from apidrift.auditor.core.signature import ParamKind, Signature
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.upstream.analyses.nodes import _module_statements
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


MAX_FORWARD_HOPS = 6  # star imports followed to the module that binds a name


@functools.lru_cache(maxsize=16)
def _runtime_tree(file: Path) -> ast.Module | None:
    """The Python source that runs for a module (the `.py` beside a stub), parsed; None if absent,
    a link, larger than MAX_ALIAS_SOURCE or not parseable."""
    source = file.with_suffix(".py")
    try:
        if not source.is_file() or source.is_symlink() or source.stat().st_size > MAX_ALIAS_SOURCE:
            return None
        return ast.parse(decode_source(source.read_bytes()))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, SourceDecodeError):
        return None


def _bindings(tree: ast.Module, name: str) -> tuple[list[ast.stmt], bool]:
    """The module-level statements of `tree` that bind `name` directly, and whether a statement nested
    in a compound one (`if`, `try`, `for`, `with`) or a `global` may bind it too."""
    direct: list[ast.stmt] = []
    nested = False
    for statement in tree.body:
        if _binds(statement, name):
            direct.append(statement)
        elif isinstance(
            statement, (ast.If, ast.Try, ast.For, ast.While, ast.With, ast.AsyncFor, ast.AsyncWith)
        ):
            nested = nested or any(
                _binds(inner, name) for inner in ast.walk(statement) if isinstance(inner, ast.stmt)
            )
    for node in ast.walk(tree):
        if isinstance(node, ast.Global) and name in node.names:
            nested = True
    return direct, nested


def _binds(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name == name
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in statement.names)
    if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
    if isinstance(statement, ast.Delete):
        return any(isinstance(n, ast.Name) and n.id == name for t in statement.targets for n in ast.walk(t))
    return False


def _runtime_home(resolver: Resolver, module: str, name: str, hops: int = 0) -> str | None:
    """The module whose own Python source binds `name` at module level, reached from `module` as the
    runtime reaches it: its own source (the `.py` beside a stub) first, then the modules that source
    star-imports, when exactly one of them binds it (the others skipping it by their `__all__`, or not
    binding it); None when unsure."""
    info = resolver.index.module(module)
    file = resolver.index.module_file(module)
    if info is None or file is None or hops > MAX_FORWARD_HOPS:
        return None
    tree = _runtime_tree(file)
    if tree is None:
        return None
    direct, nested = _bindings(tree, name)
    if direct or nested:
        return module if len(direct) == 1 and not nested else None
    found = []
    for star in _star_imports(tree, module, file.name.startswith("__init__.")):
        source = resolver.index.module(star)
        if source is None:
            return None  # not read: it may bind the name
        if (source.exports is not None and name not in source.exports) or (
            source.exports is None and name.startswith("_")
        ):
            continue
        home = _runtime_home(resolver, star, name, hops + 1)
        if home is not None:
            found.append(home)
    return found[0] if len(set(found)) == 1 else None


def _star_imports(tree: ast.Module, module: str, package: bool) -> list[str]:
    """The modules the source that runs star-imports at module level (in its if/try blocks too, as the
    resolver reads a stub's source: numpy 1.26's `from .core import *` is in an `else:`), as absolute
    paths; the one module that binds a name among them is asked for, so a fallback pair is no answer."""
    parts = module.split(".") if package else module.split(".")[:-1]
    found = []
    for statement in _module_statements(tree):
        if not isinstance(statement, ast.ImportFrom) or not any(a.name == "*" for a in statement.names):
            continue
        if statement.level:
            keep = len(parts) - (statement.level - 1)
            if keep <= 0:
                continue
            found.append(".".join(parts[:keep] + ([statement.module] if statement.module else [])))
        elif statement.module:
            found.append(statement.module)
    return found


def _forwards(function: ast.FunctionDef | ast.AsyncFunctionDef, other: ast.FunctionDef | None) -> str | None:
    """The name a def hands every call on to, unchanged: `def product(*args, **kwargs): return
    prod(*args, **kwargs)` after an optional docstring, `import warnings` and `warnings.warn(...)`
    with constant arguments, its decorators (if any) the same wrappers `other` has. None otherwise."""
    arguments = function.args
    if (
        arguments.posonlyargs
        or arguments.args
        or arguments.kwonlyargs
        or arguments.vararg is None
        or arguments.kwarg is None
        or isinstance(function, ast.AsyncFunctionDef)
    ):
        return None
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    *before, last = body or [ast.Pass()]
    for statement in before:
        if isinstance(statement, ast.Import) and [a.name for a in statement.names] == ["warnings"]:
            continue
        if (
            isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Call)
            and _called(statement.value.func) == "warn"
            and all(
                isinstance(a, (ast.Constant, ast.Name, ast.Attribute))
                for a in (*statement.value.args, *(k.value for k in statement.value.keywords))
            )
        ):
            continue
        return None
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Call)):
        return None
    call = last.value
    if not (
        isinstance(call.func, ast.Name)
        and len(call.args) == 1
        and isinstance(call.args[0], ast.Starred)
        and isinstance(call.args[0].value, ast.Name)
        and call.args[0].value.id == arguments.vararg.arg
        and len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, ast.Name)
        and call.keywords[0].value.id == arguments.kwarg.arg
    ):
        return None
    if function.decorator_list:
        wrappers = {_decorator_name(d) for d in function.decorator_list}
        theirs = {_decorator_name(d) for d in other.decorator_list} if other is not None else set()
        if "" in wrappers or not wrappers <= theirs:
            return None
    return call.func.id


def _decorator_name(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


def forwarded_replacement(
    base: Ref,
    old_name: str,
    new: Resolver,
    old: Resolver,
    shape: CallShape | None,
    old_label: str,
    new_label: str,
) -> Replacement | None:
    """The replacement the old version's own source proves for a module-level name: where the source
    that runs binds `old_name` to a def that only hands its arguments on to another top-level function
    of its module (`def product(*args, **kwargs): return prod(*args, **kwargs)` in numpy 1.26's
    `fromnumeric`, whose stub leaves it out), or to that function itself (`old_name = other`), the
    old name was that function under another name. It is the replacement when the old version's
    `base.other` is that very function, the new version has `base.other`, and it takes the use (the
    call binds its signature; an uncalled use, every call the old one accepted). Nothing is run."""
    if not isinstance(base, ModuleRef):
        return None
    home = _runtime_home(old, base.path, old_name)
    file = old.index.module_file(home) if home is not None else None
    tree = _runtime_tree(file) if file is not None else None
    if home is None or tree is None:
        return None
    (statement,), _ = _bindings(tree, old_name)
    other: str | None = None
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for candidate in ast.walk(statement):  # the callee's name, to find its def first
            if isinstance(candidate, ast.Return) and isinstance(candidate.value, ast.Call):
                callee = candidate.value.func
                other = callee.id if isinstance(callee, ast.Name) else None
        if (
            other is None
            or other == old_name
            or any(
                isinstance(n, ast.Name) and n.id == other and isinstance(n.ctx, ast.Store)
                for n in ast.walk(statement)
            )
        ):
            return None
        defs, nested = _bindings(tree, other)
        target_def = defs[0] if len(defs) == 1 and isinstance(defs[0], ast.FunctionDef) else None
        if nested or target_def is None or _forwards(statement, target_def) != other:
            return None
        wrappers = sorted({_decorator_name(d) for d in statement.decorator_list})
        said = f"only returns `{other}(*{statement.args.vararg.arg}, **{statement.args.kwarg.arg})`"  # type: ignore[union-attr]
        if wrappers:
            said += f" (both wrapped by {', '.join(f'`{w}`' for w in wrappers)})"
    elif (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.value, ast.Name)
    ):
        other = statement.value.id
        defs, nested = _bindings(tree, other)
        if nested or len(defs) != 1 or not isinstance(defs[0], (ast.FunctionDef, ast.ClassDef)):
            return None
        said = f"is `{other}` (`{old_name} = {other}`)"
    else:
        return None
    before = old.resolve(AttrRef(base, other))
    if isinstance(before, (Missing, Unknown)) or value_path(before) != f"{home}.{other}":
        return None  # the name where the old one was is not that function
    value = same_definition_alias(new, new.resolve(AttrRef(base, other)))
    if not isinstance(value, (FunctionValue, ClassValue)) or _deprecated(value):
        return None
    new_target = call_target(value, new)
    if not isinstance(new_target, CallTarget):
        return None
    if shape is not None:
        if not isinstance(bind_target(shape, new_target), Ok):
            return None
        proof = f"the call binds `{other}`'s signature in {new_label}"
    else:
        old_target = call_target(before, old) if isinstance(before, (FunctionValue, ClassValue)) else None
        if (
            not isinstance(old_target, CallTarget)
            or old_target.alternatives
            or new_target.alternatives
            or new_target.requires_also
            or not accepts_every_call(old_target.signature, new_target.signature)
        ):
            return None
        proof = f"`{other}` in {new_label} accepts every call it accepted in {old_label}"
    where = f"{file.with_suffix('.py').name}:{statement.lineno}" if file is not None else home
    return Replacement(
        other,
        value_path(value),
        f"{old_label}'s `{old_name}` ({home}, {where}) {said}: a call of it is a call of "
        f"`{base.path}.{other}` in {old_label}; {proof}",
    )
