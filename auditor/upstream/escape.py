"""Which of a module's values may be changed where the `__getattr__` evaluator does not look.

A table the module binds as a literal is read as that literal only where nothing else may change it:
not through another name (`_ALIAS = _TABLE; _ALIAS["old"] = ...`), a container holding it
(`_HOLDER = [_TABLE]; _HOLDER[0]["old"] = ...`), a helper it is passed to (`_add(_TABLE, old=...)`
where `_add` changes its argument), a value taken out of it (`_TABLE["sub"].append(...)`), or code the
analysis cannot read (any call of something else, a value stored into another object). Static and
name-based, over the whole module (functions included): a local of the same name counts too, which
only makes more values unknown.

`changed_depths(tree, followed)` answers, per name, the smallest nesting depth from which the objects
its value holds may be changed: 0 is the value itself, 1 its elements (a dict's keys and values), and
so on. `followed` holds the ids of the module-level statements that change a name in place and that
the evaluator replays itself (`T.update({...})` on every import): those are not changes it misses.

Each use of a name is followed upwards through the expressions around it, keeping how the value there
relates to the name's value: (offset, fresh) says that the value's objects at depth j >= fresh are the
name's objects at depth j + offset, and those above are new (a display, a comprehension, a copy).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

MAX_WALK = 200_000  # expression nodes visited for one module; past it, every value may be changed

_EXCEPTIONS = frozenset(
    n
    for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
)
# builtins that only read their arguments and return something new that holds none of them
_READERS = frozenset(
    {"len", "isinstance", "issubclass", "repr", "str", "bool", "int", "float", "hash", "id", "print", "any",
     "all", "sum", "hasattr", "format", "callable", "ascii", "bytes"}
)  # fmt: skip
# builtins that return a new container holding the elements of their (first) argument
_COPIERS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "dict", "reversed", "iter"})
_ELEMENT_OF = frozenset({"min", "max", "next"})  # builtins that return an element
_PAIRS = frozenset({"enumerate", "zip"})  # builtins whose items are new pairs holding elements
# methods that change their receiver
_MUTATORS = frozenset(
    {"update", "setdefault", "pop", "popitem", "clear", "append", "extend", "insert", "remove", "add",
     "discard", "__setitem__", "__delitem__", "sort", "reverse", "difference_update",
     "intersection_update", "symmetric_difference_update", "__ior__", "__iadd__"}
)  # fmt: skip
_BULK_MUTATORS = frozenset({"update", "extend", "difference_update", "intersection_update"})  # take elements
# methods that only read their receiver and arguments, returning something that holds neither
_READ_METHODS = frozenset(
    {"count", "index", "startswith", "endswith", "find", "rfind", "format", "split", "rsplit",
     "partition", "rpartition", "lower", "upper", "replace", "join", "strip", "lstrip", "rstrip",
     "removeprefix", "removesuffix", "isidentifier", "isupper", "islower", "title", "capitalize",
     "issubset", "issuperset", "isdisjoint", "__contains__", "__len__", "encode", "decode"}
)  # fmt: skip
_COPY_METHODS = frozenset(
    {"copy", "keys", "values", "union", "intersection", "difference", "symmetric_difference"}
)

Relation = tuple[int, int]  # (offset, fresh): see the module docstring


Slot = Union[int, str]  # an argument's position, or its keyword


@dataclass
class Escapes:
    """What `changed_depths` finds in one module."""

    # module-level name -> the smallest depth from which its value's objects may be changed unseen
    shared: dict[str, int] = field(default_factory=dict)
    # module-level name -> (a function it reaches as an argument, the argument's slot, the depth from
    # which its objects would be changed if that function changed or kept its parameter): calls of
    # functions other modules define, which the evaluator resolves (`_sub_module_deprecation(all=__all__)`)
    deferred: dict[str, list[tuple[str, Slot, int]]] = field(default_factory=dict)
    # module-level function -> parameter -> the depth from which what it is handed may be changed or
    # kept (returned, stored, handed on to what is not read): absent, only read
    params: dict[str, dict[str, int]] = field(default_factory=dict)


MAX_DEFERRED = 500  # calls of other modules' functions followed per module; past it, escapes


def changed_depths(tree: ast.Module, followed: set[int]) -> Escapes:
    """See the module docstring and `Escapes`."""
    try:
        walker = _Walker(tree, followed)
        walker.run()
        return walker.escapes()
    except (_TooMuch, RecursionError):
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        functions = {
            f.name: {a.arg: 0 for a in ast.walk(f.args) if isinstance(a, ast.arg)}
            for f in tree.body
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        return Escapes({name: 0 for name in names}, {}, functions)


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope_keys(tree: ast.Module) -> dict[int, str]:
    """id(Name node) -> the variable it is, as Python's scoping rules say: its name for the module's
    (and a `global` one's), `"<id of the function or comprehension>:<name>"` for a local, so that a
    function's local or a comprehension's variable is not the module's name of the same spelling."""
    keys: dict[int, str] = {}
    locals_of: dict[int, tuple[set[str], set[str], set[str]]] = {}  # scope -> (locals, global, nonlocal)

    def own(scope: ast.AST) -> tuple[set[str], set[str], set[str]]:
        if id(scope) in locals_of:
            return locals_of[id(scope)]
        names: set[str] = set()
        declared_global: set[str] = set()
        declared_nonlocal: set[str] = set()
        if isinstance(scope, _COMPREHENSIONS):
            for generator in scope.generators:
                names.update(n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name))
        else:
            assert isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            names.update(a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg))
            body: list[ast.AST] = list(scope.body) if isinstance(scope.body, list) else [scope.body]
            stack = body
            while stack:
                node = stack.pop()
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                    stack.extend(node.decorator_list)
                    continue
                if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
                    continue
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    names.add(node.id)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in node.names)
                elif isinstance(node, ast.ExceptHandler) and node.name:
                    names.add(node.name)
                elif isinstance(node, ast.Global):
                    declared_global.update(node.names)
                elif isinstance(node, ast.Nonlocal):
                    declared_nonlocal.update(node.names)
                stack.extend(ast.iter_child_nodes(node))
        found = (names - declared_global - declared_nonlocal, declared_global, declared_nonlocal)
        locals_of[id(scope)] = found
        return found

    def resolve(name: str, chain: list[ast.AST]) -> str:
        for scope in reversed(chain):
            names, declared_global, _ = own(scope)
            if name in declared_global:
                return name
            if name in names:
                return f"{id(scope)}:{name}"
        return name

    def visit(node: ast.AST, chain: list[ast.AST]) -> None:
        if isinstance(node, ast.Name):
            keys[id(node)] = resolve(node.id, chain)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            outer: list[ast.AST] = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            if not isinstance(node, ast.Lambda):
                outer.extend(node.decorator_list)
            for part in outer:
                visit(part, chain)
            inner = [*chain, node]
            parts: list[ast.AST] = list(node.body) if isinstance(node.body, list) else [node.body]
            for inside in parts:
                visit(inside, inner)
            return
        if isinstance(node, _COMPREHENSIONS):
            inner = [*chain, node]
            for index, generator in enumerate(node.generators):
                visit(generator.iter, chain if index == 0 else inner)  # the first iterable: outside
                visit(generator.target, inner)
                for test in generator.ifs:
                    visit(test, inner)
            results: list[ast.AST] = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for result in results:
                visit(result, inner)
            return
        if isinstance(node, ast.ClassDef):
            heads: list[ast.AST] = [*node.bases, *node.keywords, *node.decorator_list, *node.body]
            for head in heads:
                visit(head, chain)  # its own names are the class's: kept apart only from functions
            return
        for child in ast.iter_child_nodes(node):
            visit(child, chain)

    visit(tree, [])
    return keys


class _TooMuch(Exception):
    pass


class _Walker:
    def __init__(self, tree: ast.Module, followed: set[int]) -> None:
        self.tree = tree
        self.followed = followed
        self._derived_from: dict[str, list[tuple[str, Relation]]] | None = None
        self.parents: dict[int, ast.AST] = {}
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.calls: dict[str, list[ast.Call]] = {}  # function name -> the calls of it by that name
        self.returns: dict[int, ast.AST] = {}  # id(return or lambda body) -> its function
        self.loads: list[ast.Name] = []
        self.keys = _scope_keys(tree)  # id(Name) -> the variable it is
        self.edges: dict[str, list[tuple[str, Relation]]] = {}  # derived name -> (source name, relation)
        self.bad: dict[str, int] = {}  # name -> smallest depth changed unseen
        # name -> smallest depth of a change the evaluator replays for that name, not for the names
        # it was derived from (`_ALIAS = _TABLE; _ALIAS["k"] = v` changes `_TABLE` unseen)
        self.replayed: dict[str, int] = {}
        # (the called name, the argument's slot, the key followed, its relation there): see Escapes
        self.deferred: list[tuple[str, Slot, str, Relation]] = []
        self.returned: list[tuple[str, Relation]] = []  # (key, relation) handed back by a `return`
        self.visits = 0
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(parent.name, []).append(parent)
            elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name):
                self.calls.setdefault(parent.func.id, []).append(parent)
            elif isinstance(parent, ast.Name) and isinstance(parent.ctx, ast.Load):
                self.loads.append(parent)

    def key(self, name: ast.Name) -> str:
        return self.keys.get(id(name), name.id)

    def run(self) -> None:
        for name in self.loads:
            self.follow(self.key(name), name, (0, 0), set())

    def result(self) -> dict[str, int]:
        """Each name's smallest changed depth, propagated both ways along derivations: what changes an
        alias (or a value taken out of a table) changes the table, and what changes the table changes
        its aliases, even a change the evaluator replays for the table itself (an alias bound before
        it would be read as the value it had there)."""
        start: dict[str, int] = dict(self.bad)
        for name, replayed in self.replayed.items():
            for source, (offset, fresh) in self.edges.get(name, ()):
                start[source] = min(start.get(source, 1 << 30), max(max(replayed, fresh) + offset, 0))
            for derived, (offset, fresh) in self.derived_from().get(name, ()):
                start[derived] = min(start.get(derived, 1 << 30), max(max(fresh, replayed - offset), 0))
        return self.spread(start)

    def derived_from(self) -> dict[str, list[tuple[str, Relation]]]:
        if self._derived_from is None:
            self._derived_from = {}
            for derived, sources in self.edges.items():
                for source, relation in sources:
                    self._derived_from.setdefault(source, []).append((derived, relation))
        return self._derived_from

    def spread(self, start: dict[str, int], base: dict[str, int] | None = None) -> dict[str, int]:
        """Depths from `start` propagated along derivations (both ways), over `base`'s (unchanged)."""
        depths = dict(base or {})
        pending: list[str] = []
        for name, depth in start.items():
            if depth < depths.get(name, 1 << 30):
                depths[name] = max(depth, 0)
                pending.append(name)
        derived_from = self.derived_from()
        while pending:
            self.visits += 1
            if self.visits > MAX_WALK * 4:
                raise _TooMuch()
            name = pending.pop()
            depth = depths[name]
            lowered = [(s, max(depth, f) + o) for s, (o, f) in self.edges.get(name, ())]
            lowered += [(d, max(f, depth - o)) for d, (o, f) in derived_from.get(name, ())]
            for other, value in lowered:
                value = max(value, 0)
                if value < depths.get(other, 1 << 30):
                    depths[other] = value
                    pending.append(other)
        return depths

    def escapes(self) -> Escapes:
        static = self.result()
        found = Escapes({k: d for k, d in static.items() if ":" not in k})
        for callee, slot, key, (offset, fresh) in self.deferred[:MAX_DEFERRED]:
            for name, depth in self.spread({key: fresh + offset}, None).items():
                if ":" not in name and depth < static.get(name, 1 << 30):
                    found.deferred.setdefault(name, []).append((callee, slot, depth))
        for _, _, key, (offset, fresh) in self.deferred[MAX_DEFERRED:]:
            for name, depth in self.spread({key: fresh + offset}, None).items():
                if ":" not in name:
                    found.shared[name] = min(found.shared.get(name, 1 << 30), depth)
        # what a module-level function's parameters are handed: changed, kept or handed on unread
        kept = {key: fresh + offset for key, (offset, fresh) in self.returned}
        for _, _, key, (offset, fresh) in self.deferred:
            kept[key] = min(kept.get(key, 1 << 30), fresh + offset)
        conservative = self.spread(kept, static) if kept else static
        for function in self.tree.body:
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                prefix = f"{id(function)}:"
                found.params[function.name] = {
                    a.arg: conservative[prefix + a.arg]
                    for a in ast.walk(function.args)
                    if isinstance(a, ast.arg) and prefix + a.arg in conservative
                }
        return found

    def mark(self, name: str, depth: int) -> bool:
        depth = max(depth, 0)
        if name in self.bad and self.bad[name] <= depth:
            return False
        self.bad[name] = depth
        return True

    def derive(self, target: str, root: str, relation: Relation) -> None:
        if target != root or relation != (0, 0):
            self.edges.setdefault(target, []).append((root, relation))

    def escape(self, root: str, relation: Relation) -> None:
        """The value (related to `root` by `relation`) reaches code the analysis does not follow."""
        offset, fresh = relation
        self.mark(root, fresh + offset)

    def change(self, root: str, relation: Relation, statement: ast.AST | None) -> None:
        """The value itself is changed in place (its depth-0 object)."""
        offset, fresh = relation
        if fresh > 0:
            return  # a new container: changing it changes nothing the name holds
        if relation == (0, 0) and statement is not None and id(statement) in self.followed:
            self.replayed[root] = 0  # a module-level change the evaluator replays (for this name)
            return
        self.mark(root, offset)

    def follow(self, root: str, node: ast.AST, relation: Relation, seen: set[tuple[int, Relation]]) -> None:
        key = (id(node), relation)
        if key in seen:
            return
        seen.add(key)
        self.visits += 1
        if self.visits > MAX_WALK:
            raise _TooMuch()
        offset, fresh = relation
        element: Relation = (offset + 1, max(fresh - 1, 0))
        copy: Relation = (offset, max(fresh, 1))
        holder: Relation = (offset - 1, fresh + 1)
        parent = self.parents.get(id(node))
        if parent is None:
            return
        if isinstance(parent, (ast.Expr, ast.If, ast.While, ast.Assert)):
            return  # evaluated, or tested for truth
        if isinstance(parent, (ast.Compare, ast.UnaryOp, ast.FormattedValue, ast.JoinedStr)):
            return
        if isinstance(parent, ast.Subscript):
            if node is not parent.value:
                return  # a key or index
            if isinstance(parent.ctx, ast.Load):
                self.follow(root, parent, element, seen)
            else:
                self.change(root, relation, self.statement_of(parent))
            return
        if isinstance(parent, ast.Attribute):
            call = self.parents.get(id(parent))
            if not isinstance(parent.ctx, ast.Load):
                self.change(root, relation, self.statement_of(parent))
            elif isinstance(call, ast.Call) and call.func is parent:
                self.method(root, parent.attr, call, relation, seen)
            else:
                self.escape(root, relation)  # a bound method or an attribute handed on
            return
        if isinstance(parent, ast.Call):
            self.argument(root, parent, node, relation, seen)
            return
        if isinstance(parent, ast.keyword):
            call = self.parents.get(id(parent))
            if isinstance(call, ast.Call):
                self.argument(root, call, parent, relation, seen)
            else:
                self.escape(root, relation)  # a class keyword
            return
        if isinstance(parent, ast.Starred):
            outer = self.parents.get(id(parent))
            if isinstance(outer, (ast.List, ast.Tuple, ast.Set)) and isinstance(parent.ctx, ast.Load):
                self.follow(root, outer, copy, seen)  # `[*T]`: a new list of its elements
            elif isinstance(outer, ast.Call):
                if isinstance(outer.func, ast.Name) and outer.func.id in self.functions:
                    for target, held in self.parameters_for(outer, None):
                        # `f(*T)`: its elements are the arguments (`*args` holds T's elements: a copy)
                        self.derive(target, root, copy if held else element)
                self.argument_elements(root, outer, relation, seen)
            else:
                self.escape(root, relation)
            return
        if isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
            self.follow(root, parent, holder, seen)
            return
        if isinstance(parent, ast.Dict):
            if any(v is node for k, v in zip(parent.keys, parent.values) if k is None):
                self.follow(root, parent, copy, seen)  # `{**T}`
            else:
                self.follow(root, parent, holder, seen)
            return
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.follow(root, parent, holder, seen)  # the element of a comprehension
            return
        if isinstance(parent, ast.comprehension):
            if node is parent.iter:
                self.bind(root, parent.target, element, seen)
            return  # a condition
        if isinstance(parent, (ast.For, ast.AsyncFor)):
            if node is parent.iter:
                self.bind(root, parent.target, element, seen)
            return
        if isinstance(parent, ast.BinOp):
            self.follow(root, parent, copy, seen)  # `T + [x]`, `T | {...}`: a new value of its elements
            return
        if isinstance(parent, (ast.BoolOp, ast.IfExp)):
            if isinstance(parent, ast.IfExp) and node is parent.test:
                return
            self.follow(root, parent, relation, seen)
            return
        if isinstance(parent, ast.NamedExpr):
            self.derive(self.key(parent.target), root, relation)
            self.follow(root, parent, relation, seen)
            return
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            targets: list[ast.expr] = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            for bound in targets:
                self.bind(root, bound, relation, seen)
            return
        if isinstance(parent, ast.AugAssign):
            if node is parent.value:
                self.bind(root, parent.target, copy, seen)  # `x += T`: x takes T's elements
            return
        if isinstance(parent, ast.Return):
            self.returned.append((root, relation))
            function = self.function_of(parent)
            if function is not None:
                for call in self.calls.get(function, ()):
                    self.follow(root, call, relation, seen)
            return  # handed back to whoever called it: the import system, or the downstream
        if isinstance(parent, ast.Lambda):
            self.escape(root, relation)  # handed back to whoever calls the lambda
            return
        if isinstance(parent, ast.arguments):
            self.default(root, parent, node, relation)
            return
        self.escape(root, relation)  # yield, await, raise, with, a decorator, a base class, ...

    def bind(self, root: str, target: ast.AST, relation: Relation, seen: set[tuple[int, Relation]]) -> None:
        offset, fresh = relation
        if isinstance(target, ast.Name):
            self.derive(self.key(target), root, relation)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                if isinstance(element, ast.Starred):
                    self.bind(root, element.value, (offset, max(fresh, 1)), seen)
                else:
                    self.bind(root, element, (offset + 1, max(fresh - 1, 0)), seen)
        elif isinstance(target, ast.Starred):
            self.bind(root, target.value, relation, seen)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.escape(root, relation)  # stored into another object
        else:
            self.escape(root, relation)

    def method(
        self, root: str, name: str, call: ast.Call, relation: Relation, seen: set[tuple[int, Relation]]
    ) -> None:
        offset, fresh = relation
        if name in _MUTATORS:
            self.change(root, relation, self.statement_of(call))
            if name in ("pop", "popitem", "setdefault"):
                self.follow(root, call, (offset + 1, max(fresh - 1, 0)), seen)  # hands back an element
            return
        if name in _READ_METHODS:
            return
        if name == "get":
            self.follow(root, call, (offset + 1, max(fresh - 1, 0)), seen)
            return
        if name == "items":
            self.follow(root, call, (offset - 1, max(fresh + 1, 2)), seen)  # new pairs of its keys and values
            return
        if name in _COPY_METHODS:
            self.follow(root, call, (offset, max(fresh, 1)), seen)
            return
        self.escape(root, relation)

    def argument(
        self,
        root: str,
        call: ast.Call,
        node: ast.AST,
        relation: Relation,
        seen: set[tuple[int, Relation]],
    ) -> None:
        """The value is an argument of `call` (`node`: the argument, or its keyword)."""
        offset, fresh = relation
        func = call.func
        if node is func:
            return  # called
        if isinstance(node, ast.keyword) and node.arg is None:
            relation = (offset + 1, max(fresh - 1, 0))  # `f(**T)`: its values are the arguments
            offset, fresh = relation
        if isinstance(func, ast.Name):
            if func.id in _READERS or func.id in _EXCEPTIONS:
                return
            if func.id in _COPIERS:
                self.follow(root, call, (offset, max(fresh, 1)), seen)
                return
            if func.id in _ELEMENT_OF:
                self.follow(root, call, (offset + 1, max(fresh - 1, 0)), seen)
                return
            if func.id in _PAIRS:
                self.follow(root, call, (offset - 1, max(fresh + 1, 2)), seen)
                return
            if func.id in ("getattr", "hasattr", "delattr", "setattr") and call.args:
                position = next((i for i, a in enumerate(call.args) if a is node), None)
                if position == 0:
                    if func.id in ("setattr", "delattr"):
                        self.change(root, relation, self.statement_of(call))
                    else:
                        self.escape(root, relation)  # a method of it, maybe one that changes it
                elif position == 1:
                    return  # an attribute name: only read
                elif func.id == "getattr":
                    self.follow(root, call, relation, seen)  # the default handed back
                else:
                    self.escape(root, relation)  # stored as an attribute of another object
                return
            if func.id in self.functions:
                for target, held in self.parameters_for(call, node):
                    self.derive(target, root, (offset - 1, fresh + 1) if held else relation)
                return
            slot = self.slot(call, node)
            if slot is not None and ":" not in self.key(func):
                self.deferred.append((func.id, slot, root, relation))  # another module's function, maybe
                return
        if isinstance(func, ast.Attribute):
            method = func.attr
            if method in _READ_METHODS:
                return
            if method in _BULK_MUTATORS:
                self.escape(root, (offset, max(fresh, 1)))  # its elements go into the receiver
                return
            if method == "get" and len(call.args) > 1 and call.args[1] is node:
                self.follow(root, call, relation, seen)  # the default handed back
                return
        self.escape(root, relation)

    def slot(self, call: ast.Call, node: ast.AST) -> Slot | None:
        """The position or keyword an argument is passed by, where certain."""
        if isinstance(node, ast.keyword):
            return node.arg
        for index, argument in enumerate(call.args):
            if isinstance(argument, ast.Starred):
                return None
            if argument is node:
                return index
        return None

    def argument_elements(
        self, root: str, call: ast.Call, relation: Relation, seen: set[tuple[int, Relation]]
    ) -> None:
        """`f(*T)`: T's elements are the arguments."""
        offset, fresh = relation
        func = call.func
        if isinstance(func, ast.Name) and (func.id in _READERS or func.id in _EXCEPTIONS):
            return
        if isinstance(func, ast.Name) and func.id in self.functions:
            return  # bound to its parameters (parameters_for)
        self.escape(root, (offset, max(fresh, 1)))

    def parameters_for(self, call: ast.Call, node: ast.AST | None) -> Iterator[tuple[str, bool]]:
        """The parameters of the module's functions called so that may receive `node` (None: a
        starred argument, any positional parameter), each with whether it holds the argument (a
        `*args` tuple or a `**kwargs` dict) rather than being it."""
        assert isinstance(call.func, ast.Name)
        for function in self.functions.get(call.func.id, ()):
            args = function.args
            positional = [*args.posonlyargs, *args.args]
            if node is None:
                yield from ((f"{id(function)}:{a.arg}", False) for a in positional)
                if args.vararg is not None:
                    yield f"{id(function)}:{args.vararg.arg}", True
                continue
            if isinstance(node, ast.keyword):
                names = {a.arg for a in (*args.args, *args.kwonlyargs)}
                if node.arg is None:
                    yield from (
                        (f"{id(function)}:{n}", False) for n in names
                    )  # `f(**T)`: T's values bound to any of them
                    if args.kwarg is not None:
                        yield f"{id(function)}:{args.kwarg.arg}", True
                elif node.arg in names:
                    yield f"{id(function)}:{node.arg}", False
                elif args.kwarg is not None:
                    yield f"{id(function)}:{args.kwarg.arg}", True
                continue
            index = next((i for i, a in enumerate(call.args) if a is node), None)
            if index is None:
                continue
            if any(isinstance(a, ast.Starred) for a in call.args[:index]):
                yield from (
                    (f"{id(function)}:{a.arg}", False) for a in positional
                )  # its position is not known
                if args.vararg is not None:
                    yield f"{id(function)}:{args.vararg.arg}", True
            elif index < len(positional):
                yield f"{id(function)}:{positional[index].arg}", False
            elif args.vararg is not None:
                yield f"{id(function)}:{args.vararg.arg}", True

    def default(self, root: str, arguments: ast.arguments, node: ast.AST, relation: Relation) -> None:
        function = self.parents.get(id(arguments))
        positional = [*arguments.posonlyargs, *arguments.args]
        for param, default in zip(
            positional[len(positional) - len(arguments.defaults) :], arguments.defaults
        ):
            if default is node:
                self.derive(f"{id(function)}:{param.arg}", root, relation)
                return
        for param, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            if kw_default is node:
                self.derive(f"{id(function)}:{param.arg}", root, relation)
                return
        self.escape(root, relation)

    def function_of(self, node: ast.AST) -> str | None:
        current = self.parents.get(id(node))
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return current.name
            if isinstance(current, (ast.Lambda, ast.ClassDef, ast.Module)):
                return None
            current = self.parents.get(id(current))
        return None

    def statement_of(self, node: ast.AST) -> ast.AST | None:
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.parents.get(id(current))
        return current
