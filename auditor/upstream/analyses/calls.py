"""The calls in a function or class body that tell how it calls, or what it gives back.

Input: a `def` or `class` node. Output: the shapes of a class's `self.m(...)` calls of its own methods
(the shapes the upstream calls its hooks with), the one call a function hands its `**kwargs` to
unchanged, and the one dotted name (or `self`) every `return` of an unannotated function calls.
"""

from __future__ import annotations

import ast
from typing import Any, TypeGuard

from apidrift.auditor.upstream.analyses.nodes import _last_name_of, _own_nodes

_MAX_SELF_CALLS = 8  # per method called: the shapes kept of the class's own calls
_MAX_UNTYPED_CALLS = 48  # per class: the method calls with keywords on values it does not type


def _self_calls(node: ast.ClassDef) -> dict[str, list[dict[str, Any]]]:
    """`self.m(...)` calls in the class's plain methods (the shapes the upstream calls its hooks with),
    `partial(self.m, ...)` (the arguments it fixes, the rest, given where it is called, unknown) and
    `self.m` handed to a call (its arguments unknown)."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        if any(_last_name_of(d) in ("staticmethod", "classmethod") for d in method.decorator_list):
            continue
        self_name = method.args.args[0].arg
        for inner in _own_nodes(method):
            if not isinstance(inner, ast.Call):
                continue
            uses: list[tuple[ast.Attribute, list[ast.expr], list[ast.keyword], bool]] = []
            if _is_method_of(inner.func, self_name):
                uses.append((inner.func, inner.args, inner.keywords, False))
            elif (
                _last_name_of(inner.func) == "partial"
                and inner.args
                and _is_method_of(inner.args[0], self_name)
            ):
                # `functools.partial(self.m, request=request)`: called later with arguments not
                # written here (Django's `formfield_callback(f, **kwargs)`)
                uses.append((inner.args[0], inner.args[1:], inner.keywords, True))
            else:
                # `register(self.m)`, `run(callback=self.m)`: the bound method handed over, called
                # there with arguments not written here
                handed = [*inner.args, *(k.value for k in inner.keywords)]
                uses.extend((a, [], [], True) for a in handed if _is_method_of(a, self_name))
            for called, args, keywords, later in uses:
                found = calls.setdefault(called.attr, [])
                if len(found) >= _MAX_SELF_CALLS:
                    continue
                shape = {
                    "caller": method.name,
                    "positional": sum(1 for a in args if not isinstance(a, ast.Starred)),
                    "keywords": [k.arg for k in keywords if k.arg is not None],
                    "star_args": later or any(isinstance(a, ast.Starred) for a in args),
                    "star_kwargs": later or any(k.arg is None for k in keywords),
                    "lineno": inner.lineno,
                    "text": ast.unparse(inner)[:120],
                }
                key = {k: v for k, v in shape.items() if k not in ("lineno", "text")}
                if not any({k: v for k, v in f.items() if k not in ("lineno", "text")} == key for f in found):
                    found.append(shape)
    return calls


def _is_method_of(node: ast.expr, self_name: str) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name


def _kwargs_forwarding(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """`def f(..., **kw): ...; g(x, y=1, **kw)`: the one call `**kw` goes to, unchanged (kw is used
    nowhere else, so nothing is popped or added on the way)."""
    kwarg = node.args.kwarg
    if kwarg is None:
        return None
    name = kwarg.arg
    # A bare truth test (`if kwargs: ...`) reads the mapping without changing it: not a use.
    tested = {
        id(n.test)
        for n in _own_nodes(node)
        if isinstance(n, (ast.If, ast.While, ast.Assert)) and isinstance(n.test, ast.Name)
    } | {id(n.operand) for n in _own_nodes(node) if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    uses = [n for n in _own_nodes(node) if isinstance(n, ast.Name) and n.id == name and id(n) not in tested]
    calls = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == name for k in c.keywords)
    ]
    # `kw.pop("legacy", None)` takes a named keyword out before the hand-over: it is consumed here.
    pops = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr == "pop"
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == name
        and c.args
        and isinstance(c.args[0], ast.Constant)
        and isinstance(c.args[0].value, str)
    ]
    # `kw.setdefault("key", v)` adds a key of the upstream's own: the caller's keywords go on unchanged.
    defaults = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr == "setdefault"
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == name
        and c.args
        and isinstance(c.args[0], ast.Constant)
        and isinstance(c.args[0].value, str)
    ]
    if len(uses) != 1 + len(pops) + len(defaults) or len(calls) != 1:
        return None
    call = calls[0]
    if (
        not isinstance(call.func, (ast.Name, ast.Attribute))
        or sum(1 for k in call.keywords if k.arg is None) != 1
    ):
        return None
    return {
        "target": ast.unparse(call.func),
        "positional": sum(1 for a in call.args if not isinstance(a, ast.Starred)),
        "keywords": [k.arg for k in call.keywords if k.arg is not None],
        "star_args": any(isinstance(a, ast.Starred) for a in call.args),
        "consumed": [p.args[0].value for p in pops],  # type: ignore[attr-defined]  # `pops` holds only calls whose first argument is a Constant
    }


# What a method of a str or bytes literal returns (`b".".join(parts)`, `"{}".format(x)`).
_STR_METHODS = {
    **dict.fromkeys(
        ("join", "format", "replace", "strip", "lstrip", "rstrip", "lower", "upper", "title", "ljust",
         "rjust", "center", "zfill", "capitalize", "casefold", "swapcase", "expandtabs"),
        "same",
    ),
    "encode": "builtins.bytes",
    "decode": "builtins.str",
}  # fmt: skip


def _literal_type(value: ast.expr) -> str | None:
    """The builtin type of a literal str or bytes, an f-string, or a chain of methods of one that each
    give one (`b".".join(parts)`, `"{}".format(x).encode()`)."""
    methods: list[str] = []
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and len(methods) < 50:
        methods.append(value.func.attr)
        value = value.func.value
    if isinstance(value, ast.Constant) and type(value.value) in (str, bytes):
        found = f"builtins.{type(value.value).__name__}"
    elif isinstance(value, ast.JoinedStr):
        found = "builtins.str"
    else:
        return None
    for method in reversed(methods):
        result = _STR_METHODS.get(method)
        if result is None or (result != "same" and (result == "builtins.bytes") != (found == "builtins.str")):
            return (
                None  # not a method known to give a str or bytes (`"x".encode()` bytes, `b"x".decode()` str)
            )
        found = found if result == "same" else result
    return found


_LITERAL_TYPES = {
    bool: "builtins.bool",
    int: "builtins.int",
    float: "builtins.float",
    complex: "builtins.complex",
}


def property_literal_type(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """For an unannotated property getter: the builtin type every `return` gives, when each returns a
    literal of one type (`return True`, `return "x"`, `return b"".join(parts)`) and the body cannot run
    off its end (its last statement is a `return`). A bare `return`, `return None`, a `yield` or an
    `await` anywhere: None (not known)."""
    if isinstance(node, ast.AsyncFunctionDef) or not node.body or not isinstance(node.body[-1], ast.Return):
        return None
    found: set[str] = set()
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if not isinstance(inner, ast.Return):
            continue
        value = inner.value
        if value is None:
            return None
        literal = (
            _LITERAL_TYPES.get(type(value.value)) if isinstance(value, ast.Constant) else None
        ) or _literal_type(value)
        if literal is None:
            return None
        found.add(literal)
    return found.pop() if len(found) == 1 else None


def property_constructs(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """For an unannotated property getter: the one dotted name every `return` calls to build a fresh
    object (`return ContainerCollection(client=self)`), as written, when the body cannot run off its end
    and the name's first part is bound neither by the getter (a parameter, a local) nor as `self`/`cls`:
    the name is then the module's. Whether it is a class whose call builds exactly its own instances is
    checked when read."""
    if not _returns_constructed(node):
        return None
    callee = next(
        ast.unparse(inner.value.func)
        for inner in _own_nodes(node)
        if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Call)
    )
    first = callee.split(".")[0]
    arguments = node.args
    bound = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    bound |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
            bound.add(inner.id)
        elif isinstance(inner, (ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom)):
            return None  # a name bound by an import or declared elsewhere: not read here
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
            bound.add(inner.name or "")
        elif isinstance(inner, (ast.MatchAs, ast.MatchStar, ast.MatchMapping)):
            return None  # a `case` pattern may bind the name
    return None if first in bound else callee


def _calls_super_method(value: ast.expr, name: str) -> bool:
    """`super().name(...)` or `super(Cls, self).name(...)`: the same method of the next class."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == name
        and isinstance(value.func.value, ast.Call)
        and isinstance(value.func.value.func, ast.Name)
        and value.func.value.func.id == "super"
        and len(value.func.value.args) in (0, 2)
    )


def _returned_class(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """For a function without a return annotation: what every `return` gives, when it is one thing:
    a call of one dotted name (`DataFrame(...)`, `cls(...)`), or `self`; a str or bytes literal (or a
    method of one: `b".".join(parts)`), "builtins.str"/"builtins.bytes"; `super().<the same
    method>(...)`, "super". `return None` is passed over."""
    if isinstance(node, ast.AsyncFunctionDef):
        return None  # calling it gives a coroutine
    found: set[str] = set()
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if not isinstance(inner, ast.Return) or inner.value is None:
            continue
        value = inner.value
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        literal = _literal_type(value)
        if literal is not None:
            found.add(literal)
        elif _calls_super_method(value, node.name):
            found.add("super")
        elif isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
            found.add(ast.unparse(value.func))
        elif isinstance(value, ast.Name) and value.id == "self":
            found.add("self")
        else:
            return None
    return found.pop() if len(found) == 1 else None


def _returns_constructed(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Every `return` builds a new object by calling one dotted name (`return Collection(self, name)`),
    none gives None, and the body cannot run off its end (its last statement is that `return`): each
    call gives a fresh object of what that name makes (checked against the name's class when read)."""
    if isinstance(node, ast.AsyncFunctionDef) or not node.body or not isinstance(node.body[-1], ast.Return):
        return False
    callees = set()
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(inner, ast.Return):
            value = inner.value
            if not (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))):
                return False
            callees.add(ast.unparse(value.func))
    return len(callees) == 1 and next(iter(callees)).split(".")[0] not in ("self", "cls", "super")


def _makes_metaclass_base(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the function is `with_metaclass(meta, *bases)` as six and SQLAlchemy 1.x write it: its
    body defines a class whose `__new__` returns (or binds) `meta(name, bases, namespace)`, and the
    function returns an instance of that class (`metaclass("temporary_class", None, {})` or
    `type.__new__(metaclass, "temporary_class", (), {})`). A class deriving from its call is then
    made by `meta` from `bases`: the temporary class drops out."""
    args = node.args
    if (
        isinstance(node, ast.AsyncFunctionDef)
        or len(args.args) != 1
        or args.vararg is None
        or args.posonlyargs
    ):
        return False
    meta, bases = args.args[0].arg, args.vararg.arg
    inner = [s for s in node.body if isinstance(s, ast.ClassDef)]
    if len(inner) != 1:
        return False
    new = next(
        (f for f in inner[0].body if isinstance(f, ast.FunctionDef) and f.name == "__new__"),
        None,
    )
    if new is None:
        return False
    # names in __new__ standing for `bases` (`resolved_bases = types.resolve_bases(bases)`)
    standing = {bases}
    for stmt in ast.walk(new):
        if isinstance(stmt, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id in standing for n in ast.walk(stmt.value)
        ):
            standing.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    makes = any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == meta
        and len(call.args) == 3
        and isinstance(call.args[1], ast.Name)
        and call.args[1].id in standing
        for call in ast.walk(new)
    )
    last = node.body[-1]
    if not makes or not isinstance(last, ast.Return) or not isinstance(last.value, ast.Call):
        return False
    returned = last.value
    made = inner[0].name
    if isinstance(returned.func, ast.Name) and returned.func.id == made:
        return True
    return (
        isinstance(returned.func, ast.Attribute)
        and returned.func.attr == "__new__"
        and isinstance(returned.func.value, ast.Name)
        and returned.func.value.id == "type"
        and bool(returned.args)
        and isinstance(returned.args[0], ast.Name)
        and returned.args[0].id == made
    )


def _held_calls(node: ast.ClassDef) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Calls the class's plain methods make on an object of another class they hold, typed by an
    annotation: `self.widget.render(...)` where the class annotates `widget: Widget` (or `__init__`
    stores a parameter annotated `Widget` in it and nothing else does), or `field.clean(...)` on a
    parameter annotated `Field` the method does not rebind. Each: {"on": the annotation's text,
    "method", "caller", "positional", "keywords", "star_args", "star_kwargs", "lineno", "text"}.

    And, read in the same walk, the calls with keywords of a method on a value the class does not type
    (`widget.render(name=n, value=v, attrs=a, renderer=r)` where `widget` comes from `widget or
    self.field.widget`): the upstream may hand a downstream object there, so an override that rejects
    the call may fail (a warning, never certain). The same dicts without "on"; the text an outline."""
    typed: dict[str, str] = {}  # self attribute -> annotation text
    stores: dict[str, int] = {}
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            head = _plain_class(stmt.annotation)
            if head is not None:
                typed[stmt.target.id] = head
    methods = [m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.args.args]
    for method in methods:
        self_name = method.args.args[0].arg
        params = {
            a.arg: _plain_class(a.annotation)
            for a in (*method.args.args, *method.args.kwonlyargs)
            if a.annotation is not None
        }
        for inner in _own_nodes(method):
            targets = (
                inner.targets
                if isinstance(inner, ast.Assign)
                else [inner.target]
                if isinstance(inner, (ast.AnnAssign, ast.AugAssign))
                else []
            )
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == self_name
                ):
                    stores[target.attr] = stores.get(target.attr, 0) + 1
                    value = inner.value if isinstance(inner, (ast.Assign, ast.AnnAssign)) else None
                    if method.name == "__init__" and isinstance(value, ast.Name) and params.get(value.id):
                        typed.setdefault(target.attr, params[value.id] or "")
    typed = {attr: head for attr, head in typed.items() if head and stores.get(attr, 0) <= 1}
    found: list[dict[str, Any]] = []
    untyped: list[dict[str, Any]] = []
    for method in methods:
        if any(_last_name_of(d) in ("staticmethod", "classmethod") for d in method.decorator_list):
            continue
        self_name = method.args.args[0].arg
        params = {
            a.arg: _plain_class(a.annotation)
            for a in (*method.args.args[1:], *method.args.kwonlyargs)
            if a.annotation is not None
        }
        rebound = {
            n.id
            for n in _own_nodes(method)
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
        }
        annotated = {a.arg for a in (*method.args.args, *method.args.kwonlyargs) if a.annotation is not None}
        for inner in _own_nodes(method):
            if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)):
                continue
            holder = inner.func.value
            if (
                any(k.arg is not None for k in inner.keywords)
                and isinstance(holder, (ast.Name, ast.Attribute))
                # not the instance itself (self calls), nor a value the method types (held calls)
                and not (isinstance(holder, ast.Name) and (holder.id == self_name or holder.id in annotated))
                and len(untyped) < _MAX_UNTYPED_CALLS
            ):
                untyped.append({**_call_record(inner, method.name), "text": _call_outline(inner)})
            on = None
            if (
                isinstance(holder, ast.Attribute)
                and isinstance(holder.value, ast.Name)
                and holder.value.id == self_name
            ):
                on = typed.get(holder.attr)
            elif isinstance(holder, ast.Name) and holder.id not in rebound:
                on = params.get(holder.id)
            if not on or len(found) >= _MAX_SELF_CALLS * 4:
                continue
            found.append({"on": on, **_call_record(inner, method.name), "text": ast.unparse(inner)[:120]})
    return found, untyped


def _call_record(call: ast.Call, caller: str) -> dict[str, Any]:
    """A call of a method on another object, as held and untyped calls keep it (without its text)."""
    assert isinstance(call.func, ast.Attribute)
    return {
        "method": call.func.attr,
        "caller": caller,
        "positional": sum(1 for a in call.args if not isinstance(a, ast.Starred)),
        "keywords": [k.arg for k in call.keywords if k.arg is not None],
        "star_args": any(isinstance(a, ast.Starred) for a in call.args),
        "star_kwargs": any(k.arg is None for k in call.keywords),
        "lineno": call.lineno,
    }


def _call_outline(call: ast.Call) -> str:
    """`widget.render(name=..., value=..., attrs=..., renderer=...)`: the call's shape, its values elided."""
    assert isinstance(call.func, ast.Attribute)
    holder = ast.unparse(call.func.value)
    holder = holder if len(holder) <= 40 else f"{holder[:37]}..."
    parts = ["*..." if isinstance(a, ast.Starred) else "..." for a in call.args]
    parts += [f"{k.arg}=..." if k.arg is not None else "**..." for k in call.keywords]
    return f"{holder}.{call.func.attr}({', '.join(parts)})"


def _plain_class(annotation: ast.expr | None) -> str | None:
    """`Widget`, `forms.Widget`, `Optional[Widget]`, `Widget | None`, `"Widget"`: the class's dotted text."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        return _plain_class(kept[0]) if len(kept) == 1 else None
    if isinstance(annotation, ast.Subscript) and _dotted_text(annotation.value) in (
        "Optional",
        "typing.Optional",
    ):
        return _plain_class(annotation.slice)
    text = _dotted_text(annotation)
    return text if text is not None and text not in ("None", "Any", "object") else None


def _dotted_text(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


# Method decorators that leave `self` where the method's body puts it: any other may hand it anywhere.
_PLAIN_METHOD_DECORATORS = frozenset(
    {
        "property",
        "staticmethod",
        "abstractmethod",
        "setter",
        "getter",
        "deleter",
        "cached_property",
        "override",
    }
)
_MAX_SELF_USES = 64  # per method: the names of `self` it reads, else not known


def _self_uses(node: ast.ClassDef) -> dict[str, list[str] | None]:
    """For each method the class body defines (at its top level): the attribute names it reads, calls
    or stores on `self` (and on `super()`), or None where `self` may reach code not read here: `self`
    (or `super()`) used other than as `self.name` (handed to a call, returned, stored, `type(self)`),
    its class or namespace read (`self.__class__`, `self.__dict__`), a decorator that may wrap the method, a
    class method (`cls(...)` builds instances), or too many names. Nested functions and lambdas are read
    as part of the method (a name `self` there is taken to be the same object)."""
    uses: dict[str, list[str] | None] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        found = _method_self_uses(method)
        if method.name in uses:  # defined twice: either may run
            before = uses[method.name]
            found = None if before is None or found is None else sorted({*before, *found})
        uses[method.name] = found
    return uses


def _method_self_uses(method: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str] | None:
    decorators = {_last_name_of(d) for d in method.decorator_list}
    if decorators - _PLAIN_METHOD_DECORATORS:
        return None
    if "staticmethod" in decorators:
        return []  # no instance is handed to it
    params = [*method.args.posonlyargs, *method.args.args]
    if not params:
        return None
    self_name = params[0].arg
    names: set[str] = set()
    # Each node is met as a child of its parent, in `ast.walk`'s order: the parent is at hand.
    for parent in ast.walk(method):
        for inner in ast.iter_child_nodes(parent):
            if isinstance(inner, ast.Name) and inner.id == "super" and inner.id != self_name:
                if not isinstance(parent, ast.Call):
                    return None  # `super` itself handed on
                continue
            bare_super = (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Name)
                and inner.func.id == "super"
                and not inner.args
                and not inner.keywords
            )
            if not bare_super and not (isinstance(inner, ast.Name) and inner.id == self_name):
                continue
            if not isinstance(parent, ast.Attribute) or parent.value is not inner:
                return None  # `self` handed over, returned, stored, compared, `super(...)` with arguments
            if parent.attr in ("__class__", "__dict__"):
                return None  # `self.__class__(...)`, `self.__dict__`: the instance's class or namespace
            names.add(parent.attr)
            if len(names) > _MAX_SELF_USES:
                return None
    return sorted(names)
