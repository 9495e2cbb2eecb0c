"""The inputs of an impact run: the release and its old version, and the dependents.

Dependents come from a list file (one spec or local folder per line; a bare name means its latest
release), from a folder with one project per sub-folder, or from discovery: each candidate's latest
release's core metadata is read through the index (the PEP 658 `.metadata` file when the index
serves it, else the smallest distribution file), and only those whose Requires-Dist names the
upstream are kept. Everything read is bounded in size; nothing is executed.
"""

from __future__ import annotations

import functools
import hashlib
import io
import tarfile
import threading
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from apidrift.auditor.cache import Cache, path_component
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.sources.index_client import (
    IndexClient,
    IndexFile,
    ProjectListing,
    choose_file,
    index_key,
    remove_download,
    resolve_index_url,
    select_release,
)
from apidrift.auditor.sources.lockfiles import (
    LockError,
    folder_reader,
    kind_by_name,
    logical_lines,
    read_lock,
)
from apidrift.auditor.sources.specs import (
    DirectorySpec,
    IndexSpec,
    NameSpec,
    PathSpec,
    SourceError,
    SpecError,
    normalize_name,
    parse_requirement,
    parse_spec,
)

MAX_LIST_BYTES = 16 * 1024 * 1024  # a dependents or candidates file
MAX_LINES = 1_000_000
MAX_METADATA_BYTES = 4 * 1024 * 1024  # one core-metadata file
MAX_PROBE_DOWNLOAD_BYTES = 64 * 1024 * 1024  # the smallest file, when no .metadata is served
MAX_MEMBERS = 100_000  # archive entries looked at to find the metadata


@dataclass(frozen=True)
class Dependent:
    """One dependent to audit: what the job locates, and how the user named it."""

    spec: str  # a spec for the downstream role, or an absolute folder path
    label: str  # the line as written (or the sub-folder's name, or the discovered name)
    latest: bool = False  # a bare name: resolve its latest release on the index in the job
    pin: str | None = None  # known from discovery: the requirement that excludes the release
    origin: str = "list"  # "list", "folder" or "discover"

    @property
    def key_text(self) -> str:
        return self.spec if not self.latest else f"{normalize_name(self.spec)} (latest)"


# ---- requirements ---------------------------------------------------------------------------------


def requirements_on(requires: tuple[str, ...] | list[str], upstream: str) -> list[Requirement]:
    """The Requires-Dist entries that name `upstream`, whatever their extras and markers."""
    key = normalize_name(upstream)
    found = []
    for line in requires:
        try:
            requirement = parse_requirement(line)
        except InvalidRequirement:
            continue
        if normalize_name(requirement.name) == key:
            found.append(requirement)
    return found


def pin_excluding(requires: tuple[str, ...] | list[str], upstream: str, version: str | None) -> str | None:
    """The requirement(s) on `upstream` when every one of them excludes `version`: not yet affected."""
    if not version:
        return None
    try:
        release = Version(version)
    except InvalidVersion:
        return None
    named = requirements_on(requires, upstream)
    if not named or any(r.specifier.contains(release, prereleases=True) for r in named):
        return None
    return "; ".join(dict.fromkeys(str(r) for r in named))


# ---- list files and folders -----------------------------------------------------------------------


def _read_lines(path: Path) -> list[tuple[int, str]]:
    try:
        size = path.stat().st_size
        if size > MAX_LIST_BYTES:
            raise SourceError(f"{path} is larger than {MAX_LIST_BYTES} bytes; refused")
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise SourceError(f"cannot read {path}: {error.strerror or error}") from None
    lines = []
    for number, raw in enumerate(text.splitlines()[:MAX_LINES], start=1):
        line = raw.split(" #", 1)[0].split("\t#", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append((number, line))
    return lines


def read_dependents(path: Path) -> list[Dependent]:
    """`--dependents FILE` (one spec or folder per line) or `--dependents DIR/` (one project per sub-folder)."""
    if path.is_dir():
        return _project_folders(path)
    base = path.parent
    dependents: list[Dependent] = []
    for number, line in _read_lines(path):
        where = f"{path}:{number}"
        local = (
            (base / line).expanduser()
            if not Path(line).expanduser().is_absolute()
            else Path(line).expanduser()
        )
        try:
            spec = parse_spec(line, "downstream")
        except SpecError as error:
            raise SpecError(f"{where}: {error}") from None
        if isinstance(spec, NameSpec):
            if local.is_dir() and (line.startswith((".", "/", "~")) or "/" in line):
                dependents.append(Dependent(str(local.resolve()), line))
            else:
                dependents.append(Dependent(spec.name, line, latest=True))
        elif isinstance(spec, DirectorySpec):
            if not local.is_dir():
                raise SpecError(f"{where}: {line!r} is neither a folder nor a distribution spec")
            dependents.append(Dependent(str(local.resolve()), line))
        elif isinstance(spec, PathSpec):
            target = spec.path if spec.path.is_absolute() else base / spec.path
            dependents.append(Dependent(f"{spec.name}@{target.resolve()}", line))
        else:
            dependents.append(Dependent(line, line))
    return _unique(dependents)


def _project_folders(folder: Path) -> list[Dependent]:
    dependents = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith((".", "_")) or not child.is_dir() or child.is_symlink():
            continue
        dependents.append(Dependent(str(child.resolve()), child.name, origin="folder"))
    if not dependents:
        raise SourceError(f"{folder} has no sub-folders: --dependents DIR/ takes one project per sub-folder")
    return dependents


def _unique(dependents: list[Dependent]) -> list[Dependent]:
    seen: dict[str, Dependent] = {}
    for dependent in dependents:
        seen.setdefault(dependent.key_text, dependent)
    return list(seen.values())


# ---- the release and its old version --------------------------------------------------------------


def previous_release(
    name: str, version: str | None, cache: Cache, index_url: str | None, offline: bool
) -> str:
    """`NAME==X`: the highest final release on the index older than `version` (the latest if unknown)."""
    with IndexClient(cache, index_url, offline=offline) as client:
        listing = client.project(name)
    target = None
    if version:
        try:
            target = Version(version)
        except InvalidVersion:
            target = None
    older = [
        v for v, files in listing.by_version().items()
        if any(not f.yanked for f in files) and (target is None or v < target)
        and (not v.is_prerelease or (target is not None and target.is_prerelease))
    ]  # fmt: skip
    if not older:
        raise SourceError(f"{name} has no release older than {version} on the index: give --from")
    return f"{name}=={max(older)}"


# ---- discovery ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Discovered:
    name: str
    version: str | None
    requirements: tuple[str, ...]  # the Requires-Dist lines naming the upstream
    how: str  # "metadata" (PEP 658), "wheel", "sdist"
    dependent: Dependent | None  # None: dropped
    reason: str | None = None  # why it was dropped


DISCOVERY_THREADS = 8  # candidates whose metadata is read at once (each request capped as a listing is)


# Where candidates come from when no list is given: the word `cached`, or a folder of requirements and
# lock files (see candidate_names).
CACHED = "cached"
MAX_CORPUS_FILES = 10_000  # files looked at under a corpus folder
MAX_CORPUS_DEPTH = 8  # folders deep
MAX_CANDIDATES = 5_000  # names taken from a corpus or the cache


def candidate_names(
    source: str | Path, upstream: str, cache: Cache, index_url: str | None = None
) -> list[str]:
    """Candidate names obtained without a reverse-dependency service: `cached`, the projects whose
    listing the cache holds for this index (every project an earlier audit, bump or impact looked up:
    its dependents among them); or a folder, the names in the requirements and lock files under it
    (`requirements*.txt`, `uv.lock`, `poetry.lock`, `pdm.lock`, `Pipfile.lock`, `pylock*.toml`,
    `pyproject.toml`: a corpus of projects that use the upstream names what they install beside it).
    The upstream itself is left out; the order is the names' first appearance (a folder: sorted paths)."""

    wanted = canonicalize_name(upstream)
    names: dict[str, None] = {}
    if str(source) == CACHED:
        folder = cache.root / "index" / path_component(index_key(resolve_index_url(index_url)))
        try:
            entries = sorted(folder.glob("*.json"))[:MAX_CANDIDATES]
        except OSError:
            entries = []
        for entry in entries:
            names.setdefault(canonicalize_name(entry.stem), None)
    else:
        for name in _corpus_names(Path(source)):
            names.setdefault(canonicalize_name(name), None)
            if len(names) > MAX_CANDIDATES:
                break
    names.pop(wanted, None)
    return list(names)[:MAX_CANDIDATES]


def _corpus_names(root: Path) -> list[str]:
    """The project names the requirements and lock files under `root` name (links not followed; a file
    that cannot be read is skipped: a corpus is many strangers' files)."""

    if not root.is_dir():
        raise SourceError(f"{root}: not a folder of requirements or lock files")
    found: list[str] = []
    seen = 0
    read = folder_reader(root)
    pending: list[tuple[Path, int]] = [(root, 0)]
    files: list[str] = []
    while pending and seen < MAX_CORPUS_FILES:
        folder, depth = pending.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen >= MAX_CORPUS_FILES or entry.is_symlink():
                continue
            if entry.is_dir() and depth < MAX_CORPUS_DEPTH and not entry.name.startswith("."):
                pending.append((entry, depth + 1))
            elif entry.is_file() and kind_by_name(entry.relative_to(root).as_posix()) is not None:
                files.append(entry.relative_to(root).as_posix())
    for relative in sorted(files):
        kind = kind_by_name(relative)
        if kind == "requirements":  # unpinned names too: `click-repl>=0.2`
            data = read(relative)
            for line in logical_lines(data.decode("utf-8", "replace")) if data else []:
                line = line.split(" #", 1)[0].strip()
                if not line or line.startswith(("-", "#")):
                    continue
                try:
                    found.append(Requirement(line).name)
                except InvalidRequirement:
                    continue
            continue
        try:
            for lock in read_lock(relative, read, kind):
                found.extend(pin.display or pin.name for pin in lock.pins)
        except (LockError, OSError, UnicodeError):
            continue
    return found


def discover(
    candidates: Path | list[str],
    upstream: str,
    release_version: str | None,
    cache: Cache,
    index_url: str | None,
    offline: bool,
    as_of: datetime | None = None,
    threads: int = DISCOVERY_THREADS,
) -> list[Discovered]:
    """Read each candidate's core metadata through the index; keep those that require `upstream`.

    A bare name is its last release uploaded before `as_of` (the upstream release's upload time, say:
    what its users ran when it came out), or its latest release without it. Candidates are read by
    `threads` threads, each with its own index client; the order of the file is kept."""
    specs: list[NameSpec | IndexSpec] = []
    listed = list(enumerate(candidates, 1)) if isinstance(candidates, list) else _read_lines(candidates)
    for number, line in listed:
        try:
            spec = parse_spec(line, "upstream")
        except SpecError as error:
            if isinstance(candidates, list):
                continue  # a name a corpus spells oddly: not a candidate
            raise SpecError(f"{candidates}:{number}: {error}") from None
        if not isinstance(spec, (NameSpec, IndexSpec)):
            raise SpecError(f"{candidates}:{number}: {line!r}: a candidate is NAME or NAME==VERSION")
        specs.append(spec)
    local = threading.local()
    clients: list[IndexClient] = []
    lock = threading.Lock()

    def one(spec: NameSpec | IndexSpec) -> Discovered:
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = IndexClient(cache, index_url, offline=offline)
            with lock:
                clients.append(client)
        try:
            return _discover_one(client, cache, spec, upstream, release_version, as_of)
        except SourceError as error:
            return Discovered(spec.name, None, (), "", None, f"metadata not read: {error}")

    try:
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(specs) or 1))) as pool:
            return list(pool.map(one, specs))
    finally:
        for client in clients:
            client.close()


def release_before(listing: ProjectListing, as_of: datetime) -> str | None:
    """The highest final release of `listing` whose first file was uploaded before `as_of`; None when
    there is none, or the index gives no upload times."""
    best: Version | None = None
    for version, files in listing.by_version().items():
        if version.is_prerelease or version.is_devrelease:
            continue
        times = [f.upload_time for f in files if f.upload_time and not f.yanked]
        if not times or datetime.fromisoformat(min(times)) >= as_of:
            continue
        if best is None or version > best:
            best = version
    return str(best) if best is not None else None


def upload_time(listing: ProjectListing, version: str | None) -> datetime | None:
    """When `version` of `listing` was first uploaded (its earliest file), when the index says."""
    if version is None:
        return None
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    times = [f.upload_time for f in listing.files if f.upload_time and Version(f.version) == wanted]
    return datetime.fromisoformat(min(times)) if times else None


def _discover_one(
    client: IndexClient,
    cache: Cache,
    spec: NameSpec | IndexSpec,
    upstream: str,
    release_version: str | None,
    as_of: datetime | None = None,
) -> Discovered:
    listing = client.project(spec.name)
    if as_of is not None and not isinstance(spec, IndexSpec):
        before = release_before(listing, as_of)
        if before is None:
            when = as_of.date().isoformat()
            return Discovered(listing.name, None, (), "", None, f"no release of {listing.name} before {when}")
        spec = parse_spec(f"{spec.name}=={before}", "upstream")  # type: ignore[assignment]
    release = select_release(listing, spec if isinstance(spec, IndexSpec) else None)
    files = [f for f in listing.files if f.version == release.version and not f.yanked] or [release.file]
    requires, how = _requires_of(client, cache, listing.name, release.version, files)
    name = listing.name
    if requires is None:  # an sdist whose metadata does not list them: the job reads the project itself
        dependent = Dependent(f"{name}=={release.version}", name, origin="discover")
        return Discovered(name, release.version, (), how, dependent, None)
    named = requirements_on(requires, upstream)
    if not named:
        return Discovered(
            name, release.version, (), how, None, f"{name} {release.version} does not require {upstream}"
        )
    pin = pin_excluding(requires, upstream, release_version)
    dependent = Dependent(f"{name}=={release.version}", name, pin=pin, origin="discover")
    return Discovered(name, release.version, tuple(str(r) for r in named), how, dependent)


def _requires_of(
    client: IndexClient, cache: Cache, name: str, version: str, files: list[IndexFile]
) -> tuple[tuple[str, ...] | None, str]:
    """Requires-Dist of one release: from the PEP 658 file, else from the smallest file."""
    page = _metadata_links(client, name)
    for file in sorted(files, key=lambda f: (f.kind != "wheel", f.filename)):
        link = page.get(file.filename)
        if link is not None:
            text = _cached_or(cache, file, functools.partial(_get_metadata, client, *link))
            return _parse_requires(text, static=True), "metadata"
    smallest = choose_file(files)
    text = _cached_or(cache, smallest, lambda: _metadata_from_file(client, smallest))
    return _parse_requires(text, static=smallest.kind == "wheel"), smallest.kind


def _metadata_links(client: IndexClient, name: str) -> dict[str, tuple[str, str | None]]:
    """filename -> (metadata URL, its sha256) for the files whose core metadata the index serves."""
    if client.offline:
        return {}
    # The same capped, deadlined request as the listing (`IndexClient.project`), kept whole here for
    # the metadata links and digests the listing does not store.
    page = client.project_page(name)
    links = {}
    for package in page.packages:
        if getattr(package, "has_metadata", None) and package.metadata_url:
            digests = {k.lower(): v for k, v in (package.metadata_digests or {}).items()}
            links[package.filename] = (package.metadata_url, digests.get("sha256"))
    return links


def _cached_or(cache: Cache, file: IndexFile, read: Callable[[], str]) -> str:
    key = file.sha256 or hashlib.sha256(file.url.encode()).hexdigest()
    path = cache.root / "impact-metadata" / f"{path_component(key)}.txt"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    text = read()
    try:
        atomic_write_text(cache.write_path(path), text)
    except OSError:
        pass
    return text


def _get_metadata(client: IndexClient, url: str, sha256: str | None) -> str:
    if client.offline:
        raise SourceError("offline: the core metadata is not in the cache")
    data = client.small_file(url, "the core metadata", MAX_METADATA_BYTES)
    if sha256 and hashlib.sha256(data).hexdigest() != sha256.lower():
        raise SourceError("the core metadata does not match the sha256 the index publishes; refused")
    return data.decode("utf-8", errors="replace")


def _metadata_from_file(client: IndexClient, file: IndexFile) -> str:
    if file.size is not None and file.size > MAX_PROBE_DOWNLOAD_BYTES:
        raise SourceError(
            f"{file.filename} is larger than {MAX_PROBE_DOWNLOAD_BYTES} bytes and the index serves no metadata file"
        )
    saved = client.max_download_bytes
    client.max_download_bytes = min(saved, MAX_PROBE_DOWNLOAD_BYTES)
    try:
        archive, _digest = client.download(file)
    finally:
        client.max_download_bytes = saved
    try:
        return read_archive_metadata(archive)
    finally:
        remove_download(archive)


def read_archive_metadata(archive: Path) -> str:
    """The METADATA of a wheel, or the PKG-INFO of an sdist with requires.txt folded in; bounded."""
    name = archive.name.lower()
    try:
        if name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(archive) as zipped:
                members = zipped.infolist()[:MAX_MEMBERS]
                wanted = [
                    m
                    for m in members
                    if m.filename.count("/") == 1 and m.filename.endswith(".dist-info/METADATA")
                ]
                wanted = wanted or [
                    m for m in members if m.filename.count("/") == 1 and m.filename.endswith("/PKG-INFO")
                ]
                if not wanted or wanted[0].file_size > MAX_METADATA_BYTES:
                    raise SourceError(f"{archive.name} has no readable core metadata")
                with zipped.open(wanted[0]) as handle:
                    return handle.read(MAX_METADATA_BYTES).decode("utf-8", errors="replace")
        with tarfile.open(archive) as tarred:
            pkg_info = requires_txt = None
            for count, member in enumerate(tarred):
                if count > MAX_MEMBERS:
                    break
                parts = member.name.split("/")
                if not member.isfile() or member.size > MAX_METADATA_BYTES:
                    continue
                if len(parts) == 2 and parts[1] == "PKG-INFO":
                    pkg_info = _member_text(tarred, member)
                elif parts[-1] == "requires.txt" and parts[-2].endswith(".egg-info") and len(parts) <= 4:
                    requires_txt = requires_txt or _member_text(tarred, member)
            if pkg_info is None:
                raise SourceError(f"{archive.name} has no PKG-INFO")
            if requires_txt and "Requires-Dist" not in pkg_info:
                pkg_info = _fold_requires_txt(pkg_info, requires_txt)
            return pkg_info
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError) as error:
        raise SourceError(f"cannot read {archive.name}: {type(error).__name__}") from None


def _member_text(tarred: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    handle = tarred.extractfile(member)
    return handle.read(MAX_METADATA_BYTES).decode("utf-8", errors="replace") if handle else ""


def _fold_requires_txt(pkg_info: str, requires_txt: str) -> str:
    lines, extra, marker = [], "", ""
    for raw in requires_txt.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            extra, _, marker = line[1:-1].partition(":")
            continue
        conditions = [f"({marker})"] if marker else []
        if extra:
            conditions.append(f'extra == "{extra}"')
        lines.append(f"Requires-Dist: {line}" + (f"; {' and '.join(conditions)}" if conditions else ""))
    head, sep, body = pkg_info.partition("\n\n")
    return head.rstrip("\n") + "\n" + "\n".join(lines) + "\n" + sep + body


def _parse_requires(text: str, *, static: bool) -> tuple[str, ...] | None:
    """Requires-Dist lines; None when the metadata does not say (an old sdist's PKG-INFO)."""
    headers = HeaderParser().parse(io.StringIO(text), headersonly=True)
    requires = headers.get_all("Requires-Dist")
    if requires is None:
        if static:  # a wheel's (or a PEP 658 file's) metadata lists every requirement
            return ()
        version = (headers.get("Metadata-Version") or "").strip()
        # From metadata 2.2 on, an sdist's absent Requires-Dist is a declaration, unless dynamic.
        dynamic = {d.strip().lower() for d in headers.get_all("Dynamic") or []}
        if (
            version
            and Version(version if _is_version(version) else "0") >= Version("2.2")
            and "requires-dist" not in dynamic
        ):
            return ()
        return None
    return tuple(r.strip() for r in requires)


def _is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
