"""What the commands share: their options, declared once as decorators over groups, and what turns the
options' values into a request (the configuration under them, rule selectors, reports to write).

A command stacks the groups it takes, e.g. `@fetch_options()` for `--cache-dir`, `--offline` and
`--index-url`; the help of a shared option says the same thing in every command, with the command's
own verb or subject where the meaning differs (`fix` touches files where `audit` scans them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from apidrift.auditor.config import (
    FAIL_ON,
    LEVELS,
    Config,
    ConfigError,
    find_config,
    known_selectors,
    load_config,
)
from apidrift.auditor.core.results import AuditResult, Classification, Severity
from apidrift.auditor.roles import ROLES, parse_roles
from apidrift.rules.registry import all_rules

if TYPE_CHECKING:
    from apidrift.auditor.engine import AuditRequest

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_UNCHECKED = 0, 1, 2, 3
FORMATS = ("text", "json", "sarif", "html", "github", "markdown")  # the audit's reports: `reports.RENDERERS`

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_OK",
    "EXIT_UNCHECKED",
    "EXIT_USAGE",
    "FAIL_ON",
    "FORMATS",
    "LEVELS",
    "InputError",
    "Output",
    "build_request",
    "color_option",
    "config_options",
    "exit_status",
    "fail_on_option",
    "fetch_options",
    "output_option",
    "parse_outputs",
    "parse_severities",
    "pre_existing_option",
    "quiet_option",
    "read_config",
    "report_options",
    "selection",
    "selection_options",
    "symbol_patterns",
    "target_options",
    "write_report",
]

F = TypeVar("F", bound=Callable[..., Any])


class InputError(click.ClickException):
    """A spec, a source or an option that cannot be used: one line, exit status 2."""

    exit_code = EXIT_USAGE

    def show(self, file: object = None) -> None:
        click.echo(f"apidrift: error: {self.format_message()}", err=True)


def _group(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """The decorators applied as if stacked in this order (the first one's option listed first)."""

    def apply(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


# ---- the option groups


def fetch_options(*, cache_note: str = "") -> Callable[[F], F]:
    """`--cache-dir`, `--offline`, `--index-url`: where releases come from and are kept."""
    return _group(
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            help=f"Cache folder (default: the user cache dir){cache_note}.",
        ),
        click.option("--offline", is_flag=True, help="Use only the cache; never touch the network."),
        click.option(
            "--index-url",
            metavar="URL",
            help="Package index (PEP 503/691); default: PIP_INDEX_URL, else the public index.",
        ),
    )


def target_options(*, verb: str, from_note: str = "") -> Callable[[F], F]:
    """`--against`, `--from`, `--python`: the upstream version to `verb` against and the one written for."""
    return _group(
        click.option(
            "--against",
            "against",
            metavar="UPSTREAM",
            help=(
                f"Upstream version to {verb} against: NAME==VER, NAME@PATH or NAME (the version installed in the "
                "downstream's environment, --python or an active virtualenv, else the latest release). "
                "Default: `against` in [tool.apidrift]."
            ),
        ),
        click.option(
            "--from",
            "old",
            metavar="UPSTREAM",
            help=f"Upstream version the downstream was written for{from_note}.",
        ),
        click.option(
            "--python",
            "python",
            type=click.Path(path_type=Path),
            help=(
                "The downstream's own interpreter (or environment folder): its installed upstream is the version "
                "written for, when the downstream pins none, and what a bare --against NAME means."
            ),
        ),
    )


def report_options(formats: Sequence[str], *, what: str = "Report") -> Callable[[F], F]:
    """`--format FMT[:PATH]` (repeatable) and `--output PATH`."""
    return _group(
        click.option(
            "--format",
            "formats",
            metavar="FMT[:PATH]",
            multiple=True,
            help=f"{what} format, repeatable: {', '.join(formats)}; with :PATH written to that file (default: text to stdout).",
        ),
        output_option(),
    )


def output_option(*, single: bool = False) -> Callable[[F], F]:
    """`--output PATH`; `single`: the command writes one report only (`diff`), so it says no "(single)"."""
    return click.option(
        "--output",
        type=click.Path(dir_okay=False, path_type=Path),
        help=f"Write the {'' if single else '(single) '}report here instead of stdout.",
    )


def fail_on_option() -> Callable[[F], F]:
    return click.option(
        "--fail-on",
        type=click.Choice(FAIL_ON),
        help="Lowest severity that fails the run (exit 1). Default: `fail-on` in [tool.apidrift], else error.",
    )


def config_options(*, owner: str = "downstream") -> Callable[[F], F]:
    """`--config FILE` and `--no-config`: where [tool.apidrift] is read from, if at all."""
    return _group(
        click.option(
            "--config",
            "config_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help=f"Read [tool.apidrift] from this file instead of the {owner}'s pyproject.toml.",
        ),
        click.option("--no-config", is_flag=True, help="Ignore any [tool.apidrift] configuration."),
    )


def selection_options(
    *, owner: str = "downstream", fixing: bool = False, severity: bool = True
) -> Callable[[F], F]:
    """`--ignore`, `--severity`, `--exclude`, `--ignore-symbol`: what is reported (or fixed), and how gravely."""
    options = [
        click.option(
            "--ignore",
            "ignore",
            metavar="RULE",
            multiple=True,
            help=f"Never {'fix (nor report)' if fixing else 'report'} this rule (code, name or family); repeatable, added to the configuration's.",
        )
    ]
    if severity:
        options.append(
            click.option(
                "--severity",
                "severity",
                metavar="RULE=LEVEL",
                multiple=True,
                help=f"Re-grade a rule (code, name or family) to {', '.join(LEVELS[:-1])} or {LEVELS[-1]}; repeatable.",
            )
        )
    options += [
        click.option(
            "--exclude",
            "exclude",
            metavar="GLOB",
            multiple=True,
            help=f"Do not {'touch' if fixing else 'scan'} {owner} paths matching this glob; repeatable.",
        ),
        click.option(
            "--ignore-symbol",
            "ignore_symbols",
            metavar="PATTERN",
            multiple=True,
            help="Leave uses of this upstream dotted path (globs allowed) alone; repeatable."
            if fixing
            else "Do not report uses of this upstream dotted path (globs allowed); repeatable.",
        ),
    ]
    return _group(*options)


def color_option() -> Callable[[F], F]:
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        help="Colour the text report.",
    )


def quiet_option() -> Callable[[F], F]:
    return click.option(
        "--quiet", "-q", is_flag=True, help="No progress display and no messages on stderr (errors excepted)."
    )


# ---- from the options' values to a request


@dataclass(frozen=True)
class Output:
    fmt: str
    path: Path | None  # None: standard output


def parse_outputs(formats: Sequence[str], output: Path | None) -> list[Output]:
    """`--format FMT[:PATH]` (repeatable) and `--output PATH` into where each report goes."""
    outputs = []
    for item in formats or ("text",):
        fmt, sep, path = item.partition(":")
        fmt = fmt.strip().lower()
        if fmt not in FORMATS:
            raise InputError(f"unknown format {fmt!r} in --format {item!r}; choose from {', '.join(FORMATS)}")
        if sep and not path:
            raise InputError(f"--format {item!r}: no path after the colon")
        outputs.append(Output(fmt, Path(path) if path else None))
    to_stdout = [o for o in outputs if o.path is None]
    if output is not None:
        if len(outputs) != 1 or not to_stdout:
            raise InputError("--output takes one report; with several formats use --format FMT:PATH for each")
        outputs = [Output(outputs[0].fmt, output)]
    elif len(to_stdout) > 1:
        raise InputError(
            "only one --format can go to standard output; give the others a path (--format FMT:PATH)"
        )
    targets = [o.path.resolve() for o in outputs if o.path is not None]
    if len(set(targets)) != len(targets):
        raise InputError("two reports would be written to the same file")
    for target in targets:
        if not target.parent.is_dir():
            raise InputError(f"cannot write {target}: folder {target.parent} does not exist")
        if target.is_dir():
            raise InputError(f"cannot write {target}: it is a folder")
    return outputs


def read_config(downstream: str, config_path: Path | None, no_config: bool) -> Config:
    """[tool.apidrift] from --config, else the downstream's pyproject.toml, else defaults."""
    try:
        if config_path is not None:
            return load_config(config_path, explicit=True)
        if not no_config and (found := find_config(downstream)) is not None:
            return load_config(found)
    except ConfigError as error:
        raise InputError(str(error)) from None
    return Config()


def role_option() -> Callable[[F], F]:
    """`--role ROLE[,ROLE...]`: report only the findings in files of these roles (auditor/roles.py)."""
    return click.option(
        "--role",
        "roles",
        metavar="ROLE[,ROLE...]",
        multiple=True,
        help=f"Report only findings in files of these roles ({', '.join(ROLES)}; comma-separated or "
        "repeated): `--role shipped` keeps what breaks the users, not the project's tests, examples or "
        "build scripts. Default: every role.",
    )


def parse_role_option(values: Sequence[str]) -> frozenset[str]:
    try:
        return parse_roles(values)
    except ValueError as error:
        raise InputError(f"--role: {error}") from None


def selection(
    config: Config,
    ignore: Sequence[str],
    exclude: Sequence[str],
    ignore_symbols: Sequence[str],
    severity: Sequence[str] = (),
) -> dict[str, Any]:
    """The selection options of a request (`AuditRequest`, `PlanRequest`): the command line's over the
    configuration's; a rule selector or level that names nothing is an `InputError`."""
    return {
        "ignore_rules": frozenset(config.ignore) | frozenset(_rule_selectors(ignore, "--ignore")),
        "severities": {**config.severity, **parse_severities(severity)},
        "exclude": tuple(config.exclude) + tuple(exclude),
        "ignore_symbols": symbol_patterns(tuple(config.ignore_symbols) + tuple(ignore_symbols)),
    }


def build_request(
    config: Config,
    downstream: str,
    against: str | None,
    old: str | None,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    ignore: Sequence[str],
    exclude: Sequence[str],
    ignore_symbols: Sequence[str],
    *,
    severities: dict[str, str] | None = None,
    warn_unused_ignores: bool = False,
    verb: str,
    python: Path | None = None,
    roles: frozenset[str] = frozenset(),
) -> AuditRequest:
    """The engine's request: command-line options over the configuration's."""
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.engine import AuditRequest

    against = against or config.against
    if not against:
        raise InputError(
            f"no upstream to {verb} against: give --against NAME==VERSION or set `against` in [tool.apidrift]"
        )
    selected = selection(config, ignore, exclude, ignore_symbols)
    selected["severities"].update(severities or {})
    return AuditRequest(
        downstream,
        against,
        old or config.old,
        cache_dir,
        offline,
        index_url,
        **selected,
        warn_unused_ignores=warn_unused_ignores,
        python=_python(python),
        roles=roles,
    )


def exit_status(result: AuditResult, fail_on: str, *, pre_existing: bool = False) -> int:
    """`--fail-on`: 1 for a finding at or above it, else 3 when nothing was checked, else 0. With an old
    version, a finding that was already there under it (`pre-existing`: the upgrade does not cause it)
    fails the run only with `pre_existing` (`--fail-on-pre-existing`): the gate is on drift."""
    if fail_on == "never":
        return EXIT_OK
    threshold = Severity(fail_on).rank
    if any(
        f.severity.rank >= threshold and (pre_existing or f.classification is not Classification.PRE_EXISTING)
        for f in result.findings
    ):
        return EXIT_FINDINGS
    return EXIT_UNCHECKED if result.unchecked else EXIT_OK


def pre_existing_option() -> Callable[[F], F]:
    return click.option(
        "--fail-on-pre-existing",
        "fail_on_pre_existing",
        is_flag=True,
        help="Also fail on findings the old version already had (pre-existing); by default only what the "
        "upgrade causes fails the run.",
    )


def write_report(path: Path, report: str) -> None:
    """Write a rendered report to the file `--format FMT:PATH` or `--output` named."""
    try:
        path.write_text(report, encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror}") from None


def _python(python: Path | None) -> Path | None:
    if python is not None and not python.exists():
        raise InputError(f"--python {python}: no such interpreter or folder")
    return python


def _rule_selectors(values: Sequence[str], option: str) -> list[str]:
    known = known_selectors(all_rules())
    selectors = [part.strip() for value in values for part in value.split(",") if part.strip()]
    for selector in selectors:
        if selector.lower() not in known:
            raise InputError(
                f"{option}: no rule, rule name or family {selector!r}; `apidrift rules` lists them"
            )
    return selectors


def symbol_patterns(patterns: Sequence[str]) -> tuple[str, ...]:
    """A dotted path stands for that symbol and everything under it (`pkg.Scheduler` covers
    `pkg.Scheduler.__init__`), so each pattern also gets its `.*` form."""
    result: list[str] = []
    for pattern in patterns:
        result.append(pattern)
        if not pattern.endswith("*"):
            result.append(pattern + ".*")
    return tuple(dict.fromkeys(result))


def parse_severities(values: Sequence[str]) -> dict[str, str]:
    """`--severity RULE=LEVEL` (repeatable) into selector -> level; a bad one is an `InputError`."""
    result = {}
    for value in values:
        selector, sep, level = value.partition("=")
        if not sep or level.strip().lower() not in LEVELS:
            raise InputError(
                f"--severity {value!r}: expected RULE=LEVEL with LEVEL one of {', '.join(LEVELS)}"
            )
        (selector,) = _rule_selectors([selector], "--severity")
        result[selector] = level.strip().lower()
    return result
