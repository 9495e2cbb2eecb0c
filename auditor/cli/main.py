"""The command line: thin commands that build a request, call the engine, render, and pick the exit status.

Exit status: 0 nothing at or above `--fail-on`; 1 findings at or above it; 2 bad usage or input;
3 nothing was checked (the downstream does not use the upstream, or none of its uses could be checked).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import click

from apidrift import __version__
from apidrift.auditor.results import AuditResult, Severity
from apidrift.auditor.wording import first_line, plural

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_UNCHECKED = 0, 1, 2, 3
FORMATS = ("text", "json", "sarif", "html", "github", "markdown")
FAIL_ON = ("error", "warning", "info", "never")
LEVELS = ("error", "warning", "info")


class InputError(click.ClickException):
    """A spec, a source or an option that cannot be used: one line, exit status 2."""

    exit_code = EXIT_USAGE

    def show(self, file: object = None) -> None:
        click.echo(f"apidrift: error: {self.format_message()}", err=True)


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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="apidrift")
def cli() -> None:
    """Find the call sites in a downstream package that a new upstream version breaks."""


@cli.command()
@click.argument("downstream")
@click.option(
    "--against",
    "against",
    metavar="UPSTREAM",
    help="Upstream version to check against: NAME==VER, NAME@PATH or NAME. Default: `against` in [tool.apidrift].",
)
@click.option("--from", "old", metavar="UPSTREAM", help="Upstream version the downstream was written for.")
@click.option(
    "--python",
    "python",
    type=click.Path(path_type=Path),
    help="The downstream's own interpreter (or environment folder): its installed upstream is the version written for, when the downstream pins none.",
)
@click.option(
    "--format",
    "formats",
    metavar="FMT[:PATH]",
    multiple=True,
    help=f"Report format, repeatable: {', '.join(FORMATS)}; with :PATH written to that file (default: text to stdout).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the (single) report here instead of stdout.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Lowest severity that fails the run (exit 1). Default: `fail-on` in [tool.apidrift], else error.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read [tool.apidrift] from this file instead of the downstream's pyproject.toml.",
)
@click.option("--no-config", is_flag=True, help="Ignore any [tool.apidrift] configuration.")
@click.option(
    "--ignore",
    "ignore",
    metavar="RULE",
    multiple=True,
    help="Never report this rule (code, name or family); repeatable, added to the configuration's.",
)
@click.option(
    "--severity",
    "severity",
    metavar="RULE=LEVEL",
    multiple=True,
    help="Re-grade a rule (code, name or family) to error, warning or info; repeatable.",
)
@click.option(
    "--exclude",
    "exclude",
    metavar="GLOB",
    multiple=True,
    help="Do not scan downstream paths matching this glob; repeatable.",
)
@click.option(
    "--ignore-symbol",
    "ignore_symbols",
    metavar="PATTERN",
    multiple=True,
    help="Do not report uses of this upstream dotted path (globs allowed); repeatable.",
)
@click.option(
    "--warn-unused-ignores", is_flag=True, help="Note `# apidrift: ignore` comments that silenced nothing."
)
@click.option(
    "--baseline",
    "baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Accepted-findings file: fail only on findings not in it.",
)
@click.option(
    "--write-baseline",
    "write_baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record today's findings as accepted in this file.",
)
@click.option(
    "--history",
    is_flag=True,
    help="Give each finding its history over the upstream's releases from the --from one to --against: the release where it first appeared, where its target was deprecated, the migration window (as `apidrift plan` does).",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Cache folder (default: the user cache dir).",
)
@click.option("--offline", is_flag=True, help="Use only the cache; never touch the network.")
@click.option(
    "--index-url",
    metavar="URL",
    help="Package index (PEP 503/691); default: PIP_INDEX_URL, else the public index.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text report.",
)
@click.option(
    "--quiet", "-q", is_flag=True, help="No progress display and no messages on stderr (errors excepted)."
)
@click.option(
    "--verbose", "-v", is_flag=True, help="Say what was fetched, from where, and what came from the cache."
)
def audit(
    downstream: str,
    against: str | None,
    old: str | None,
    python: Path | None,
    formats: tuple[str, ...],
    output: Path | None,
    fail_on: str | None,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    severity: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
    warn_unused_ignores: bool,
    baseline: Path | None,
    write_baseline: Path | None,
    history: bool,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    color: str,
    quiet: bool,
    verbose: bool,
) -> None:
    """Audit DOWNSTREAM (NAME==VER, a folder, or an installed NAME) against an upstream version.

    \b
    Examples:
      apidrift audit speculators==0.3.0 --against vllm==0.16.0
      apidrift audit . --against vllm==0.16.0 --format html:report.html --format sarif:report.sarif

    \b
    Exit status:
      0  nothing at or above --fail-on (default: error)
      1  findings at or above --fail-on
      2  bad usage or input (one line on stderr)
      3  nothing was checked: the downstream does not use the upstream, or none of its uses could be checked
    """
    from apidrift.auditor.baseline import (
        BaselineError,
        read_baseline,
        split,
    )
    from apidrift.auditor.baseline import (
        write_baseline as write_accepted,
    )
    from apidrift.auditor.engine import audit as run_audit
    from apidrift.auditor.sources.specs import SourceError, SpecError
    from apidrift.reports import render

    started = time.time()
    outputs = parse_outputs(formats, output)
    say = Messages(quiet=quiet)
    if verbose and not quiet:
        logging.basicConfig(level=logging.INFO, format="apidrift: %(message)s")

    config = read_config(downstream, config_path, no_config)
    if verbose and config.found:
        say(f"configuration: [tool.apidrift] in {config.path}")
    request = build_request(
        config,
        downstream,
        against,
        old,
        cache_dir,
        offline,
        index_url,
        ignore,
        exclude,
        ignore_symbols,
        severities=_severities(severity),
        warn_unused_ignores=warn_unused_ignores,
        verb="audit",
        python=python,
    )
    against = request.against
    fail_on = fail_on or config.fail_on or "error"

    accepted_counts = None
    if baseline is not None and write_baseline is None:
        try:
            accepted_counts = read_baseline(baseline)  # before the audit: a bad file should not cost a run
        except BaselineError as error:
            raise InputError(str(error)) from None

    cache_before = CacheSnapshot.take(cache_dir) if verbose else None
    label = f"auditing {downstream} against {against}"
    try:
        with progress(label, enabled=not quiet and _is_tty(sys.stderr)):
            result = run_audit(request)
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    if history:
        from apidrift.auditor.plan import audit_history

        result = audit_history(request, result, progress=say)

    if write_baseline is not None:
        try:
            written = write_accepted(write_baseline, result.findings)
        except BaselineError as error:
            raise InputError(str(error)) from None
        say(f"wrote {plural(written, 'accepted finding')} to {write_baseline}")
        result.notes.append(f"baseline {write_baseline}: recorded {plural(written, 'finding')} as accepted")
        result.findings = []
    elif accepted_counts is not None and baseline is not None:
        parts = split(result.findings, accepted_counts)
        result.findings = parts.new
        note = (
            f"baseline {baseline}: {plural(len(parts.accepted), 'accepted finding')} "
            f"not shown, {len(parts.new)} new"
        )
        if parts.unmatched:
            note += f"; {parts.unmatched} accepted no longer found (fixed? refresh it with --write-baseline)"
        result.notes.append(note)

    if verbose and cache_before is not None:
        for line in describe_run(result, request, cache_before):
            say(line)

    result.run = run_info(started, config)
    for out in outputs:
        use_color = out.fmt == "text" and out.path is None and _want_color(color)
        report = render(result, out.fmt, color=use_color)
        if out.path is None:
            click.echo(report, nl=not report.endswith("\n"), color=use_color)
            continue
        try:
            out.path.write_text(report, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write {out.path}: {error.strerror}") from None
        if verbose:
            say(f"wrote the {out.fmt} report to {out.path}")
    if all(out.path is not None for out in outputs):  # nothing on stdout: say where it went, and the gist
        say(f"wrote {', '.join(str(out.path) for out in outputs)} ({_gist(result)})")
    raise SystemExit(exit_status(result, fail_on))


_ARGV: list[str] | None = None  # the command line `main` was given, for the reports' "how made" line


def run_info(started: float, config: Any) -> dict[str, Any]:
    """How this report was produced: when, by which command and configuration, in how long."""
    import shlex
    from datetime import datetime, timezone

    argv = _ARGV if _ARGV is not None else sys.argv[1:]
    settings = {}
    if config.found:
        for key in ("against", "old", "fail_on", "ignore", "severity", "exclude", "ignore_symbols"):
            value = getattr(config, key)
            if value:
                name = {"old": "from", "fail_on": "fail-on", "ignore_symbols": "ignore-symbols"}.get(key, key)
                settings[name] = value if isinstance(value, (str, dict)) else list(value)
    return {
        "date": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "command": "apidrift " + shlex.join(argv),
        "config": str(config.path) if config.found else None,
        "settings": settings,
        "seconds": round(time.time() - started, 3),
    }


def _gist(result: AuditResult) -> str:
    if not result.findings:
        return "nothing checked" if result.unchecked else "no findings"
    counts = [(result.count(s), s.value) for s in Severity]
    return ", ".join(plural(n, word, "info" if word == "info" else None) for n, word in counts if n)


@cli.command()
@click.argument("code", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(code: str | None, fmt: str) -> None:
    """List the rules, a family's rules (`apidrift rules calls`), or print one rule's docs (by code or name)."""
    import json

    from apidrift.rules.registry import FAMILIES, all_rules, get_rule

    selected = list(all_rules())
    family = code.strip().lower() if code else None
    if code is not None and family not in FAMILIES:
        rule = get_rule(code)
        if rule is None:
            raise InputError(
                f"no rule, rule name or family {code!r}; `apidrift rules` lists them (families: {', '.join(FAMILIES)})"
            )
        if fmt == "json":
            click.echo(json.dumps(_rule_data(rule, docs=True), indent=2))
        else:
            click.echo(
                f"# {rule.code} {rule.name} ({rule.severity.value}, family {rule.family.value})\n\n{rule.docs}"
            )
        return
    if family is not None:
        selected = [r for r in selected if r.family == family]
    if fmt == "json":
        click.echo(json.dumps([_rule_data(rule) for rule in selected], indent=2))
        return
    for rule in selected:
        click.echo(
            f"{rule.code}  {rule.name:<28} {rule.severity.value:<8} {rule.family.value:<6} {rule.summary}"
        )


def _rule_data(rule: Any, *, docs: bool = False) -> dict[str, Any]:
    data = {"code": rule.code, "name": rule.name, "severity": rule.severity.value, "family": rule.family.value,
            "summary": rule.summary, "since": rule.since}  # fmt: skip
    if docs:
        data["docs"] = rule.docs
    return data


@cli.command()
@click.argument("old")
@click.argument("new")
@click.option(
    "--used-by",
    metavar="DOWNSTREAM",
    help="Only the changes that touch what this downstream uses, with its use sites.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report here instead of stdout.",
)
@click.option("--fail-on-breaking", is_flag=True, help="Exit 1 when a breaking change is listed.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Cache folder (default: the user cache dir).",
)
@click.option("--offline", is_flag=True, help="Use only the cache; never touch the network.")
@click.option(
    "--index-url",
    metavar="URL",
    help="Package index (PEP 503/691); default: PIP_INDEX_URL, else the public index.",
)
def diff(
    old: str,
    new: str,
    used_by: str | None,
    fmt: str,
    output: Path | None,
    fail_on_breaking: bool,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
) -> None:
    """List the API changes between two upstream versions OLD and NEW (NAME==VER or NAME@PATH)."""
    from apidrift.auditor.engine import DiffRequest, diff_versions
    from apidrift.auditor.sources.specs import SourceError, SpecError
    from apidrift.reports.diff import render as render_diff

    try:
        result = diff_versions(DiffRequest(old, new, used_by, cache_dir, offline, index_url))
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    report = render_diff(result, fmt)
    if output is not None:
        try:
            output.write_text(report, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write {output}: {error.strerror}") from None
    else:
        click.echo(report, nl=False)
    breaking = any(change.breaking for change in result.changes)
    raise SystemExit(EXIT_FINDINGS if fail_on_breaking and breaking else EXIT_OK)


@cli.command()
@click.argument("downstream")
@click.option(
    "--against",
    "against",
    metavar="UPSTREAM",
    help="Upstream version to fix against: NAME==VER, NAME@PATH or NAME. Default: `against` in [tool.apidrift].",
)
@click.option(
    "--from",
    "old",
    metavar="UPSTREAM",
    help="Upstream version the downstream was written for (renames are recognised against it).",
)
@click.option(
    "--python",
    "python",
    type=click.Path(path_type=Path),
    help="The downstream's own interpreter (or environment folder), to infer the version written for.",
)
@click.option(
    "--diff",
    "mode",
    flag_value="diff",
    default=True,
    help="Print the fixes as a unified diff (the default); change nothing.",
)
@click.option(
    "--write", "mode", flag_value="write", help="Apply the fixes to the files of a local DOWNSTREAM folder."
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="Also apply fixes that change behaviour (drop a keyword whose parameter was removed).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read [tool.apidrift] from this file instead of the downstream's pyproject.toml.",
)
@click.option("--no-config", is_flag=True, help="Ignore any [tool.apidrift] configuration.")
@click.option(
    "--ignore",
    "ignore",
    metavar="RULE",
    multiple=True,
    help="Never fix (nor report) this rule (code, name or family); repeatable.",
)
@click.option(
    "--exclude",
    "exclude",
    metavar="GLOB",
    multiple=True,
    help="Do not touch downstream paths matching this glob; repeatable.",
)
@click.option(
    "--ignore-symbol",
    "ignore_symbols",
    metavar="PATTERN",
    multiple=True,
    help="Leave uses of this upstream dotted path (globs allowed) alone; repeatable.",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Cache folder (default: the user cache dir).",
)
@click.option("--offline", is_flag=True, help="Use only the cache; never touch the network.")
@click.option(
    "--index-url",
    metavar="URL",
    help="Package index (PEP 503/691); default: PIP_INDEX_URL, else the public index.",
)
@click.option(
    "--quiet", "-q", is_flag=True, help="No progress display and no messages on stderr (errors excepted)."
)
def fix(
    downstream: str,
    against: str | None,
    old: str | None,
    python: Path | None,
    mode: str,
    unsafe_fixes: bool,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    quiet: bool,
) -> None:
    """Fix DOWNSTREAM's call sites that the upstream's new version breaks, where the fix is mechanical.

    Prints a unified diff (--diff, the default) or applies it (--write, local folders only), and
    lists what is left to do by hand. Exit status: 0 nothing left to do, 1 changes to apply or
    errors left that need a manual step, 2 bad usage or input.
    """
    from apidrift.auditor.fix.codemods import FixError, run_fix, write_changes
    from apidrift.auditor.sources.specs import SourceError, SpecError
    from apidrift.reports.fix import render as render_fix

    writing = mode == "write"
    if writing:
        _refuse_write_early(downstream)
    config = read_config(downstream, config_path, no_config)
    request = build_request(
        config,
        downstream,
        against,
        old,
        cache_dir,
        offline,
        index_url,
        ignore,
        exclude,
        ignore_symbols,
        verb="fix",
        python=python,
    )
    against = request.against
    try:
        with progress(f"fixing {downstream} against {against}", enabled=not quiet and _is_tty(sys.stderr)):
            result = run_fix(request, unsafe=unsafe_fixes)
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    if not writing:
        click.echo(render_fix(result), nl=False)
        pending = bool(result.changes) or bool(result.remaining_errors)
        raise SystemExit(EXIT_FINDINGS if pending else EXIT_OK)
    try:
        written = write_changes(result)
    except FixError as error:
        raise InputError(str(error)) from None
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror or error}") from None
    click.echo(render_fix(result, written=written), nl=False)
    Messages(quiet=quiet)(f"wrote {plural(len(written), 'file')}")
    raise SystemExit(EXIT_FINDINGS if result.remaining_errors else EXIT_OK)


def _refuse_write_early(downstream: str) -> None:
    """`--write` only into a local folder the user named: say so before anything is fetched."""
    from apidrift.auditor.sources.specs import DirectorySpec, IndexSpec, NameSpec, SpecError, parse_spec

    try:
        spec = parse_spec(downstream, "downstream")
    except SpecError as error:
        raise InputError(str(error)) from None
    if isinstance(spec, DirectorySpec) or (isinstance(spec, NameSpec) and Path(spec.name).is_dir()):
        return
    what = (
        "a release from the package index"
        if isinstance(spec, IndexSpec)
        else "not a local folder (an installed distribution or a release)"
    )
    raise InputError(
        f"--write: {downstream!r} is {what}; apidrift writes only into a local source tree you name (use --diff to see the fixes)"
    )


def read_config(downstream: str, config_path: Path | None, no_config: bool) -> Any:
    """[tool.apidrift] from --config, else the downstream's pyproject.toml, else defaults."""
    from apidrift.auditor.config import Config, ConfigError, find_config, load_config

    try:
        if config_path is not None:
            return load_config(config_path, explicit=True)
        if not no_config and (found := find_config(downstream)) is not None:
            return load_config(found)
    except ConfigError as error:
        raise InputError(str(error)) from None
    return Config()


def build_request(
    config: Any,
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
) -> Any:
    """The engine's request: command-line options over the configuration's."""
    from apidrift.auditor.engine import AuditRequest

    against = against or config.against
    if not against:
        raise InputError(
            f"no upstream to {verb} against: give --against NAME==VERSION or set `against` in [tool.apidrift]"
        )
    return AuditRequest(
        downstream,
        against,
        old or config.old,
        cache_dir,
        offline,
        index_url,
        ignore_rules=frozenset(config.ignore) | frozenset(_rule_selectors(ignore, "--ignore")),
        severities={**config.severity, **(severities or {})},
        exclude=tuple(config.exclude) + tuple(exclude),
        ignore_symbols=symbol_patterns(tuple(config.ignore_symbols) + tuple(ignore_symbols)),
        warn_unused_ignores=warn_unused_ignores,
        python=_python(python),
    )


def _python(python: Path | None) -> Path | None:
    if python is not None and not python.exists():
        raise InputError(f"--python {python}: no such interpreter or folder")
    return python


def exit_status(result: AuditResult, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_OK
    threshold = Severity(fail_on).rank
    if any(f.severity.rank >= threshold for f in result.findings):
        return EXIT_FINDINGS
    return EXIT_UNCHECKED if result.unchecked else EXIT_OK


# ---- option helpers


def _rule_selectors(values: Sequence[str], option: str) -> list[str]:
    from apidrift.auditor.config import known_selectors
    from apidrift.rules.registry import all_rules

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


def _severities(values: Sequence[str]) -> dict[str, str]:
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


def _is_tty(stream: IO[Any]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _want_color(mode: str) -> bool:
    if mode != "auto":
        return mode == "always"
    return _is_tty(sys.stdout) and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class Messages:
    """Informational lines on stderr, silenced by --quiet (errors are not routed through here)."""

    def __init__(self, *, quiet: bool) -> None:
        self.quiet = quiet

    def __call__(self, text: str) -> None:
        if not self.quiet:
            click.echo(f"apidrift: {text}", err=True)


# ---- progress on a terminal


class Progress:
    """A one-line spinner with the elapsed time on a terminal, redrawn from a thread; erased at the end.

    The engine does not report its phases while it runs, so this says what is being done and for how long.
    """

    FRAMES = "|/-\\"

    def __init__(self, label: str, stream: IO[str], interval: float = 0.1) -> None:
        self.label = label
        self.stream = stream
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="apidrift-progress", daemon=True)
        self._start = 0.0
        self.frames_drawn = 0

    def __enter__(self) -> Progress:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.stream.write("\r\x1b[2K")
        self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(self.interval if self.frames_drawn else 0.3):  # quick runs draw nothing
            elapsed = time.monotonic() - self._start
            frame = self.FRAMES[self.frames_drawn % len(self.FRAMES)]
            self.stream.write(f"\r\x1b[2K{frame} {self.label} ({elapsed:.1f}s)")
            self.stream.flush()
            self.frames_drawn += 1


@contextmanager
def progress(label: str, *, enabled: bool, stream: IO[str] | None = None) -> Iterator[Progress | None]:
    if not enabled:
        yield None
        return
    with Progress(label, stream or sys.stderr) as shown:
        yield shown


# ---- --verbose: what was fetched and what came from the cache


@dataclass(frozen=True)
class CacheSnapshot:
    root: Path
    entries: dict[str, frozenset[str]]  # sub-folder -> relative paths of what is in it

    WATCHED = ("sources", "downloads", "api", "scan", "index")

    @classmethod
    def take(cls, cache_dir: Path | None) -> CacheSnapshot:
        from apidrift.auditor.cache import Cache

        root = Cache(cache_dir).root
        entries = {}
        for name in cls.WATCHED:
            folder = root / name
            depth = 2 if name in ("sources", "downloads") else 8
            entries[name] = frozenset(_listing(folder, depth)) if folder.is_dir() else frozenset()
        return cls(root, entries)


def _listing(folder: Path, depth: int) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(folder):
        relative = Path(dirpath).relative_to(folder)
        level = len(relative.parts)
        if level + 1 >= depth:
            yield from ((relative / d).as_posix() for d in dirnames)
            dirnames[:] = []
        yield from ((relative / f).as_posix() for f in filenames if not f.startswith("."))


def describe_run(result: AuditResult, request: Any, before: CacheSnapshot) -> list[str]:
    """Lines for --verbose: each input and where it came from (cache or fetched), cache reuse, timings."""
    from apidrift.auditor.sources.index_client import redact_url, resolve_index_url
    from apidrift.auditor.sources.specs import normalize_name

    after = CacheSnapshot.take(request.cache_dir)
    lines = [f"cache: {after.root}"]
    index = redact_url(resolve_index_url(request.index_url))
    roles = [
        ("downstream", result.downstream),
        ("upstream", result.upstream),
        ("old upstream", result.old_upstream),
    ]
    for role, info in roles:
        if info is None:
            continue
        if info.origin == "index":
            stem = f"{normalize_name(info.name)}/"
            cached = any(
                e.startswith(stem) and info.sha256 and e.endswith(info.sha256[:16])
                for e in before.entries["sources"]
            )
            how = "from the cache (extracted earlier)" if cached else f"fetched from {index}"
            if request.offline and not cached:
                how = "from the cache"
            digest = f", sha256 {info.sha256}" if info.sha256 else ""
            lines.append(f"{role}: {info.label}: {info.location} {how}{digest}")
        elif info.origin == "path":
            lines.append(f"{role}: {info.label}: read from {info.location}")
        else:
            lines.append(f"{role}: {info.label}: {info.origin} at {info.location}")
    for name, what in (("api", "parsed upstream modules"), ("scan", "scanned downstream files")):
        new = len(after.entries[name] - before.entries[name])
        kept = len(after.entries[name] & before.entries[name])
        lines.append(f"{what}: {new} written to the cache, {kept} cache entries already there")
    if result.timings:
        phases = ", ".join(f"{phase} {seconds:.2f}s" for phase, seconds in result.timings.items())
        lines.append(f"timings: {phases} (total {sum(result.timings.values()):.2f}s)")
    return lines


import apidrift.auditor.cli.bump  # noqa: E402,F401  registers `apidrift bump`
from apidrift.auditor.cli import plan as _plan  # noqa: E402,F401 - registers `apidrift plan`
from apidrift.auditor.cli.impact import impact as _impact  # noqa: E402  (a command in its own module)

cli.add_command(_impact)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return the exit status (tests call this)."""
    global _ARGV
    _ARGV = list(argv) if argv is not None else None
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="apidrift", standalone_mode=False)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("apidrift: aborted", err=True)
        return EXIT_USAGE
    except click.ClickException as error:
        if isinstance(error, InputError):
            error.show()
        else:
            click.echo(f"apidrift: error: {error.format_message()}", err=True)
        return EXIT_USAGE
    except Exception as error:  # a bug of ours: one line for the user, the traceback on request
        if os.environ.get("APIDRIFT_DEBUG"):
            raise
        first = first_line(error, default="", strip=False)
        click.echo(
            f"apidrift: internal error: {type(error).__name__}: {first} (set APIDRIFT_DEBUG=1 for the traceback)",
            err=True,
        )
        return EXIT_USAGE
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
