"""The audit pipeline: specs -> sources -> scan / api -> resolve -> bind -> rules -> `AuditResult`.

`audit(request)` is the one engine entry point; the CLI only builds the request and renders.
"""

from __future__ import annotations

import ast
import fnmatch
import gc
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement
from packaging.utils import canonicalize_name

from apidrift.auditor.cache import Cache
from apidrift.auditor.check.checked import (
    CheckedSite,
    SiteCheck,
    SiteChecks,
    check_site,
    moved_names,
    statement_names,
    unentered_override,
    with_import_fails,
)
from apidrift.auditor.check.imports import Requirements
from apidrift.auditor.core.bind import Break
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.notebook_map import NotebookMap
from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.refs import AttrRef, ItemRef, ModuleRef, OpaqueRef, Ref
from apidrift.auditor.core.results import (
    AuditResult,
    Classification,
    Coverage,
    FileOutcome,
    FileStatus,
    Finding,
    InputInfo,
    Location,
    RemoveKeyword,
    RenameKeyword,
    Severity,
    UncheckedSite,
)
from apidrift.auditor.core.sites import FileScan, SiteKind, UseSite
from apidrift.auditor.core.version import __version__
from apidrift.auditor.core.wording import plural
from apidrift.auditor.downstream.notebook import cell_span
from apidrift.auditor.downstream.reach import ClassReach, Downstream
from apidrift.auditor.downstream.suppressions import Suppression, all_suppressions, suppression_on
from apidrift.auditor.downstream.walk import scan_downstream, vendored_prefixes
from apidrift.auditor.folding import cell_line, deduplicated, fold
from apidrift.auditor.roles import file_role
from apidrift.auditor.sources.dependents import _describe, releases_requiring
from apidrift.auditor.sources.entry_points import entry_point_modules
from apidrift.auditor.sources.index_client import IndexClient
from apidrift.auditor.sources.locate import SourceTree, locate
from apidrift.auditor.sources.specs import Role, SourceError, SpecError, parse_requirement
from apidrift.auditor.sources.written_for import (
    Environment,
    choose_old,
    choose_old_python,
    downstream_environment,
)
from apidrift.auditor.upstream import kept
from apidrift.auditor.upstream.api_index import ApiIndex, HookSpecs
from apidrift.auditor.upstream.diff import ApiChange, all_paths, diff, used_sites
from apidrift.auditor.upstream.relocate import Relocator
from apidrift.auditor.upstream.resolve import ClassValue, FunctionValue, ModuleValue, Resolver
from apidrift.rules import hook_implementation_rejected, read_only_attribute_assigned, unparsable_file
from apidrift.rules.base import Family, Rule
from apidrift.rules.registry import all_rules


@dataclass(frozen=True)
class AuditRequest:
    downstream: str
    against: str
    old: str | None = None  # `--from`: the upstream version the downstream was written for
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None
    ignore_rules: frozenset[str] = frozenset()  # codes, names or families never reported
    severities: dict[str, str] = field(default_factory=dict)  # code/name/family -> "error"/"warning"/"info"
    exclude: tuple[str, ...] = ()  # glob patterns of downstream paths not to scan
    ignore_symbols: tuple[str, ...] = ()  # upstream dotted paths (or glob patterns) not to report
    warn_unused_ignores: bool = False
    python: Path | None = None  # `--python`: the downstream's own interpreter or environment
    roles: frozenset[str] = frozenset()  # `--role`: report only findings in files of these roles (empty: all)


@dataclass
class _Timer:
    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start


@dataclass(frozen=True)
class Sources:
    """Where a run's inputs come from: the cache, the package index, and whether the network may be used."""

    cache: Cache
    index_url: str | None = None
    offline: bool = False

    @classmethod
    def of(cls, request: AuditRequest | DiffRequest) -> Sources:
        return cls(Cache(request.cache_dir), request.index_url, request.offline)

    def locate(self, spec: str, role: Role, environment: Environment | None = None) -> SourceTree:
        return locate(
            spec,
            role=role,
            cache=self.cache,
            index_url=self.index_url,
            offline=self.offline,
            environment=environment,
        )


@dataclass(frozen=True)
class Inputs:
    """Every input of a run, located once: `audit` and `fix` (and `diff`) work from the same value."""

    upstream: SourceTree  # the version audited against (`diff`: NEW)
    old_upstream: SourceTree | None  # the version written for (`diff`: OLD), when there is one
    downstream: SourceTree | None  # None only for a `diff` of two versions without `--used-by`
    sources: Sources  # the cache and index they came from, which the run goes on to use
    notes: tuple[str, ...] = ()  # how the old version was chosen, or why it could not be had
    seconds: float = 0.0  # the time locating took

    @property
    def root(self) -> Path | None:
        """The folder the downstream's reported paths are relative to."""
        return self.downstream.path_base if self.downstream is not None else None


def locate_inputs(request: AuditRequest) -> Inputs:
    """Locate the upstream, the downstream and the version it was written for (inferred when not
    given). Raises `SpecError`/`SourceError` when an input cannot be had at all."""
    started = time.perf_counter()
    sources = Sources.of(request)
    environment = downstream_environment(request.python)
    new_tree = sources.locate(request.against, "upstream", environment)
    down_tree = sources.locate(request.downstream, "downstream")
    if not new_tree.absence_is_evidence:  # Python's standard library
        choice = choose_old_python(
            request.old, _label(down_tree), down_tree.requires_python, new_tree.version
        )
    else:
        choice = choose_old(
            request.old, new_tree.name, _label(down_tree), down_tree.requires, new_tree.version, environment
        )
    notes = [choice.note]
    old_tree = None
    if choice.spec is not None:
        try:
            old_tree = sources.locate(choice.spec, "upstream", environment)
        except SpecError:
            raise  # a `--from` that does not parse is a usage error
        except SourceError as error:
            if request.old is not None:  # asked for by name: an input that cannot be had
                raise SourceError(f"--from {request.old}: {error}") from None
            # Without the old version the audit still finds every break; only drift labels and
            # the comparisons (remaps, changed defaults) are lost. Say so, and go on.
            notes.append(
                f"the inferred old version could not be had ({error}): audited against {new_tree.name} alone"
            )
    return Inputs(new_tree, old_tree, down_tree, sources, tuple(notes), time.perf_counter() - started)


MAX_VENDORING = 5  # distributions read per audit for the upstream modules they register under their names


def _vendoring_aliases(
    down_tree: SourceTree, upstream_names: frozenset[str], sources: Sources, api_dir: Path, notes: list[str]
) -> tuple[tuple[str, str], ...]:
    """Names other distributions register the upstream's modules under (`requests.packages.urllib3`
    for `urllib3`, by requests' `sys.modules` loop), for the downstream's imports through them: each
    such prefix's distribution (the package of that name, its latest release the downstream's
    requirements allow, when they name it or say nothing; never a package of the downstream's own) is
    read, not run."""
    root = down_tree.root
    prefixes = vendored_prefixes(root, upstream_names)
    required = {
        canonicalize_name(r.name): str(r.specifier)
        for r in Requirements.of("", (), down_tree.requires).downstream
    }
    found: set[tuple[str, str]] = set()
    tops = [
        top
        for top in sorted({p.split(".")[0] for p in prefixes})
        if not (root / top).is_dir()
        and not (root / f"{top}.py").exists()
        and (not required or canonicalize_name(top) in required)
    ]
    for top in tops[:MAX_VENDORING]:
        try:
            tree = sources.locate(f"{top}{required.get(canonicalize_name(top)) or '>=0'}", "upstream")
        except (SourceError, SpecError):
            continue
        if top not in tree.import_names:
            continue
        index = _index(tree, api_dir)
        modules = {
            ".".join(p.split(".")[: i + 1])
            for p in prefixes
            if p.split(".")[0] == top
            for i in range(len(p.split(".")))
        }
        for module in sorted(modules):
            info = index.module(module)
            for alias, target in info.module_aliases if info is not None else ():
                if target.split(".")[0] in upstream_names:
                    found.add((alias, target))
        own = [f"{a} = {t}" for a, t in sorted(found) if a.split(".")[0] == top]
        if own:
            notes.append(
                f"imports through {_label(tree)} read as the upstream modules it registers: {', '.join(own)}"
            )
    return tuple(sorted(found))


# The cycle collector's first threshold during an audit (Python's default: 700 allocations). An audit
# keeps what it builds (the scans' sites, the upstream's models, the checked sites) until it returns,
# so each collection walks a growing heap and frees little: on pandas against numpy, warm, 1,359
# collections (9 full) took 1.2 of 5.4 s; at 10,000, 78 collections (none full) took 0.3 s, the peak
# memory the same.
COLLECT_EVERY = 10_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Python's cycle collector run less often while the audit runs; its thresholds put back after."""
    was = gc.get_threshold()
    gc.set_threshold(max(was[0], COLLECT_EVERY), *was[1:])
    try:
        yield
    finally:
        gc.set_threshold(*was)


def audit(request: AuditRequest, inputs: Inputs | None = None) -> AuditResult:
    """Run the whole audit, on `inputs` when they are already located (else they are located here).
    Raises `SpecError`/`SourceError` when an input cannot be had at all."""
    with _fewer_collections():
        return _audit(request, inputs)


def _audit(request: AuditRequest, inputs: Inputs | None) -> AuditResult:
    timer = _Timer()
    if inputs is None:
        inputs = locate_inputs(request)
    timer.timings["fetch"] = inputs.seconds
    new_tree, old_tree, down_tree = inputs.upstream, inputs.old_upstream, inputs.downstream
    if down_tree is None:
        raise ValueError("an audit needs a downstream")
    cache = inputs.sources.cache
    notes = list(inputs.notes)
    result = AuditResult(
        downstream=_input(down_tree),
        upstream=_input(new_tree),
        old_upstream=_input(old_tree) if old_tree else None,
        tool_version=__version__,
        notes=notes,
        root=down_tree.path_base,
    )
    upstream_names = frozenset(new_tree.import_names) | frozenset(old_tree.import_names if old_tree else ())
    if not new_tree.absence_is_evidence:  # the standard library: the downstream's own modules shadow it
        upstream_names -= frozenset(down_tree.import_names)

    with timer.phase("scan"):
        prefix = _prefix(down_tree)
        exclude = request.exclude + tuple(
            p[len(prefix) :] for p in request.exclude if prefix and p.startswith(prefix)
        )
        aliases = _vendoring_aliases(down_tree, upstream_names, inputs.sources, cache.dir("api"), notes)
        scans, outcomes = scan_downstream(down_tree.root, upstream_names, cache.dir("scan"), exclude, aliases)
        if prefix:  # every path is relative to the project root, where the user stands
            scans = [replace(scan, path=prefix + scan.path) for scan in scans]
            outcomes = [replace(outcome, path=prefix + outcome.path) for outcome in outcomes]
        result.files.extend(outcomes)
    api_dir = cache.dir("api")
    # The standard library: a module the old version has is one of Python's in the new version too,
    # present or gone (removed modules are evidenced by the old version's `VERSIONS` range).
    extra = old_tree.import_names if old_tree and not new_tree.absence_is_evidence else ()
    new_resolver = Resolver(kept.index(_index_args(new_tree, api_dir, extra), _build_index))
    old_resolver = Resolver(kept.index(_index_args(old_tree, api_dir), _build_index)) if old_tree else None
    relocator = Relocator(new_resolver)
    new_requirements = Requirements.of(new_tree.name, new_tree.requires, down_tree.requires)
    old_requirements = (
        Requirements.of(old_tree.name, old_tree.requires, down_tree.requires) if old_tree else None
    )
    coverage = Coverage(upstream=new_tree.name)
    rules = all_rules()
    plugins = _Plugins(down_tree, new_resolver, old_resolver, scans, prefix)
    with timer.phase("resolve"):
        checked_sites = []
        at_home: list[CheckedSite] = []  # calls of a missing name, checked where it moved
        homes: dict[tuple[str, int], str] = {}  # (file, line) of such a call -> where the name is now
        for scan in scans:
            for index, site in enumerate(scan.sites):
                if site.kind is SiteKind.HOOK and not plugins.takes(scan.path[len(prefix) :], site):
                    continue  # a function named like a hook in a module no plugin host loads
                # The old version's import walk (modules read through imports) is made only where the
                # new version's import raises: only then does a rule read it (the finding's class).
                old = (
                    check_site(
                        site, old_resolver, _label(old_tree), requirements=old_requirements, import_walk=False
                    )
                    if old_resolver and old_tree
                    else None
                )
                new = check_site(
                    site, new_resolver, _label(new_tree), relocator, old, old_resolver, new_requirements
                )
                if (
                    new.missing is not None
                    and site.kind is SiteKind.IMPORT
                    and isinstance(site.ref, ModuleRef)
                ):
                    names = statement_names(scan.sites, index)
                    if names:
                        went = moved_names(site.ref.path, names, new_resolver, relocator, old_resolver)
                        new = replace(new, moved_names=went)
                if old is not None and old_resolver is not None and new.import_fails is not None:
                    old = with_import_fails(site, old, old_resolver, old_requirements)
                if site.kind is SiteKind.HOOK and (
                    (new.hookspec is None and (old is None or old.hookspec is None))
                    or (new.unknown is not None and new.unknown.reason is Reason.HOOK_IMPL_NOT_DEFINED)
                ):
                    continue  # a hook neither version specifies (another plugin's), or a def that does not run
                checked_sites.append(CheckedSite(site, scan.path, scan.lines, new_tree.name, new, old))
                home = _at_new_home(site, new, new_resolver)
                if home is not None:
                    module, _, name = home.rpartition(".")
                    moved_site = replace(site, ref=AttrRef(ModuleRef(module), name))
                    moved = check_site(moved_site, new_resolver, _label(new_tree), None, old, old_resolver)
                    at_home.append(CheckedSite(moved_site, scan.path, scan.lines, new_tree.name, moved, old))
                    homes[(scan.path, site.place.line)] = home
                if site.kind is SiteKind.STORE or _handed_unknown(site.ref, new_resolver):
                    continue  # a store is no use of what the upstream has: not counted
                if not _own_method(checked_sites[-1]):
                    # a method of the downstream's own is no use of the upstream
                    _count(coverage, new, scan, site)
        checked_sites = _reach_of_overrides(checked_sites, down_tree, prefix, new_resolver)
    notebooks = {scan.path: scan.notebook for scan in scans if scan.notebook is not None}
    with timer.phase("rules"):
        findings = _apply_rules(checked_sites, rules, request, result, notebooks)
        findings += _at_home_findings(_apply_rules(at_home, rules, request, result, notebooks), homes, rules)
        findings += _file_findings(result.files, down_tree.path_base, new_tree.name, rules, request)
        findings += _cell_findings(scans, new_tree.name, rules, request)
    _count_notebook_skips(coverage, scans, checked_sites)
    findings = _with_definitions(findings, new_resolver)
    findings = _with_roles(findings, prefix, down_tree.import_names)
    if request.roles:
        in_roles = [f for f in findings if f.role in request.roles]
        if len(in_roles) < len(findings):
            left = Counter(f.role or "other" for f in findings if f.role not in request.roles)
            said = ", ".join(f"{n} in {role}" for role, n in sorted(left.items()))
            result.notes.append(
                f"--role {','.join(sorted(request.roles))}: {plural(len(findings) - len(in_roles), 'finding')} "
                f"in other files not reported ({said})"
            )
        findings = in_roles
    result.findings = sorted(
        _in_cells(fold(deduplicated(findings), notebooks), notebooks),
        key=lambda f: (*f.location.order, f.code),
    )
    for outcome in result.files:
        if outcome.status == "failed":  # its use sites are unknown: one not-checkable entry per file
            reason = Unknown(Reason.UNPARSABLE_FILE).label
            coverage.count_unchecked(reason, UncheckedSite(outcome.path, None, None, reason))
    result.coverage.append(coverage)
    result.unchecked = _unchecked(coverage, result, down_tree, new_tree, checked_sites)
    if result.unchecked is not None and coverage.found == 0 and down_tree.origin == "index":
        _name_dependents(result, request, cache, down_tree, new_tree)
    for resolver in filter(None, (new_resolver, old_resolver)):
        for module, problem in sorted(kept.failed(resolver.index).items()):
            result.notes.append(
                f"{resolver.index.label}: module {module} could not be parsed ({problem}); its names are not checked"
            )
    result.timings = timer.timings
    return result


def _reach_of_overrides(
    checked_sites: list[CheckedSite], down: SourceTree, prefix: str, resolver: Resolver
) -> list[CheckedSite]:
    """An override the upstream calls only from its own methods (`self.m(...)`), none of which the
    downstream runs (it never calls them and never hands an instance on): said so, for the rule to
    warn. The downstream's files are read for it only where there is such an override."""
    downstream: Downstream | None = None
    result = []
    for checked in checked_sites:
        call = checked.new.upstream_call
        if (
            checked.site.kind is SiteKind.OVERRIDE
            and isinstance(checked.new.verdict, Break)
            and call is not None
            and call.get("self")
            and isinstance(checked.site.ref, AttrRef)
            and checked.path.startswith(prefix)
        ):
            downstream = downstream or Downstream(down.root)
            reach = downstream.class_reach(
                checked.path[len(prefix) :], checked.site.span.line, checked.site.ref.name
            )
            unentered = (
                unentered_override(checked.site, resolver, reach) if isinstance(reach, ClassReach) else None
            )
            if unentered is not None:
                checked = replace(checked, new=replace(checked.new, upstream_call={**call, **unentered}))
        result.append(checked)
    return result


def _with_roles(findings: list[Finding], prefix: str, import_names: Iterable[str]) -> list[Finding]:
    """Each finding with its file's role in the downstream (auditor/roles.py), from its path below the
    tree's import root and the distribution's import names."""
    names = frozenset(import_names)
    out = []
    for finding in findings:
        path = finding.location.path
        if prefix and path.startswith(prefix):
            path = path[len(prefix) :]
        out.append(replace(finding, role=file_role(path, names)))
    return out


DEFINITION_LINES = 12  # lines of an upstream definition shown with a finding


def _with_definitions(findings: list[Finding], resolver: Resolver) -> list[Finding]:
    """Each finding with where its target is defined in the target version (file, line, first lines)."""
    found: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    out = []
    for finding in findings:
        symbol = finding.symbol
        if symbol and symbol not in found:
            found[symbol] = (None, ())
            try:
                value = resolver.lookup(symbol)
                if isinstance(value, (ClassValue, FunctionValue)) and value.info.lineno:
                    parts = symbol.split(".")
                    for end in range(len(parts) - 1, 0, -1):
                        module = resolver.lookup(".".join(parts[:end]))
                        if isinstance(module, ModuleValue):
                            found[symbol] = _definition(
                                resolver.index.root, module.info.filepath, value.info.lineno
                            )
                            break
            except Exception:  # the panel is a convenience: never a reason to fail the audit
                pass
        where, source = found.get(symbol, (None, ()))
        out.append(replace(finding, definition=where, definition_source=source) if where else finding)
    return out


def _definition(root: Path, filepath: str, lineno: int) -> tuple[str | None, tuple[str, ...]]:
    try:
        with open(root / filepath, "rb") as handle:
            data = handle.read(4 * 1024 * 1024)
    except OSError:
        return f"{filepath}:{lineno}", ()
    lines = data.decode("utf-8", "replace").splitlines()[lineno - 1 : lineno - 1 + DEFINITION_LINES]
    return f"{filepath}:{lineno}", tuple(line[:300] for line in lines)


def _prefix(tree: SourceTree) -> str:
    """The scanned root's path below the folder reported paths are relative to: "src/" or ""."""
    if not tree.root.is_dir():
        return ""
    try:
        relative = tree.root.relative_to(tree.path_base).as_posix()
    except ValueError:
        return ""
    return "" if relative in ("", ".") else relative + "/"


def _unchecked(
    coverage: Coverage,
    result: AuditResult,
    down: SourceTree,
    new: SourceTree,
    checked_sites: list[CheckedSite],
) -> str | None:
    """The one line that says the audit checked nothing, or None when it checked something. Imports
    that resolve are no check of the calls and attributes that use them: when there are such uses
    and not one of them could be checked, nothing was checked either."""
    uses = [c for c in checked_sites if c.site.kind is not SiteKind.IMPORT and not _own_method(c)]
    if uses and not any(c.new.unknown is None for c in uses):
        sites = plural(len(uses), "site")
        return f"nothing checked: {_label(down)} uses {new.name} at {sites} beyond its imports, but none could be checked"
    if coverage.checked:
        return None
    names = ", ".join(new.import_names) or new.name
    failed = sum(1 for f in result.files if f.status is FileStatus.FAILED)
    if coverage.found == 0:
        if failed:
            return f"nothing checked: no use of {new.name} found in the files of {_label(down)} that could be read ({failed} could not)"
        return f"nothing checked: {_label(down)} does not use {new.name} (no file imports {names})"
    return f"nothing checked: {_label(down)} uses {new.name} at {plural(coverage.found, 'site')}, but none could be checked"


def _own_method(checked: CheckedSite) -> bool:
    """A method of the downstream's own, or a use of a parameter of an override that the upstream's
    method does not type: no use of the upstream."""
    unknown = checked.new.unknown
    if unknown is not None and unknown.reason is Reason.UNTYPED_PARAMETER:
        return True
    return (
        checked.site.kind is SiteKind.OVERRIDE
        and unknown is not None
        and unknown.reason is Reason.NOT_AN_UPSTREAM_METHOD
    )


def _name_dependents(
    result: AuditResult, request: AuditRequest, cache: Cache, down: SourceTree, new: SourceTree
) -> None:
    """Name the downstream's recent releases that do require the upstream, so the user can pick one."""
    if request.offline:
        result.notes.append(
            f"offline: the releases of {down.name} that require {new.name} were not looked up"
        )
        return
    try:
        with IndexClient(cache, request.index_url) as client:
            found = releases_requiring(client, down.name, new.name)
    except SourceError as error:
        result.notes.append(
            f"the releases of {down.name} that require {new.name} could not be looked up: {error}"
        )
        return
    result.dependents = found.lines
    own = _own_requirement(down, new.name)
    if own is not None:
        # The audited release itself requires the upstream, yet no file imports it by name: say so,
        # rather than that no release requires it.
        result.dependents = [f"{_label(down)} requires {own}", *found.lines]
        result.notes.append(
            f"{_label(down)} requires {own} but no file imports it by name: it may use {new.name} under "
            f"another module's name (`import rich_click as click`), or only through another package"
        )
        return
    looked = (
        f"the newest release of each of the {found.read + found.unread} newest release series of {down.name}"
    )
    unread = f" ({found.unread} without metadata on the index)" if found.unread else ""
    if not found.lines:
        result.notes.append(f"none of {looked} requires {new.name}{unread}")
    elif found.unread:
        result.notes.append(f"looked at {looked}{unread}")


def _own_requirement(down: SourceTree, upstream: str) -> str | None:
    """The downstream's own requirement on the upstream (`click>=8.0`), from its Requires-Dist."""
    wanted = canonicalize_name(upstream)
    for line in down.requires:
        try:
            requirement = parse_requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(requirement.name) == wanted:
            return _describe(requirement)
    return None


def _apply_rules(
    checked_sites: list[CheckedSite],
    rules: tuple[Rule, ...],
    request: AuditRequest,
    result: AuditResult,
    notebooks: dict[str, NotebookMap],
) -> list[Finding]:
    """Run every enabled rule on every site; honour inline suppressions, ignores and re-grading."""
    enabled = [r for r in rules if not _selected(r, request.ignore_rules)]
    findings: list[Finding] = []
    used: set[Suppression] = set()
    for checked in checked_sites:
        before = checked.as_of_old()
        store = checked.site.kind is SiteKind.STORE
        hook = checked.site.kind is SiteKind.HOOK
        for rule in enabled:
            if store is not (rule.code == read_only_attribute_assigned.RULE.code):
                continue  # a store is read by its own rule alone; that rule reads nothing else
            if hook is not (rule.code == hook_implementation_rejected.RULE.code):
                continue  # and so is a hook implementation
            prior: set[Any] | None = None  # what the rule finds on the old version: read when it finds here
            for finding in rule.run(checked):
                if before is not None:
                    if prior is None:
                        prior = {_finding_key(f) for f in rule.run(before)}
                    finding = replace(finding, classification=_classify(finding, prior, checked))
                if any(fnmatch.fnmatchcase(finding.symbol, pattern) for pattern in request.ignore_symbols):
                    continue
                suppression = _suppression_for(checked, finding, rule)
                if suppression is not None:
                    used.add(suppression)
                    continue
                severity = next(
                    (Severity(v) for k, v in request.severities.items() if _selected(rule, {k})), None
                )
                findings.append(replace(finding, severity=severity) if severity else finding)
    if request.warn_unused_ignores:
        seen_files = {c.path: c.lines for c in checked_sites}
        for path, lines in sorted(seen_files.items()):
            for suppression in all_suppressions(path, lines):
                if suppression not in used:
                    shown = suppression.render()
                    if path in notebooks:
                        shown = shown.replace(
                            f"{path}:{suppression.line}:",
                            f"{path}:{cell_line(notebooks[path], suppression.line)}:",
                            1,
                        )
                    result.notes.append(f"unused suppression: {shown}")
    return findings


def _in_cells(findings: list[Finding], notebooks: dict[str, NotebookMap]) -> list[Finding]:
    """Findings in notebooks, placed in their cells: the line in the cell, the cell's number, the
    region in the notebook's JSON, the context lines of that cell only, and the calls their fixes
    edit, in the cell's lines too. Every other finding as it is."""
    if not notebooks:
        return findings
    placed = []
    for finding in findings:
        book = notebooks.get(finding.location.path)
        if book is None or finding.location.cell is not None:
            placed.append(finding)
            continue
        loc = finding.location
        where = cell_span(book, loc.line, loc.column, loc.end_line, loc.end_column)
        region = (
            (where["json_line"], where["json_column"], where["json_end_line"], where["json_end_column"])
            if "json_line" in where
            else None
        )
        location = replace(
            loc,
            line=where["line"],
            end_line=where["end_line"],
            end_column=where["end_column"],
            cell=where["cell"],
            json_region=region,
        )
        context, start = finding.context, finding.context_start
        if context:
            first, last = book.cell_range(loc.line)
            keep = [i for i in range(len(context)) if first <= start + i <= last]
            context = tuple(context[i] for i in keep)
            start = start + keep[0] - first + 1 if keep else 0
        fix = finding.fix
        if fix is not None and isinstance(fix.data, (RenameKeyword, RemoveKeyword)):
            call, at = fix.data.call, fix.data.at  # the call's place and where the keyword is written
            fix = replace(
                fix,
                data=replace(
                    fix.data,
                    call=(book.cell_of(call[0])[1], call[1]) if call else None,
                    at=(book.cell_of(at[0])[1], at[1]) if at else None,
                ),
            )
        placed.append(replace(finding, location=location, context=context, context_start=start, fix=fix))
    return placed


def _cell_findings(
    scans: list[FileScan], upstream: str, rules: tuple[Rule, ...], request: AuditRequest
) -> list[Finding]:
    """One AD901 finding per notebook cell that does not parse (the others were scanned)."""
    rule = next((r for r in rules if r.code == unparsable_file.RULE.code), None)
    if rule is None or _selected(rule, request.ignore_rules):
        return []
    severity = next((Severity(v) for k, v in request.severities.items() if _selected(rule, {k})), None)
    findings = []
    for scan in scans:
        for problem in scan.notebook.problems if scan.notebook is not None else ():
            outcome = FileOutcome(scan.path, FileStatus.FAILED, problem.message)
            finding = unparsable_file.file_finding(rule, outcome, None, upstream)
            source = scan.lines[problem.line - 1] if 0 < problem.line <= len(scan.lines) else ""
            finding = replace(
                finding,
                message=f"cell {problem.cell} {finding.message}",
                location=Location(scan.path, problem.line, 1, problem.line, 1, source[:500]),
            )
            findings.append(replace(finding, severity=severity) if severity else finding)
    return findings


def _count_notebook_skips(coverage: Coverage, scans: list[FileScan], checked: list[CheckedSite]) -> None:
    """Count what a notebook's scan left out: each cell that does not parse (its uses are unknown),
    and each magic or shell line that names the upstream or a name the notebook binds to it
    (`%timeit np.sum(x)`)."""
    for scan in scans:
        book = scan.notebook
        if book is None:
            continue
        for problem in book.problems:
            reason = Unknown(Reason.UNPARSABLE_FILE).label
            coverage.count_unchecked(reason, UncheckedSite(scan.path, 1, None, reason, cell=problem.cell))
        if not book.skipped:
            continue
        names = _upstream_names_bound(scan)
        for skipped in book.skipped:
            if names and re.search(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\b", skipped.text):
                reason = Unknown(Reason.NOTEBOOK_MAGIC).label
                coverage.count_unchecked(
                    reason, _unchecked_at(scan, skipped.line, None, reason, skipped.text)
                )


def _upstream_names_bound(scan: FileScan) -> set[str]:
    """The names a file's imports of the upstream bind (`np` for `import numpy as np`), read from its
    import sites' text, and the upstream's top-level names."""
    names: set[str] = set()
    for site in scan.sites:
        if site.kind is not SiteKind.IMPORT:
            continue
        ref = site.ref
        while not isinstance(ref, ModuleRef):
            ref = ref.base if isinstance(ref, AttrRef) else None  # type: ignore[assignment]
            if ref is None:
                break
        if isinstance(ref, ModuleRef):
            names.add(ref.path.split(".")[0])
        line = scan.lines[site.span.line - 1] if 0 < site.span.line <= len(scan.lines) else ""
        names.update(re.findall(r"\bas\s+([A-Za-z_]\w*)", line))
        if isinstance(site.ref, AttrRef) and not re.search(r"\bas\b", line):
            names.add(site.ref.name)
    return names


def _file_findings(
    outcomes: list[FileOutcome], root: Path, upstream: str, rules: tuple[Rule, ...], request: AuditRequest
) -> list[Finding]:
    """One AD901 finding per downstream file that could not be read or parsed: it was not checked."""
    rule = next((r for r in rules if r.code == unparsable_file.RULE.code), None)
    if rule is None or _selected(rule, request.ignore_rules):
        return []
    severity = next((Severity(v) for k, v in request.severities.items() if _selected(rule, {k})), None)
    findings = []
    for outcome in outcomes:
        if outcome.status is not FileStatus.FAILED:
            continue
        file = None if outcome.path.endswith("/") else (root / outcome.path if root.is_dir() else root)
        finding = unparsable_file.file_finding(rule, outcome, file, upstream)
        findings.append(replace(finding, severity=severity) if severity else finding)
    return findings


def _finding_key(finding: Finding) -> tuple[str, int, int]:
    if finding.code == RuleCode.HOOK_IMPLEMENTATION_REJECTED:
        # a hook the old version only deprecated (a warning) and the new one rejects (an error) drifted
        return (f"{finding.code}:{finding.severity.value}", finding.location.line, finding.location.column)
    return (finding.code, finding.location.line, finding.location.column)


def _classify(finding: Finding, prior: set[tuple[str, int, int]], checked: CheckedSite) -> Classification:
    """drift: the rule is silent on the old version; pre-existing: it said the same before."""
    if _finding_key(finding) in prior:
        return Classification.PRE_EXISTING
    old = checked.old
    gone = checked.new.missing_at
    if (
        old is not None
        and not old.certain
        and not old.broken
        and not (gone is not None and gone in old.present)
    ):
        return Classification.UNKNOWN_BEFORE  # the old version could not be checked at this site
    return Classification.DRIFT


def _selected(rule: Rule, selectors: frozenset[str] | set[str]) -> bool:
    wanted = {s.lower() for s in selectors}
    return bool({rule.code.lower(), rule.name, rule.family} & wanted)


_KEYWORD_FINDINGS = frozenset({RuleCode.UNEXPECTED_KEYWORD, RuleCode.POSITIONAL_ONLY_AS_KEYWORD})


def _suppression_for(checked: CheckedSite, finding: Finding, rule: Rule) -> Suppression | None:
    """A suppression on the finding's line, the use's first line, or, for a keyword's finding (at the
    call, where CPython fails), the line the keyword is written on."""
    site = checked.site
    lines = [finding.location.line, site.span.line, site.place.line]
    if finding.code in _KEYWORD_FINDINGS:
        lines += [span.line for name, span in site.keyword_spans if f"`{name}`" in finding.message]
    for line in dict.fromkeys(lines):
        suppression = suppression_on(checked.path, checked.lines, line)
        if suppression is not None and suppression.matches(rule.code, rule.name, rule.family):
            return suppression
    return None


def _index(tree: SourceTree, api_dir: Path, also_owned: Iterable[str] = ()) -> ApiIndex:
    return _build_index(_index_args(tree, api_dir, also_owned))


def _index_args(tree: SourceTree, api_dir: Path, also_owned: Iterable[str] = ()) -> dict[str, Any]:
    return {
        "root": tree.root,
        "import_names": (*tree.import_names, *also_owned),
        "name": tree.name,
        "version": tree.version,
        "compiled_modules": tree.compiled_modules,
        "cache_dir": api_dir,
        "absence_is_evidence": tree.absence_is_evidence,
    }


def _build_index(index_args: dict[str, Any]) -> ApiIndex:
    return ApiIndex(**index_args)


def _at_new_home(site: UseSite, new: SiteCheck, resolver: Resolver) -> str | None:
    """A call of a name that is missing here but importable at one other place (`from pkg.a import f`
    with `f` now in `pkg.b`): the name's path there (`pkg.b.f`), so that the call is checked against
    what the import can move to, in the same run."""
    missing, ref = new.missing, site.ref
    if (
        site.kind is not SiteKind.CALL
        or missing is None
        or len(new.relocated) != 1
        or not isinstance(ref, AttrRef)
        or not isinstance(ref.base, ModuleRef)
        or (ref.base.path, ref.name) != (missing.owner, missing.name)
    ):
        return None
    module, _, name = new.relocated[0].rpartition(".")
    if name != missing.name or not isinstance(resolver.lookup(module), ModuleValue):
        return None
    return new.relocated[0]


# What a call checked at the moved name's new home can say: how the call binds there.
_AT_HOME_FAMILIES = frozenset({Family.CALLS, Family.DRIFT})


def _at_home_findings(
    findings: list[Finding], homes: dict[tuple[str, int], str], rules: tuple[Rule, ...]
) -> list[Finding]:
    """The binding findings of calls checked where their missing name moved, each saying where."""
    families = {rule.code: rule.family for rule in rules}
    return [
        replace(
            finding,
            message=f"{finding.message} (checked at `{homes[(finding.location.path, finding.location.line)]}`,"
            " where the name can be imported from now)",
        )
        for finding in findings
        if families.get(finding.code) in _AT_HOME_FAMILIES
        and finding.code != RuleCode.DEFINITION_LEFT_UPSTREAM
        and (finding.location.path, finding.location.line) in homes
    ]


class _Plugins:
    """Which downstream functions named like hooks a plugin host takes as hook implementations: those
    whose name starts with a prefix the upstream's plugin manager takes every function of a plugin by
    (pytest's `pytest_`, read from its `parse_hookimpl_opts`), in a plugin module: a `conftest.py`, a
    module one of the downstream's entry points names in a group the upstream loads plugins from
    (`pytest11`), or a module of the downstream that such a module names in a literal
    `pytest_plugins = [...]` (one step). Classes registered as plugins at run time are not followed."""

    def __init__(
        self, down: SourceTree, new: Resolver, old: Resolver | None, scans: list[FileScan], prefix: str
    ) -> None:
        self.down = down
        self.resolvers = (new, old)
        self.scans = scans
        self.prefix = prefix
        self.specs: list[HookSpecs] | None = None  # read at the first function named like a hook
        self.prefixes: tuple[str, ...] = ()
        self._modules: set[str] | None = None

    def takes(self, path: str, site: UseSite) -> bool:
        assert isinstance(site.ref, AttrRef)
        if self.specs is None:
            self.specs = [s for s in (r.index.hookspecs() for r in self.resolvers if r is not None) if s]
            self.prefixes = tuple(sorted({p for s in self.specs for p in s.impl_prefixes}))
        if not self.prefixes or not site.ref.name.startswith(self.prefixes):
            return False
        if site.hook.startswith("conftest"):
            return True
        if self._modules is None:
            groups = {g for s in self.specs for g in s.entry_groups}
            found = entry_point_modules([self.down.path_base, self.down.root])
            self._modules = {m for g in groups for m in found.get(g, ())}
            self._modules |= self._named_plugins(self._modules)
        return _module_of(path) in self._modules

    def _named_plugins(self, entry_modules: set[str]) -> set[str]:
        """The modules the downstream's plugin modules name in `pytest_plugins = "a.b"` / `[...]`."""
        names = {f"{p}plugins" for p in self.prefixes}
        found: set[str] = set()
        for scan in self.scans:
            path = scan.path[len(self.prefix) :]
            plugin = path.rsplit("/", 1)[-1] == "conftest.py" or _module_of(path) in entry_modules
            if (
                not plugin
                or len(scan.lines) > _MAX_PLUGIN_LINES
                or not any(n in line for line in scan.lines for n in names)
            ):
                continue
            try:
                tree = ast.parse("\n".join(scan.lines))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for stmt in tree.body:
                if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in names for t in stmt.targets
                ):
                    value = stmt.value
                    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                    found |= {
                        i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
                    }
        return found


_MAX_PLUGIN_LINES = 20_000  # a plugin module longer than this is not read for `pytest_plugins`


def _module_of(path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`, `pkg/__init__.py` -> `pkg` (a path below the import root)."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _handed_unknown(ref: Ref, resolver: Resolver) -> bool:
    """A use of what an upstream callable passes a function handed to it, where its annotation does not
    say (`@register.filter def f(value)`): as an unannotated parameter, no use of the upstream's."""
    current: Ref | None = ref
    for _ in range(64):
        if current is None:
            return False
        if isinstance(current, ItemRef) and current.via.startswith("handed:"):
            return isinstance(resolver.resolve(current), Unknown)
        if isinstance(current, OpaqueRef):  # a name that holds only such values (else one is a use)
            alternatives = current.alternatives
            return bool(alternatives) and all(_handed_unknown(a, resolver) for a in alternatives)
        current = getattr(current, "base", None) or getattr(current, "func", None)
    return False


def _count(coverage: Coverage, check: SiteCheck, scan: FileScan, site: UseSite) -> None:
    coverage.found += 1
    if check.unknown is None:
        coverage.resolved += 1
        coverage.checked += 1
    else:
        if check.unknown.resolved:
            coverage.resolved += 1  # the target is known; only this call's arguments are not
        reason = check.unknown.label
        coverage.count_unchecked(
            reason, _unchecked_at(scan, site.span.line, site.span.column, reason, site.code)
        )


def _unchecked_at(
    scan: FileScan, line: int, column: int | None, reason: str, code: str = ""
) -> UncheckedSite:
    """Where a not-checkable use is, as reports show it (in a notebook: its cell and the line there)."""
    book = scan.notebook
    if book is None:
        return UncheckedSite(scan.path, line, column, reason, code.strip())
    cell, in_cell, _ = book.cell_of(line)
    return UncheckedSite(scan.path, in_cell, column, reason, code.strip(), cell)


def _input(tree: SourceTree) -> InputInfo:
    return InputInfo(
        name=tree.name,
        version=tree.version,
        origin=tree.origin,
        location=tree.location,
        sha256=tree.sha256,
        import_names=tuple(tree.import_names),
        note=tree.note,
        root=str(tree.path_base) if tree.origin in ("directory", "installed") else None,
    )


def _label(tree: SourceTree | None) -> str:
    if tree is None:
        return ""
    return f"{tree.name}=={tree.version}" if tree.version else tree.name


@dataclass(frozen=True)
class DiffRequest:
    old: str
    new: str
    used_by: str | None = None  # a downstream: only the changes that touch what it uses
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None


@dataclass
class DiffResult:
    old: InputInfo
    new: InputInfo
    downstream: InputInfo | None
    changes: list[ApiChange]
    notes: list[str] = field(default_factory=list)
    tool_version: str = __version__

    def as_dict(self) -> dict[str, object]:
        return {
            "tool": {"name": "apidrift", "version": self.tool_version},
            "old": asdict(self.old),
            "new": asdict(self.new),
            "downstream": asdict(self.downstream) if self.downstream else None,
            "changes": [c.as_dict() for c in self.changes],
            "notes": self.notes,
        }


def diff_versions(request: DiffRequest) -> DiffResult:
    """The API changes between two upstream versions (with `used_by`: only those a downstream meets)."""
    inputs = locate_versions(request)
    old_tree, new_tree, down_tree = inputs.old_upstream, inputs.upstream, inputs.downstream
    assert old_tree is not None  # a diff always has both versions
    cache = inputs.sources.cache
    api_dir = cache.dir("api")
    extra = old_tree.import_names if not new_tree.absence_is_evidence else ()  # as in `audit`
    old, new = Resolver(_index(old_tree, api_dir)), Resolver(_index(new_tree, api_dir, extra))
    if down_tree is not None:
        names = frozenset(old_tree.import_names) | frozenset(new_tree.import_names)
        if not new_tree.absence_is_evidence:
            names -= frozenset(down_tree.import_names)
        scans, _ = scan_downstream(down_tree.root, names, cache.dir("scan"))
        prefix = _prefix(down_tree)  # paths relative to the project root, as `audit` reports them
        books = {prefix + scan.path: scan.notebook for scan in scans if scan.notebook is not None}
        sites = used_sites(
            ((prefix + scan.path, scan.sites) for scan in scans),
            old,
            place=lambda path, line: f"{path}:{cell_line(books[path], line)}" if path in books else None,
        )
        uses = {path: sorted({u.where for u in found}) for path, found in sites.items()}
        changes = diff(old, new, uses, uses, sites, SiteChecks(old, new))
    else:
        changes = diff(old, new, all_paths(old))
    return DiffResult(_input(old_tree), _input(new_tree), _input(down_tree) if down_tree else None, changes)


def locate_versions(request: DiffRequest) -> Inputs:
    """A diff's inputs: OLD, NEW and, with `used_by`, the downstream whose uses it keeps."""
    started = time.perf_counter()
    sources = Sources.of(request)
    old_tree = sources.locate(request.old, "upstream")
    new_tree = sources.locate(request.new, "upstream")
    down_tree = sources.locate(request.used_by, "downstream") if request.used_by else None
    return Inputs(new_tree, old_tree, down_tree, sources, seconds=time.perf_counter() - started)
