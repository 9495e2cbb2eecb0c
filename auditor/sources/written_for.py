"""Which upstream version the downstream was written for, when `--from` does not say.

Input: the downstream's declared requirements (Requires-Dist, extras included; for a local project
its pyproject.toml/setup.cfg) and the target upstream. Output: a spec to fetch and a sentence that
tells the user what was chosen and why; or no spec, and why not.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

NONE = "none"  # `--from none`: audit without an old version


@dataclass(frozen=True)
class OldChoice:
    spec: str | None
    note: str


def choose_old(
    explicit: str | None,
    upstream_name: str,
    downstream_label: str,
    requires: tuple[str, ...],
    target_version: str | None = None,
) -> OldChoice:
    if explicit is not None:
        if explicit.strip().lower() == NONE:
            return OldChoice(None, "no old version (--from none): findings are not classified as drift")
        return OldChoice(explicit, f"old version: {explicit} (--from)")
    wanted = canonicalize_name(upstream_name)
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != wanted or not str(requirement.specifier):
            continue
        if not _applies(requirement):  # `; python_version < "3.9"`: not what this environment would install
            continue
        pins = [s for s in requirement.specifier if s.operator in ("==", "===") and "*" not in s.version]
        spec = f"{upstream_name}{requirement.specifier}"
        how = "pins" if pins else "declares the range"
        extra = f" (extra `{_extra(requirement)}`)" if _extra(requirement) else ""
        choice = "" if pins else ", using the highest version that satisfies it"
        if not pins and target_version:
            # The version written for is older than the one audited against: never the target or newer.
            spec += f",<{target_version}"
            choice += f" below {target_version}"
        return OldChoice(spec, f"old version inferred: {downstream_label} {how} `{line}`{extra}{choice}")
    try:
        installed = importlib.metadata.version(upstream_name)
    except importlib.metadata.PackageNotFoundError:
        installed = None
    if installed:
        return OldChoice(
            f"{upstream_name}=={installed}",
            f"old version inferred: {upstream_name} {installed} is installed here ({downstream_label} declares no version)",
        )
    return OldChoice(None, f"no old version: {downstream_label} declares no requirement on {upstream_name} and it is not installed")


def _applies(requirement: Requirement) -> bool:
    """Whether the requirement's environment markers hold here, as pip evaluates them (its extra counted as asked)."""
    if requirement.marker is None:
        return True
    try:
        return bool(requirement.marker.evaluate({"extra": _extra(requirement) or ""}))
    except Exception:  # a marker packaging cannot evaluate: not evidence of what was written for
        return False


def _extra(requirement: Requirement) -> str | None:
    marker = str(requirement.marker) if requirement.marker else ""
    if "extra" not in marker:
        return None
    return marker.split("extra", 1)[1].split("==", 1)[-1].strip().strip("\"' )").split('"')[0].split("'")[0]
