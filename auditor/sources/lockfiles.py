"""Pinned versions from the files projects lock their dependencies in.

Formats: `uv.lock`, `poetry.lock`, `pdm.lock`, `Pipfile.lock`, `pylock.toml` / `pylock.NAME.toml`
(PEP 751), `requirements*.txt` (with `-r`/`-c` includes and `--hash` options) and exact `==` pins in
`pyproject.toml` (PEP 621 dependencies, PEP 735 dependency groups, Poetry's tables). TOML is read with
`tomllib`, JSON with `json`, requirements and versions with `packaging`.

Every file is untrusted input: each read is bounded in size, includes in depth and number, and an include
never leaves the folder the reader is rooted at. Only releases from an index are pins; local folders, VCS
checkouts and URLs are listed in the file's notes and left out.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from apidrift.auditor.core.wording import first_line
from apidrift.auditor.safe_read import loads_json, loads_toml
from apidrift.auditor.sources.specs import parse_requirement

MAX_FILE_BYTES = 8 * 1024 * 1024  # a big uv.lock is a few MiB
MAX_INCLUDE_DEPTH = 8
MAX_FILES = 64  # files read for one side, includes counted
MAX_PINS = 20_000  # per file
GIT_TIMEOUT = 30.0  # seconds per git command
MAX_LINK_HOPS = 8  # symbolic links followed in a row, in a git revision

KINDS = ("uv", "poetry", "pdm", "pipfile", "pylock", "requirements", "pyproject")


class LockError(Exception):
    """A lock or pin file that cannot be read or parsed; the message is one line, fit for the user."""


@dataclass(frozen=True)
class Pin:
    name: str  # PEP 503 normalized
    version: str
    path: str  # the file that pins it (relative to the reader's root, POSIX)
    marker: str | None = None  # environment marker the pin is under, if any
    display: str = ""  # the name as the file spells it

    @property
    def label(self) -> str:
        return f"{self.display or self.name}=={self.version}"


@dataclass
class LockFile:
    path: str
    kind: str
    pins: list[Pin] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # entries left out, and why


Reader = Callable[
    [str], "bytes | None"
]  # relative POSIX path -> the bytes, or None when there is no such file


# ---- which files


def kind_by_name(path: str) -> str | None:
    """The format a file's name says, or None when the name says nothing."""
    base = posixpath.basename(path)
    folder = posixpath.basename(posixpath.dirname(path))
    if base == "uv.lock":
        return "uv"
    if base == "poetry.lock":
        return "poetry"
    if base == "pdm.lock":
        return "pdm"
    if base == "Pipfile.lock":
        return "pipfile"
    if base == "pylock.toml" or re.fullmatch(r"pylock\.[^.]+\.toml", base):
        return "pylock"
    if base == "pyproject.toml":
        return "pyproject"
    if re.fullmatch(r"requirements[\w.-]*\.txt", base) or (
        folder == "requirements" and base.endswith(".txt")
    ):
        return "requirements"
    return None


def sniff_kind(path: str, data: bytes) -> str:
    """The format of a file whose name says nothing (`requirements.lock.new`): by its content."""
    for suffix in (".new", ".old", ".orig", ".bak", ".base", ".head"):
        if path.endswith(suffix) and (kind := kind_by_name(path[: -len(suffix)])) is not None:
            return kind
    text = _decode(data, path)
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = loads_json(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and "_meta" in doc:
            return "pipfile"
    try:
        doc = loads_toml(text)
    except ValueError:
        return "requirements"
    if "lock-version" in doc and "packages" in doc:
        return "pylock"
    metadata = _table(doc, "metadata")
    if "lock_version" in metadata or "content_hash" in metadata:
        return "pdm"
    if "content-hash" in metadata or "lock-version" in metadata:
        return "poetry"
    if isinstance(doc.get("version"), int) and "package" in doc:
        return "uv"
    if "project" in doc or "tool" in doc or "dependency-groups" in doc:
        return "pyproject"
    return "requirements"


def lock_candidates(paths: Iterable[str]) -> list[str]:
    """Of a folder's files (relative POSIX paths), those that pin versions, in a stable order."""
    found = [p for p in paths if kind_by_name(p) is not None and p.count("/") <= 1]
    return sorted(dict.fromkeys(found), key=lambda p: (KINDS.index(kind_by_name(p) or "pyproject"), p))


def listing_of(folder: Path) -> list[str]:
    """The candidate file names in a work-tree folder: its own files and those of `requirements/`."""
    names: list[str] = []
    for sub in ("", "requirements"):
        base = folder / sub if sub else folder
        if not base.is_dir() or (base.is_symlink() and sub):
            continue
        try:
            entries = sorted(base.iterdir())[:10_000]
        except OSError:
            continue
        for entry in entries:
            if entry.is_file():
                names.append(f"{sub}/{entry.name}" if sub else entry.name)
    return lock_candidates(names)


# ---- readers: the work tree, git, a named file


def folder_reader(root: Path) -> Reader:
    """Read files under `root`, never outside it (symbolic links included), each at most MAX_FILE_BYTES."""
    base = root.resolve()

    def read(relative: str) -> bytes | None:
        try:
            target = (base / relative).resolve()
            if not target.is_relative_to(base):
                what = "a symbolic link leading outside" if (base / relative).is_symlink() else "outside"
                raise LockError(f"{_safe(relative)}: {what} {root}; not read")
            if not target.is_file():
                return None
            with target.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            raise LockError(f"{_safe(relative)}: cannot be read ({error.strerror or error})") from None
        if len(data) > MAX_FILE_BYTES:
            raise LockError(f"{relative}: larger than {MAX_FILE_BYTES // 1024 // 1024} MiB; not read")
        return data

    return read


@dataclass(frozen=True)
class GitSide:
    """A folder of a git repository as of REF, read with `git show`/`git cat-file` (never checked out)."""

    repo: Path  # the repository's top level
    prefix: str  # the folder inside it, POSIX, '' or ending with '/'
    ref: str

    @classmethod
    def open(cls, folder: Path, ref: str) -> GitSide:
        if not ref or ref.startswith("-") or any(c in ref for c in "\0\n\r"):
            raise LockError(f"--base {ref!r}: not a git revision")
        top = _git(folder, "rev-parse", "--show-toplevel").strip()
        prefix = _git(folder, "rev-parse", "--show-prefix").strip()
        side = cls(Path(top), prefix, ref)
        try:
            _git(side.repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except LockError:
            raise LockError(f"--base {ref!r}: no such commit in {top}") from None
        return side

    def listing(self) -> list[str]:
        names: list[str] = []
        for sub in ("", "requirements/"):
            out = _git(self.repo, "ls-tree", "--name-only", f"{self.ref}:{self.prefix}{sub}", check=False)
            names += [f"{sub}{line}" for line in out.splitlines()[:10_000] if line]
        return lock_candidates(names)

    def reader(self) -> Reader:
        """Read files of the folder as of REF. A symbolic link is followed as the work tree's reader
        follows one: to a file inside the same folder, else it is refused (one line), whatever side."""
        folder = str(self.repo / self.prefix) if self.prefix else str(self.repo)

        def inside(path: str) -> bool:
            return not (path.startswith("../") or path == ".." or path.startswith("/")) and (
                not self.prefix or path.startswith(self.prefix)
            )

        def read(relative: str) -> bytes | None:
            path = posixpath.normpath(self.prefix + relative)
            if not inside(path):
                raise LockError(f"{_safe(relative)}: outside {folder} at {self.ref}; not read")
            for _hop in range(MAX_LINK_HOPS + 1):
                entry = (
                    _git(self.repo, "ls-tree", self.ref, "--", path, check=False).split("\t", 1)[0].split()
                )
                if len(entry) != 3 or entry[1] != "blob":
                    return None
                if entry[0] != "120000":
                    break
                target = _git_bytes(self.repo, "cat-file", "blob", f"{self.ref}:{path}")[:4096].decode(
                    "utf-8", "replace"
                )
                followed = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
                if target.startswith("/") or not inside(followed):
                    raise LockError(
                        f"{self.ref}:{_safe(path)}: a symbolic link leading outside {folder}; not read"
                    )
                path = followed
            else:
                raise LockError(
                    f"{self.ref}:{_safe(path)}: more than {MAX_LINK_HOPS} symbolic links; not read"
                )
            spec = f"{self.ref}:{path}"
            size = int(_git(self.repo, "cat-file", "-s", spec).strip() or 0)
            if size > MAX_FILE_BYTES:
                raise LockError(
                    f"{self.ref}:{path}: larger than {MAX_FILE_BYTES // 1024 // 1024} MiB; not read"
                )
            return _git_bytes(self.repo, "cat-file", "blob", spec)

        return read


def _git_bytes(cwd: Path, *args: str, check: bool = True) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise LockError("git is not installed; --base needs it") from None
    except subprocess.TimeoutExpired:
        raise LockError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f}s") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LockError(f"git {args[0]}: {message[0] if message else 'failed'}")
    return done.stdout if done.returncode == 0 else b""


def _git(cwd: Path, *args: str, check: bool = True) -> str:
    return _git_bytes(cwd, *args, check=check).decode("utf-8", "replace")


# ---- parsing


def read_lock(path: str, read: Reader, kind: str | None = None) -> list[LockFile]:
    """The pins of the file at `path` (and of the files it includes, for requirements); [] when absent."""
    data = read(path)
    if data is None:
        return []
    kind = kind or kind_by_name(path) or sniff_kind(path, data)
    if kind == "requirements":
        return _requirements(path, data, read)
    parser = _PARSERS[kind]
    text = _decode(data, path)
    lock = LockFile(path, kind)
    try:
        doc: Any = loads_json(text) if kind == "pipfile" else loads_toml(text)
    except ValueError as error:  # TOMLDecodeError, JSONDecodeError, NestingError
        raise LockError(
            f"{path}: not valid {'JSON' if kind == 'pipfile' else 'TOML'} ({first_line(error)})"
        ) from None
    if not isinstance(doc, dict):
        raise LockError(f"{path}: not a {kind} file")
    parser(doc, lock)
    if len(lock.pins) > MAX_PINS:
        raise LockError(f"{path}: more than {MAX_PINS} pinned packages; not read")
    return [lock]


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LockError(f"{path}: not UTF-8 text") from None


def _safe(value: object, limit: int = 80) -> str:
    """Text from a file, fit for a note: printable characters only, bounded."""
    return "".join(c if c.isprintable() else "?" for c in str(value)[:limit])


_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)  # PEP 508
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]{0,99}$")  # what a version can hold, no more


def _add(lock: LockFile, name: object, version: object, marker: object = None) -> None:
    if not isinstance(name, str) or not isinstance(version, str) or not name or not version:
        return
    version = version.strip()
    if not _NAME.match(name) or not _VERSION.match(version):
        lock.notes.append(f"{_safe(name, 60)} {_safe(version, 40)}: not a package name and version; left out")
        return
    lock.pins.append(
        Pin(
            str(canonicalize_name(name)),
            version,
            lock.path,
            marker if isinstance(marker, str) else None,
            name,
        )
    )


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _tables(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = doc.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _uv(doc: dict[str, Any], lock: LockFile) -> None:
    """`[[package]]` with `source = { registry = ... }`; editable/virtual/path/git/url sources are not releases."""
    for package in _tables(doc, "package"):
        source = _table(package, "source")
        if "registry" not in source:
            kind = next(iter(source), "no source")
            lock.notes.append(f"{_safe(package.get('name'))}: {_safe(kind)} source, not a release; left out")
            continue
        _add(lock, package.get("name"), package.get("version"))


def _poetry(doc: dict[str, Any], lock: LockFile) -> None:
    """`[[package]]`; a `[package.source]` of type git, directory, file or url is not a release."""
    for package in _tables(doc, "package"):
        source = _table(package, "source")
        kind = source.get("type")
        if kind in ("git", "directory", "file", "url"):
            lock.notes.append(f"{_safe(package.get('name'))}: {_safe(kind)} source, not a release; left out")
            continue
        _add(lock, package.get("name"), package.get("version"), package.get("markers"))


def _pdm(doc: dict[str, Any], lock: LockFile) -> None:
    """`[[package]]`; entries with `path`, `url`, `git` or `editable` are local or VCS, not releases."""
    for package in _tables(doc, "package"):
        local = next(
            (k for k in ("path", "url", "git", "hg", "svn", "bzr", "editable") if package.get(k)), None
        )
        if local:
            lock.notes.append(f"{_safe(package.get('name'))}: {local} source, not a release; left out")
            continue
        _add(lock, package.get("name"), package.get("version"), package.get("marker"))


def _pipfile(doc: dict[str, Any], lock: LockFile) -> None:
    """`default` and `develop`: name -> {"version": "==X", ...}; git/path/file entries carry no version."""
    for section in ("default", "develop"):
        packages = doc.get(section)
        if not isinstance(packages, dict):
            continue
        for name, entry in packages.items():
            if not isinstance(entry, dict):
                continue
            version = entry.get("version")
            if not isinstance(version, str) or not version.startswith("=="):
                kind = next(
                    (k for k in ("git", "path", "file", "editable") if k in entry), "no exact version"
                )
                lock.notes.append(f"{_safe(name)}: {kind}, not a release; left out")
                continue
            _add(lock, name, version[2:].lstrip("="), entry.get("markers"))


def _pylock(doc: dict[str, Any], lock: LockFile) -> None:
    """PEP 751 `[[packages]]`: a release has a `version` and an `sdist` or `wheels`; vcs/directory/archive are not."""
    for package in _tables(doc, "packages"):
        local = next((k for k in ("vcs", "directory", "archive") if k in package), None)
        if local or not (package.get("sdist") or package.get("wheels")):
            lock.notes.append(
                f"{_safe(package.get('name'))}: {local or 'no sdist or wheels'}, not a release; left out"
            )
            continue
        _add(lock, package.get("name"), package.get("version"), package.get("marker"))


def _pyproject(doc: dict[str, Any], lock: LockFile) -> None:
    """Exact `==` pins: [project] dependencies and extras, [dependency-groups], Poetry's dependency tables."""
    project = _table(doc, "project")
    strings: list[str] = []
    dependencies = project.get("dependencies")
    if isinstance(dependencies, list):  # `dependencies = 5` declares nothing
        strings += [d for d in dependencies if isinstance(d, str)]
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        for group in extras.values():
            strings += [d for d in group or [] if isinstance(d, str)] if isinstance(group, list) else []
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        for group in groups.values():
            strings += [d for d in group if isinstance(d, str)] if isinstance(group, list) else []
    for text in strings:
        _add_requirement(lock, text)
    tool = _table(doc, "tool")
    poetry = _table(tool, "poetry")
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    poetry_groups = poetry.get("group")
    if isinstance(poetry_groups, dict):
        tables += [g.get("dependencies") for g in poetry_groups.values() if isinstance(g, dict)]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            if name.lower() == "python":
                continue
            if isinstance(spec, dict):
                spec = spec.get("version")
            if isinstance(spec, str) and (version := _poetry_exact(spec)) is not None:
                _add(lock, name, version)


def _poetry_exact(spec: str) -> str | None:
    """Poetry reads a bare version ("1.2.3") as exactly that version, like "==1.2.3"."""
    spec = spec.strip()
    if spec.startswith("=="):
        spec = spec[2:].strip()
    elif spec.startswith("="):
        spec = spec[1:].strip()
    if "*" in spec:
        return None
    try:
        Version(spec)
    except InvalidVersion:
        return None
    return spec


def _add_requirement(lock: LockFile, text: str) -> None:
    try:
        requirement = parse_requirement(text)
    except InvalidRequirement:
        lock.notes.append(f"{_safe(text.strip())}: not a requirement; left out")
        return
    if requirement.url:
        lock.notes.append(f"{requirement.name}: a URL, not a release; left out")
        return
    version = exact_version(requirement)
    if version is not None:
        _add(lock, requirement.name, version, str(requirement.marker) if requirement.marker else None)


def exact_version(requirement: Requirement) -> str | None:
    """The version an `==X` (no wildcard) or `===X` specifier pins, else None (a range pins nothing)."""
    specs = list(requirement.specifier)
    if len(specs) != 1:
        return None
    (spec,) = specs
    if spec.operator == "===" or (spec.operator == "==" and not spec.version.endswith(".*")):
        return spec.version
    return None


_PARSERS: dict[str, Callable[[dict[str, Any], LockFile], None]] = {
    "uv": _uv,
    "poetry": _poetry,
    "pdm": _pdm,
    "pipfile": _pipfile,
    "pylock": _pylock,
    "pyproject": _pyproject,
}


# ---- requirements files

# Regular expressions here are linear in the line's length (no nested or overlapping repetition), so a
# hostile file of long whitespace runs costs no more than its size.
_COMMENT_START = re.compile(r"(?:^|(?<=\s))#")  # pip: a '#' at the start or after whitespace
_INCLUDE = re.compile(r"^(?:(?:--requirement|--constraint)(?:\s*=\s*|\s+)|(?:-r|-c)\s*)(\S.*)$")
_OPTION_START = re.compile(r"(?<=\s)--?[A-Za-z]")  # the first per-requirement option (--hash=...) of a line


def _requirements(path: str, data: bytes, read: Reader) -> list[LockFile]:
    """A requirements file and, depth first, the files it includes with -r/-c (bounded, inside the root)."""
    files: list[LockFile] = []
    seen: set[str] = set()

    def visit(current: str, content: bytes, depth: int) -> None:
        seen.add(current)
        lock = LockFile(current, "requirements")
        files.append(lock)
        for line in logical_lines(_decode(content, current)):
            include = _INCLUDE.match(line)
            if include:
                target = include.group(1).split()[0]  # as pip's shlex split of the option's value
                if "://" in target or target.startswith("/") or "${" in target:
                    lock.notes.append(f"include {_safe(target)}: not a file of the project; not read")
                    continue
                nested = posixpath.normpath(posixpath.join(posixpath.dirname(current), target))
                if nested.startswith("../") or nested == "..":
                    lock.notes.append(f"include {_safe(target)}: outside the project; not read")
                    continue
                if nested in seen:
                    continue
                if depth + 1 > MAX_INCLUDE_DEPTH:
                    raise LockError(f"{current}: includes nested deeper than {MAX_INCLUDE_DEPTH}")
                if len(files) >= MAX_FILES:
                    raise LockError(f"{path}: includes more than {MAX_FILES} files")
                nested_data = read(nested)
                if nested_data is None:
                    lock.notes.append(f"include {_safe(target)}: no such file")
                    continue
                visit(nested, nested_data, depth + 1)
                continue
            if line.startswith("-"):
                if line.startswith(("-e", "--editable")):
                    lock.notes.append(f"{_safe(line.split(None, 1)[-1])}: editable, not a release; left out")
                continue  # index, find-links, hashes-required and other global options pin nothing
            option = _OPTION_START.search(line)
            requirement = line[: option.start()].rstrip() if option else line  # drops --hash=... and co.
            if "${" in requirement:
                lock.notes.append(f"{_safe(requirement)}: uses an environment variable; left out")
                continue
            _add_requirement(lock, requirement)
            if len(lock.pins) > MAX_PINS:
                raise LockError(f"{current}: more than {MAX_PINS} pinned packages; not read")

    visit(path, data, 0)
    return files


def logical_lines(text: str) -> list[str]:
    """pip's reading (req_file.join_lines, then ignore_comments): a line ending in a backslash joins the
    next, a comment line ends a continuation, comments go, blank lines go."""
    joined: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        comment_line = line.lstrip().startswith("#")
        if not line.endswith("\\") or comment_line:
            if comment_line:
                line = ""  # pip turns it into a comment that is then removed
            if pending:
                pending.append(line)
                joined.append("".join(pending))
                pending = []
            else:
                joined.append(line)
        else:
            pending.append(line.strip("\\"))
    if pending:
        joined.append("".join(pending))
    stripped = (_without_comment(line).strip() for line in joined)
    return [line for line in stripped if line]


def _without_comment(line: str) -> str:
    found = _COMMENT_START.search(line)
    return line[: found.start()] if found else line


# ---- the pins of a side, one version per package


@dataclass
class Side:
    """What one side (old or new) of a change pins: the files read and each package's versions."""

    label: str  # e.g. "origin/main" or the file named with --old
    files: list[LockFile] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # candidate files absent on this side

    def versions(self) -> dict[str, list[Pin]]:
        by_name: dict[str, list[Pin]] = {}
        for lock in self.files:
            for pin in lock.pins:
                by_name.setdefault(pin.name, []).append(pin)
        return by_name

    def notes(self) -> list[str]:
        return [f"{self._where(lock.path)}: {note}" for lock in self.files for note in lock.notes]

    def _where(self, path: str) -> str:
        return (
            self.label if self.label == path or self.label.endswith("/" + path) else f"{self.label}: {path}"
        )


def choose(pins: list[Pin]) -> tuple[str, str | None]:
    """One version for a package pinned several times: those whose marker holds here, then the highest.

    Returns the version and, when there was a choice, a note saying what it was chosen from.
    """
    versions = sorted({p.version for p in pins}, key=_version_key)
    if len(versions) == 1:
        return versions[0], None
    here = sorted({p.version for p in pins if _marker_holds(p.marker)}, key=_version_key) or versions
    chosen = here[-1]
    return chosen, f"{pins[0].display or pins[0].name} is pinned at {', '.join(versions)}; compared {chosen}"


def _marker_holds(marker: str | None) -> bool:
    if not marker:
        return True
    try:
        return bool(Marker(marker).evaluate({"extra": ""}))
    except (InvalidMarker, ValueError, TypeError, KeyError):
        return True


def _version_key(version: str) -> tuple[int, Any]:
    try:
        return (1, Version(version))
    except InvalidVersion:
        return (0, version)


def read_side(label: str, paths: Iterable[str], read: Reader) -> Side:
    side = Side(label)
    seen: set[str] = set()
    for path in paths:
        if path in seen:
            continue
        locks = read_lock(path, read)
        if not locks:
            side.missing.append(path)
        for lock in locks:
            if lock.path in seen:
                continue
            seen.add(lock.path)
            side.files.append(lock)
            if len(side.files) > MAX_FILES:
                raise LockError(f"{label}: more than {MAX_FILES} lock and pin files")
    return side


# ---- what a change touched (the GitHub Action's choice between `bump` and `audit`)


def is_read_by_bump(relative: str) -> bool:
    """Whether `apidrift bump` reads the file at this path relative to the project folder: a lock or pin
    file at the folder's top level or in its `requirements/` folder."""
    if relative.count("/") > 1 or (relative.count("/") == 1 and not relative.startswith("requirements/")):
        return False
    return bool(lock_candidates([relative]))


def changed_lock_files(folder: Path, base: str, head: str = "HEAD") -> list[str]:
    """The lock and pin files of the project at `folder` that the change from `base` to `head` touches
    (added, modified, deleted or renamed), as paths relative to `folder`. The change is `base...head`
    (since their merge base) when git can compute one, else `base..head` (a shallow checkout of a pull
    request's merge commit, whose first parent is the base)."""
    for ref in (base, head):
        if not ref or ref.startswith("-") or any(c in ref for c in "\0\n\r"):
            raise LockError(f"{ref!r}: not a git revision")
        if not _git(folder, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).strip():
            raise LockError(f"{ref!r}: no such commit in {folder}")
    merged = _git(folder, "merge-base", base, head, check=False).strip()
    span = f"{base}...{head}" if merged else f"{base}..{head}"
    out = _git(folder, "diff", "--name-only", "--no-renames", "--relative", span, "--", ".")
    return [path for path in dict.fromkeys(out.splitlines()) if path and is_read_by_bump(path)]


def _main(argv: list[str] | None = None) -> int:
    """`python -m apidrift.auditor.sources.lockfiles changed FOLDER BASE [HEAD]`: one changed lock or pin
    file per line (none: nothing changed); exit 0, or 2 when git cannot tell."""

    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (3, 4) or args[0] != "changed":
        print(
            "usage: python -m apidrift.auditor.sources.lockfiles changed FOLDER BASE [HEAD]", file=sys.stderr
        )
        return 2
    try:
        paths = changed_lock_files(Path(args[1]), *args[2:])
    except LockError as error:
        print(f"apidrift: error: {error}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
