"""## What it does
Finds hook implementations a pluggy-based upstream no longer accepts. pytest takes every function
whose name starts with `pytest_` in a plugin module (every `conftest.py`, and the modules the
downstream's `pytest11` entry points name, in `pyproject.toml`, `setup.cfg`, a literal `setup.py` or
the release's `entry_points.txt`) as an implementation of the hook of that name, marked
`@pytest.hookimpl(...)` or not, and validates it against its hook specifications (the functions its
`HookspecMarker("pytest")` decorates, `_pytest/hookspec.py`) when the plugin is registered:

- a hook the old version specified and the target version no longer does (pytest 8.1 removed
  `pytest_cmdline_preparse`, pytest 7.0 `pytest_warning_captured`): pluggy raises
  `PluginValidationError: unknown hook 'pytest_cmdline_preparse' in plugin ...` at startup (an error);
  marked `@hookimpl(optionalhook=True)`, it is accepted, but nothing calls it any more (a warning);
- a parameter of the implementation the target version's specification does not have (a hook
  argument removed): `PluginValidationError: ... Argument(s) {'path'} are declared in the hookimpl but
  can not be found in the hookspec` (an error);
- a specification the target version marks `warn_on_impl=...` (or `warn_on_impl_args` for an argument
  the implementation takes): registering the plugin warns, quoting the upstream's message (a warning;
  pytest 8.0 turns its own `PytestRemovedIn8Warning` into an error where its warning filters apply,
  in `conftest.py` files).

The hint names the replacement the old version's deprecation message gives, when it gives one.
A module named in a plugin's literal `pytest_plugins = [...]` is a plugin too. A `def` in a branch of
a test of the upstream's version (`if PYTEST_VERSION_INFO < (7,):`, a name bound at module level from
`pytest.__version__`, or made from such a name, compared with a tuple of integers) is read for the
version audited (not checkable where that version is not known). Not read:
functions in modules no plugin host loads (a helper module's `pytest_foo`: silent), functions under a
decorator of the downstream's or in a branch of any other test (not checkable), plugin classes
registered at run time.

## Why is this bad?
The plugin fails when the host registers it, before any test runs: the whole test session stops.

## Example
```python
# conftest.py
def pytest_cmdline_preparse(config, args):  # pytest 8.1: unknown hook 'pytest_cmdline_preparse'
    args.append("-q")
```

## Fix
Implement the hook that replaces it (`pytest_load_initial_conftests(early_config, parser, args)`), or
drop the parameter the specification no longer passes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.HOOK_IMPLEMENTATION_REJECTED,
    name="hook-implementation-rejected",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="A plugin's hook implementation that the upstream's hook specifications no longer accept",
    since="0.1.0",
)

_MESSAGE_LENGTH = 300  # characters of the upstream's message quoted


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    site = checked.site
    if site.kind is not SiteKind.HOOK or not checked.new.certain:
        return
    ref = site.ref
    assert isinstance(ref, AttrRef) and isinstance(ref.base, ModuleRef)
    name, project = ref.name, ref.base.path
    new, old = checked.new.hookspec, checked.old.hookspec if checked.old is not None else None
    where = "a `conftest.py`" if site.hook.startswith("conftest") else "a plugin module"
    if new is None:
        if old is None or checked.old is None:
            return
        optional = "+optional" in site.hook
        said = _quoted(str(old.get("warn") or ""))
        message = (
            f"`{name}` in {where} implements {project}'s hook `{name}`, which {checked.old.version} specified "
            f"as `{_spec_text(old)}` (`{old['module']}`) and {checked.new.version} no longer does"
        )
        if optional:
            message += ": marked `optionalhook=True`, it is accepted, but nothing calls it any more"
        else:
            message += f": registering the plugin raises PluginValidationError (unknown hook '{name}')"
        if said:
            message += f"; {checked.old.version} said: {said}"
        finding = rule.finding(
            checked,
            message,
            symbol=f"{old['module']}.{name}",
            hint=f"implement the hook that replaces it ({said})"
            if said
            else f"remove `{name}` or implement another hook",
            severity=Severity.WARNING if optional else None,
        )
        yield finding
        return
    taken = _argnames(checked)
    extra = [a for a in taken if a not in new.get("params", ())]
    if extra:
        before = [a for a in extra if old is not None and a in old.get("params", ())]
        had = (
            f" ({checked.old.version} passed {', '.join(f'`{a}`' for a in before)})"
            if before and checked.old is not None
            else ""
        )
        yield rule.finding(
            checked,
            f"`{name}` takes {', '.join(f'`{a}`' for a in extra)}, which {checked.new.version}'s specification "
            f"`{_spec_text(new)}` (`{new['module']}`) does not pass{had}: registering the plugin raises "
            f"PluginValidationError (Argument(s) {set(extra)} are declared in the hookimpl but can not be "
            "found in the hookspec)",
            symbol=f"{new['module']}.{name}",
            hint=f"take only what the hook passes: def {_spec_text(new)}",
        )
        return
    warned = _quoted(str(new.get("warn") or ""))
    args = new.get("warn_args") or {}
    for arg in taken:
        if isinstance(args, Mapping) and args.get(arg):
            warned = warned or f"`{arg}`: {_quoted(str(args[arg]))}"
    if warned:
        yield rule.finding(
            checked,
            f"`{name}` implements {project}'s hook `{name}`, which {checked.new.version} deprecates: registering "
            f"the plugin warns {warned}",
            symbol=f"{new['module']}.{name}",
            hint=warned,
            severity=Severity.WARNING,
        )


def _argnames(checked: CheckedSite) -> list[str]:
    """The parameters pluggy matches against the specification: the positional ones without a default."""
    signature = checked.site.signature
    if signature is None:
        return []
    kinds = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    return [p.name for p in signature.parameters if p.kind in kinds and not p.has_default]


def _spec_text(spec: Mapping[str, Any]) -> str:
    return f"{spec['name']}({', '.join(spec.get('params', ()))})"


def _quoted(message: str) -> str:
    message = " ".join(message.split())
    if len(message) > _MESSAGE_LENGTH:
        message = message[: _MESSAGE_LENGTH - 1] + "\u2026"
    return repr(message) if message else ""
