"""Which upstream version the downstream was written for, when `--from` does not say.

Input: the downstream's declared requirements (Requires-Dist, extras included; for a local project
its pyproject.toml/setup.cfg), the target upstream, and the downstream's own environment when there is
one (`--python PATH`, or an active virtualenv that is not apidrift's). Output: a spec to fetch and a
sentence that tells the user what was chosen and why; or no spec, and why not.

The version written for is always older than the target, and never read from apidrift's own
environment: what apidrift happens to depend on says nothing about the downstream.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from apidrift.auditor.sources.specs import parse_requirement

NONE = "none"  # `--from none`: audit without an old version


@dataclass(frozen=True)
class OldChoice:
    spec: str | None
    note: str


@dataclass(frozen=True)
class Environment:
    """The downstream's own Python environment: where its installed distributions' metadata lives."""

    label: str  # how the user named it: "--python /p/bin/python" or "the active virtualenv /p"
    site_dirs: tuple[Path, ...]

    def version_of(self, name: str) -> str | None:
        """The installed version of `name` there, read from its .dist-info metadata (nothing is imported)."""
        if not self.site_dirs:
            return None
        wanted = canonicalize_name(name)
        for dist in importlib.metadata.distributions(path=[str(d) for d in self.site_dirs]):
            try:
                if canonicalize_name(dist.metadata["Name"] or "") == wanted:
                    return dist.version
            except Exception:  # a broken METADATA file: not this one
                continue
        return None


def site_dirs_of(prefix: Path) -> tuple[Path, ...]:
    """The site-packages folders of the environment at `prefix` (a virtualenv or an installation),
    found by looking, never by running its interpreter."""
    found = [*prefix.glob("lib/python3*/site-packages"), *prefix.glob("lib/python3*/dist-packages"),
             *prefix.glob("lib64/python3*/site-packages"), prefix / "Lib" / "site-packages"]  # fmt: skip
    return tuple(sorted({d for d in found if d.is_dir()}))


def downstream_environment(python: Path | None) -> Environment | None:
    """`--python PATH` (an interpreter or an environment folder), else the active virtualenv when it is
    not the one apidrift runs in; else None."""
    if python is not None:
        path = python.expanduser().absolute()
        prefix = path if path.is_dir() else path.parent.parent  # PREFIX/bin/python
        return Environment(f"--python {python}", site_dirs_of(prefix))
    active = os.environ.get("VIRTUAL_ENV")
    if active and Path(active).is_dir():
        mine = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
        if Path(active).resolve() not in mine:
            return Environment(f"the active virtualenv {active}", site_dirs_of(Path(active)))
    return None


def _older(version: str, target: str | None) -> bool:
    if not target:
        return True
    try:
        return Version(version) < Version(target)
    except InvalidVersion:
        return version != target


def choose_old(
    explicit: str | None,
    upstream_name: str,
    downstream_label: str,
    requires: tuple[str, ...],
    target_version: str | None = None,
    environment: Environment | None = None,
) -> OldChoice:
    if explicit is not None:
        if explicit.strip().lower() == NONE:
            return OldChoice(None, "no old version (--from none): findings are not classified as drift")
        return OldChoice(explicit, f"old version: {explicit} (--from)")
    wanted = canonicalize_name(upstream_name)
    for line in requires:
        try:
            requirement = parse_requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) != wanted or not str(requirement.specifier):
            continue
        if not _applies(requirement):  # `; python_version < "3.9"`: not what this environment would install
            continue
        pins = [s for s in requirement.specifier if s.operator in ("==", "===") and "*" not in s.version]
        extra = f" (extra `{_extra(requirement)}`)" if _extra(requirement) else ""
        if pins and not _older(pins[0].version, target_version):
            return OldChoice(
                None,
                f"no old version: {downstream_label} pins `{line}`{extra}, not older than the target {target_version}",
            )
        spec = f"{upstream_name}{requirement.specifier}"
        how = "pins" if pins else "declares the range"
        choice = "" if pins else ", using the highest version that satisfies it"
        if not pins and target_version:
            # The version written for is older than the one audited against: never the target or newer.
            spec += f",<{target_version}"
            choice += f" below {target_version}"
        return OldChoice(spec, f"old version inferred: {downstream_label} {how} `{line}`{extra}{choice}")
    if environment is not None:
        installed = environment.version_of(upstream_name)
        if installed and _older(installed, target_version):
            return OldChoice(
                f"{upstream_name}=={installed}",
                f"old version inferred: {upstream_name} {installed} is installed in {environment.label} "
                f"({downstream_label} declares no version)",
            )
        if installed:
            return OldChoice(
                None,
                f"no old version: {upstream_name} {installed} in {environment.label} is not older than the "
                f"target {target_version}, and {downstream_label} declares no version",
            )
        return OldChoice(
            None,
            f"no old version: {downstream_label} declares no version of {upstream_name}, nor is it installed in {environment.label}",
        )
    return OldChoice(
        None,
        f"no old version known: {downstream_label} declares no requirement on {upstream_name} "
        "(give --from NAME==VER, or --python PATH of the downstream's environment)",
    )


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


def choose_old_python(
    explicit: str | None, downstream_label: str, requires_python: str | None, target_version: str | None
) -> OldChoice:
    """The version of Python the downstream was written for: `--from`, else the lower bound of its
    `requires-python`, else the version apidrift runs under (said so in the note)."""
    if explicit is not None:
        return choose_old(explicit, "python", downstream_label, ())
    lowest = _lower_bound(requires_python) if requires_python else None
    if lowest is not None:
        spec, how = f"python=={lowest}", f"{downstream_label} declares requires-python `{requires_python}`"
    else:
        running = f"{sys.version_info[0]}.{sys.version_info[1]}"
        declared = (
            f"its requires-python `{requires_python}` has no lower bound"
            if requires_python
            else "it declares no requires-python"
        )
        spec, how = f"python=={running}", f"the Python apidrift runs under ({downstream_label}: {declared})"
        lowest = running
    if target_version and not _older(lowest, target_version):
        return OldChoice(None, f"no old version: {how}, not older than the target {target_version}")
    return OldChoice(spec, f"old version inferred: {how}: {spec}")


def _lower_bound(requires_python: str) -> str | None:
    """The lowest `3.X` a `requires-python` admits by its `>=`, `>`, `==`, `~=` clauses; None if none."""
    try:
        specifier = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return None
    bounds: list[tuple[int, int]] = []
    for clause in specifier:
        if clause.operator not in (">=", ">", "==", "~=", "==="):
            continue
        try:
            release = Version(clause.version.removesuffix(".*")).release
        except InvalidVersion:
            continue
        if release[0] != 3:
            continue
        minor = release[1] if len(release) > 1 else 0
        if clause.operator == ">" and len(release) <= 2:
            minor += 1  # `>3.8` admits no 3.8.x by PEP 440: 3.9 is the first
        bounds.append((3, minor))
    if not bounds:
        return None
    major, minor = max(bounds)  # every clause must hold: the highest lower bound
    return f"{major}.{minor}"
