"""The package-index client: a project name -> its `ProjectListing`; a spec -> a `Release` (version and file); a file -> a verified archive `Path`.

Speaks the simple repository API through `pypi_simple` (PEP 691 JSON, PEP 503 HTML fallback). Listings
are cached so that `--offline` can still resolve specifiers; archives are checked against the sha256
the index publishes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import time
import uuid
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import pypi_simple
import requests
import urllib3
from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from .. import __version__
from .cache import Cache, atomic_write_text
from .specs import IndexSpec, SourceError, normalize_name

DEFAULT_MAX_DOWNLOAD_BYTES = 1 << 30
DEFAULT_TIMEOUT = (10.0, 60.0)  # (connect, read) seconds
DEFAULT_RETRIES = 3
LISTING_FORMAT = 1
_CHUNK = 1 << 16
_RETRY_STATUSES = (429, 500, 502, 503, 504)
_OTHER_TAR_SUFFIXES = (".tgz", ".tar.bz2", ".tbz", ".tbz2", ".tar.xz", ".txz")

FileKind = Literal["wheel", "sdist"]


def resolve_index_url(explicit: str | None = None) -> str:
    """The index to use: the explicit argument, else `$PIP_INDEX_URL`, else pypi_simple's default endpoint."""
    return explicit or os.environ.get("PIP_INDEX_URL") or pypi_simple.PYPI_SIMPLE_ENDPOINT


def redact_url(url: str) -> str:
    """`url` without any user:password, for messages and cache keys."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=host))


def index_key(url: str) -> str:
    """Short stable key of an index, naming its folder of cached listings."""
    return hashlib.sha256(redact_url(url).rstrip("/").encode()).hexdigest()[:16]


@dataclass(frozen=True)
class IndexFile:
    """One distribution file of a project as the index lists it."""

    filename: str
    url: str
    version: str  # normalized PEP 440 version parsed from the filename
    kind: FileKind
    pure: bool  # a py3-none-any (or py2.py3-none-any) wheel
    sha256: str | None
    size: int | None
    yanked: bool = False
    yanked_reason: str | None = None


@dataclass(frozen=True)
class ProjectListing:
    """The wheels and sdists of one project on one index."""

    name: str
    index_url: str  # redacted
    files: tuple[IndexFile, ...]

    def by_version(self) -> dict[Version, list[IndexFile]]:
        groups: dict[Version, list[IndexFile]] = {}
        for file in self.files:
            groups.setdefault(Version(file.version), []).append(file)
        return groups

    def to_json(self) -> str:
        return json.dumps(
            {"format": LISTING_FORMAT, "name": self.name, "index_url": self.index_url,
             "files": [asdict(f) for f in self.files]},
            indent=1,
        )  # fmt: skip

    @classmethod
    def from_json(cls, text: str) -> ProjectListing | None:
        try:
            data = json.loads(text)
            if data.get("format") != LISTING_FORMAT:
                return None
            files = tuple(IndexFile(**f) for f in data["files"])
            return cls(name=data["name"], index_url=data["index_url"], files=files)
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


@dataclass(frozen=True)
class Release:
    """The version chosen for a spec and the file to read it from."""

    version: str
    file: IndexFile
    note: str | None = None


# --- filenames -----------------------------------------------------------------------------------


def _is_pure(tags: Iterable[Tag]) -> bool:
    return any(
        t.abi == "none" and t.platform == "any" and t.interpreter.startswith("py3") for t in tags
    )


def classify_filename(filename: str, fallback_version: str | None = None) -> tuple[FileKind, str, bool] | None:
    """(kind, normalized version, pure) of a wheel or sdist filename; None for other files (eggs, installers...)."""
    if filename.endswith(".whl"):
        try:
            _name, version, _build, tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, InvalidVersion):
            return None
        return "wheel", str(version), _is_pure(tags)
    lower = filename.lower()
    if lower.endswith((".tar.gz", ".zip", *_OTHER_TAR_SUFFIXES)):
        probe = filename
        for suffix in _OTHER_TAR_SUFFIXES:
            if lower.endswith(suffix):  # parse_sdist_filename knows only .tar.gz and .zip
                probe = filename[: -len(suffix)] + ".tar.gz"
        try:
            _name, version = parse_sdist_filename(probe)
        except (InvalidSdistFilename, InvalidVersion):
            # Legacy names (e.g. a hyphen in the project name) that pypi_simple's own parser split.
            try:
                version = Version(fallback_version or "")
            except InvalidVersion:
                return None
        return "sdist", str(version), False
    return None


def _file_from_package(pkg: pypi_simple.DistributionPackage) -> IndexFile | None:
    parsed = classify_filename(pkg.filename, pkg.version if pkg.package_type == "sdist" else None)
    if parsed is None:
        return None
    kind, version, pure = parsed
    digests = {k.lower(): v for k, v in pkg.digests.items()}
    return IndexFile(
        filename=pkg.filename,
        url=pkg.url,
        version=version,
        kind=kind,
        pure=pure,
        sha256=digests["sha256"].lower() if digests.get("sha256") else None,
        size=pkg.size,
        yanked=pkg.is_yanked,
        yanked_reason=pkg.yanked_reason or None,
    )


# --- choosing a version and a file ---------------------------------------------------------------


def choose_file(files: Iterable[IndexFile]) -> IndexFile:
    """The smallest file carrying the Python sources: a pure wheel or the sdist, else any wheel.

    Unknown sizes sort last; ties prefer a wheel (its metadata lists the import names), then the name.
    """
    files = list(files)
    pool = [f for f in files if f.kind == "sdist" or f.pure] or [f for f in files if f.kind == "wheel"]
    if not pool:
        raise ValueError("no wheel or sdist to choose from")
    return min(pool, key=lambda f: (f.size is None, f.size or 0, f.kind != "wheel", f.filename))


def _fmt(versions: Iterable[Version]) -> str:
    return ", ".join(str(v) for v in versions)


def _nearest(versions: list[Version], target: Version | None, count: int = 3) -> list[Version]:
    ordered = sorted(versions)
    if target is None:
        return ordered[-count:]
    at = bisect.bisect_left(ordered, target)
    return ordered[max(0, at - count) : at + count]


def _spec_target(spec: IndexSpec) -> Version | None:
    found: list[Version] = []
    for item in spec.specifier:
        try:
            found.append(Version(item.version.removesuffix(".*")))
        except InvalidVersion:
            continue
    return min(found) if found else None


def select_release(listing: ProjectListing, spec: IndexSpec | None) -> Release:
    """The highest version matching `spec` (None: the latest release) that has a usable file.

    Pre-releases count only when the specifier names one; yanked files only for an exact pin.
    """
    groups = listing.by_version()
    if not groups:
        raise SourceError(f"{listing.name} has no wheel or sdist on the index {listing.index_url}")
    pinned = spec.pinned if spec else None
    allow_pre = spec.allows_prereleases if spec else False
    label = str(spec.specifier) if spec else "any version"

    def matches(v: Version) -> bool:
        return spec is None or spec.specifier.contains(v, prereleases=True)

    matching = sorted((v for v in groups if matches(v)), reverse=True)
    eligible = [v for v in matching if allow_pre or not v.is_prerelease]
    for version in eligible:
        usable = [f for f in groups[version] if not f.yanked]
        if usable:
            return Release(str(version), choose_file(usable))

    if pinned is not None and eligible:
        version = eligible[0]
        file = choose_file(groups[version])
        reason = f" ({file.yanked_reason})" if file.yanked_reason else ""
        note = f"{listing.name} {version} is yanked on the index{reason}; used because it was pinned exactly"
        return Release(str(version), file, note)

    if spec is None and matching:  # only pre-releases (or only yanked files) exist: take the newest
        for version in matching:
            usable = [f for f in groups[version] if not f.yanked]
            if usable:
                note = f"{listing.name} has no final release: using the pre-release {version}"
                return Release(str(version), choose_file(usable), note)

    if eligible:
        raise SourceError(
            f"every release of {listing.name} matching {label} is yanked ({_fmt(eligible[:5])}); "
            f"pin one exactly (=={eligible[0]}) to use it"
        )
    if matching:
        raise SourceError(
            f"only pre-releases of {listing.name} match {label} ({_fmt(matching[:5])}); "
            f"name one (=={matching[0]}) to use it"
        )
    released = [v for v in groups if any(not f.yanked for f in groups[v])] or list(groups)
    finals = [v for v in released if not v.is_prerelease] or released
    nearest = _nearest(finals, pinned or (_spec_target(spec) if spec else None))
    raise SourceError(f"{listing.name} has no release matching {label}; nearest: {_fmt(nearest)}")


# --- the client ----------------------------------------------------------------------------------


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__


class IndexClient:
    """Talks to one index; never touches the network when `offline`.

    Use as a context manager (or call `close`) so its HTTP connections are released.
    """

    def __init__(
        self,
        cache: Cache,
        index_url: str | None = None,
        *,
        offline: bool = False,
        max_download_bytes: int = DEFAULT_MAX_DOWNLOAD_BYTES,
        timeout: tuple[float, float] = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = 0.5,
    ) -> None:
        self.cache = cache
        self.index_url = resolve_index_url(index_url)
        self.display_url = redact_url(self.index_url)
        self.offline = offline
        self.max_download_bytes = max_download_bytes
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._client: pypi_simple.PyPISimple | None = None

    def __enter__(self) -> IndexClient:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.s.close()
            self._client = None

    @property
    def client(self) -> pypi_simple.PyPISimple:
        if self.offline:  # a guard: callers check first and explain what is missing
            raise SourceError("offline: the index cannot be asked")
        if self._client is None:
            session = requests.Session()
            session.headers["User-Agent"] = f"apidrift/{__version__}"
            # Connection errors and 5xx answers are retried with exponential backoff.
            retry = Retry(
                total=self.retries,
                connect=self.retries,
                read=self.retries,
                status=self.retries,
                backoff_factor=self.backoff,
                status_forcelist=_RETRY_STATUSES,
                allowed_methods=frozenset({"GET", "HEAD"}),
                raise_on_status=False,
            )
            adapter = HTTPAdapter(max_retries=retry)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._client = pypi_simple.PyPISimple(endpoint=self.index_url, session=session)
        return self._client

    # listings

    def listing_path(self, name: str) -> Path:
        return self.cache.index_file(index_key(self.index_url), normalize_name(name))

    def cached_listing(self, name: str) -> ProjectListing | None:
        try:
            return ProjectListing.from_json(self.listing_path(name).read_text(encoding="utf-8"))
        except OSError:
            return None

    def project(self, name: str) -> ProjectListing:
        """The project's files, from the index (and then cached), or from the cache only when offline."""
        if self.offline:
            cached = self.cached_listing(name)
            if cached is None:
                raise SourceError(
                    f"offline: the index listing of {name} ({self.display_url}) is not in the cache "
                    f"{self.cache.root}; run once without --offline"
                )
            return cached
        try:
            with warnings.catch_warnings():
                # A newer minor version of the simple API is still readable; don't fail on the warning.
                warnings.simplefilter("ignore", pypi_simple.UnexpectedRepoVersionWarning)
                page = self.client.get_project_page(name, timeout=self.timeout)
        except pypi_simple.NoSuchProjectError:
            raise SourceError(f"no distribution named {name!r} on the index {self.display_url}") from None
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "an error"
            raise SourceError(f"the index {self.display_url} answered {status} for {name}") from None
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            raise SourceError(
                f"cannot reach the index {self.display_url}: {_short(exc)} (--offline uses the cache only)"
            ) from None
        except (ValueError, pypi_simple.UnsupportedRepoVersionError) as exc:
            raise SourceError(f"cannot read the index page of {name} at {self.display_url}: {_short(exc)}") from None
        files = tuple(f for f in map(_file_from_package, page.packages) if f is not None)
        listing = ProjectListing(name=page.project or name, index_url=self.display_url, files=files)
        atomic_write_text(self.listing_path(name), listing.to_json())
        return listing

    # downloads

    def cached_download(self, file: IndexFile) -> Path | None:
        if not file.sha256:
            return None
        path = self.cache.root / "downloads" / file.sha256[:16] / file.filename
        return path if path.is_file() else None

    def download(self, file: IndexFile) -> tuple[Path, str]:
        """Download `file` into the cache; return its path and sha256. The published sha256 must match."""
        cached = self.cached_download(file)
        if cached is not None:
            return cached, file.sha256 or ""
        if self.offline:
            raise SourceError(f"offline: {file.filename} is not in the cache {self.cache.root}")
        if "/" in file.filename or "\\" in file.filename or file.filename.startswith("."):
            raise SourceError(f"the index lists an unsafe file name {file.filename!r}")
        staging = self.cache.downloads
        part = staging / f".{file.filename}.{uuid.uuid4().hex[:8]}.part"
        digest = ""
        for attempt in range(self.retries + 1):
            try:
                digest = self._fetch(file, part)
                break
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                    urllib3.exceptions.HTTPError) as exc:  # fmt: skip
                part.unlink(missing_ok=True)
                if attempt == self.retries:
                    raise SourceError(
                        f"cannot download {file.filename} after {attempt + 1} attempts: {_short(exc)}"
                    ) from None
                time.sleep(self.backoff * 2**attempt)
            except BaseException:
                part.unlink(missing_ok=True)
                raise
        if file.sha256 and digest != file.sha256:
            part.unlink(missing_ok=True)
            raise SourceError(
                f"sha256 mismatch for {file.filename}: the index publishes {file.sha256}, the download is "
                f"{digest}; refused, and the partial file was deleted"
            )
        final = staging / digest[:16] / file.filename
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, final)
        return final, digest

    def _fetch(self, file: IndexFile, part: Path) -> str:
        limit = self.max_download_bytes
        too_big = f"{file.filename} is larger than the download limit of {limit} bytes; refused"
        if file.size is not None and file.size > limit:
            raise SourceError(too_big)
        with self.client.s.get(file.url, stream=True, timeout=self.timeout) as response:
            if response.status_code >= 400:
                raise SourceError(f"downloading {file.filename} failed: HTTP {response.status_code}")
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > limit:
                raise SourceError(too_big)
            sha = hashlib.sha256()
            received = 0
            with open(part, "wb") as out:
                # Raw bytes: the published digest is of the file, not of any transfer encoding's decoding.
                for chunk in response.raw.stream(_CHUNK, decode_content=False):
                    received += len(chunk)
                    if received > limit:
                        raise SourceError(too_big)
                    sha.update(chunk)
                    out.write(chunk)
        return sha.hexdigest()

