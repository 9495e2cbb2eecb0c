"""The signature a call binds against, for a resolved callee: functions, methods, `__call__`, constructors.

Constructors are synthesized here, in one place: `__init__`/`__new__` through the MRO, stdlib
dataclasses, pydantic dataclasses, and classes built by any decorator, base class or metaclass marked
with PEP 681 `dataclass_transform`. A callee whose signature cannot be known exactly gives `Unknown`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Any

from apidrift.auditor.core.bind import Break, CallShape, Ok, Verdict, bind
from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.upstream.analyses.spelled import spelled_signature
from apidrift.auditor.upstream.class_decorators import NAMED_TUPLES, PYDANTIC_MODELS
from apidrift.auditor.upstream.model import AlwaysRaises, ClassInfo, Decorator, FunctionInfo, RaisingGuard
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    FunctionValue,
    InstanceValue,
    Resolver,
    ServedValue,
    Value,
)
from apidrift.auditor.upstream.synthesis import (
    Style,
    dataclass_style,
    exception,
    instance_hands_back,
    marks_dataclass_transform,
    named_tuple,
    pydantic_model,
    synthesize,
)

# Decorators that leave a function's call signature as it is.
TRANSPARENT_DECORATORS = frozenset(
    {
        "typing_extensions.overload",
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


@dataclass(frozen=True)
class Shim:
    """A decorator whose wrapper warns when a call passes more than `threshold` positional arguments
    (the signature as the caller sees it, self already bound), read from the wrapper's source."""

    decorator: str  # canonical path of the decorator
    threshold: int
    warn: str  # the name of the warning call (`warn`, `warn_deprecated`)
    category: str | None = None  # the warning class, when written (`FutureWarning`)


@dataclass(frozen=True)
class CallTarget:
    """What a call site binds against: the signature as the caller sees it (self already bound)."""

    signature: Signature
    description: str  # e.g. "constructor of vllm...Scheduler (__init__)" for messages
    defined_at: str  # dotted path of the function or class that defines it
    # Declared only by @overload (a stub): a call breaks only if it matches none of them.
    alternatives: tuple[Signature, ...] = ()
    # Targets the same arguments must also bind (a class's `__new__` beside its `__init__`), each with
    # its own overloads.
    requires_also: tuple[CallTarget, ...] = ()
    # Declared by a stub: what type checkers accept, which the runtime may exceed; with Python source
    # beside the stub, the source's signature (what the runtime binds), self already bound.
    typing_view: bool = False
    runtime: Signature | None = None
    # The runtime signature is what a decorated `def` spells (see FunctionInfo.runtime_decorated).
    runtime_decorated: bool = False
    # Keywords a decorator's wrapper renames before the call (`kwargs[new] = kwargs.pop(old)`):
    # (old, new) pairs, applied to the call before it binds.
    renamed_keywords: tuple[tuple[str, str], ...] = ()
    # The function's guards that raise on which arguments are passed (its parameters' names).
    guards: tuple[RaisingGuard, ...] = ()
    # Decorators that hand the call on but warn when it passes too many positional arguments.
    shims: tuple[Shim, ...] = ()
    # Every call of the function raises (its body, or the helper its body calls first): a call that
    # binds fails. Never set for a method reached through an instance (a subclass may override it).
    always_raises: AlwaysRaises | None = None

    def variants(self) -> tuple[Signature, ...]:
        """The signatures a call may bind: the overloads when there are, else the one signature."""
        return self.alternatives or (self.signature,)


def call_target(value: Value, resolver: Resolver) -> CallTarget | Unknown:
    if isinstance(value, FunctionValue):
        if value.via == "instance" and _declared_by_interface(value, resolver):
            return Unknown(Reason.INTERFACE_METHOD, value.path.rpartition(".")[0])
        target = _function_target(value, resolver)
        if isinstance(target, CallTarget) and value.via == "instance" and target.always_raises is not None:
            # the instance may be of a subclass that overrides it (an abstract method's body)
            target = replace(target, always_raises=None)
        return target
    if isinstance(value, ClassValue):
        return constructor(value.info, resolver)
    if isinstance(value, AttributeValue) and value.on_instance:
        # a property whose getter builds an instance of one class (`return ContainerCollection(...)`):
        # calling its value calls that class's `__call__`
        made = resolver.property_instance(value)
        if made is not None and not resolver.has_no_call(made.cls):
            return call_target(made, resolver)
        return Unknown(Reason.NOT_CALLABLE)
    if isinstance(value, AttributeValue) and not value.on_instance:
        assigned = resolver.assigned_value(value)  # `dumps = registry.dumps`, `app = App()`
        if isinstance(assigned, (FunctionValue, ClassValue, InstanceValue)):
            return call_target(assigned, resolver)
        return _lambda_target(value, resolver) or Unknown(Reason.NOT_CALLABLE)
    if isinstance(value, InstanceValue):
        call = resolver.attribute(ClassValue(value.cls), "__call__")
        if isinstance(call, FunctionValue):
            target = _function_target(FunctionValue(call.info, call.path, "instance"), resolver)
            if isinstance(target, CallTarget) and not value.exact and target.always_raises is not None:
                # known by an annotation: it may be of a subclass that defines `__call__` (pydantic 2
                # hands `__get_pydantic_json_schema__` a subclass of `GetJsonSchemaHandler`)
                target = replace(target, always_raises=None)
            return target
        return Unknown(Reason.INSTANCE_CALL)
    if isinstance(value, ServedValue):
        return Unknown(Reason.SERVED_BY_GETATTR)
    return Unknown(Reason.NOT_CALLABLE)


def _declared_by_interface(value: FunctionValue, resolver: Resolver) -> bool:
    """A method of a class deriving from zope.interface's `Interface` (`ITransport.write(data)`): a
    declaration of what providers offer, written without `self`; an instance typed by it is a provider."""
    owner = resolver.lookup(value.path.rpartition(".")[0])
    if not isinstance(owner, ClassValue):
        return False
    mro = resolver.mro(owner.info)
    return mro is not None and any(isinstance(e, str) and e.startswith("zope.interface.") for e in mro)


def _function_target(value: FunctionValue, resolver: Resolver) -> CallTarget | Unknown:
    func = value.info
    effects: set[str] = set()
    warnings: list[tuple[Decorator, dict[str, str]]] = []
    unknown = _unknown_decorator(func.decorators, resolver, TRANSPARENT_DECORATORS, effects, warnings)
    if unknown:
        return Unknown(Reason.DECORATOR, unknown)
    is_static = func.has_decorator("builtins.staticmethod")
    is_class = func.has_decorator("builtins.classmethod")
    binds_first = (value.via == "instance" and not is_static) or (value.via == "class" and is_class)
    signature = func.signature.bound() if binds_first else func.signature
    renames = sorted(e for e in effects if e.startswith("rename-keyword:"))
    renamed = tuple(_rename_pair(e) for e in renames)
    effects -= set(renames)
    # With an implementation, CPython binds it alone (`typing.overload` declarations are for type
    # checkers), so its decorators' renames hold whatever its overloads say; a function declared only
    # by overloads, or by a stub, is not bound through its decorators.
    declared_only = func.typing_view or (
        bool(func.overloads) and func.has_decorator("typing.overload", "typing_extensions.overload")
    )
    if renamed and (
        declared_only
        or effects
        or any(p.name in {o for o, _ in renamed} for p in signature.parameters)
        or not all(_passes_none_as_default(e, signature) for e in renames)
    ):
        return Unknown(
            Reason.DECORATOR, next(d.path for d in func.decorators if d.path not in TRANSPARENT_DECORATORS)
        )
    shims = tuple(
        shim
        for decorator, warning in warnings
        if (shim := _shim(decorator, warning, func.signature, signature, binds_first)) is not None
    )
    if effects:  # only "positional-by-name" is known; it names positionals after the bound signature
        named = by_name(signature)
        if named is None or func.overloads:
            return Unknown(
                Reason.DECORATOR,
                next(d.path for d in func.decorators if d.path not in TRANSPARENT_DECORATORS),
            )
        signature = named
    # With an implementation, CPython binds against it alone; without one (a stub), the overloads speak.
    overload_only = func.has_decorator("typing.overload", "typing_extensions.overload") and func.overloads
    alternatives = tuple(o.bound() if binds_first else o for o in func.overloads) if overload_only else ()
    runtime = func.runtime_signature
    if runtime is not None and binds_first:
        runtime = runtime.bound()
    return CallTarget(
        signature,
        f"{value.path}",
        value.path,
        alternatives,
        typing_view=func.typing_view,
        runtime=runtime,
        runtime_decorated=func.runtime_decorated,
        renamed_keywords=renamed,
        guards=() if renamed or alternatives or func.typing_view else func.raises_when,
        shims=shims,
        always_raises=None
        if renamed or alternatives or func.typing_view or func.overloads
        else always_raised(func, resolver),
    )


_LAMBDA_TEXT_LIMIT = 2_000  # characters of a module attribute's value read as a lambda


def _lambda_target(value: AttributeValue, resolver: Resolver) -> CallTarget | None:
    """A module attribute bound to a lambda (`iteritems = lambda d: iter(d.items())` in a compat module):
    a function with the lambda's signature. Only a module's own attribute bound once (a name bound
    again is `defined-more-than-once` before this is asked; a branch on a version flag keeps the
    branch that runs), never a class's, whose instances may hold another value."""
    text = value.info.value
    if not text or not text.startswith("lambda") or len(text) > _LAMBDA_TEXT_LIMIT:
        return None
    if resolver.index.module(value.path.rpartition(".")[0]) is None:
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not isinstance(node, ast.Lambda):
        return None
    return CallTarget(spelled_signature(node), value.path, value.path)


def always_raised(func: FunctionInfo, resolver: Resolver, depth: int = 0) -> AlwaysRaises | None:
    """What every call of `func` raises: the helper it calls first, where that helper (of the same
    package, its decorators keeping its body) always raises, with the literal arguments the call
    passes (or the helper's literal defaults) filled into the message; else its own `raise`. None
    where a call may complete."""
    found = func.always_raises
    if found is None:
        return None
    if found.through is not None and depth < 3:
        helper = resolver.lookup(found.through)
        if (
            isinstance(helper, FunctionValue)
            and not helper.info.typing_view
            and not helper.info.overloads
            and not _unknown_decorator(helper.info.decorators, resolver, TRANSPARENT_DECORATORS)
        ):
            inner = always_raised(helper.info, resolver, depth + 1)
            if inner is not None:
                if depth:
                    return inner
                filled = _filled(inner, found.arguments, helper.info.signature)
                return replace(filled, builtin=_builtin_base(filled.exception, resolver))
    if found.exception is None:
        return None
    if depth:
        return found
    return replace(_filled(found, (), func.signature), builtin=_builtin_base(found.exception, resolver))


def _builtin_base(path: str | None, resolver: Resolver) -> str | None:
    """The builtin class a raised exception class is or derives from (`InvalidRequestError` ->
    `Exception`), where its bases resolve; else None."""
    if path is None:
        return None
    if path.startswith("builtins."):
        return path.split(".", 1)[1]
    value = resolver.lookup(path)
    if not isinstance(value, ClassValue):
        return None
    for entry in resolver.mro(value.info) or ():
        if isinstance(entry, str):
            return entry.split(".", 1)[1] if entry.startswith("builtins.") else None
    return None


def _filled(
    found: AlwaysRaises, arguments: tuple[tuple[str, str], ...], signature: Signature
) -> AlwaysRaises:
    """The message with each `{param}` field replaced by the literal argument the helper call passes,
    else by the parameter's literal default, else by `…`."""
    message = found.message
    if message is not None and found.fields:
        given = dict(arguments)
        for index, param in enumerate(signature.parameters):
            if str(index) in given:
                given.setdefault(param.name, given[str(index)])
            elif param.has_default and param.name not in given:
                try:
                    default = ast.literal_eval(param.default or "")
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
                if isinstance(default, (str, int, float, bool)):
                    given[param.name] = str(default)
        for field_name in found.fields:
            message = message.replace("{" + field_name + "}", given.get(field_name, "\u2026"))
    return replace(found, message=message, fields=(), through=None, arguments=())


def _shim(
    decorator: Decorator, warning: dict[str, str], own: Signature, seen: Signature, binds_first: bool
) -> Shim | None:
    """The threshold a decorator's warning reads, on the signature as the caller sees it (`seen`;
    `own` unbound): f's positional-or-keyword parameters counted, or the index of the parameter the
    decorator's call names (a string literal). None where it cannot be read."""
    if warning.get("threshold") == "positional":
        if any(p.kind is ParamKind.POSITIONAL_ONLY for p in seen.parameters):
            return None  # counted apart from `len(args)`: the comparison is not with one count
        threshold = sum(p.kind is ParamKind.POSITIONAL_OR_KEYWORD for p in seen.parameters)
    elif warning.get("threshold") == "index" and ("literal" in warning or decorator.called):
        text = decorator.keywords.get(warning.get("argument", ""))
        if text is None and "position" in warning:
            position = int(warning["position"])
            text = decorator.literals[position] if position < len(decorator.literals) else None
        try:
            name = warning.get("literal") or (ast.literal_eval(text) if text is not None else None)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        names = [p.name for p in own.parameters]
        if not isinstance(name, str) or name not in names:
            return None
        index = names.index(name)
        if any(
            p.kind in (ParamKind.VAR_POSITIONAL, ParamKind.POSITIONAL_ONLY)
            for p in own.parameters[: index + 1]
        ):
            return None
        threshold = index - 1 if binds_first else index
        if threshold < 0:
            return None
    else:
        return None
    return Shim(decorator.path, threshold, warning.get("warn", "warn"), warning.get("category") or None)


def _unknown_decorator(
    decorators: tuple[Decorator, ...],
    resolver: Resolver,
    transparent: frozenset[str],
    effects: set[str] | None = None,
    warnings: list[tuple[Decorator, dict[str, str]]] | None = None,
    depth: int = 0,
) -> str | None:
    """The first decorator whose effect on the signature is not known to be nil (or, with `effects`,
    one of those collected there); with `warnings`, the kept decorators whose wrapper warns on too many
    positional arguments, each with what its source says of the warning."""
    for decorator in decorators:
        if decorator.path in transparent or _partial_identity(decorator, resolver):
            continue
        if decorator.path.startswith("?") or not resolver.index.owns(decorator.path):
            return decorator.path
        target = resolver.lookup(decorator.path)
        if isinstance(target, AttributeValue) and not target.on_instance:
            # `preload_module = _registry.preload_module`: the bound method of a module-level instance
            assigned = resolver.assigned_value(target)
            if isinstance(assigned, FunctionValue):
                target = assigned
        if isinstance(target, FunctionValue) and decorator.called and target.info.reapplies is not None:
            # `@copy(Axes.imshow)`: the decorators it re-applies from that method, in their place
            reapplied = _reapplied(decorator, target.info.reapplies, resolver) if depth < 2 else None
            if reapplied is None:
                return decorator.path
            inner = _unknown_decorator(reapplied, resolver, transparent, effects, warnings, depth + 1)
            if inner is not None:
                return inner
            continue
        if (
            isinstance(target, FunctionValue)
            and (effect := _keeps(target.info, decorator.called, resolver)) is not None
        ):
            if effect.startswith("rename-keyword:"):
                conditional = ":none=" in effect
                effect = _renamed_keyword(effect, decorator, target.info) or ""
                if not effect and not conditional:
                    return decorator.path
                # a rename only under some of the decorator's arguments (pandas `deprecate_kwarg`: a
                # `new_arg_name`, no `mapping`); under others, read as its typing says (`-> Callable[[F],
                # F]`, the reading before its wrapper was understood): the signature kept
            if effect and effects is not None:
                effects.add(effect)
            elif effect:
                return decorator.path  # a class decorator must hand back the class as it is
            warning = target.info.factory_keeps_warning if decorator.called else target.info.keeps_warning
            if warnings is not None and warning:
                warnings.append((decorator, warning))
            continue
        if isinstance(target, FunctionValue) and _built_by_decorator_package(target, decorator, resolver):
            continue
        if instance_hands_back(target, decorator, resolver):
            continue
        return decorator.path
    return None


def _reapplied(
    decorator: Decorator, reapplies: dict[str, Any], resolver: Resolver
) -> tuple[Decorator, ...] | None:
    """What `@copy(method)` decorates the function with (see FunctionInfo.reapplies): the callables it
    names, called with `method`, then the decorators of `method` its registry holds, outermost first.
    The registry is walked down `__wrapped__` links. A decorator not proven registered may still be
    re-applied (or not), and past one the walk may stop: such a decorator, or a registered one past
    it, is left out when it keeps the signature as it is (binding is the same either way; no warning
    of it is claimed) and makes the whole unknown (None) otherwise."""
    if len(decorator.args) != 1 or decorator.keywords or decorator.args[0].startswith("?"):
        return None
    method = resolver.lookup(decorator.args[0])
    if not isinstance(method, FunctionValue):
        return None
    literals = decorator.literals[:1]
    chosen = [Decorator(path, True, {}, decorator.args, literals) for path in reapplies["initial"]]
    walked = True
    for inner in method.info.decorators:
        owner = resolver.lookup(inner.path) if not inner.path.startswith("?") else None
        registered = (
            inner.called
            and isinstance(owner, FunctionValue)
            and owner.info.registers_in == reapplies["registry"]
        )
        if registered and walked:
            chosen.append(inner)
            continue
        if not registered and _never_registers(owner, reapplies["registry"]):
            walked = False  # not re-applied; whether the walk goes past it is not known
            continue
        effects: set[str] = set()
        if (
            _unknown_decorator((inner,), resolver, TRANSPARENT_DECORATORS, effects, depth=2) is not None
            or effects
        ):
            return None
        walked = walked and registered
    return tuple(chosen)


def _never_registers(owner: object, registry: str) -> bool:
    """Whether a decorator's wrapper is never a key of `registry`: its function's code (read from
    source, nested functions included) stores into no container of that path. A registering decorator
    stores its own wrapper; code elsewhere patching a decorated function's `__wrapped__` chain into the
    registry is not considered, as a module's functions are taken to be what their source defines."""
    if not isinstance(owner, FunctionValue) or owner.info.stores is None:
        return False
    return registry not in owner.info.stores and owner.info.registers_in is None


def _rename_pair(effect: str) -> tuple[str, str]:
    """ "rename-keyword:OLD:NEW[:drops-none]" -> (OLD, NEW)."""
    _, old, new = effect.split(":")[:3]
    return old, new


def _passes_none_as_default(effect: str, signature: Signature) -> bool:
    """A wrapper that drops `OLD=None` instead of passing it on ("drops-none", pandas
    `deprecate_kwarg`) renames like one that passes it on only where the function's NEW parameter
    defaults to None: then `NEW=None` and leaving it out bind the same value."""
    if not effect.endswith(":drops-none"):
        return True
    declared = signature.get(_rename_pair(effect)[1])
    return declared is not None and declared.has_default and declared.default == "None"


def _renamed_keyword(effect: str, decorator: Decorator, info: FunctionInfo) -> str | None:
    """ "rename-keyword:OLD:NEW" names the factory's parameters that hold the keywords: the decorator's
    own arguments there (string literals) give "rename-keyword:transOffset:offset_transform"."""
    if not decorator.called:
        return None
    positional = [
        p.name
        for p in info.signature.parameters
        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    ]
    parts = effect.split(":")[1:]
    for condition in (p.removeprefix("none=") for p in parts[2:] if p.startswith("none=")):
        # "none=mapping": the rename holds where that argument of the decorator is None, given or
        # left to a default of None (pandas `deprecate_kwarg(old, new)` without a `mapping`)
        text = decorator.keywords.get(condition)
        if text is None and condition in positional and positional.index(condition) < len(decorator.args):
            index = positional.index(condition)
            text = decorator.literals[index] if len(decorator.literals) == len(decorator.args) else "?"
        if text is None:
            declared = info.signature.get(condition)
            if declared is None or not declared.has_default or declared.default != "None":
                return None
        elif text != "None":
            return None
    names = []
    for param in parts[:2]:
        text = decorator.keywords.get(param)
        if text is None and param in positional and positional.index(param) < len(decorator.args):
            text = decorator.args[positional.index(param)].removeprefix("?")
        try:
            value = ast.literal_eval(text) if text is not None else None
        except (ValueError, SyntaxError):
            return None
        if not isinstance(value, str) or not value.isidentifier():
            return None
        names.append(value)
    if len(names) != 2 or names[0] == names[1]:
        return None
    return ":".join(
        [f"rename-keyword:{names[0]}:{names[1]}", *(["drops-none"] if "drops-none" in parts else [])]
    )


def _keeps(info: FunctionInfo, called: bool, resolver: Resolver, depth: int = 0) -> str | None:
    """As a decorator (or, `called`, a factory of one): what the function it hands back binds as:
    "" the decorated function's own signature, "positional-by-name" that signature with keyword-only
    parameters taking positional arguments too (see `by_name`), None unknown. Directly, or by handing
    the function to a callable that keeps it (`keeps_through`, followed a few hops)."""
    identity, through, effect = (
        (info.factory_identity, info.factory_keeps_through, info.factory_keeps_effect)
        if called
        else (info.identity, info.keeps_through, info.keeps_effect)
    )
    if identity:
        return ""
    if through is not None:
        return "" if _keeps_through(through, resolver, depth) else None
    return effect


def _keeps_through(path: str, resolver: Resolver, depth: int) -> bool:
    """`mod.func` given the function as its first argument, or `mod.Cls:method` called on an instance."""
    if depth >= 6:
        return False
    owner, _, method = path.partition(":")
    if not resolver.index.owns(owner):
        return False
    value = resolver.lookup(owner)
    if method:
        if not isinstance(value, ClassValue):
            return False
        value = resolver.attribute(InstanceValue(value.info, True), method)
        if not isinstance(value, FunctionValue) or value.info.has_decorator(
            "builtins.staticmethod", "builtins.classmethod"
        ):
            return False
    elif not isinstance(value, FunctionValue) or value.via is not None:
        return False  # a method reached through its class takes the function as `self`
    return _keeps(value.info, False, resolver, depth + 1) == ""


def by_name(signature: Signature) -> Signature | None:
    """`kwargs.update(zip(signature(f).parameters, args)); f(**kwargs)`: the i-th positional argument
    is passed as the keyword of f's i-th parameter, whatever its kind, and positional arguments past
    the last parameter are dropped (zip stops at the shorter). Unknown when f has `*args` or
    positional-only parameters (their names cannot be passed as keywords)."""
    params = signature.parameters
    if any(p.kind in (ParamKind.VAR_POSITIONAL, ParamKind.POSITIONAL_ONLY) for p in params):
        return None
    if any(p.name == "args" for p in params):
        return None
    plain = [
        p if p.kind != ParamKind.KEYWORD_ONLY else replace(p, kind=ParamKind.POSITIONAL_OR_KEYWORD)
        for p in params
        if p.kind != ParamKind.VAR_KEYWORD
    ]
    rest = [p for p in params if p.kind == ParamKind.VAR_KEYWORD]
    dropped = Parameter("args", ParamKind.VAR_POSITIONAL)
    return Signature((*plain, dropped, *rest), signature.returns)


# The `decorator` package's contract: what it builds keeps the decorated function's signature exactly.
SIGNATURE_KEEPING_BUILDERS = frozenset({"decorator.decorator", "decorator.decorate"})


def _built_by_decorator_package(target: FunctionValue, decorator: Decorator, resolver: Resolver) -> bool:
    """`@decorator def caller(func, *a, **kw)` used as `@caller`; or a factory whose result is such a caller."""
    if not decorator.called:
        return target.info.has_decorator(*SIGNATURE_KEEPING_BUILDERS)
    returned = target.info.returns_path
    if returned is None or not resolver.index.owns(returned):
        return False
    caller = resolver.lookup(returned)
    return isinstance(caller, FunctionValue) and caller.info.has_decorator(*SIGNATURE_KEEPING_BUILDERS)


def _partial_identity(decorator: Decorator, resolver: Resolver) -> bool:
    """`@functools.partial(hook, tag=...)` where `hook(f, tag)` hands back `f`: changes nothing."""
    if (
        decorator.path != "functools.partial"
        or len(decorator.args) != 1
        or not resolver.index.owns(decorator.args[0])
    ):
        return False
    target = resolver.lookup(decorator.args[0])
    return isinstance(target, FunctionValue) and target.info.identity


# -- constructors ---------------------------------------------------------------------------------


def constructor(cls: ClassInfo, resolver: Resolver, *, skip_new: bool = False) -> CallTarget | Unknown:
    """What `Cls(...)` binds against: type.__call__ runs `__new__` and then, when it returned an instance
    of `Cls`, that instance's class's `__init__`, both with the arguments. `skip_new`: the `__init__` alone
    (of the class a factory `__new__` constructed)."""
    mro = resolver.mro(cls)
    if mro is None:
        return Unknown(Reason.UNRESOLVABLE_MRO)
    metaclass = _metaclass(mro, resolver)
    if isinstance(metaclass, Unknown):
        return metaclass
    made = cls if skip_new else resolver.constructed_class(cls)
    if isinstance(made, Unknown) and made.reason is not Reason.FACTORY_NEW:
        return made
    if made is not cls:
        return _factory_constructor(cls, made, mro, resolver)
    init: CallTarget | None = None
    new: CallTarget | None = None
    for entry in mro:
        if isinstance(entry, str):
            if init is not None or new is not None:
                break  # found below an outside base: its own __new__/__init__ are overridden
            return _external_constructor(entry, cls, mro)
        style = dataclass_style(entry, mro, resolver)
        if isinstance(style, Unknown):
            return style
        if new is None and not skip_new and "__new__" in entry.members:
            found = _dunder_target(entry, "__new__", resolver)
            if isinstance(found, Unknown):
                return found
            new = replace(found, description=f"{cls.path} (__new__ of {entry.path})")
        if init is None:
            found_init = _init_of(entry, style, mro, cls, resolver)
            if isinstance(found_init, Unknown):
                return found_init
            init = found_init
        if init is not None and new is not None:
            break
    if init is not None and new is not None and not _accepts_anything(new):
        if _accepts_anything(init):
            return new
        return replace(init, requires_also=(new,))
    if init is not None:
        return init
    if new is not None:
        return new
    # Only object's __init__ is left: the class takes no arguments (a stub may just not say).
    return CallTarget(
        Signature(()), f"{cls.path} (object.__init__)", cls.path, typing_view=_any_typing_view(mro)
    )


def _factory_constructor(
    cls: ClassInfo, made: ClassInfo | Unknown | None, mro: list[ClassInfo | str], resolver: Resolver
) -> CallTarget | Unknown:
    """`Cls(...)` whose `__new__` builds another class: the arguments meet that `__new__` and, when it
    built an instance of `Cls` (a subclass), the `__init__` of the class built; else no `__init__`.
    When what it builds is unknown, `__new__` alone: its own breaks are certain, an `__init__`'s not."""
    entry = next(e for e in mro if isinstance(e, ClassInfo) and "__new__" in e.members)
    new = _dunder_target(entry, "__new__", resolver)
    if isinstance(new, Unknown):
        return new
    new = replace(new, description=f"{cls.path} (__new__ of {entry.path})")
    if isinstance(made, Unknown):
        return made if _accepts_anything(new) else new
    if made is None:
        return new
    init = constructor(made, resolver, skip_new=True)
    if isinstance(init, Unknown):
        return init
    init = replace(init, description=f"{cls.path} (builds {made.path}: {init.description})")
    return init if _accepts_anything(new) else replace(init, requires_also=(*init.requires_also, new))


def _init_of(
    entry: ClassInfo, style: Style | None, mro: list[ClassInfo | str], cls: ClassInfo, resolver: Resolver
) -> CallTarget | Unknown | None:
    """The `__init__` that `entry` defines or has synthesized, if any."""
    init = entry.members.get("__init__")
    if isinstance(init, FunctionInfo):
        if style is not None and style.kind == "pydantic":
            return Unknown(Reason.PYDANTIC_DATACLASS_WITH_INIT)
        target = _dunder_target(entry, "__init__", resolver)
        if isinstance(target, Unknown):
            return target
        return replace(
            target, description=f"{cls.path} (__init__ of {entry.path})", defined_at=f"{entry.path}.__init__"
        )
    if init is not None:
        return Unknown(Reason.INIT_NOT_A_FUNCTION)
    if style is not None and style.options.get("init", "True") != "False":
        synthesized = synthesize(mro, entry, resolver)
        if isinstance(synthesized, Unknown):
            return synthesized
        return CallTarget(
            synthesized,
            f"{cls.path} (fields of {style.kind} dataclass)",
            entry.path,
            typing_view=entry.typing_view,
        )
    return None


def _dunder_target(entry: ClassInfo, name: str, resolver: Resolver) -> CallTarget | Unknown:
    member = entry.members[name]
    if not isinstance(member, FunctionInfo):
        return Unknown(Reason.NEW_NOT_A_FUNCTION if name == "__new__" else Reason.INIT_NOT_A_FUNCTION)
    # __new__ is a static method that type.__call__ hands the class: seen bound, like __init__.
    return _function_target(FunctionValue(member, f"{entry.path}.{name}", "instance"), resolver)


def _any_typing_view(mro: list[ClassInfo | str]) -> bool:
    return any(isinstance(entry, ClassInfo) and entry.typing_view for entry in mro)


def _accepts_anything(target: CallTarget) -> bool:
    return all(s.accepts_any_positional and s.accepts_any_keyword for s in target.variants())


def _metaclass(mro: list[ClassInfo | str], resolver: Resolver) -> Unknown | None:
    for entry in mro:
        if isinstance(entry, ClassInfo) and entry.metaclass:
            if resolver.plain_metaclass(entry.metaclass):
                continue  # the metaclass does not define __call__: type.__call__ applies
            target = resolver.lookup(entry.metaclass) if not entry.metaclass.startswith("?") else None
            if isinstance(target, ClassValue) and marks_dataclass_transform(target.info):
                continue
            return Unknown(Reason.METACLASS, entry.metaclass)
    return None


def _external_constructor(base: str, cls: ClassInfo, mro: list[ClassInfo | str]) -> CallTarget | Unknown:
    """The constructor of a class whose first outside base is one whose constructor is well known."""
    if base in PYDANTIC_MODELS:
        signature = pydantic_model(mro, cls)
    elif base in NAMED_TUPLES:
        signature = named_tuple(mro, cls)
    elif base.startswith("builtins.") and base.endswith(("Error", "Exception", "Warning")):
        signature = exception(mro, cls)
    else:
        return Unknown(Reason.EXTERNAL_BASE, base)
    if isinstance(signature, Unknown):
        return signature
    return CallTarget(signature, f"{cls.path} (from {base})", cls.path, typing_view=_any_typing_view(mro))


def bind_target(shape: CallShape, target: CallTarget) -> Verdict:
    """Bind against the signature; for overload-only targets, a break only if every overload breaks;
    with targets the arguments must also bind (`__new__` beside `__init__`), a break if any breaks."""
    for old, new in target.renamed_keywords:
        if old in shape.keywords:  # the wrapper passes it as `new` (its value wins over a `new=` one)
            keywords = tuple(new if k == old else k for k in shape.keywords if k != new)
            shape = CallShape(shape.positional, keywords, shape.star_args, shape.star_kwargs)
    own = _bind_variants(shape, target)
    if not target.requires_also:
        return own
    verdicts = [own, *(bind_target(shape, also) for also in target.requires_also)]
    broken = next((v for v in verdicts if isinstance(v, Break)), None)
    if broken is not None:
        return broken
    return (
        own
        if all(isinstance(v, Ok) for v in verdicts)
        else next(v for v in verdicts if isinstance(v, Unknown))
    )


def _bind_variants(shape: CallShape, target: CallTarget) -> Verdict:
    if not target.alternatives:
        return bind(shape, target.signature)
    verdicts = [bind(shape, alternative) for alternative in target.alternatives]
    ok = next((v for v in verdicts if isinstance(v, Ok)), None)
    if ok is not None:
        return ok
    if all(isinstance(v, Break) for v in verdicts):
        return verdicts[0]
    return Unknown(Reason.OVERLOADS)
