"""Locating sources: a spec string -> a `SourceTree`, a local folder of .py/.pyi files plus the distribution's metadata.

This is the only stage that touches the network (through `index.IndexClient`). Nothing read here is
imported or executed: metadata comes from METADATA/PKG-INFO/top_level.txt/RECORD/pyproject.toml files,
and installed distributions are read through `importlib.metadata` without importing them.
"""

from __future__ import annotations

import configparser
import csv
import hashlib
import importlib.metadata
import io
import os
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from email.parser import HeaderParser
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.wording import first_line
from apidrift.auditor.safe_read import loads_json, loads_toml, read_bounded
from apidrift.auditor.sources.archive import (
    Extraction,
    ExtractLimits,
    archive_kind,
    compiled_module_name,
    extract_archive,
    read_extraction,
)
from apidrift.auditor.sources.index_client import (
    IndexClient,
    classify_filename,
    remove_download,
    select_release,
)
from apidrift.auditor.sources.specs import (
    DirectorySpec,
    IndexSpec,
    NameSpec,
    PathSpec,
    PythonSpec,
    Role,
    SourceError,
    SpecError,
    normalize_name,
    parse_spec,
)
from apidrift.auditor.sources.written_for import Environment

__all__ = ["SourceError", "SourceTree", "SpecError", "locate"]

Origin = Literal["index", "path", "installed", "directory"]

# Folders and modules that are never a distribution's import names when we have to find them by looking.
_NOT_PACKAGES = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "benchmark", "build",
     "dist", "scripts", "site-packages", "node_modules", "venv", "env", "htmlcov", "__pycache__"}
)  # fmt: skip
_NOT_MODULES = frozenset(
    {"setup", "conftest", "noxfile", "tasks", "fabfile", "versioneer", "dodo", "runtests", "run_tests",
     "__init__", "__main__"}
)  # fmt: skip
_CANDIDATE_SUBROOTS = ("src", "lib", "python")  # where sdists and projects keep their packages
_MAX_METADATA_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class SourceTree:
    name: str  # distribution name as published
    version: str | None
    root: Path  # the importable packages are directly under it
    import_names: tuple[str, ...]  # top-level import names this distribution provides
    origin: str  # "index", "path", "installed", "directory"
    location: str  # archive file name, folder, or installed location
    sha256: str | None  # of the archive
    compiled_modules: frozenset[str]  # dotted names of compiled extension modules found
    requires: tuple[str, ...]  # the distribution's Requires-Dist lines, verbatim
    note: str | None = None
    # The folder every reported path is relative to: a local project's folder holding pyproject.toml
    # (else the folder given), a release's own top folder; `root` or a folder above it. None: `root`.
    project_root: Path | None = None
    requires_python: str | None = None  # the distribution's Requires-Python (`>=3.9`), verbatim
    # Whether a name this tree lacks is evidence of its absence. Not for Python's standard library
    # (stubs): there only a name an older version has and this one lacks is evidence.
    absence_is_evidence: bool = True

    @property
    def path_base(self) -> Path:
        return self.project_root or self.root


def locate(
    spec: str,
    *,
    role: Role,
    cache: Cache,
    index_url: str | None = None,
    offline: bool = False,
    max_download_bytes: int | None = None,
    extract_limits: ExtractLimits | None = None,
    environment: Environment | None = None,
) -> SourceTree:
    """Resolve `spec` for `role` to a local source tree; raise `SpecError` or `SourceError` with a one-line message.

    A bare upstream `NAME` is the version installed in the downstream's `environment` (`--python`, or an
    active virtualenv that is not apidrift's), else the latest release on the index; never the version
    apidrift itself happens to run with. Nothing found is imported or executed. A cache root that cannot be written is not an error: new
    entries then go to a temporary folder, and the first tree located carries a note that says so.
    """
    parsed = parse_spec(spec, role)
    ctx = _Context(cache, index_url, offline, max_download_bytes, extract_limits or ExtractLimits.from_env())
    reported = cache.note
    cache.check_writable()
    try:
        if isinstance(parsed, PythonSpec):
            tree = _from_python(parsed, ctx)
        elif isinstance(parsed, IndexSpec):
            tree = _from_index(parsed.name, parsed, ctx)
        elif isinstance(parsed, PathSpec):
            tree = _from_path(parsed, ctx)
        elif isinstance(parsed, DirectorySpec):
            tree = _from_directory(parsed.path, origin="directory")
        else:
            tree = _from_name(parsed, role, ctx, environment)
    except OSError as exc:  # a folder that vanished, a name too long, a disk that is full...
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        raise SourceError(f"cannot read {spec!r}: {exc.strerror or first_line(exc)}{where}") from None
    if cache.note and cache.note != reported:
        tree = _with_note(tree, cache.note)
    return tree


@dataclass(frozen=True)
class _Context:
    cache: Cache
    index_url: str | None
    offline: bool
    max_download_bytes: int | None
    limits: ExtractLimits

    def client(self) -> IndexClient:
        return IndexClient(
            self.cache, self.index_url, offline=self.offline, max_download_bytes=self.max_download_bytes
        )


# --- bare names ----------------------------------------------------------------------------------


def _from_name(spec: NameSpec, role: Role, ctx: _Context, environment: Environment | None) -> SourceTree:
    name = spec.name
    if role == "upstream":
        # What `--from` infers from, in the same order: the downstream's own environment, and never
        # apidrift's (what apidrift depends on says nothing about the downstream); else the latest release.
        if environment is not None:
            tree = _from_installed(name, environment.site_dirs)
            if tree is not None:
                return _with_note(
                    tree, f"{name}: using the version installed in {environment.label}, {tree.version}"
                )
            why = f"{name} is not installed in {environment.label}"
        else:
            why = f"{name}: no version given, and no downstream environment (--python PATH or an active virtualenv)"
        tree = _from_index(name, None, ctx)
        return _with_note(tree, f"{why}: using the latest release on the index, {tree.version}")
    folder = Path(name)
    if folder.is_dir():
        tree = _from_directory(folder, origin="directory")
        return _with_note(tree, f"{name} is a local folder: using it ({folder.resolve()})")
    tree = _from_installed(name)
    if tree is not None:
        return _with_note(
            tree, f"{name} is not a local folder: using the installed distribution, {tree.version}"
        )
    tree = _from_index(name, None, ctx)
    return _with_note(
        tree,
        f"{name} is neither a local folder nor installed: using the latest release on the index, {tree.version}",
    )


def _with_note(tree: SourceTree, note: str) -> SourceTree:
    return replace(tree, note=f"{note}; {tree.note}" if tree.note else note)


# --- Python's standard library ------------------------------------------------------------------


def _from_python(spec: PythonSpec, ctx: _Context) -> SourceTree:
    """The standard library of one version of Python: typeshed's stubs from the pinned carrier
    release (fetched and cached like any release), materialized for that version (see `stdlib`)."""
    # lazy: typeshed's version tables (18 ms) load only for a `python==X` spec
    from apidrift.auditor.sources import stdlib

    asked = spec.version or stdlib.running_python()
    version = stdlib.python_version(asked)
    carrier_name, carrier_version = stdlib.TYPESHED_CARRIER
    pin = IndexSpec(carrier_name, SpecifierSet(f"=={carrier_version}"), f"{carrier_name}=={carrier_version}")
    try:
        carrier = _from_index(carrier_name, pin, ctx)
    except SourceError as error:
        raise SourceError(
            f"python=={asked}: the standard library's stubs come from {pin.text}: {error}"
        ) from None
    if not (carrier.root.joinpath(*stdlib.STUBS_FOLDER) / "VERSIONS").is_file() and not ctx.offline:
        # Extracted by an apidrift that did not keep typeshed's VERSIONS file: extract it again.
        shutil.rmtree(carrier.root, ignore_errors=True)
        carrier = _from_index(carrier_name, pin, ctx)
    stubs = stdlib.stubs_folder(carrier.root)
    label = (
        f"{carrier_name}-{carrier_version}-{(carrier.sha256 or 'local')[:16]}-{stdlib.MATERIALIZED_FORMAT}"
    )
    read_as = ".".join(map(str, version.read_as))
    dest = ctx.cache.write_path(ctx.cache.root / "stdlib" / label / read_as)
    tops = stdlib.materialize(stubs, version.read_as, dest)
    notes = [
        f"Python {asked}: the standard library as typeshed's stubs describe it ({carrier_name}=={carrier_version})"
    ]
    if spec.version is None:
        notes[0] += ", the version apidrift runs under"
    if version.note:
        notes.append(version.note)
    return SourceTree(
        name=stdlib.DISTRIBUTION,
        version=asked,
        root=dest,
        import_names=tops,
        origin="index",
        location=f"typeshed stdlib stubs in {carrier.location}",
        sha256=carrier.sha256,
        compiled_modules=frozenset(),
        requires=(),
        note="; ".join(notes),
        absence_is_evidence=False,
    )


# --- the index -----------------------------------------------------------------------------------


def _from_index(name: str, spec: IndexSpec | None, ctx: _Context) -> SourceTree:
    key = normalize_name(name)
    with ctx.client() as client:
        pinned = spec.pinned if spec else None
        if pinned is not None:
            # An exact pin that is already extracted needs no index request at all.
            cached = _cached_release(ctx.cache, key, pinned, client)
            if cached is not None:
                tree = _tree_from_extraction(cached[0], origin="index", name_hint=name)
                return _with_note(tree, cached[1]) if cached[1] else tree
            if ctx.offline:
                raise SourceError(
                    f"offline: {spec} from {client.display_url} is not in the cache {ctx.cache.root}; "
                    "run once without --offline"
                )
        listing = client.project(name)
        release = select_release(listing, spec)
        file = release.file
        if file.sha256:
            dest = ctx.cache.source_dir(key, release.version, file.sha256)
            hit = read_extraction(dest) or read_extraction(ctx.cache.write_path(dest))
            if hit is not None:
                return _tree_from_extraction(hit, origin="index", name_hint=name)
        if ctx.offline:
            raise SourceError(
                f"offline: {name} {release.version} ({file.filename}) is not in the cache {ctx.cache.root}; "
                "run once without --offline"
            )
        archive, digest = client.download(file)
    unverified = None if file.sha256 else f"the index publishes no sha256 for {file.filename}: not verified"
    info = {
        "origin": "index",
        **client.provenance(),
        "filename": file.filename,
        "sha256": digest,
        "version": release.version,
        "note": "; ".join(filter(None, [release.note, unverified])) or None,
    }
    try:
        dest = ctx.cache.write_path(ctx.cache.source_dir(key, release.version, digest))
        extraction = _extract(archive, dest, ctx.limits, info)
    finally:
        remove_download(archive)  # the extracted tree is what the cache keeps
    return _tree_from_extraction(extraction, origin="index", name_hint=name)


def _cached_release(
    cache: Cache, key: str, pinned: Version, client: IndexClient
) -> tuple[Extraction, str | None] | None:
    """A cached extraction of release `pinned`, preferably fetched from `client`'s index, with a note when it was not."""
    folders = [cache.sources_of(key)]
    if cache.fallback is not None:
        folders.append(cache.write_path(folders[0]))
    children = sorted(child for folder in folders if folder.is_dir() for child in folder.iterdir())
    found: list[Extraction] = []
    for child in children:
        label, _, _sha = child.name.rpartition("-")
        if child.name.startswith(".") or not label:
            continue
        try:
            if Version(label) != pinned:
                continue
        except InvalidVersion:
            continue
        extraction = read_extraction(child)
        if extraction and extraction.info.get("origin") == "index":
            found.append(extraction)
    for extraction in found:
        if client.serves(extraction.info):
            return extraction, None
    if not found:
        return None
    # A release is the same whichever index served it (mirrors); say where this copy came from.
    extraction = found[0]
    info = extraction.info
    return extraction, f"{key} {info.get('version')} comes from the cache, fetched from {info.get('index')}"


def _extract(archive: Path, dest: Path, limits: ExtractLimits, info: dict[str, Any]) -> Extraction:
    existing = read_extraction(dest)
    if existing is not None:
        return existing
    if dest.exists():  # an incomplete or outdated extraction: start over
        shutil.rmtree(dest, ignore_errors=True)
    return extract_archive(archive, dest, limits=limits, info=info)


# --- NAME@PATH -----------------------------------------------------------------------------------


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _from_path(spec: PathSpec, ctx: _Context) -> SourceTree:
    path = spec.path
    if path.is_dir():
        tree = _from_directory(path, origin="path", name_hint=spec.name)
    elif path.is_file():
        if archive_kind(path.name) is None:
            raise SourceError(
                f"{path}: neither a directory, a wheel (.whl) nor an sdist (.tar.gz, .zip, ...)"
            )
        try:
            digest = _sha256_of(path)
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None
        parsed = classify_filename(path.name)
        info = {"origin": "path", "filename": path.name, "sha256": digest,
                "version": parsed[1] if parsed else None}  # fmt: skip
        dest = ctx.cache.source_dir(spec.key, "file", digest)
        extraction = read_extraction(dest) or _extract(path, ctx.cache.write_path(dest), ctx.limits, info)
        tree = _tree_from_extraction(
            extraction, origin="path", name_hint=spec.name, location=str(path.resolve())
        )
    else:
        raise SourceError(f"{path} does not exist (from {spec.text!r})")
    if normalize_name(tree.name) != spec.key:
        return _with_note(tree, f"{path} holds the distribution {tree.name}, read as {spec.name}")
    return tree


# --- reading metadata files ----------------------------------------------------------------------


@dataclass
class _Meta:
    name: str | None = None
    version: str | None = None
    requires: tuple[str, ...] | None = None  # None: not declared (as opposed to declared empty)
    declared: tuple[str, ...] = ()  # import names from top_level.txt or RECORD
    requires_python: str | None = None

    def fill(self, other: _Meta) -> None:
        """Take from `other` what this one lacks."""
        self.name = self.name or other.name
        self.version = self.version or other.version
        if self.requires is None:
            self.requires = other.requires
        self.declared = self.declared or other.declared
        self.requires_python = self.requires_python or other.requires_python


def _read_text(path: Path) -> str | None:
    """A metadata file's text; None when absent, not a regular file (a FIFO would block) or too large."""
    try:
        return read_bounded(path, _MAX_METADATA_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _core_metadata(text: str | None) -> _Meta:
    """Name, Version and Requires-Dist of a METADATA or PKG-INFO file."""
    if not text:
        return _Meta()
    headers = HeaderParser().parsestr(text)
    requires = headers.get_all("Requires-Dist")
    return _Meta(
        name=(headers.get("Name") or "").strip() or None,
        version=(headers.get("Version") or "").strip() or None,
        requires=tuple(r.strip() for r in requires) if requires else None,
        requires_python=(headers.get("Requires-Python") or "").strip() or None,
    )


def _lines(text: str | None) -> tuple[str, ...]:
    return tuple(line.strip() for line in (text or "").splitlines() if line.strip())


def _identifiers(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({n for n in names if n.isidentifier() and not n.startswith("__editable__")}))


def _record_top_names(paths: Iterable[str]) -> tuple[str, ...]:
    """Top-level import names from RECORD-style paths: packages, modules and compiled modules."""
    names: set[str] = set()
    for path in paths:
        parts = path.replace("\\", "/").split("/")
        first = parts[0]
        if not first or first == ".." or first.endswith((".dist-info", ".data", ".egg-info")):
            continue
        if len(parts) == 1:
            if first.endswith((".py", ".pyi")):
                names.add(first.rsplit(".", 1)[0])
            elif first.endswith((".so", ".pyd")):
                names.add(first.split(".", 1)[0])
        else:
            names.add(first)
    return _identifiers(names)


def _record_paths(text: str | None) -> list[str]:
    return [row[0] for row in csv.reader(io.StringIO(text or "")) if row]


def _requires_txt(text: str | None) -> tuple[str, ...] | None:
    """setuptools' requires.txt (`[extra:marker]` sections) as Requires-Dist lines, for old sdists."""
    if not text:
        return None
    out: list[str] = []
    extra = marker = ""
    for line in _lines(text):
        if line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            extra, _, marker = line[1:-1].partition(":")
            continue
        markers = []
        if marker:
            markers.append(f"({marker})" if extra else marker)
        if extra:
            markers.append(f'extra == "{extra}"')
        out.append(f"{line}; {' and '.join(markers)}" if markers else line)
    return tuple(out)


def _with_extra(requirement: str, extra: str) -> str:
    req, sep, marker = requirement.partition(";")
    if sep and marker.strip():
        return f'{req.strip()}; ({marker.strip()}) and extra == "{extra}"'
    return f'{req.strip()}; extra == "{extra}"'


def _project_metadata(project_dir: Path) -> _Meta:
    """Name, version and dependencies declared statically in pyproject.toml or setup.cfg."""
    meta = _Meta()
    text = _read_text(project_dir / "pyproject.toml")
    if text:
        try:
            project = loads_toml(text).get("project") or {}
        except ValueError:  # not TOML, or nested too deeply to read: no static metadata
            project = {}
        if isinstance(project, dict):
            meta.name = project.get("name") if isinstance(project.get("name"), str) else None
            meta.version = project.get("version") if isinstance(project.get("version"), str) else None
            if isinstance(project.get("requires-python"), str):
                meta.requires_python = project["requires-python"]
            deps = project.get("dependencies")
            extras = project.get("optional-dependencies")
            # A field of the wrong type (`dependencies = 5`, `optional-dependencies = "x"`) declares nothing.
            deps = deps if isinstance(deps, list) else None
            extras = extras if isinstance(extras, dict) else None
            if deps is not None or extras is not None:
                requires = [d for d in deps or [] if isinstance(d, str)]
                for extra, items in (extras or {}).items():
                    if isinstance(extra, str) and isinstance(items, list):
                        requires += [_with_extra(d, extra) for d in items if isinstance(d, str)]
                meta.requires = tuple(requires)
    text = _read_text(project_dir / "setup.cfg")
    if text:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return meta
        setup = _Meta(
            name=parser.get("metadata", "name", fallback=None),
            version=parser.get("metadata", "version", fallback=None),
            requires_python=parser.get("options", "python_requires", fallback=None),
        )
        if setup.version and ":" in setup.version:  # `attr:` / `file:` directives are not static
            setup.version = None
        if parser.has_option("options", "install_requires") or parser.has_section("options.extras_require"):
            requires = list(_lines(parser.get("options", "install_requires", fallback="")))
            if parser.has_section("options.extras_require"):
                for extra, value in parser.items("options.extras_require"):
                    requires += [_with_extra(d, extra) for d in _lines(value)]
            setup.requires = tuple(requires)
        meta.fill(setup)
    return meta


# --- finding the root and the import names in a tree ---------------------------------------------


def _dist_name_of(folder: Path) -> str:
    """`PyYAML.egg-info` -> `pyyaml`, `speculators-0.3.0.dist-info` -> `speculators`."""
    return normalize_name(folder.name.rsplit(".", 1)[0].split("-")[0])


def _pick(folders: list[Path], name_hint: str | None) -> Path | None:
    if name_hint:
        key = normalize_name(name_hint)
        for folder in folders:
            if _dist_name_of(folder) == key:
                return folder
    return folders[0] if len(folders) == 1 else None


def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file() or (folder / "__init__.pyi").is_file()


def _walk_files(top: Path) -> Iterator[tuple[str, str]]:
    """(relative folder, file name) of every regular file under `top`: iterative, so a tree of any
    depth is fine, and symlinks are never followed (a link can neither leave the tree nor loop)."""
    stack = [(top, "")]
    while stack:
        folder, relative = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in listed:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(".") and entry.name != "__pycache__":
                        stack.append(
                            (Path(entry.path), f"{relative}/{entry.name}" if relative else entry.name)
                        )
                elif entry.is_file(follow_symlinks=False):
                    yield relative, entry.name
            except OSError:
                continue


def _has_python(folder: Path) -> bool:
    """Whether a folder holds Python files, directly or in sub-folders (a PEP 420 namespace package)."""
    return any(name.endswith((".py", ".pyi")) for _, name in _walk_files(folder))


def _provides(root: Path, name: str) -> bool:
    """Whether `root` holds `name` as Python: a module, a package, or a namespace with .py files inside."""
    if (root / f"{name}.py").is_file() or (root / f"{name}.pyi").is_file():
        return True
    folder = root / name
    if not folder.is_dir():
        return False
    return _is_package(folder) or _has_python(folder)


def _scan(root: Path) -> tuple[tuple[str, ...], bool]:
    """Import names found by looking in `root`, and whether any is a regular package (`__init__.py`)."""
    if not root.is_dir():
        return (), False
    packages: list[str] = []
    folders: list[str] = []
    modules: list[str] = []
    for child in sorted(root.iterdir()):
        stem = child.name.rsplit(".", 1)[0] if child.is_file() else child.name
        if child.name.startswith(".") or not stem.isidentifier():
            continue
        if child.is_dir():
            if child.name in _NOT_PACKAGES:
                continue
            if _is_package(child):
                packages.append(child.name)
            elif _has_python(child):
                folders.append(child.name)
        elif child.suffix in (".py", ".pyi") and stem not in _NOT_MODULES:
            modules.append(stem)
    # Folders without __init__.py count only when there is no regular package (then they are
    # namespace packages); otherwise they are usually scripts or tooling next to the package.
    names = packages + (folders if not packages else []) + modules
    return _identifiers(names), bool(packages)


@dataclass
class _Analysis:
    root: Path
    import_names: tuple[str, ...]
    meta: _Meta = field(default_factory=_Meta)


def _find_root(tree: Path, declared: tuple[str, ...], preferred: list[Path]) -> _Analysis:
    candidates = [*preferred, tree, *(tree / sub for sub in _CANDIDATE_SUBROOTS)]
    candidates = [c for c in dict.fromkeys(candidates) if c.is_dir()]
    if declared:
        for candidate in candidates:
            if any(_provides(candidate, name) for name in declared):
                return _Analysis(candidate, declared)
        return _Analysis(preferred[0] if preferred else tree, declared)
    # Nothing declared: prefer a src/ layout, then the tree itself, then lib/ and python/.
    ordered = [c for c in candidates if c.name == "src" and c.parent == tree] + candidates
    scans = [(c, *_scan(c)) for c in dict.fromkeys(ordered)]
    for candidate, names, regular in scans:
        if regular:
            return _Analysis(candidate, names)
    for candidate, names, _regular in scans:
        if names:
            return _Analysis(candidate, names)
    return _Analysis(tree, ())


def _present(root: Path, names: Iterable[str], compiled: Iterable[str] = ()) -> tuple[str, ...]:
    """The `names` that are really there under `root`: a module file, a package folder or a compiled module.

    top_level.txt and RECORD are claims: a RECORD listing `os/__init__.py` that the wheel does not ship
    must not make this upstream own `os` (every `os.x` would then be "missing").
    """
    compiled_tops = {_record_top_names([path])[0] for path in compiled if _record_top_names([path])}
    found = []
    for name in names:
        try:
            if (
                (root / f"{name}.py").is_file()
                or (root / f"{name}.pyi").is_file()
                or (root / name).is_dir()
                or name in compiled_tops
                or any(p.suffix in (".so", ".pyd") and p.is_file() for p in root.glob(f"{name}.*"))
            ):
                found.append(name)
        except OSError:
            continue
    return tuple(found)


def _analyse(
    tree: Path, name_hint: str | None, declared: tuple[str, ...] = (), compiled: Iterable[str] = ()
) -> _Analysis:
    """Root, import names and metadata of an extracted wheel or sdist, or of a project folder."""
    dist_info = _pick(sorted(tree.glob("*.dist-info")), name_hint)
    if dist_info is not None:  # a wheel (or a folder laid out like site-packages)
        compiled = tuple(compiled)
        meta = _core_metadata(_read_text(dist_info / "METADATA"))
        meta.declared = declared or _present(
            tree, _identifiers(_lines(_read_text(dist_info / "top_level.txt"))), compiled
        )
        meta.declared = meta.declared or _present(
            tree, _record_top_names(_record_paths(_read_text(dist_info / "RECORD"))), compiled
        )
        if meta.declared:
            return _Analysis(tree, meta.declared, meta)
        names, _regular = _scan(tree)
        return _Analysis(tree, names, meta)

    meta = _core_metadata(_read_text(tree / "PKG-INFO"))
    egg_infos = sorted([*tree.glob("*.egg-info"), *tree.glob("*/*.egg-info")])
    egg_info = _pick([e for e in egg_infos if e.is_dir()], name_hint)
    if egg_info is not None:
        egg_meta = _core_metadata(_read_text(egg_info / "PKG-INFO"))
        egg_meta.declared = _identifiers(_lines(_read_text(egg_info / "top_level.txt")))
        if egg_meta.requires is None:
            egg_meta.requires = _requires_txt(_read_text(egg_info / "requires.txt"))
        meta.fill(egg_meta)
    meta.fill(_project_metadata(tree))
    analysis = _find_root(tree, declared or meta.declared, [egg_info.parent] if egg_info else [])
    analysis.meta = meta
    return analysis


# --- building SourceTrees ------------------------------------------------------------------------


def _compiled_under(root: Path, relpaths: Iterable[str], base: Path) -> frozenset[str]:
    """Dotted names, relative to `root`, of compiled modules given as paths relative to `base`."""
    try:
        prefix = root.relative_to(base).as_posix()
    except ValueError:
        return frozenset()
    found: set[str] = set()
    for path in relpaths:
        if prefix != ".":
            if not path.startswith(prefix + "/"):
                continue
            path = path[len(prefix) + 1 :]
        dotted = compiled_module_name(path)
        if dotted:
            found.add(dotted)
    return frozenset(found)


def _tree_from_extraction(
    extraction: Extraction, *, origin: Origin, name_hint: str, location: str | None = None
) -> SourceTree:
    info = extraction.info
    analysis = _analyse(extraction.tree, name_hint, compiled=extraction.compiled)
    meta = analysis.meta
    version = info.get("version") if origin == "index" else (meta.version or info.get("version"))
    filename = info.get("filename") or extraction.folder.name
    compiled = _compiled_under(analysis.root, extraction.compiled, extraction.tree)
    if not analysis.import_names:
        raise SourceError(
            f"{filename} holds neither Python source (.py or .pyi) nor a compiled module of {name_hint}: nothing to read"
        )
    note = info.get("note") if origin == "index" else None
    if compiled and not _has_sources(analysis.root, analysis.import_names):
        only = f"{filename} holds only compiled modules, no Python sources: names in them cannot be checked"
        note = f"{note}; {only}" if note else only
    return SourceTree(
        name=meta.name or name_hint,
        version=version,
        root=analysis.root,
        import_names=analysis.import_names,
        origin=origin,
        location=location or str(info.get("filename") or extraction.folder),
        sha256=info.get("sha256"),
        compiled_modules=compiled,
        requires=meta.requires or (),
        requires_python=meta.requires_python,
        note=note,
        project_root=extraction.tree if _within(analysis.root, extraction.tree) else None,
    )


def _has_sources(root: Path, import_names: Iterable[str]) -> bool:
    """Whether any import name has a .py/.pyi file under `root` (a module, or in its package folder)."""
    for name in import_names:
        if (root / f"{name}.py").is_file() or (root / f"{name}.pyi").is_file():
            return True
        folder = root / name
        if folder.is_dir() and _has_python(folder):
            return True
    return False


def _walk_compiled(root: Path, import_names: Iterable[str]) -> frozenset[str]:
    """Compiled modules on disk under a folder's own packages (a local tree is not extracted by us)."""
    paths: list[str] = []
    for name in import_names:
        paths += [p.name for p in root.glob(f"{name}.*") if p.suffix in (".so", ".pyd") and p.is_file()]
        top = root / name
        if top.is_dir():
            for relative, filename in _walk_files(top):
                if filename.endswith((".so", ".pyd")):
                    paths.append("/".join(filter(None, (name, relative, filename))))
    return _compiled_under(root, paths, root)


def _project_dir_of(folder: Path) -> Path:
    """The nearest folder (this one or up to two parents) with pyproject.toml, setup.cfg or setup.py."""
    for candidate in [folder, *list(folder.parents)[:2]]:
        if any((candidate / f).is_file() for f in ("pyproject.toml", "setup.cfg", "setup.py")):
            return candidate
    return folder


def _from_directory(
    path: Path, *, origin: Origin, name_hint: str | None = None, declared: tuple[str, ...] = ()
) -> SourceTree:
    folder = path.expanduser().resolve()
    if not folder.is_dir():
        raise SourceError(f"{path} is not a directory")
    if _is_package(folder) and folder.name.isidentifier():
        # One package folder: its parent is the root; metadata comes from the enclosing project, if any.
        analysis = _Analysis(folder.parent, (folder.name,), _project_metadata(_project_dir_of(folder)))
    else:
        analysis = _analyse(folder, name_hint, declared)
        if analysis.root != folder:
            analysis.meta.fill(_project_metadata(_project_dir_of(analysis.root)))
    if not analysis.import_names:
        if origin == "directory" and any(name.endswith(".ipynb") for _, name in _walk_files(folder)):
            # Notebooks only (a docs or examples folder): a downstream with no package of its own.
            return SourceTree(
                name=analysis.meta.name or folder.name,
                version=analysis.meta.version,
                root=folder,
                import_names=(),
                origin=origin,
                location=str(folder),
                sha256=None,
                compiled_modules=frozenset(),
                requires=analysis.meta.requires or (),
                project_root=_path_base(folder, folder),
            )
        raise SourceError(f"no Python package or module found in {folder}")
    meta = analysis.meta
    return SourceTree(
        name=meta.name or name_hint or folder.name,
        version=meta.version,
        root=analysis.root,
        import_names=analysis.import_names,
        origin=origin,
        location=str(folder),
        sha256=None,
        compiled_modules=_walk_compiled(analysis.root, analysis.import_names),
        requires=meta.requires or (),
        project_root=_path_base(folder, analysis.root),
        requires_python=meta.requires_python,
    )


def _path_base(folder: Path, root: Path) -> Path:
    """What reported paths are relative to: the project folder (the one holding pyproject.toml, this
    folder or up to two above it), else the folder given; never a folder below the scanned root."""
    for candidate in (_project_dir_of(folder), folder):
        if _within(root, candidate):
            return candidate
    return root


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# --- installed distributions ---------------------------------------------------------------------


def _editable_project(dist: importlib.metadata.Distribution) -> Path | None:
    """The project folder of an editable install, from its PEP 610 direct_url.json."""
    try:
        data = loads_json(dist.read_text("direct_url.json") or "null")
    except ValueError:
        return None
    if not isinstance(data, dict) or not (data.get("dir_info") or {}).get("editable"):
        return None
    url = urlsplit(str(data.get("url", "")))
    if url.scheme != "file":
        return None
    # lazy: http.client and ssl (18 ms) come with urllib.request: only for an editable install's URL
    from urllib.request import url2pathname

    folder = Path(url2pathname(unquote(url.path)))
    return folder if folder.is_dir() else None


def _installed(name: str, site_dirs: tuple[Path, ...] | None) -> importlib.metadata.Distribution | None:
    """The distribution `name` installed in `site_dirs` (None: apidrift's own environment), read from
    its metadata files; None when it is not there."""
    if site_dirs is None:
        try:
            return importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    wanted = normalize_name(name)
    for dist in importlib.metadata.distributions(path=[str(d) for d in site_dirs]):
        try:
            if normalize_name(dist.metadata["Name"] or "") == wanted:
                return dist
        except Exception:  # a broken METADATA file: not this one
            continue
    return None


def _header(dist: importlib.metadata.Distribution, key: str) -> str | None:
    """A core-metadata header, None when absent (importlib_metadata's backport, which dask loads, raises
    KeyError for a missing one where the standard library gives None)."""
    try:
        value = dist.metadata[key]
    except KeyError:
        return None
    return str(value) if value is not None else None


def _from_installed(name: str, site_dirs: tuple[Path, ...] | None = None) -> SourceTree | None:
    if site_dirs is not None and not site_dirs:
        return None
    dist = _installed(name, site_dirs)
    if dist is None:
        return None
    files = [str(f) for f in dist.files or []]
    declared = _identifiers(_lines(dist.read_text("top_level.txt"))) or _record_top_names(files)
    published = _header(dist, "Name") or name
    if _editable_project(dist) is None:  # only names whose files are installed (RECORD is a claim)
        declared = _present(Path(str(dist.locate_file(""))).resolve(), declared)
    requires = tuple(dist.requires or ())
    requires_python = (_header(dist, "Requires-Python") or "").strip() or None
    project = _editable_project(dist)
    if project is not None:
        tree = _from_directory(project, origin="installed", name_hint=published, declared=declared)
        return replace(
            tree, name=published, version=dist.version, requires=requires, requires_python=requires_python
        )
    site = Path(str(dist.locate_file(""))).resolve()
    if not declared:
        raise SourceError(f"the installed {published} lists no files, so its import names are unknown")
    return SourceTree(
        name=published,
        version=dist.version,
        root=site,
        import_names=declared,
        origin="installed",
        location=str(site),
        sha256=None,
        compiled_modules=_compiled_under(site, files, site),
        requires=requires,
        requires_python=requires_python,
    )
