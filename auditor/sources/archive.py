"""Safe extraction of sdists and wheels: an archive `Path` -> a folder with `tree/` (.py/.pyi/.pyx and metadata files) and `manifest.json`.

Nothing read is executed. Only Python and Cython sources and small metadata files are written; unsafe entries
(absolute paths, `..`, links, devices, non-UTF-8 names) are skipped and counted; compiled extension
modules are recorded by path, never extracted. Work happens in a temporary sibling folder that is
renamed into place, so a folder that exists with its manifest is complete.
"""

from __future__ import annotations

import errno
import json
import lzma
import os
import re
import shutil
import stat
import tarfile
import uuid
import zipfile
import zlib
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from apidrift.auditor.core.wording import first_line
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.sources.specs import SourceError

ArchiveKind = Literal["wheel", "sdist"]
MANIFEST = "manifest.json"
TREE = "tree"
MANIFEST_FORMAT = 2  # 2: Cython sources (.pyx, .pyx.in) are extracted too

_TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tbz2", ".tar.xz", ".txz", ".tar")
# Python sources and stubs, and Cython sources: an sdist's compiled modules, whose `__all__` they show.
_SOURCE_SUFFIXES = (".py", ".pyi", ".pyx", ".pyx.in")
CYTHON_SUFFIXES = (".pyx", ".pyx.in")
_METADATA_NAMES = frozenset(
    {"PKG-INFO", "METADATA", "top_level.txt", "RECORD", "pyproject.toml", "setup.cfg", "requires.txt"}
)
_COMPILED_RE = re.compile(r"^(?P<module>[A-Za-z_][A-Za-z0-9_]*)(\.[A-Za-z0-9_-]+)*\.(so|pyd)$")
_CHUNK = 1 << 16
MAX_PATH_PARTS = (
    64  # deeper entries are skipped: no real package nests so, and deep trees strain every walker
)
_BAD_NAME_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.EINVAL, errno.EILSEQ})


@dataclass(frozen=True)
class ExtractLimits:
    """Bounds that turn archive bombs into a clean `SourceError`."""

    max_bytes: int = 512 * 1024 * 1024  # total bytes written
    max_files: int = 100_000  # files written
    max_metadata_file_bytes: int = 16 * 1024 * 1024  # one metadata file ("small text files" only)
    max_entries: int = 1_000_000  # archive entries looked at, written or not
    max_scanned_bytes: int = 8 * 1024 * 1024 * 1024  # tar only: bytes decompressed to walk past entries

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ExtractLimits:
        """The defaults, with `APIDRIFT_MAX_EXTRACT_BYTES` / `_FILES` / `_ENTRIES` overriding them when set."""
        environ = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for field_name, variable in _LIMIT_VARIABLES.items():
            text = environ.get(variable, "").strip()
            if not text:
                continue
            try:
                value = int(text.replace("_", ""))
            except ValueError:
                value = 0
            if value <= 0:
                raise SourceError(f"{variable}={text!r}: expected a positive whole number")
            values[field_name] = value
        return cls(**values)


_LIMIT_VARIABLES = {
    "max_bytes": "APIDRIFT_MAX_EXTRACT_BYTES",
    "max_files": "APIDRIFT_MAX_EXTRACT_FILES",
    "max_entries": "APIDRIFT_MAX_EXTRACT_ENTRIES",
}


@dataclass(frozen=True)
class Extraction:
    """What one extraction produced, as recorded in its manifest."""

    folder: Path  # holds manifest.json and tree/
    kind: ArchiveKind
    files: int
    bytes: int
    compiled: tuple[str, ...]  # POSIX paths, relative to tree/, of .so/.pyd modules (not extracted)
    skipped: Mapping[str, int]  # reason -> count
    stripped: str | None  # the sdist's top-level folder that was removed from every path
    info: Mapping[str, Any] = field(default_factory=dict)  # caller's facts (filename, sha256, version...)

    @property
    def tree(self) -> Path:
        return self.folder / TREE


def archive_kind(filename: str) -> ArchiveKind | None:
    """The kind of archive a file name says: "wheel" for .whl, "sdist" for .zip and tar archives, else None."""
    lower = filename.lower()
    if lower.endswith(".whl"):
        return "wheel"
    if lower.endswith(".zip") or lower.endswith(_TAR_SUFFIXES):
        return "sdist"
    return None


def cython_module_name(relpath: str) -> str | None:
    """`pkg/linalg/_decomp_update.pyx.in` -> `pkg.linalg._decomp_update`; None if not a module path."""
    *folders, filename = relpath.split("/")
    stem = next((filename[: -len(s)] for s in CYTHON_SUFFIXES if filename.endswith(s)), None)
    if not stem or not stem.isidentifier() or not all(part.isidentifier() for part in folders):
        return None
    return ".".join([*folders, stem])


def compiled_module_name(relpath: str) -> str | None:
    """`pkg/sub/_ext.cpython-311-x86_64-linux-gnu.so` -> `pkg.sub._ext`; None if not a module path."""
    *folders, filename = relpath.split("/")
    match = _COMPILED_RE.match(filename)
    if not match or not all(part.isidentifier() for part in folders):
        return None
    return ".".join([*folders, match.group("module")])


# --- reading archives as a uniform stream of entries ---------------------------------------------

EntryType = Literal["file", "dir", "link", "other"]


@dataclass
class _Entry:
    name: str  # decoded path as stored, "" when the name is not valid UTF-8
    type: EntryType
    size: int
    open: Callable[[], IO[bytes]]


MAX_TAR_HEADER_BYTES = (
    1024 * 1024
)  # a pax extended header or GNU long name: real ones are a few hundred bytes
_EXTENDED_HEADER_TYPES = frozenset({tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE,
                                    tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK})  # fmt: skip


class _BoundedTarInfo(tarfile.TarInfo):
    """A member whose extended header (pax, GNU long name) is refused before tarfile reads it into memory.

    tarfile buffers such a header whole, whatever size it declares: 2 GiB of zeros compress into a
    2 MB archive. The declared size is checked here, before `_proc_pax`/`_proc_gnulong` read it.
    """

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in _EXTENDED_HEADER_TYPES and self.size > MAX_TAR_HEADER_BYTES:
            name = Path(str(getattr(tarfile_, "name", "") or "archive")).name
            raise SourceError(
                f"{name}: an extended tar header of {self.size} bytes (more than {MAX_TAR_HEADER_BYTES}); refused"
            )
        return super()._proc_member(tarfile_)  # type: ignore[misc]  # TarInfo's private hook, absent from typeshed


def _tar_entries(path: Path, limits: ExtractLimits) -> Generator[_Entry, None, None]:
    # "r:*" sniffs the compression, so a mislabelled but valid tar still reads; garbage raises ReadError.
    with tarfile.open(
        path, mode="r:*", encoding="utf-8", errors="surrogateescape", tarinfo=_BoundedTarInfo
    ) as tar:
        scanned = 0
        for member in tar:
            scanned += max(member.size, 0)
            if scanned > limits.max_scanned_bytes:
                raise SourceError(
                    f"{path.name}: the archive holds more than {limits.max_scanned_bytes} bytes; refused"
                )
            if member.isfile():
                kind: EntryType = "file"
            elif member.isdir():
                kind = "dir"
            elif member.issym() or member.islnk():
                kind = "link"
            else:
                kind = "other"
            name = member.name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:  # surrogates: the stored name was not UTF-8
                name = ""

            def opener(member: tarfile.TarInfo = member) -> IO[bytes]:
                handle = tar.extractfile(member)
                if handle is None:  # pragma: no cover - isfile() members always have data
                    raise tarfile.ReadError(f"no data for {member.name}")
                return handle

            yield _Entry(name=name, type=kind, size=member.size, open=opener)


def _zip_entries(path: Path) -> Generator[_Entry, None, None]:
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = info.filename
            if not info.flag_bits & 0x800:
                # Without the UTF-8 flag zipfile decoded the name as cp437; recover the raw bytes, which
                # are UTF-8 (or ASCII) in every well-formed wheel or sdist.
                try:
                    name = name.encode("cp437").decode("utf-8")
                except UnicodeError:
                    name = ""
            name = name.replace("\\", "/")  # zips made on Windows may use backslashes
            mode = info.external_attr >> 16
            if (
                not info.filename
            ):  # a nameless entry: nothing to extract (zipfile's is_dir() would fail on it)
                kind: EntryType = "other"
            elif info.is_dir():
                kind = "dir"
            elif stat.S_ISLNK(mode):
                kind = "link"
            elif stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                kind = "other"
            else:
                kind = "file"

            def opener(info: zipfile.ZipInfo = info) -> IO[bytes]:
                return archive.open(info)

            yield _Entry(name=name, type=kind, size=info.file_size, open=opener)


# --- path checks ---------------------------------------------------------------------------------


def _safe_parts(name: str) -> tuple[str, ...] | None:
    """The path's components, or None when the path is absolute, escapes with `..` or is otherwise unsafe."""
    if not name or "\x00" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    parts = tuple(part for part in name.split("/") if part not in ("", "."))
    if not parts or ".." in parts:
        return None
    return parts


def _wheel_install_parts(parts: tuple[str, ...]) -> tuple[str, ...] | None:
    """Where a wheel entry lands relative to site-packages; None for .data files that land elsewhere."""
    if parts[0].endswith(".data"):
        if len(parts) > 2 and parts[1] in ("purelib", "platlib"):
            return parts[2:]
        return None
    return parts


def _wanted(parts: tuple[str, ...]) -> Literal["source", "metadata", "compiled"] | None:
    filename = parts[-1]
    if filename.endswith(_SOURCE_SUFFIXES):
        return "source"
    if filename in _METADATA_NAMES or (len(parts) > 1 and parts[-2].endswith((".dist-info", ".egg-info"))):
        return "metadata"
    if parts[-3:] == ("typeshed", "stdlib", "VERSIONS"):  # each stdlib module's versions (sources.stdlib)
        return "metadata"
    if filename.endswith((".so", ".pyd")) and _COMPILED_RE.match(filename):
        return "compiled"
    return None


# --- extraction ----------------------------------------------------------------------------------


class _Writer:
    """Writes accepted entries under `base`, enforcing the limits; the last of duplicate entries wins."""

    def __init__(self, base: Path, label: str, limits: ExtractLimits) -> None:
        self.base = base
        self.label = label
        self.limits = limits
        self.written: set[tuple[str, ...]] = set()
        self.bytes = 0
        self.skipped: dict[str, int] = {}

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def write(self, parts: tuple[str, ...], entry: _Entry) -> None:
        if parts not in self.written and len(self.written) >= self.limits.max_files:
            raise SourceError(f"{self.label}: more than {self.limits.max_files} files to extract; refused")
        target = self.base.joinpath(*parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                raise IsADirectoryError(str(target))
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            # An entry that is both a file and a folder (`a.py` and `a.py/b.py`): keep whichever came first.
            self.skip("path conflict")
            return
        except OSError as error:
            if error.errno in _BAD_NAME_ERRNOS:  # a component longer than the file system allows...
                self.skip("name the file system refuses")
                return
            raise
        if parts in self.written:
            self.skip("duplicate entry (last one kept)")
        try:
            out = open(target, "wb")
        except OSError as error:
            if error.errno in _BAD_NAME_ERRNOS:
                self.skip("name the file system refuses")
                return
            raise
        with out, entry.open() as src:  # `out` first: closed even when the entry cannot be opened
            while chunk := src.read(_CHUNK):
                self.bytes += len(chunk)
                if self.bytes > self.limits.max_bytes:
                    raise SourceError(
                        f"{self.label}: more than {self.limits.max_bytes} bytes to extract; refused"
                    )
                out.write(chunk)
        self.written.add(parts)


def _single_top_folder(top_names: set[str], has_top_file: bool) -> str | None:
    if len(top_names) == 1 and not has_top_file:
        return next(iter(top_names))
    return None


def extract_archive(
    archive: Path,
    dest: Path,
    *,
    kind: ArchiveKind | None = None,
    limits: ExtractLimits | None = None,
    info: Mapping[str, Any] | None = None,
) -> Extraction:
    """Extract `archive` into `dest` (which must not exist yet) and return what was extracted.

    `info` is stored in the manifest as is (JSON-able facts the caller wants back on a cache hit).
    Raises `SourceError` for an unreadable archive or one beyond `limits`; `dest` is then left absent.
    """
    limits = limits or ExtractLimits()
    kind = kind or archive_kind(archive.name)
    if kind is None:
        raise SourceError(f"{archive.name}: neither a wheel (.whl) nor an sdist (.tar.gz, .zip, ...)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = dest.parent / f".tmp-{dest.name}-{uuid.uuid4().hex[:8]}"
    raw = work / "raw"
    raw.mkdir(parents=True)
    writer = _Writer(raw, archive.name, limits)
    compiled: set[tuple[str, ...]] = set()
    top_names: set[str] = set()
    has_top_file = False
    is_tar = not archive.name.lower().endswith((".zip", ".whl"))
    entries = _tar_entries(archive, limits) if is_tar else _zip_entries(archive)
    try:
        count = 0
        for entry in entries:
            count += 1
            if count > limits.max_entries:
                raise SourceError(f"{archive.name}: more than {limits.max_entries} entries; refused")
            if not entry.name:
                writer.skip("name not UTF-8")
                continue
            parts = _safe_parts(entry.name)
            if parts is None:
                writer.skip("unsafe path")
                continue
            if len(parts) > MAX_PATH_PARTS:
                writer.skip("path too deep")
                continue
            top_names.add(parts[0])
            has_top_file = has_top_file or (len(parts) == 1 and entry.type != "dir")
            if entry.type == "dir":
                continue
            if entry.type == "link":
                writer.skip("link")
                continue
            if entry.type == "other":
                writer.skip("device or special file")
                continue
            if kind == "wheel":
                parts = _wheel_install_parts(parts)
                if parts is None:
                    continue
            want = _wanted(parts)
            if want is None:
                continue
            if want == "compiled":
                compiled.add(parts)
            elif want == "metadata" and entry.size > limits.max_metadata_file_bytes:
                writer.skip("large metadata file")
            else:
                writer.write(parts, entry)
    except SourceError:
        shutil.rmtree(work, ignore_errors=True)
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, lzma.LZMAError,
            NotImplementedError, RuntimeError) as exc:  # fmt: skip
        shutil.rmtree(work, ignore_errors=True)
        what = "sdist" if kind == "sdist" else "wheel"
        raise SourceError(f"{archive.name} is not a readable {what} archive: {first_line(exc)}") from None
    except OSError as exc:  # corrupt compressed data (bz2, gzip) or a failed write
        shutil.rmtree(work, ignore_errors=True)
        raise SourceError(f"cannot extract {archive.name}: {first_line(exc)}") from None
    except (
        Exception
    ) as exc:  # anything else a damaged archive makes tarfile or zipfile raise (found by fuzzing)
        shutil.rmtree(work, ignore_errors=True)
        what = "sdist" if kind == "sdist" else "wheel"
        raise SourceError(
            f"{archive.name} is not a readable {what} archive: {type(exc).__name__}: {first_line(exc)}"
        ) from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        entries.close()  # closes the archive now, not whenever the generator is collected

    stripped = _single_top_folder(top_names, has_top_file) if kind == "sdist" else None
    if stripped is not None:
        inner = raw / stripped
        (inner if inner.is_dir() else raw).rename(work / TREE)
        compiled = {parts[1:] for parts in compiled if len(parts) > 1}
    else:
        raw.rename(work / TREE)
    shutil.rmtree(raw, ignore_errors=True)

    extraction = Extraction(
        folder=dest,
        kind=kind,
        files=len(writer.written),
        bytes=writer.bytes,
        compiled=tuple(sorted("/".join(parts) for parts in compiled)),
        skipped=dict(sorted(writer.skipped.items())),
        stripped=stripped,
        info=dict(info or {}),
    )
    atomic_write_text(work / MANIFEST, json.dumps(_manifest_data(extraction), indent=1, sort_keys=True))
    try:
        os.rename(work, dest)
    except OSError:
        # Another process extracted the same archive meanwhile: theirs is as good as ours.
        shutil.rmtree(work, ignore_errors=True)
        existing = read_extraction(dest)
        if existing is None:
            raise SourceError(f"cannot move the extracted {archive.name} into {dest}") from None
        return existing
    return extraction


def _manifest_data(extraction: Extraction) -> dict[str, Any]:
    return {
        "format": MANIFEST_FORMAT,
        "kind": extraction.kind,
        "files": extraction.files,
        "bytes": extraction.bytes,
        "compiled": list(extraction.compiled),
        "skipped": dict(extraction.skipped),
        "stripped": extraction.stripped,
        "info": dict(extraction.info),
    }


def read_extraction(folder: Path) -> Extraction | None:
    """The extraction in `folder` from its manifest, or None when absent, incomplete or of another format."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT or not (folder / TREE).is_dir():
        return None
    try:
        return Extraction(
            folder=folder,
            kind=data["kind"],
            files=int(data["files"]),
            bytes=int(data["bytes"]),
            compiled=tuple(str(p) for p in data["compiled"]),
            skipped={str(k): int(v) for k, v in data["skipped"].items()},
            stripped=data["stripped"],
            info=dict(data.get("info") or {}),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
