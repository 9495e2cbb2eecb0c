"""Which releases of a downstream depend on an upstream, from their `Requires-Dist`.

When the release audited does not use the upstream at all, the user most likely picked the wrong
release (a bare name means the latest). This reads the core metadata of a handful of recent releases
through the index and names those that declare the upstream, e.g. "speculators 0.3.0 requires
vllm==0.11.0 (extra datagen)". The metadata file the index serves beside a wheel (PEP 658) is read
when there is one; otherwise the `METADATA` member of a small wheel (at most MAX_WHEEL_BYTES, checked
against its published sha256 like any download). Nothing is built, extracted or run.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from apidrift.auditor.sources.index_client import MAX_METADATA_BYTES, IndexClient, IndexFile, remove_download
from apidrift.auditor.sources.specs import SourceError, parse_requirement

RECENT_RELEASES = 8  # how many of the newest releases are read: a handful of small requests
MAX_WHEEL_BYTES = 4 * 1024 * 1024


@dataclass
class Dependents:
    lines: list[str] = field(
        default_factory=list
    )  # "speculators 0.3.0 requires vllm==0.11.0 (extra datagen)"
    read: int = 0  # releases whose metadata was read
    unread: int = 0  # releases the index serves no metadata for (or that could not be read)


def releases_requiring(
    client: IndexClient, downstream: str, upstream: str, count: int = RECENT_RELEASES
) -> Dependents:
    """Which of `downstream`'s recent releases (the newest of each of its `count` newest major.minor
    series, pre-releases only when there is nothing else) declare a requirement on `upstream`."""
    listing = client.project(downstream)
    wanted = canonicalize_name(upstream)
    found = Dependents()
    groups = listing.by_version()
    available = sorted((v for v, files in groups.items() if not all(f.yanked for f in files)), reverse=True)
    final = [v for v in available if not v.is_prerelease and not v.is_devrelease] or available
    series: dict[tuple[int, ...], Version] = {}
    for version in final:  # the newest release of each major.minor series, newest series first
        series.setdefault(version.release[:2], version)
    newest = list(series.values())[:count]
    for version in newest:
        text = _metadata(client, groups[version])
        if text is None:
            found.unread += 1
            continue
        found.read += 1
        for line in HeaderParser().parsestr(text).get_all("Requires-Dist") or []:
            try:
                requirement = parse_requirement(line)
            except InvalidRequirement:
                continue
            if canonicalize_name(requirement.name) == wanted:
                found.lines.append(
                    f"{listing.name or downstream} {version} requires {_describe(requirement)}"
                )
    return found


def _metadata(client: IndexClient, files: list[IndexFile]) -> str | None:
    """One release's core metadata: the served metadata file, else the METADATA of a small wheel."""
    usable = [f for f in files if not f.yanked]
    for file in sorted((f for f in usable if f.metadata_url), key=lambda f: f.kind != "wheel"):
        try:
            return client.metadata(file)
        except SourceError:
            break  # one answer tells how this index treats metadata files
    wheels = [f for f in usable if f.kind == "wheel" and f.size is not None and f.size <= MAX_WHEEL_BYTES]
    for wheel in sorted(wheels, key=lambda f: (not f.pure, f.size or 0))[:1]:
        try:
            path, _ = client.download(wheel)
        except SourceError:
            return None
        try:
            return _wheel_metadata(path)
        finally:
            remove_download(path)
    return None


def _wheel_metadata(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [
                i
                for i in archive.infolist()
                if i.filename.count("/") == 1 and i.filename.endswith(".dist-info/METADATA")
            ]
            if len(names) != 1 or names[0].file_size > MAX_METADATA_BYTES:
                return None
            return archive.read(names[0]).decode("utf-8", "replace")
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError):
        return None


def _describe(requirement: Requirement) -> str:
    text = f"{requirement.name}{requirement.specifier}"
    marker = str(requirement.marker) if requirement.marker else ""
    extras = re.findall(r"extra\s*==\s*[\"']([^\"']+)", marker)
    if extras:
        text += f" (extra {', '.join(sorted(set(extras)))})"
    elif marker:
        text += f" (when {marker})"
    return text
