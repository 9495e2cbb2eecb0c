"""Spec strings (`str`) -> frozen `Spec` values: an index query, a NAME@PATH, a bare name or a local directory.

This is the only module that parses what the user typed for a distribution; it also defines the two
errors of the sources stage, so that every module of the stage can raise them without import cycles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Union

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from apidrift.auditor.core.wording import first_line

Role = Literal["downstream", "upstream"]

# PEP 508 distribution name.
_NAME_RE = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)
_OPERATOR_CHARS = set("=<>!~")
_SINGLE_EQUALS = re.compile(r"^([^=<>!~\s]+)\s*=\s*([0-9][^=<>!~\s;]*)$")  # NAME=VERSION


class SpecError(ValueError):
    """A spec string that cannot be parsed; the message is one line, fit to show the user as is."""


class SourceError(Exception):
    """A spec that parsed but whose sources cannot be had (index, network, archive or cache problem)."""


def normalize_name(name: str) -> str:
    """PEP 503 normalized form, for comparing names; display keeps the user's spelling."""
    return str(canonicalize_name(name))


def is_valid_name(text: str) -> bool:
    return bool(_NAME_RE.match(text))


MAX_VERSION_LENGTH = 200  # characters of one version in a requirement; real ones are a few dozen


def parse_requirement(text: str) -> Requirement:
    """`Requirement(text)`, refusing (InvalidRequirement) a specifier whose version packaging cannot
    compare: one of thousands of digits makes `int()` raise a ValueError at the first comparison."""
    requirement = Requirement(text)
    for spec in requirement.specifier:
        if len(spec.version) > MAX_VERSION_LENGTH:
            raise InvalidRequirement(
                f"a version longer than {MAX_VERSION_LENGTH} characters in {text[:60]!r}..."
            )
        try:
            Version(spec.version.removesuffix(".*"))
        except InvalidVersion:
            continue  # `===` takes any string; the other operators were checked by packaging
        except ValueError:
            raise InvalidRequirement(f"a version packaging cannot read in {text[:60]!r}...") from None
    return requirement


@dataclass(frozen=True)
class IndexSpec:
    """`NAME<specifier>`: a release to fetch from the package index."""

    name: str
    specifier: SpecifierSet
    text: str

    @property
    def key(self) -> str:
        return normalize_name(self.name)

    @property
    def pinned(self) -> Version | None:
        """The version of an exact pin (a single `==X` without `.*`, or `===X`), else None."""
        specs = list(self.specifier)
        if len(specs) != 1:
            return None
        spec = specs[0]
        if spec.operator not in ("==", "===") or spec.version.endswith(".*"):
            return None
        try:
            return Version(spec.version)
        except InvalidVersion:
            return None

    @property
    def allows_prereleases(self) -> bool:
        """True when the specifier names a pre-release (e.g. `==1.0rc1`, `>=2.0b1`), as PEP 440 asks."""
        for spec in self.specifier:
            if spec.operator == "!=":
                continue
            try:
                if Version(spec.version.removesuffix(".*")).is_prerelease:
                    return True
            except InvalidVersion:
                continue
        return False

    def __str__(self) -> str:
        return f"{self.name}{self.specifier}"


@dataclass(frozen=True)
class PathSpec:
    """`NAME@PATH`: a directory, an sdist or a wheel on disk, read as distribution NAME."""

    name: str
    path: Path
    text: str

    @property
    def key(self) -> str:
        return normalize_name(self.name)


@dataclass(frozen=True)
class NameSpec:
    """A bare `NAME`: resolved by role (local folder, installed distribution, latest release)."""

    name: str
    text: str

    @property
    def key(self) -> str:
        return normalize_name(self.name)


@dataclass(frozen=True)
class DirectorySpec:
    """A local directory (downstream only): a source root, a project root with `src/`, or a package folder."""

    path: Path
    text: str


@dataclass(frozen=True)
class PythonSpec:
    """`python==3.X[.Y]` (upstream only): Python's standard library of that version; `python` alone:
    the version apidrift runs under."""

    version: str | None
    text: str

    @property
    def key(self) -> str:
        return "python"


Spec = Union[IndexSpec, PathSpec, NameSpec, DirectorySpec, PythonSpec]

_PYTHON_SPEC = re.compile(r"^python\s*(?:==\s*(\S+))?$", re.IGNORECASE)


def _looks_like_path(text: str) -> bool:
    return text.startswith((".", "/", "~")) or "/" in text or "\\" in text


def parse_spec(text: str, role: Role = "downstream") -> Spec:
    """Parse one spec string; raise `SpecError` with a one-line message when it is not one."""
    raw = text
    text = text.strip()
    if not text:
        raise SpecError("empty spec: give NAME, NAME==VERSION, NAME@PATH or a directory")
    if any(ord(char) < 32 or ord(char) == 127 for char in text):
        raise SpecError(f"{raw!r}: control characters (NUL, newline...) are not allowed in a spec")

    python = _PYTHON_SPEC.match(text) if role == "upstream" else None
    if python is not None:
        version = python.group(1)
        if version is not None and not re.fullmatch(r"3\.\d{1,2}(\.\d{1,3})?", version):
            raise SpecError(f"{raw!r}: give a version of Python 3 as python==3.X or python==3.X.Y")
        return PythonSpec(version=version, text=raw)

    if "@" in text:
        name, _, path = (part.strip() for part in text.partition("@"))
        if "://" in path:
            raise SpecError(f"{raw!r}: URLs are not supported; download the file and use NAME@PATH")
        if is_valid_name(name) and path:
            return PathSpec(name=name, path=Path(path).expanduser(), text=raw)
        if role == "downstream" and _looks_like_path(text):
            return DirectorySpec(path=Path(text).expanduser(), text=raw)
        if not path:
            raise SpecError(f"{raw!r}: nothing after '@'; expected NAME@PATH")
        raise SpecError(f"{raw!r}: {name!r} is not a valid distribution name (expected NAME@PATH)")

    if _OPERATOR_CHARS & set(text) and not _looks_like_path(text):
        try:
            req = parse_requirement(text)
        except InvalidRequirement as exc:
            single = _SINGLE_EQUALS.match(text)
            name = single.group(1) if single else ""
            extras = name.partition("[")[2]
            if single and is_valid_name(name.partition("[")[0]) and (not extras or extras.endswith("]")):
                # `vllm=0.16.0`: `==` meant
                suggestion = f"{single.group(1)}=={single.group(2)}"
                raise SpecError(
                    f"cannot parse {raw!r}: a version is pinned with `==`; did you mean {suggestion!r}?"
                ) from None
            raise SpecError(f"cannot parse {raw!r}: {first_line(exc)}") from None
        if req.marker is not None:
            raise SpecError(f"{raw!r}: environment markers are not supported in a spec")
        if req.url:  # unreachable without '@', kept for safety
            raise SpecError(f"{raw!r}: URLs are not supported; download the file and use NAME@PATH")
        # Extras (`vllm[audio]==0.16.0`) do not change a release's sources: they are accepted and ignored.
        return IndexSpec(name=req.name, specifier=req.specifier, text=raw)

    if is_valid_name(text):
        return NameSpec(name=text, text=raw)

    if role == "downstream":
        return DirectorySpec(path=Path(text).expanduser(), text=raw)
    raise SpecError(
        f"{raw!r} is not a distribution name: the upstream must be NAME, NAME==VERSION or NAME@PATH"
    )
