"""What the downstream does with the instances of one of its classes: the attribute names it reads,
calls or stores on them (and on `self` and `super()` in the class's methods), or why that is not known.

Input: the downstream's folder, the file and line of a method a class defines (an override the upstream
calls). Output: a `ClassReach` when every reference to the class (and to its subclasses in the
downstream) and to every instance built from it is accounted for: the class built only where the result
is bound to a plain name or used once as `Mine().name`, those names used only as `name.attr`, `self`
used only as `self.attr` in the methods of the class and of its downstream bases and subclasses. Any
other use (an instance handed to a call, returned, stored in a container or an attribute, a bound
method handed on, the class registered by a decorator or named in a string or a configuration file),
a computed lookup (`getattr(x, name)`, `globals()`, `eval`), a star import, a notebook, a file not
read, or a bound exceeded: a reason instead, and the caller keeps what it would say without it.

Names are matched by spelling across all files (a name bound twice counts both ways): over-counting
uses only keeps the verdict that needs no reach analysis.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from apidrift.auditor.downstream.walk import MAX_FILE_BYTES, NOTEBOOK_SUFFIX, _python_files, _read_bounded

MAX_FILES = 5000
MAX_TOTAL_BYTES = 64 * 1024 * 1024
MAX_ROUNDS = 8
CONFIG_SUFFIXES = (".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".txt")
MAX_CONFIG_FILES = 64

# Method decorators that leave the method's body as what runs with `self`.
_PLAIN = frozenset(
    {"property", "setter", "getter", "deleter", "cached_property", "abstractmethod", "override"}
)
_DYNAMIC = frozenset({"globals", "vars", "locals", "eval", "exec", "__import__", "import_module"})


@dataclass(frozen=True)
class ClassReach:
    """The attribute names the downstream uses on instances of the class (`uses`), those of them read
    without being called or stored (`read`: a bound method read so escapes with its instance), and the
    names the downstream classes define as methods (`defined`)."""

    cls: str
    uses: frozenset[str]
    read: frozenset[str]
    defined: frozenset[str]


class _GiveUp(Exception):
    pass


class Downstream:
    """The downstream's files, parsed once (on the first question) for the questions of one audit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._program: _Program | str | None = None

    def class_reach(self, relative: str, line: int, method: str) -> ClassReach | str:
        """The uses of the instances of the module-level class that defines `method` at `line` of
        `relative` (a path under the root, as the scan shows it), or why they are not known."""
        try:
            if self._program is None:
                self._program = _Program(self.root)
        except _GiveUp as why:
            self._program = str(why)
        except (RecursionError, MemoryError):
            self._program = "the downstream's code is too deep to follow"
        if isinstance(self._program, str):
            return self._program
        try:
            return self._program.reach(relative, line, method)
        except _GiveUp as why:
            return str(why)
        except RecursionError:
            return "the downstream's code is too deep to follow"


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class _Program:
    def __init__(self, root: Path) -> None:
        self.root = root
        files, problems = _python_files(root)
        if problems:
            raise _GiveUp(f"{problems[0].path} was not read")
        if len(files) > MAX_FILES:
            raise _GiveUp(f"more than {MAX_FILES} files")
        self.trees: dict[str, ast.Module] = {}
        total = 0
        for path, display in files:
            if display.endswith(NOTEBOOK_SUFFIX):
                raise _GiveUp(f"the notebook {display} is not followed")
            data = _read_bounded(path)
            if data is None or len(data) > MAX_FILE_BYTES:
                raise _GiveUp(f"{display} was not read")
            total += len(data)
            if total > MAX_TOTAL_BYTES:
                raise _GiveUp("the downstream is too large to follow")
            try:
                self.trees[display] = ast.parse(data)
            except (SyntaxError, ValueError) as error:
                raise _GiveUp(f"{display} could not be parsed") from error
        self.parents: dict[int, ast.AST] = {}
        for tree in self.trees.values():
            for outer in ast.walk(tree):
                for child in ast.iter_child_nodes(outer):
                    self.parents[id(child)] = outer

    # -- the class and its family ------------------------------------------------------------------

    def reach(self, relative: str, line: int, method: str) -> ClassReach:
        tree = self.trees.get(relative)
        if tree is None:
            raise _GiveUp(f"{relative} was not read")
        found = None
        for statement in tree.body:
            if isinstance(statement, ast.ClassDef) and any(
                isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                and f.name == method
                and min([f.lineno, *(d.lineno for d in f.decorator_list)])
                <= line
                <= (f.end_lineno or f.lineno)
                for f in statement.body
            ):
                found = statement
        if found is None:
            raise _GiveUp("the class is not defined at a module's top level")
        by_name: dict[str, list[ast.ClassDef]] = {}
        for tree in self.trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    by_name.setdefault(node.name, []).append(node)
        # the downstream classes it inherits (by name), and one base outside the downstream in all
        ancestors: list[ast.ClassDef] = []
        external: list[ast.expr] = []
        stack, seen = [found], {id(found)}
        while stack:
            current = stack.pop()
            for base in current.bases:
                named = by_name.get(_last_name(base) or "", [])
                if not named:
                    external.append(base)
                for cls in named:
                    if id(cls) not in seen:
                        seen.add(id(cls))
                        ancestors.append(cls)
                        stack.append(cls)
        if len(external) != 1:
            raise _GiveUp("the class has more than one base outside the downstream")
        # its subclasses in the downstream (by name): their instances are its instances
        family = {found.name}
        members: list[ast.ClassDef] = [found]
        changed = True
        while changed:
            changed = False
            for cls in (c for classes in by_name.values() for c in classes):
                if id(cls) in seen or not any(_last_name(b) in family for b in cls.bases):
                    continue
                if any(_last_name(b) not in family for b in cls.bases):
                    raise _GiveUp(f"the subclass `{cls.name}` has another base")
                seen.add(id(cls))
                family.add(cls.name)
                members.append(cls)
                changed = True
        self.classes = set(family)
        self.members = {id(cls) for cls in members}
        self.instances: set[str] = set()  # module-level names bound to an instance
        self.local: dict[int, set[str]] = {}  # function node id -> names bound to an instance there
        self.local_classes: dict[int, set[str]] = {}  # classmethod -> its `cls`
        self.uses: set[str] = set()
        self.read: set[str] = set()
        self.constructed = False
        defined: set[str] = set()
        for cls in [*members, *ancestors]:
            if cls.decorator_list or cls.keywords:
                raise _GiveUp(f"`{cls.name}` is decorated or takes class keywords")
            defined |= self._class_body(cls)
        self._strings(family)
        for _ in range(MAX_ROUNDS):
            before = (len(self.classes), len(self.instances), sum(len(v) for v in self.local.values()))
            self._references()
            if before == (len(self.classes), len(self.instances), sum(len(v) for v in self.local.values())):
                break
        else:
            raise _GiveUp("the names bound to its instances do not settle")
        if not self.constructed:
            raise _GiveUp(f"the downstream never builds a `{found.name}` itself")
        return ClassReach(found.name, frozenset(self.uses), frozenset(self.read), frozenset(defined))

    def _class_body(self, cls: ast.ClassDef) -> set[str]:
        """The methods a class body defines; `self` (or `cls`) of each tracked in it."""
        defined = set()
        for index, statement in enumerate(cls.body):
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.add(statement.name)
                decorators = {_last_name(d) for d in statement.decorator_list}
                if decorators - _PLAIN - {"staticmethod", "classmethod"}:
                    raise _GiveUp(f"the method `{cls.name}.{statement.name}` has a decorator not followed")
                params = [*statement.args.posonlyargs, *statement.args.args]
                if "staticmethod" in decorators:
                    continue
                if not params:
                    raise _GiveUp(f"the method `{cls.name}.{statement.name}` takes no `self`")
                target = self.local_classes if "classmethod" in decorators else self.local
                target.setdefault(id(statement), set()).add(params[0].arg)
            elif (
                (isinstance(statement, (ast.Assign, ast.AnnAssign)) and _plain_value(statement.value))
                or isinstance(statement, ast.Pass)
                or (
                    index == 0
                    and isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Constant)
                )
            ):
                continue
            else:
                raise _GiveUp(
                    f"the body of `{cls.name}` has a statement not followed (line {statement.lineno})"
                )
        return defined

    def _strings(self, family: set[str]) -> None:
        """A class named in a string (a dotted path a framework imports, an entry point): not followed."""
        word = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(family)) + r")\b")
        for display, tree in self.trees.items():
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body
                and isinstance(node.body[0], ast.Expr)
                and isinstance(node.body[0].value, ast.Constant)
            }
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                    raise _GiveUp(f"a star import in {display} is not followed")
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docstrings
                    and word.search(node.value)
                    and not self._in_all(node)
                ):
                    raise _GiveUp(f"a string in {display} (line {node.lineno}) names the class")
                if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                    func = _last_name(node.func)
                    if func in _DYNAMIC or (
                        func in ("getattr", "setattr", "hasattr", "delattr")
                        and not (len(node.args) >= 2 and isinstance(node.args[1], ast.Constant))
                    ):
                        raise _GiveUp(f"{display} looks a name up at run time (line {node.lineno})")
        try:
            listed = sorted(self.root.iterdir()) if self.root.is_dir() else []
        except OSError as error:
            raise _GiveUp("the downstream's folder could not be listed") from error
        configs = [
            p for p in listed if p.name.endswith(CONFIG_SUFFIXES) and not p.is_symlink() and p.is_file()
        ]
        for path in configs[:MAX_CONFIG_FILES]:
            data = _read_bounded(path)
            if data is None or word.search(data.decode("utf-8", "replace")):
                raise _GiveUp(f"{path.name} names the class")
        if len(configs) > MAX_CONFIG_FILES:
            raise _GiveUp("too many configuration files to read")

    def _in_all(self, node: ast.AST) -> bool:
        current: ast.AST | None = node
        while current is not None and not isinstance(current, (ast.Assign, ast.AugAssign, ast.stmt)):
            current = self.parents.get(id(current))
        if isinstance(current, ast.Assign):
            return any(isinstance(t, ast.Name) and t.id == "__all__" for t in current.targets)
        if isinstance(current, ast.AugAssign):
            return isinstance(current.target, ast.Name) and current.target.id == "__all__"
        return False

    # -- the references ----------------------------------------------------------------------------

    def _scope(self, node: ast.AST) -> ast.AST | None:
        """The function (or lambda) a node is in; None at a module's (or a class body's) level."""
        current = self.parents.get(id(node))
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return current
            if isinstance(current, ast.ClassDef):
                return current
            current = self.parents.get(id(current))
        return None

    def _scopes(self, node: ast.AST) -> list[ast.AST]:
        """The functions (and lambdas) a node is in, innermost first."""
        found: list[ast.AST] = []
        current = self.parents.get(id(node))
        while current is not None:
            if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                found.append(current)
            current = self.parents.get(id(current))
        return found

    def _references(self) -> None:
        for display, tree in self.trees.items():
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        if alias.name in self.classes:
                            self.classes.add(alias.asname or alias.name)
                        elif alias.name in self.instances:
                            self.instances.add(alias.asname or alias.name)
                    continue
                if isinstance(node, ast.Name):
                    name = node.id
                elif isinstance(node, ast.Attribute):
                    name = node.attr  # `module.Mine`, `module.parser`
                else:
                    continue
                scopes = self._scopes(node)
                if name in self.classes or any(name in self.local_classes.get(id(s), ()) for s in scopes):
                    self._class_use(node, display)
                elif name in self.instances or any(name in self.local.get(id(s), ()) for s in scopes):
                    self._instance_use(node, display)
                if (
                    isinstance(node, ast.Name)
                    and node.id == "super"
                    and any(id(s) in self.local or id(s) in self.local_classes for s in scopes)
                ):
                    self._super_use(node, display)

    def _where(self, node: ast.AST, display: str) -> str:
        return f"{display} (line {getattr(node, 'lineno', '?')})"

    def _class_use(self, node: ast.Name | ast.Attribute, display: str) -> None:
        parent = self.parents.get(id(node))
        if isinstance(node, ast.Attribute) and parent is not None and isinstance(node.ctx, ast.Store):
            raise _GiveUp(f"the class is bound by an attribute store in {self._where(node, display)}")
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            return  # the class statement's own name is no reference; a rebinding hides it
        if isinstance(parent, ast.ClassDef) and node in parent.bases:
            if id(parent) in self.members:
                return  # a subclass: followed as one of the family
            raise _GiveUp(f"a subclass through another name in {self._where(node, display)}")
        if isinstance(parent, ast.Call) and parent.func is node:
            self._built(parent, display)
            return
        grandparent = self.parents.get(id(parent)) if parent is not None else None
        if (
            isinstance(parent, ast.Tuple)
            and isinstance(grandparent, ast.Call)
            and self._isinstance_type(grandparent, parent)
        ) or (isinstance(parent, ast.Call) and self._isinstance_type(parent, node)):
            return
        if isinstance(parent, ast.Attribute) and parent.value is node:
            # `Mine.attr`: a class method or a function read from the class (what it hands back unknown)
            raise _GiveUp(f"`{parent.attr}` is read from the class in {self._where(node, display)}")
        raise _GiveUp(f"the class is handed on in {self._where(node, display)}")

    @staticmethod
    def _isinstance_type(call: ast.Call, argument: ast.AST) -> bool:
        return (
            isinstance(call.func, ast.Name)
            and call.func.id in ("isinstance", "issubclass")
            and len(call.args) == 2
            and call.args[1] is argument
        )

    def _built(self, call: ast.Call, display: str) -> None:
        self.constructed = True
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Expr):
            return
        if isinstance(parent, ast.Attribute) and parent.value is call:
            self._attribute(parent, display)
            return
        target = None
        if isinstance(parent, ast.Assign) and parent.value is call and len(parent.targets) == 1:
            target = parent.targets[0]
        elif isinstance(parent, ast.AnnAssign) and parent.value is call:
            target = parent.target
        if isinstance(target, ast.Name) and parent is not None:
            scope = self._scope(parent)
            if scope is None:
                self.instances.add(target.id)
            elif isinstance(scope, ast.ClassDef):
                raise _GiveUp(f"an instance is a class attribute in {self._where(call, display)}")
            else:
                if any(
                    isinstance(n, (ast.Global, ast.Nonlocal)) and target.id in n.names
                    for n in ast.walk(scope)
                ):
                    raise _GiveUp(f"an instance is bound to a global name in {self._where(call, display)}")
                self.local.setdefault(id(scope), set()).add(target.id)
            return
        raise _GiveUp(f"an instance is handed on in {self._where(call, display)}")

    def _instance_use(self, node: ast.Name | ast.Attribute, display: str) -> None:
        if not isinstance(node.ctx, ast.Load):
            if isinstance(node, ast.Attribute):
                raise _GiveUp(f"an instance is stored in an attribute in {self._where(node, display)}")
            return  # the name bound (again)
        parent = self.parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.value is node:
            self._attribute(parent, display)
            return
        raise _GiveUp(f"an instance is handed on in {self._where(node, display)}")

    def _super_use(self, node: ast.Name, display: str) -> None:
        call = self.parents.get(id(node))
        if not isinstance(call, ast.Call) or call.func is not node or call.args or call.keywords:
            raise _GiveUp(f"`super` is used with arguments in {self._where(node, display)}")
        parent = self.parents.get(id(call))
        if not isinstance(parent, ast.Attribute) or parent.value is not call:
            raise _GiveUp(f"`super()` is handed on in {self._where(node, display)}")
        self._attribute(parent, display)

    def _attribute(self, node: ast.Attribute, display: str) -> None:
        if node.attr in ("__class__", "__dict__", "__self__"):
            raise _GiveUp(f"the instance's `{node.attr}` is read in {self._where(node, display)}")
        self.uses.add(node.attr)
        parent = self.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        if isinstance(node.ctx, ast.Load) and not called:
            self.read.add(node.attr)


def _plain_value(value: ast.expr | None) -> bool:
    """A class attribute's value that holds no code: literals and containers of them."""
    if value is None:
        return True
    return all(
        isinstance(
            n, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp, ast.unaryop, ast.Load)
        )
        for n in ast.walk(value)
    )
