"""The package-index client: a project name -> its `ProjectListing`; a spec -> a `Release` (version and file); a file -> a verified archive `Path`.

Speaks the simple repository API through `pypi_simple` (PEP 691 JSON, PEP 503 HTML fallback). Listings
are cached so that `--offline` can still resolve specifiers; archives are checked against the sha256
the index publishes.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import os
import re
import time
import uuid
import warnings
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.version import __version__
from apidrift.auditor.core.wording import first_line
from apidrift.auditor.files import atomic_write_text
from apidrift.auditor.sources.specs import IndexSpec, SourceError, normalize_name

if TYPE_CHECKING:  # imported for real only when the index is contacted: a warm run never loads them
    import pypi_simple

log = logging.getLogger(__name__)

DEFAULT_MAX_DOWNLOAD_BYTES = 1 << 30
DEFAULT_TIMEOUT = (10.0, 60.0)  # (connect, read) seconds, per socket operation
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5  # seconds; doubled after each failed attempt
DEFAULT_MAX_DOWNLOAD_SECONDS = 10 * 60.0  # a whole download, however slowly the server trickles it
DEFAULT_MAX_LISTING_SECONDS = 120.0  # a whole index page request, headers to last byte
DEFAULT_MAX_LISTING_BYTES = (
    64 * 1024 * 1024
)  # an index page, once decoded (gzip): the largest real ones hold a few MB
LIMIT_VARIABLES = {  # environment variables that change the limits above (see docs/security.md)
    "max_listing_bytes": "APIDRIFT_MAX_LISTING_BYTES",
    "max_listing_seconds": "APIDRIFT_LISTING_TIMEOUT",
    "max_download_seconds": "APIDRIFT_DOWNLOAD_TIMEOUT",
    "max_download_bytes": "APIDRIFT_MAX_DOWNLOAD_BYTES",
}
MAX_RETRY_AFTER = 10.0  # seconds: a server's Retry-After is honoured up to this
LISTING_FORMAT = 1
_CHUNK = 1 << 16
MAX_METADATA_BYTES = 1 << 20  # a release's core metadata (PEP 658) is a few KiB
_RETRY_STATUSES = (429, 500, 502, 503, 504)
_OTHER_TAR_SUFFIXES = (".tgz", ".tar.bz2", ".tbz", ".tbz2", ".tar.xz", ".txz")

FileKind = Literal["wheel", "sdist"]


def configured_index_url(explicit: str | None = None) -> str | None:
    """The index the user chose: the explicit argument, else `$PIP_INDEX_URL`; None for the default one."""
    return explicit or os.environ.get("PIP_INDEX_URL") or None


def resolve_index_url(explicit: str | None = None) -> str:
    """The index to use: the explicit argument, else `$PIP_INDEX_URL`, else pypi_simple's default endpoint."""
    configured = configured_index_url(explicit)
    if configured:
        return configured
    # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
    import pypi_simple

    return pypi_simple.PYPI_SIMPLE_ENDPOINT


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
    metadata_url: str | None = None  # PEP 658/714: the core metadata served beside the file
    upload_time: str | None = None  # ISO 8601, UTC, when the index says it (its JSON API, PEP 700)


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
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None


@dataclass(frozen=True)
class Release:
    """The version chosen for a spec and the file to read it from."""

    version: str
    file: IndexFile
    note: str | None = None


# --- filenames -----------------------------------------------------------------------------------


def _is_pure(tags: Iterable[Tag]) -> bool:
    return any(t.abi == "none" and t.platform == "any" and t.interpreter.startswith("py3") for t in tags)


MAX_FILENAME_LENGTH = 255  # longer names cannot be stored on common file systems anyway


def _sdist_name_version(stem: str, project: str) -> tuple[str, str] | None:
    """(name, version) of an sdist's `stem` (no suffix) whose name part is `project` once normalised.

    As pip does: the project name may itself hold hyphens, so every hyphen is tried as the separator
    and the one whose prefix normalises to the project's name wins.
    """
    wanted = normalize_name(project)
    for at, char in enumerate(stem):
        if char == "-" and normalize_name(stem[:at]) == wanted:
            return stem[:at], stem[at + 1 :]
    return None


def classify_filename(
    filename: str, fallback_version: str | None = None, project: str | None = None
) -> tuple[FileKind, str, bool] | None:
    """(kind, normalized version, pure) of a wheel or sdist filename; None for other files (eggs, installers...).

    With `project`, a file whose name part is another project (PEP 427/625 names, normalised as in
    PEP 503) is None too: an index page listing `evil-9.0.tar.gz` under `uplib` offers no uplib 9.0.
    A name too long to store, or a version packaging cannot read (5,000 digits), is None: that one
    file is skipped, the rest of the listing stays usable.
    """
    if len(filename) > MAX_FILENAME_LENGTH:
        return None
    try:
        return _classify(filename, fallback_version, project)
    except ValueError:  # InvalidVersion, and int() refusing a version of thousands of digits
        return None


def _classify(
    filename: str, fallback_version: str | None, project: str | None
) -> tuple[FileKind, str, bool] | None:
    if filename.endswith(".whl"):
        try:
            name, version, _build, tags = parse_wheel_filename(filename)
        except (InvalidWheelFilename, InvalidVersion):
            return None
        if project is not None and normalize_name(name) != normalize_name(project):
            return None
        return "wheel", str(version), _is_pure(tags)
    lower = filename.lower()
    if lower.endswith((".tar.gz", ".zip", *_OTHER_TAR_SUFFIXES)):
        suffix = next(s for s in (".tar.gz", ".zip", *_OTHER_TAR_SUFFIXES) if lower.endswith(s))
        stem = filename[: -len(suffix)]
        if project is not None:
            split = _sdist_name_version(stem, project)
            if split is None:
                return None
            return "sdist", str(Version(split[1])), False
        try:
            _name, version = parse_sdist_filename(stem + ".tar.gz")  # it knows only .tar.gz and .zip
        except (InvalidSdistFilename, InvalidVersion):
            # Legacy names (e.g. a hyphen in the project name) that pypi_simple's own parser split.
            version = Version(fallback_version or "")
        return "sdist", str(version), False
    return None


def _file_from_package(pkg: pypi_simple.DistributionPackage, project: str | None = None) -> IndexFile | None:
    parsed = classify_filename(pkg.filename, pkg.version if pkg.package_type == "sdist" else None, project)
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
        metadata_url=pkg.metadata_url if pkg.has_metadata is not False else None,  # None: not said; tried
        upload_time=_iso(getattr(pkg, "upload_time", None)),
    )


def _iso(moment: object) -> str | None:
    """A file's upload time as ISO 8601 in UTC (a naive time is taken as UTC)."""
    if not isinstance(moment, datetime):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


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


def env_limit(field_name: str, default: float, environ: dict[str, str] | None = None) -> float:
    """The limit `field_name` from its environment variable (LIMIT_VARIABLES) when set, else `default`."""
    variable = LIMIT_VARIABLES[field_name]
    text = (os.environ if environ is None else environ).get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text.replace("_", ""))
    except ValueError:
        value = 0.0
    if not value > 0 or value != value or value == float("inf"):
        raise SourceError(f"{variable}={text!r}: expected a positive number")
    return value


def _short(exc: BaseException) -> str:
    return first_line(exc, default="")[:300] or type(exc).__name__


def network_failure(exc: BaseException) -> str:
    """What failed, in a few words, instead of the transport library's whole text: "cannot resolve
    the host name x", "connection refused by x:9", "timed out talking to x"..."""
    text = " ".join(str(exc).split())
    host = re.search(r"host='([^']*)'", text)
    port = re.search(r"port=(\d+)", text)
    where = f"{host.group(1)}:{port.group(1)}" if host and port else (host.group(1) if host else "the server")
    name = host.group(1) if host else "the server"
    checks = [
        (
            ("NameResolutionError", "Failed to resolve", "Name or service not known", "getaddrinfo"),
            f"cannot resolve the host name {name}",
        ),
        (("Connection refused", "Errno 111"), f"connection refused by {where}"),
        (("timed out", "Timeout", "TimeoutError"), f"timed out talking to {where}"),
        (("SSLError", "CERTIFICATE_VERIFY_FAILED", "SSL:"), f"TLS handshake with {where} failed"),
        (("ProxyError", "Unable to connect to proxy"), "cannot connect through the proxy"),
        (("Network is unreachable", "No route to host"), f"no route to {where}"),
        (("RemoteDisconnected", "Connection aborted", "Connection reset"), f"{where} closed the connection"),
    ]
    for needles, sentence in checks:
        if any(needle in text for needle in needles):
            return sentence
    return _short(exc)[:160]


class _Interrupted(Exception):
    """A download that broke off mid-body (reset, timeout, short read): worth another attempt."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(_short(cause))
        self.cause = cause


def _retry_policy(retries: int, backoff: float) -> Any:
    """urllib3's Retry for connection errors and 429/5xx answers, with a server's Retry-After capped."""
    # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
    from urllib3.util.retry import Retry

    class BoundedRetry(Retry):  # a hostile or confused server must not make us sleep for an hour
        def get_retry_after(self, response: Any) -> float | None:
            seconds = super().get_retry_after(response)
            return None if seconds is None else min(seconds, MAX_RETRY_AFTER)

    return BoundedRetry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=backoff,
        status_forcelist=_RETRY_STATUSES,
        allowed_methods=frozenset({"GET", "HEAD"}),
        raise_on_status=False,
    )


class IndexClient:
    """Talks to one index; never touches the network when `offline`.

    Use as a context manager (or call `close`) so its HTTP connections are released. The HTTP stack
    (`requests`, `pypi_simple`) is imported only when the index is actually asked something.
    Omitted tuning arguments take the module's DEFAULT_* values at construction time.
    """

    def __init__(
        self,
        cache: Cache,
        index_url: str | None = None,
        *,
        offline: bool = False,
        max_download_bytes: int | None = None,
        timeout: tuple[float, float] | None = None,
        retries: int | None = None,
        backoff: float | None = None,
        max_download_seconds: float | None = None,
        max_listing_seconds: float | None = None,
        max_listing_bytes: int | None = None,
    ) -> None:
        self.cache = cache
        self.configured_url = configured_index_url(index_url)
        self.offline = offline
        self.max_download_bytes = int(
            max_download_bytes
            if max_download_bytes is not None
            else env_limit("max_download_bytes", DEFAULT_MAX_DOWNLOAD_BYTES)
        )
        self.timeout = timeout if timeout is not None else DEFAULT_TIMEOUT
        self.retries = retries if retries is not None else DEFAULT_RETRIES
        self.backoff = backoff if backoff is not None else DEFAULT_BACKOFF
        self.max_download_seconds = (
            max_download_seconds
            if max_download_seconds is not None
            else env_limit("max_download_seconds", DEFAULT_MAX_DOWNLOAD_SECONDS)
        )
        self.max_listing_seconds = (
            max_listing_seconds
            if max_listing_seconds is not None
            else env_limit("max_listing_seconds", DEFAULT_MAX_LISTING_SECONDS)
        )
        self.max_listing_bytes = int(
            max_listing_bytes
            if max_listing_bytes is not None
            else env_limit("max_listing_bytes", DEFAULT_MAX_LISTING_BYTES)
        )
        self._client: pypi_simple.PyPISimple | None = None
        self._index_url: str | None = self.configured_url
        self._last_page: tuple[str, pypi_simple.ProjectPage] | None = None

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
    def index_url(self) -> str:
        if self._index_url is None:
            self._index_url = resolve_index_url(None)  # the default endpoint: imports pypi_simple
        return self._index_url

    @property
    def display_url(self) -> str:
        return redact_url(self.index_url)

    @property
    def uses_default(self) -> bool:
        return self.configured_url is None

    def provenance(self) -> dict[str, Any]:
        """What a cached extraction records about the index it came from (see `serves`)."""
        return {"index": self.display_url, "default_index": self.uses_default}

    def serves(self, info: Any) -> bool:
        """Whether cached `info` (from `provenance`) says it came from this index, asking the network nothing."""
        if info.get("default_index") is True and self.uses_default:
            return True  # both the default endpoint: no need to know its URL
        return info.get("index") == self.display_url

    @property
    def client(self) -> pypi_simple.PyPISimple:
        if self.offline:  # a guard: callers check first and explain what is missing
            raise SourceError("offline: the index cannot be asked")
        if self._client is None:
            # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
            import pypi_simple
            import requests
            from requests.adapters import HTTPAdapter

            session = requests.Session()
            session.headers["User-Agent"] = f"apidrift/{__version__}"
            # Connection errors and 429/5xx answers are retried with exponential backoff.
            adapter = HTTPAdapter(max_retries=_retry_policy(self.retries, self.backoff))
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            self._client = pypi_simple.PyPISimple(endpoint=self.index_url, session=session)
        return self._client

    # listings

    def listing_path(self, name: str) -> Path:
        return self.cache.index_file(index_key(self.index_url), normalize_name(name))

    def cached_listing(self, name: str) -> ProjectListing | None:
        path = self.listing_path(name)
        for candidate in dict.fromkeys([path, self.cache.write_path(path) if self.cache.fallback else path]):
            try:
                listing = ProjectListing.from_json(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                listing = None
            if listing is not None:
                return listing
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
        page = self._read_project_page(name)
        self._last_page = (normalize_name(name), page)
        try:
            # Only this project's files: a page may list another project's (or garbage names), as pip skips them.
            files = tuple(f for f in (_file_from_package(p, name) for p in page.packages) if f is not None)
            listing = ProjectListing(name=page.project or name, index_url=self.display_url, files=files)
        except Exception as exc:  # a hostile or broken page must not crash the audit
            raise SourceError(
                f"cannot read the index page of {name} at {self.display_url}: {type(exc).__name__}: {_short(exc)}"
            ) from None
        try:
            atomic_write_text(self.cache.write_path(self.listing_path(name)), listing.to_json())
        except OSError as exc:  # only `--offline` needs it later
            log.debug("cannot cache the listing of %s: %s", name, exc)
        return listing

    def project_page(self, name: str) -> pypi_simple.ProjectPage:
        """The index page of `name` as pypi_simple reads it (its metadata links and digests included),
        fetched as `project` fetches it: decoded size capped, the whole request under a deadline. The
        last page read is kept, so asking again for the project just listed costs no request."""
        if self._last_page is not None and self._last_page[0] == normalize_name(name):
            return self._last_page[1]
        page = self._read_project_page(name)
        self._last_page = (normalize_name(name), page)
        return page

    def _read_project_page(self, name: str) -> pypi_simple.ProjectPage:
        # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
        import pypi_simple
        import requests
        import urllib3

        where = self.display_url
        try:
            with warnings.catch_warnings():
                # A newer minor version of the simple API is still readable; don't fail on the warning.
                warnings.simplefilter("ignore", pypi_simple.UnexpectedRepoVersionWarning)
                return self._fetch_page(name)
        except SourceError:
            raise
        except pypi_simple.NoSuchProjectError:
            raise SourceError(f"no distribution named {name!r} on the index {where}") from None
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "an error"
            raise SourceError(f"the index {where} answered {status} for {name}") from None
        except (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema,
                requests.exceptions.InvalidSchema) as exc:  # fmt: skip
            raise SourceError(f"the index URL {where} is not usable: {_short(exc)}") from None
        except requests.exceptions.JSONDecodeError as exc:
            raise SourceError(f"cannot read the index page of {name} at {where}: {_short(exc)}") from None
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            raise SourceError(
                f"cannot reach the index {where}: {network_failure(exc)} (--offline uses the cache only)"
            ) from None
        except Exception as exc:  # unsupported content type or API version, malformed JSON or HTML...
            raise SourceError(
                f"cannot read the index page of {name} at {where}: {type(exc).__name__}: {_short(exc)}"
            ) from None

    def _fetch_page(self, name: str) -> pypi_simple.ProjectPage:
        """`PyPISimple.get_project_page`, streamed: the decoded body capped, the whole request under a deadline."""
        # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
        import pypi_simple

        client = self.client
        url = client.get_project_url(name)
        started = time.monotonic()
        headers = {"Accept": client.accept, "Accept-Encoding": "gzip, deflate"}
        response = client.s.get(url, timeout=self.timeout, headers=headers, stream=True)
        with response:
            if response.status_code == 404:
                raise pypi_simple.NoSuchProjectError(name, url)
            response.raise_for_status()
            limit = self.max_listing_bytes
            body = bytearray()
            for chunk in _read_chunks(response, decode=True):
                body += chunk
                if len(body) > limit:
                    raise SourceError(
                        f"the index page of {name} at {self.display_url} is larger than {limit} bytes (decoded); refused"
                        f" (raise {LIMIT_VARIABLES['max_listing_bytes']} if it is genuine)"
                    )
                if time.monotonic() - started > self.max_listing_seconds:
                    raise SourceError(
                        f"the index page of {name} at {self.display_url} took longer than {self.max_listing_seconds:g} s;"
                        f" refused (raise {LIMIT_VARIABLES['max_listing_seconds']} on a slow network)"
                    )
            response._content = bytes(
                body
            )  # as a non-streamed request would hold it, for pypi_simple's parser
            response._content_consumed = True
        return pypi_simple.ProjectPage.from_response(response, name)

    # core metadata (PEP 658)

    def metadata(self, file: IndexFile, limit: int = MAX_METADATA_BYTES) -> str:
        """The core metadata the index serves beside `file` (PEP 658), at most `limit` bytes."""
        if file.metadata_url is None:
            raise SourceError(f"the index serves no metadata for {file.filename}")
        data = self.small_file(file.metadata_url, f"the metadata of {file.filename}", limit)
        return data.decode("utf-8", "replace")

    def small_file(self, url: str, what: str, limit: int) -> bytes:
        """A small file the index serves (a PEP 658 metadata file): at most `limit` bytes (decoded), and
        the whole request, first byte to last, under the listing deadline (`max_listing_seconds`), so a
        server dripping a byte every few seconds cannot hold it open."""
        # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
        import requests
        import urllib3

        started = time.monotonic()
        try:
            response = self.client.s.get(url, stream=True, timeout=self.timeout)
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            raise SourceError(f"cannot read {what}: {network_failure(exc)}") from None
        with response:
            if response.status_code >= 400:
                raise SourceError(f"reading {what} failed: HTTP {response.status_code}")
            data = bytearray()
            try:
                for chunk in _read_chunks(response, decode=True):
                    data += chunk
                    if len(data) > limit:
                        raise SourceError(f"{what} is larger than {limit} bytes; refused")
                    if time.monotonic() - started > self.max_listing_seconds:
                        raise SourceError(
                            f"{what} took longer than {self.max_listing_seconds:g} s; refused"
                            f" (raise {LIMIT_VARIABLES['max_listing_seconds']} on a slow network)"
                        )
            except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
                raise SourceError(f"cannot read {what}: {_short(exc)}") from None
        return bytes(data)

    # downloads

    def download(self, file: IndexFile) -> tuple[Path, str]:
        """Download `file` into a private folder of the cache; return its path and sha256.

        The published sha256 must match. The caller deletes the file (and its folder) when done; each
        download has its own folder, so concurrent runs never read each other's partial files.
        """
        if self.offline:
            raise SourceError(f"offline: {file.filename} is not in the cache {self.cache.root}")
        if (
            "/" in file.filename
            or "\\" in file.filename
            or file.filename.startswith(".")
            or "\0" in file.filename
        ):
            raise SourceError(f"the index lists an unsafe file name {file.filename!r}")
        folder = self.cache.downloads / uuid.uuid4().hex
        folder.mkdir()
        part = folder / file.filename
        digest = ""
        try:
            for attempt in range(self.retries + 1):
                try:
                    digest = self._fetch(file, part)
                    break
                except _Interrupted as exc:
                    part.unlink(missing_ok=True)
                    if attempt == self.retries:
                        raise SourceError(
                            f"cannot download {file.filename} after {attempt + 1} attempts: {exc}"
                        ) from None
                    log.info("download of %s broke off (%s); retrying", file.filename, exc)
                    time.sleep(self.backoff * 2**attempt)
            if file.sha256 and digest != file.sha256:
                raise SourceError(
                    f"sha256 mismatch for {file.filename}: the index publishes {file.sha256}, the download is "
                    f"{digest}; refused, and the partial file was deleted"
                )
        except BaseException:
            remove_download(part)
            raise
        return part, digest

    def _fetch(self, file: IndexFile, part: Path) -> str:
        # lazy: the HTTP stack (pypi_simple, requests, ssl: 0.47 s) loads only when the index is asked
        import requests
        import urllib3

        limit = self.max_download_bytes
        too_big = f"{file.filename} is larger than the download limit of {limit} bytes; refused"
        if file.size is not None and file.size > limit:
            raise SourceError(too_big)
        started = time.monotonic()
        try:
            response = self.client.s.get(file.url, stream=True, timeout=self.timeout)
        except (requests.RequestException, urllib3.exceptions.HTTPError) as exc:
            # Connection errors were already retried (with backoff) by the session's retry policy.
            raise SourceError(f"cannot download {file.filename}: {network_failure(exc)}") from None
        with response:
            if response.status_code >= 400:
                raise SourceError(f"downloading {file.filename} failed: HTTP {response.status_code}")
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > limit:
                raise SourceError(too_big)
            sha = hashlib.sha256()
            received = 0
            try:
                with open(part, "wb") as out:
                    # Raw bytes: the published digest is of the file, not of any transfer encoding's decoding.
                    for chunk in _read_chunks(response, decode=False):
                        received += len(chunk)
                        if received > limit:
                            raise SourceError(too_big)
                        if time.monotonic() - started > self.max_download_seconds:
                            raise SourceError(
                                f"downloading {file.filename} took longer than {self.max_download_seconds:g} s; refused"
                            )
                        sha.update(chunk)
                        out.write(chunk)
            except (
                requests.RequestException,
                urllib3.exceptions.HTTPError,
                ConnectionError,
                TimeoutError,
            ) as exc:
                raise _Interrupted(exc) from None
            except OSError as exc:
                raise SourceError(
                    f"cannot write {file.filename} into the cache: {exc.strerror or exc}"
                ) from None
        return sha.hexdigest()


def _read_chunks(response: Any, *, decode: bool) -> Iterable[bytes]:
    """The body as it arrives: each chunk is what one socket read returned (at most `_CHUNK` bytes, decoded or
    not), so a server trickling bytes cannot hold a read open past the caller's deadline check."""
    raw = response.raw
    while chunk := raw.read1(_CHUNK, decode_content=decode):
        yield chunk


def remove_download(path: Path) -> None:
    """Delete a downloaded archive and the private folder `IndexClient.download` made for it."""
    path.unlink(missing_ok=True)
    try:
        path.parent.rmdir()
    except OSError:
        pass
