"""A lazy, cached view of one upstream version: dotted module path -> `ModuleInfo`, loaded on demand.

Only the modules the downstream reaches (and what resolving them needs) are ever parsed. Each parsed
module is stored as JSON under the cache, keyed by a hash of its source and the model version, so a
warm run reads a few small files instead of running griffe.
"""

from __future__ import annotations

import ast
import gc
import hashlib
import json
import logging
import os
import re
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.core.wording import first_line
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.safe_read import BoundedReadError, read_bounded
from apidrift.auditor.upstream.model import MODEL_VERSION, AliasInfo, FunctionInfo, ModuleInfo

log = logging.getLogger(__name__)

_ALL_START = re.compile(r"^__all__\s*=\s*(?=[\[(])", re.M)
_ALL_MENTION = re.compile(r"\b__all__\b")


def literal_all(text: str) -> tuple[str, ...] | None:
    """`__all__ = [...]` (or a tuple) of a module's text at column 0, read as a literal, if it is the
    file's only mention of `__all__` (no `__all__ +=`, `.append`, second binding): the names a star
    import of the module takes. The text need not be Python (Cython, a template): only that statement
    is parsed."""
    starts = list(_ALL_START.finditer(text))
    if len(starts) != 1 or len(_ALL_MENTION.findall(text)) != 1:
        return None
    start = starts[0].end()
    closing = {"[": "]", "(": ")"}[text[start]]
    end = text.find(closing, start)
    if end < 0 or end - start > 100_000:
        return None
    rest = text[end + 1 :].split("\n", 1)[0].strip()
    if rest and not rest.startswith("#"):
        return None  # `__all__ = [...] + other`: more than the literal
    try:
        value = ast.literal_eval(text[start : end + 1])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)


@dataclass(frozen=True)
class ImportFacts:
    """A module's `import_fails` and `own_imports` (see upstream/analyses/needs.py)."""

    import_fails: dict | None
    own_imports: tuple[str, ...]


MAX_MODULE_BYTES = 5 * 1024 * 1024  # larger upstream modules are generated code: not parsed, and said so


@dataclass
class LoadStats:
    parsed: int = 0
    from_cache: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # module -> why it could not be read


class ApiIndex:
    def __init__(
        self,
        root: Path,
        import_names: Iterable[str],
        *,
        name: str = "",
        version: str | None = None,
        compiled_modules: Iterable[str] = (),
        cache_dir: Path | None = None,
        absence_is_evidence: bool = True,
    ) -> None:
        self.root = root
        self.import_names = frozenset(import_names)
        self.name = name
        self.version = version
        self.compiled_modules = frozenset(compiled_modules)
        self.cache_dir = cache_dir
        # False for Python's standard library (stubs): a name missing here is evidence only where the
        # older version has it (see `sources.stdlib`).
        self.absence_is_evidence = absence_is_evidence
        self.stats = LoadStats()
        self._modules: dict[str, ModuleInfo | None] = {}
        self._import_facts: dict[str, ImportFacts | None] = {}
        self._cython: dict[str, Path | None] = {}
        self._attribute_stores: dict[str, list[str]] | None = (
            None  # name -> files (relative) storing `x.name = ...`
        )
        self._assigned: dict[tuple[str, str], bool] = {}
        # Every identifier the package's code spells, with how many times a `def` of it appears; None
        # when some lookup by a computed name (`getattr(obj, name)`) may reach any method, or the
        # package is too large to read (see `may_call`).
        self._spelled: tuple[dict[bytes, int], dict[bytes, int], bool] | bool | None = False
        self._hookspecs: HookSpecs | bool | None = False
        self.touched: set[str] | None = None  # kept across audits (`kept`): the modules this audit asked for
        self._files: dict[str, Path | None] = {}  # dotted -> `module_file`
        self._real_root: Path | bool | None = None  # the root, links resolved (False: it cannot be)

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}" if self.version else self.name

    def owns(self, dotted: str) -> bool:
        """Whether a dotted path lies in this upstream's import names."""
        return dotted.split(".")[0] in self.import_names

    def is_compiled(self, dotted: str) -> bool:
        """A compiled extension module: a `.so`/`.pyd` file, or (in an sdist) a Cython source with no
        Python source or stub of the same name (`scipy/linalg/_decomp_update.pyx.in`)."""
        if dotted in self.compiled_modules:
            return True
        return (
            self.owns(dotted) and self._cython_file(dotted) is not None and self.module_file(dotted) is None
        )

    def _cython_file(self, dotted: str) -> Path | None:
        if dotted not in self._cython:
            found = None
            parts = dotted.split(".")
            if all(part.isidentifier() for part in parts):
                base = self.root.joinpath(*parts)
                for suffix in (".pyx", ".pyx.in"):
                    candidate = base.parent / f"{base.name}{suffix}"
                    try:
                        if candidate.is_file() and not candidate.is_symlink():
                            found = candidate
                            break
                    except OSError:
                        continue
            self._cython[dotted] = found
        return self._cython[dotted]

    def cython_exports(self, dotted: str) -> tuple[str, ...] | None:
        """The `__all__` a Cython source gives its compiled module, where the file binds it once, to a
        literal list or tuple of strings, and changes it nowhere else; None when not known."""
        path = self._cython_file(dotted)
        if path is None:
            return None
        try:
            text = self._read(path).decode("utf-8", "replace")
        except (BoundedReadError, OSError):
            return None
        return literal_all(text)

    def _read(self, path: Path) -> bytes:
        """A file of the tree, at most MAX_MODULE_BYTES, refused when its links lead out of the tree
        (`read_bounded(..., within=root)`, the root resolved once instead of at every read)."""
        if self._real_root is None:
            try:
                self._real_root = self.root.resolve()
            except (OSError, RuntimeError):
                self._real_root = False
        try:
            inside = isinstance(self._real_root, Path) and path.resolve().is_relative_to(self._real_root)
        except (OSError, RuntimeError):  # a symlink loop, a name too long...
            inside = False
        if not inside:
            raise BoundedReadError("a link out of its tree", path)
        return read_bounded(path, MAX_MODULE_BYTES)

    def module_file(self, dotted: str) -> Path | None:
        """The file of a module, stubs first as type checkers do; a namespace package is its folder."""
        if dotted not in self._files:
            self._files[dotted] = self._module_file(dotted)
        return self._files[dotted]

    def _module_file(self, dotted: str) -> Path | None:
        parts = dotted.split(".")
        if not all(part.isidentifier() for part in parts):
            return None  # never a path outside the root (`..`, `/`) nor a file that is no module
        base = self.root.joinpath(*parts)
        try:
            for candidate in (
                base.with_suffix(".pyi"),
                base.with_suffix(".py"),
                base / "__init__.pyi",
                base / "__init__.py",
            ):
                if candidate.is_file():
                    return candidate
            if base.is_dir() and _holds_python(base):
                return base  # namespace package (PEP 420)
        except OSError as error:  # an unreadable folder, a name too long...
            log.debug("cannot look for module %s: %s", dotted, error)
        return None

    def source(self, dotted: str) -> tuple[str, bool] | None:
        """The Python source of a module of this upstream (not its stub: the code that runs) and whether
        it is a package; None when there is none, it is too large or does not decode."""
        if not self.owns(dotted) or not all(part.isidentifier() for part in dotted.split(".")):
            return None
        base = self.root.joinpath(*dotted.split("."))
        for candidate, package in ((base.with_suffix(".py"), False), (base / "__init__.py", True)):
            try:
                if not candidate.is_file():
                    continue
                with open(candidate, "rb") as handle:
                    data = handle.read(MAX_MODULE_BYTES + 1)
            except OSError:
                return None
            if len(data) > MAX_MODULE_BYTES:
                return None
            try:
                return decode_source(data), package
            except SourceDecodeError:
                return None
        return None

    def assigned_elsewhere(self, dotted: str, name: str) -> bool:
        """Whether code of this upstream stores `name` on the module `dotted` from outside it
        (`from django.core import mail` then `mail.outbox = []` in a setup function): the module's own
        namespace does not show it, yet it may be there at run time. Read from the text of every
        module outside test folders (bounded in files and bytes), and the AST of those that write
        `.name =`; what cannot be read within the bounds counts as a store (never a certain miss)."""
        key = (dotted, name)
        if key not in self._assigned:
            self._assigned[key] = self._stores_attribute(dotted, name)
        return self._assigned[key]

    def _stores_attribute(self, dotted: str, name: str) -> bool:
        stores = self._attribute_store_files()
        if stores is None:
            return True  # too large to read: unknown
        for relative in stores.get(name, ()):
            path = self.root / relative
            try:
                tree = ast.parse(self._read(path))
            except (BoundedReadError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                return True
            if _stores_on_module(tree, dotted, name):
                return True
        return False

    def _attribute_store_files(self) -> dict[str, list[str]] | None:
        if self._attribute_stores is not None:
            return self._attribute_stores
        cached = self._store_cache()
        if cached is not None:
            try:
                data = json.loads(cached.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    self._attribute_stores = data
                    return data
            except (OSError, ValueError, AttributeError, TypeError):
                pass  # absent or torn: read the tree again
        found = self._read_attribute_stores()
        if found is not None and cached is not None:
            try:
                atomic_write_text(cached, json.dumps(found))
            except (OSError, ValueError) as error:
                log.debug("cannot write the attribute-store index: %s", error)
        self._attribute_stores = found
        return found

    def _store_cache(self) -> Path | None:
        """Where the attribute-store index of a release tree kept in the cache is kept (such a tree is
        never changed); None for a folder of the user's, read anew each run."""
        return self.tree_cache("stores2", "stores")

    def tree_cache(self, what: str, suffix: str) -> Path | None:
        """Where an index `what` read from the text of a release tree kept in the cache is kept (such a
        tree is never changed); None for a folder of the user's, read anew each run."""
        if self.cache_dir is None:
            return None
        try:
            sources = (self.cache_dir.parent / "sources").resolve()
            if not self.root.resolve().is_relative_to(sources):
                return None
        except OSError:
            return None
        key = hashlib.sha256(f"{MODEL_VERSION}\0{what}\0{self.root.resolve()}".encode()).hexdigest()
        return self.cache_dir / key[:2] / f"{key}.{suffix}.json"

    def _read_attribute_stores(self) -> dict[str, list[str]] | None:
        found: dict[str, list[str]] = {}
        files: list[tuple[str, Path]] = []
        for top in sorted(self.import_names):
            if top.isidentifier():
                files += walk_modules(self.root, self.root / top, (top,), _MAX_STORE_FILES + 1 - len(files),
                                      skipped=_TEST_FOLDERS, max_depth=64)  # fmt: skip
        if len(files) > _MAX_STORE_FILES:
            return None
        total = 0
        # `walk_modules` follows no folder through a link, and a file that is a link is not read
        # (`follow_symlinks=False`): every file read lies in the tree, without resolving each path
        # (12 `lstat`s a file).
        for _, path in files:
            if path.suffix != ".py" or path.name == "conftest.py" or path.name.startswith("test_"):
                continue
            try:
                data = read_bounded(path, MAX_MODULE_BYTES, follow_symlinks=False)
            except (BoundedReadError, OSError, ValueError):
                continue
            total += len(data)
            if total > _MAX_STORE_BYTES:
                return None
            where = path.relative_to(self.root).as_posix()
            for stored in set(_ATTRIBUTE_STORE.findall(data)):
                found.setdefault(stored.decode("ascii"), []).append(where)
        return found

    def defines(self, name: str) -> bool | None:
        """Whether the package's own code (outside test folders) has a `def name(` line; None where its
        files could not all be read (bounds)."""
        if self._spelled is False:
            self._spelled = self._read_spelled()
        if not isinstance(self._spelled, tuple):
            return None
        return self._spelled[1].get(name.encode("ascii", "replace"), 0) > 0

    def may_call(self, name: str) -> bool:
        """Whether the package's own code (outside test folders) may call a method of this name on an
        object: False only when no file spells the name except in `def name(` lines, and no file looks
        an attribute up by a computed name (`getattr(x, var)`, `methodcaller`, `attrgetter`, `vars()`,
        `__dict__`, `__getattribute__`): then no code of the upstream names it, so none calls it."""
        if self._spelled is False:
            self._spelled = self._read_spelled()
        if not isinstance(self._spelled, tuple):
            return True
        words, defs, computed = self._spelled
        if computed:
            return True
        key = name.encode("ascii", "replace")
        return words.get(key, 0) > defs.get(key, 0)

    def _own_files(self) -> list[tuple[str, Path]] | None:
        """The package's own `.py` files outside test folders; None over the bound or with compiled
        modules (compiled code is not read: it may call or declare anything)."""
        files: list[tuple[str, Path]] = []
        for top in sorted(self.import_names):
            if top.isidentifier():
                files += walk_modules(self.root, self.root / top, (top,), _MAX_STORE_FILES + 1 - len(files),
                                      skipped=_TEST_FOLDERS, max_depth=64)  # fmt: skip
        return None if len(files) > _MAX_STORE_FILES or self.compiled_modules else files

    def _read_spelled(self) -> tuple[dict[bytes, int], dict[bytes, int], bool] | None:
        files = self._own_files()
        if files is None:
            return None  # compiled code is not read: it may call anything
        sources = {path.with_suffix("") for _, path in files if path.suffix == ".py"}
        if any(path.suffix == ".pyi" and path.with_suffix("") not in sources for _, path in files):
            return None  # a stub without its source: the code that runs is not read
        words: dict[bytes, int] = {}
        defs: dict[bytes, int] = {}
        computed = False  # a lookup by a computed name somewhere: any method may be called
        try:
            for _, data in _python_sources(files):
                computed = computed or _computed_lookup(data)
                for word in _WORD.findall(data):
                    words[word] = words.get(word, 0) + 1
                for word in _DEF.findall(data):
                    defs[word] = defs.get(word, 0) + 1
        except _Unreadable:
            return None
        return words, defs, computed

    def hookspecs(self) -> HookSpecs | None:
        """The pluggy hook specifications the package declares (see analyses/hookspecs.py), by project
        and name; None when they cannot all be read (too many files or bytes, compiled modules, more
        marker or spec modules than MAX_HOOK_MODULES): a name missing there is no evidence then."""
        if self._hookspecs is False:
            self._hookspecs = self._read_hookspecs()
        return self._hookspecs if isinstance(self._hookspecs, HookSpecs) else None

    def _read_hookspecs(self) -> HookSpecs | None:
        files = self._own_files()
        if files is None:
            return None
        try:
            texts = {d: data for d, data in _python_sources(files) if b"Marker" in data or b"hook" in data}
        except _Unreadable:
            return None
        marker_modules = [d for d, t in texts.items() if b"HookspecMarker" in t or b"HookimplMarker" in t]
        groups = {g.decode("ascii") for t in texts.values() for g in _ENTRY_GROUP.findall(t)}
        if len(marker_modules) > MAX_HOOK_MODULES:
            return None
        markers: dict[str, str] = {}  # canonical path of a spec marker -> its project
        found = HookSpecs(entry_groups=groups)
        for dotted in marker_modules:
            info = self.module(dotted)
            facts = info.hookspecs if info is not None else None
            for marker in facts["markers"] if facts else ():
                project = marker["project"] or self._string_value(marker["project_path"])
                if project is None:
                    found.unread_projects = True
                    continue
                if marker["kind"] == "spec":
                    markers[f"{dotted}.{marker['name']}"] = project
        names = {path.rpartition(".")[2].encode() for path in markers}
        spec_modules = [d for d, t in texts.items() if any(b"@" + n in t for n in names)]
        if len(spec_modules) > MAX_HOOK_MODULES:
            return None
        managers = [d for d, t in texts.items() if b"parse_hookimpl_opts" in t or b"parse_hookspec_opts" in t]
        if len(managers) > MAX_HOOK_MODULES:
            return None
        spec_prefixes: set[str] = set()
        for dotted in managers:  # the plugin manager's subclass: which names it takes by their prefix
            info = self.module(dotted)
            if info is not None and info.hookspecs:
                spec_prefixes |= set(info.hookspecs["spec_prefixes"])
                found.impl_prefixes |= set(info.hookspecs["impl_prefixes"])
        for dotted in spec_modules:
            info = self.module(dotted)
            facts = info.hookspecs if info is not None else None
            if not facts:
                continue
            decorators = {s["decorator_path"]: self._canonical(s["decorator_path"]) for s in facts["specs"]}
            projects = {markers[d] for d in decorators.values() if d in markers}
            for spec in facts["specs"]:
                if decorators[spec["decorator_path"]] not in markers:
                    continue
                project = markers[decorators[spec["decorator_path"]]]
                warn = spec["warn"] or (self._string_value(spec["warn_path"], message=True) or "")
                found.specs[(project, spec["name"])] = {
                    **spec,
                    "warn": warn,
                    "module": dotted,
                    "project": project,
                }
            if len(projects) != 1:
                continue
            project = next(iter(projects))
            for name, member in info.members.items() if info is not None else ():
                if (
                    name.startswith(tuple(spec_prefixes))
                    and (project, name) not in found.specs
                    and (not isinstance(member, FunctionInfo) or member.decorators)
                ):
                    # a name of a spec module spelled like a hook but not read as a spec (a decorator
                    # of another spelling, `@pytest.hookspec`; a name bound otherwise): whether the
                    # plugin manager takes it as one is not known, so no hook of that name is missing
                    found.unread.add((project, name))
                    continue
                # pytest's `parse_hookspec_opts` takes an undecorated `pytest_*` function of a spec module
                if (
                    isinstance(member, FunctionInfo)
                    and name.startswith(tuple(spec_prefixes))
                    and (project, name) not in found.specs
                    and not member.decorators
                ):
                    params = [
                        p.name
                        for p in member.signature.parameters
                        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
                    ]
                    found.specs[(project, name)] = {
                        "name": name, "decorator": "", "cls": "", "lineno": member.lineno, "params": params,
                        "firstresult": False, "historic": False, "warn": "", "warn_args": {},
                        "module": dotted, "project": project,
                    }  # fmt: skip
        return found

    def _canonical(self, path: str) -> str:
        """The path an imported name stands for, through the imports that re-export it (at most 8)."""
        for _ in range(8):
            module, _, name = path.rpartition(".")
            info = self.module(module) if module and self.owns(module) else None
            member = info.members.get(name) if info is not None else None
            if not isinstance(member, AliasInfo):
                return path
            path = member.target
        return path

    def _string_value(self, path: str, message: bool = False) -> str | None:
        """The literal string a module-level name holds (`NAME = "tox"`), or with `message`, the literal
        message of the warning it holds (`W = PytestRemovedIn8Warning("...")`); None when not literal."""
        if not path or path.startswith("?"):
            return None
        module, _, name = self._canonical(path).rpartition(".")
        info = self.module(module) if self.owns(module) else None
        member = info.members.get(name) if info is not None else None
        value = getattr(member, "value", None)
        if not isinstance(value, str):
            return None
        # lazy: the analyses package loads griffe; only read where a hook name needs it
        from apidrift.auditor.upstream.analyses.hookspecs import message_of

        if message:
            return message_of(value)
        try:
            literal = ast.literal_eval(value)
        except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
            return None
        return literal if isinstance(literal, str) else None

    def module(self, dotted: str) -> ModuleInfo | None:
        """The module, parsed or from the cache; None when no such module exists in the sources."""
        if self.touched is not None:
            self.touched.add(dotted)
        if dotted in self._modules:
            return self._modules[dotted]
        info = self._load(dotted) if self.owns(dotted) else None
        self._modules[dotted] = info
        return info

    def import_facts(self, dotted: str) -> ImportFacts | None:
        """What importing the module runs that the import-failure check asks about (whether its top
        level raises, and the modules of its own package it imports unconditionally), without loading
        its model: a module already loaded answers from it, another (or one the loader could not read)
        from one `ast` parse of the part of its file that can hold them (`facts_prefix`), with the
        loader's own analyses, so both answer alike. None when no such module exists."""
        info = self._modules.get(dotted)
        if info is not None and dotted not in self.stats.failed:
            return ImportFacts(info.import_fails, info.own_imports)
        if dotted in self._import_facts:
            return self._import_facts[dotted]
        facts: ImportFacts | None = None
        filepath = self.module_file(dotted) if self.owns(dotted) else None
        if filepath is not None:
            facts = ImportFacts(None, ())
            if filepath.suffix == ".py":  # the loader reads these facts from Python source only
                facts = self._read_import_facts(dotted, filepath)
        self._import_facts[dotted] = facts
        return facts

    def _read_import_facts(self, dotted: str, filepath: Path) -> ImportFacts:
        """One module's import facts, from the cache (keyed by the file's content) or one `ast` parse."""
        try:
            data = self._read(filepath)
        except (BoundedReadError, OSError, ValueError):
            return ImportFacts(None, ())
        key = hashlib.sha256(
            f"imports2\0{MODEL_VERSION}\0{dotted}\0{filepath.name}\0".encode() + data
        ).hexdigest()
        where = self.cache_dir / "imports" / key[:2] / f"{key}.json" if self.cache_dir is not None else None
        if where is not None:
            try:
                cached = json.loads(where.read_text(encoding="utf-8"))
                return ImportFacts(cached["fails"], tuple(cached["imports"]))
            except FileNotFoundError:
                pass
            except Exception as error:  # a torn or stale entry: read the module again
                log.debug("ignoring bad import-facts cache entry %s: %s", where, error)
        # lazy: the analyses package loads griffe (0.13 s); a warm run answers from the cache
        from apidrift.auditor.upstream.analyses.needs import facts_prefix, import_failure, own_imports

        try:  # the part of the file that can hold these facts first (a tenth of vLLM's bytes)
            tree = ast.parse(facts_prefix(data))
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            try:
                tree = ast.parse(data)
            except (ValueError, SyntaxError, RecursionError, MemoryError):
                return ImportFacts(None, ())
        package = filepath.stem == "__init__"
        facts = ImportFacts(import_failure(tree, dotted, package), tuple(own_imports(tree, dotted, package)))
        if where is not None:
            try:
                atomic_write_text(
                    where, json.dumps({"fails": facts.import_fails, "imports": list(facts.own_imports)})
                )
            except (OSError, TypeError, ValueError) as error:  # a read-only cache must not stop the audit
                log.debug("cannot write import-facts cache entry: %s", error)
        return facts

    def loaded_modules(self) -> list[str]:
        """The modules asked for so far (loaded, or known absent)."""
        return list(self._modules)

    def _load(self, dotted: str) -> ModuleInfo | None:
        filepath = self.module_file(dotted)
        if filepath is None:
            return None
        relative = filepath.relative_to(self.root).as_posix()
        if filepath.is_dir():  # a namespace package (PEP 420)
            return ModuleInfo(path=dotted, filepath=relative, is_package=True)
        # A module that cannot be read or parsed has names that are unknowable, not missing: it is kept
        # as a dynamic namespace (nothing in it is reported) and the reason goes to `stats.failed`.
        unknowable = ModuleInfo(
            path=dotted,
            filepath=relative,
            is_package=filepath.stem == "__init__",
            dynamic_namespace=True,
            installs_modules=True,
        )
        try:  # a regular file inside the tree: never a link out of it, a FIFO or a device
            data = self._read(filepath)
        except BoundedReadError as error:
            if str(error.strerror).startswith("larger than"):
                self.stats.failed[dotted] = f"larger than {MAX_MODULE_BYTES // 1024 // 1024} MiB, not parsed"
            else:
                self.stats.failed[dotted] = f"unreadable: {error.strerror}"
            return unknowable
        except OSError as error:
            self.stats.failed[dotted] = f"unreadable: {error.strerror or error}"
            return unknowable
        key_data = data
        if (
            filepath.suffix == ".pyi"
        ):  # the loader reads the source beside a stub too (its names, defs, `__getattr__`)
            beside = filepath.with_suffix(".py")
            try:
                key_data += b"\0" + self._read(beside)
            except (BoundedReadError, OSError):
                pass  # none, or not readable: the loader finds none either
        key = hashlib.sha256(f"{MODEL_VERSION}\0{dotted}\0{filepath.name}\0".encode() + key_data).hexdigest()
        cached = self._read_cache(key)
        if cached is not None:
            self.stats.from_cache += 1
            return cached
        # lazy: griffe (0.13 s) loads only on a model-cache miss
        from apidrift.auditor.upstream.loader import (
            LoadBudgetExceeded,
            load_module,
        )  # griffe: on a cache miss only

        try:
            with _collector_paused():
                info = load_module(dotted, filepath, decode_source(data), self.root)
        except SourceDecodeError as error:
            self.stats.failed[dotted] = f"cannot decode: {error}"
            return unknowable
        except LoadBudgetExceeded as error:  # names unknown, counted as "load-budget" by the resolver
            self.stats.failed[dotted] = str(error)
            return unknowable
        except (RecursionError, MemoryError):  # CPython's parser refuses pathological nesting this way
            self.stats.failed[dotted] = "nesting too deep to parse"
            return unknowable
        except Exception as error:  # Python 2, null bytes, or a griffe failure: one module, not the audit
            first = first_line(error, default="")
            self.stats.failed[dotted] = (
                f"{type(error).__name__}: {first[:200]}" if first else type(error).__name__
            )
            return unknowable
        self.stats.parsed += 1
        self._write_cache(key, info)
        return info

    def _read_cache(self, key: str) -> ModuleInfo | None:
        if self.cache_dir is None:
            return None
        path = self.cache_dir / key[:2] / f"{key}.json"
        try:
            return ModuleInfo.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except Exception as error:  # a torn, stale or corrupted entry (or not a file at all): rebuild it
            log.debug("ignoring bad API cache entry %s: %s", path, error)
            return None

    def _write_cache(self, key: str, info: ModuleInfo) -> None:
        if self.cache_dir is None:
            return

        try:
            atomic_write_text(self.cache_dir / key[:2] / f"{key}.json", json.dumps(info.as_dict()))
        except OSError as error:  # a read-only cache must not stop the audit
            log.debug("cannot write API cache entry: %s", error)


# `<something other than self/cls>.name = ...` (not `==`), as bytes; its AST decides.
_ATTRIBUTE_STORE = re.compile(rb"\.([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[^=]")
_TEST_FOLDERS = frozenset({"tests", "testing", "__pycache__"})
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_DEF = re.compile(rb"\bdef[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
# An attribute looked up by a name the code computes: any method may be called that way.
_COMPUTED_LOOKUP = re.compile(rb"methodcaller|attrgetter|__getattribute__|__dict__|\bvars\s*\(|\bdir\s*\(")
_GETATTR = re.compile(rb"\bgetattr\s*\(")
# `getattr(obj, "name"...`: the rest of the line after `getattr(` names the attribute by a literal.
_LITERAL_GETATTR = re.compile(rb"[^,\n]*,\s*[\"'][A-Za-z0-9_]*[\"']\s*[,)]")


def _computed_lookup(data: bytes) -> bool:
    if _COMPUTED_LOOKUP.search(data):
        return True
    return any(_LITERAL_GETATTR.match(data, m.end()) is None for m in _GETATTR.finditer(data))


_MAX_STORE_FILES = 20_000
MAX_HOOK_MODULES = 64  # modules holding hook markers, and modules holding specs, read at most


@dataclass
class HookSpecs:
    """The hook specifications an upstream declares: (project, name) -> the spec (analyses/hookspecs.py,
    with "module" and "project"), and the prefixes its plugin manager takes every function of a plugin
    with as a hook implementation (pytest's `pytest_`)."""

    specs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    impl_prefixes: set[str] = field(default_factory=set)
    unread_projects: bool = False  # a marker whose project is not a literal: its specs are not known
    # names of spec modules spelled like hooks that were not read as specs (see `hookspecs`)
    unread: set[tuple[str, str]] = field(default_factory=set)
    # the entry point groups the upstream loads plugins from (`load_setuptools_entrypoints("pytest11")`)
    entry_groups: set[str] = field(default_factory=set)


_ENTRY_GROUP = re.compile(rb"load_setuptools_entrypoints\(\s*[\"']([A-Za-z0-9_.-]+)[\"']")
_MAX_STORE_BYTES = 256 * 1024 * 1024


class _Unreadable(Exception):
    """A file of the package could not be read, or all of them are too large (see _python_sources)."""


def _python_sources(files: list[tuple[str, Path]]) -> Iterator[tuple[str, bytes]]:
    """The bytes of the `.py` files among `files`, by module, one at a time; raises _Unreadable where one
    cannot be read (a file that is a link, in the tree or out of it, is not read: its code is unread) or
    they add up to more than _MAX_STORE_BYTES."""
    total = 0
    for dotted, path in files:
        if path.suffix != ".py":
            continue
        try:
            data = read_bounded(path, MAX_MODULE_BYTES, follow_symlinks=False)
        except (BoundedReadError, OSError, ValueError) as error:
            raise _Unreadable(str(path)) from error
        total += len(data)
        if total > _MAX_STORE_BYTES:
            raise _Unreadable("too many bytes")
        yield dotted, data


def _stores_on_module(tree: ast.Module, dotted: str, name: str) -> bool:
    """Whether the file stores `name` on a name it binds to the module `dotted` by an import
    (`import a.b as m`, `from a import b as m`, `import a.b` then `a.b.name = ...`)."""
    parent, _, last = dotted.rpartition(".")
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == dotted:
                    aliases.add(alias.asname or dotted)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module == parent:
            for alias in node.names:
                if alias.name == last:
                    aliases.add(alias.asname or last)
    if not aliases:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr == name:
            if ast.unparse(node.value) in aliases:
                return True
    return False


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for one module's load: the load allocates a few hundred thousand
    objects (griffe's tree, the AST, the analyses' tables), each allocation counting towards a
    collection that walks every object alive (all the models loaded so far) and frees nothing of the
    load's own. The load's garbage is collected after it. Flagship cold: 0.2 of 1.9 CPU-s (4 full
    collections down to 1)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def walk_modules(
    root: Path, top: Path, prefix: tuple[str, ...], limit: int, *, skipped: frozenset[str], max_depth: int
) -> list[tuple[str, Path]]:
    """The `.py`/`.pyi` modules under `top`, without recursion: folders never followed through links,
    files only when regular and (through a link) still inside `root`; sorted by path."""
    found: list[tuple[Path, str]] = []
    try:
        top_mode = os.lstat(top).st_mode
    except OSError:
        return []
    if not stat.S_ISDIR(top_mode):
        return []
    stack: list[tuple[Path, tuple[str, ...]]] = [(top, prefix)]
    while stack and len(found) < limit:
        folder, parts = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name.isidentifier() and entry.name not in skipped and len(parts) < max_depth:
                        stack.append((Path(entry.path), (*parts, entry.name)))
                    continue
                stem, dot, suffix = entry.name.rpartition(".")
                if not dot or suffix not in ("py", "pyi") or not stem.isidentifier():
                    continue
                if entry.is_symlink():
                    target = Path(entry.path)
                    if not target.resolve().is_relative_to(root.resolve()) or not target.is_file():
                        continue
                elif not entry.is_file(follow_symlinks=False):
                    continue  # a FIFO, a device, a socket
            except (OSError, RuntimeError):
                continue
            dotted = ".".join(parts if stem == "__init__" else (*parts, stem))
            found.append((Path(entry.path), dotted))
    found.sort(key=lambda item: item[0])
    return [(dotted, path) for path, dotted in found[:limit]]


def _holds_python(folder: Path) -> bool:
    """A folder with Python files or sub-folders: a namespace package (PEP 420)."""
    with os.scandir(folder) as entries:  # closed even when the search stops early
        return any(e.name.endswith((".py", ".pyi")) or e.is_dir() for e in entries)
