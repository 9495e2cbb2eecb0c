"""The upstream's releases on the index and the range `plan` walks: the versions (pre-releases
when asked), the one the downstream was written for, the target.
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from apidrift.auditor.sources import stdlib
from apidrift.auditor.sources.index_client import ProjectListing, select_release
from apidrift.auditor.sources.locate import SourceTree
from apidrift.auditor.sources.specs import IndexSpec, normalize_name, parse_spec
from apidrift.auditor.sources.written_for import NONE

from .model import PlanError


def _releases(listing: ProjectListing, pre: bool) -> tuple[list[Version], dict[Version, str]]:
    """The releases with a usable file (pre-releases only with `pre`), and the yanked ones with why."""
    usable: list[Version] = []
    yanked: dict[Version, str] = {}
    for version, files in listing.by_version().items():
        if version.is_prerelease and not pre:
            continue
        if any(not f.yanked for f in files):
            usable.append(version)
        else:
            reason = next((f.yanked_reason for f in files if f.yanked_reason), None)
            yanked[version] = f"yanked on the index ({reason})" if reason else "yanked on the index"
    return sorted(usable), yanked


def _latest(versions: list[Version], pre: bool, listing: ProjectListing) -> Version:
    finals = [v for v in versions if pre or not v.is_prerelease]
    if not finals:
        raise PlanError(f"{listing.name} has no release on the index {listing.index_url} to plan for")
    return finals[-1]


def _as_spec(text: str, name: str) -> str:
    text = text.strip()
    if text.lower() == NONE:
        raise PlanError("--from none: a plan needs the release the downstream was written for")
    if text[:1] in "=<>!~":
        return f"{name}{text}"  # a bare specifier: `>=0.11,<0.12`
    try:
        Version(text)
    except InvalidVersion:
        return text
    return f"{name}=={text}"


def _pick(listing: ProjectListing, text: str, option: str) -> Version:
    """The release a version or `NAME<specifier>` names, chosen as `audit` would choose it."""

    spec = parse_spec(_as_spec(text, listing.name), "upstream")
    if not isinstance(spec, IndexSpec) or normalize_name(spec.name) != normalize_name(listing.name):
        raise PlanError(f"{option} {text!r}: not a version of {listing.name}")
    release = select_release(listing, spec)
    return Version(release.version)


def _python_pick(text: str, option: str) -> Version:
    """`3.12`, `3.12.1` or `python==3.12` -> Version("3.12"): the standard library is per minor version."""
    bare = text.strip()
    if bare.lower().startswith(stdlib.DISTRIBUTION):
        bare = bare[len(stdlib.DISTRIBUTION) :].strip().removeprefix("==").strip()
    try:
        release = Version(bare).release
    except InvalidVersion:
        raise PlanError(f"{option} {text!r}: not a version of Python (3.X)") from None
    if release[0] != 3 or len(release) < 2:
        raise PlanError(f"{option} {text!r}: not a version of Python (3.X)")
    return Version(f"3.{release[1]}")


def _label(tree: SourceTree) -> str:
    return f"{tree.name}=={tree.version}" if tree.version else tree.name
