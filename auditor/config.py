"""`[tool.apidrift]` configuration: found next to a local downstream (or given with `--config`), validated
strictly (an unknown key is an error naming it), and merged under the command line's options.

    [tool.apidrift]
    against = "vllm==0.16.0"
    from = "vllm==0.15.1"
    fail-on = "warning"
    ignore = ["AD003", "names"]                     # rule codes, names or families
    severity = { AD104 = "warning", calls = "error" } # re-grading
    exclude = ["tests/*", "speculators/legacy/"]     # downstream path globs
    ignore-symbols = ["vllm.envs.*"]                 # upstream dotted paths or globs
"""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apidrift.auditor.safe_read import NestingError, loads_toml, read_bounded
from apidrift.rules.registry import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MAX_CONFIG_BYTES = 1024 * 1024  # a pyproject.toml or configuration file; larger is refused
LEVELS = ("error", "warning", "info")
FAIL_ON = ("error", "warning", "info", "never")
KEYS = ("against", "from", "fail-on", "ignore", "severity", "exclude", "ignore-symbols")


class ConfigError(ValueError):
    """A configuration that cannot be used; the message is one line naming the file and the key."""


@dataclass(frozen=True)
class Config:
    against: str | None = None
    old: str | None = None  # `from`
    fail_on: str | None = None
    ignore: tuple[str, ...] = ()
    severity: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    ignore_symbols: tuple[str, ...] = ()
    path: Path | None = None  # where it was read from; None for no configuration

    @property
    def found(self) -> bool:
        return self.path is not None


def find_config(downstream: str) -> Path | None:
    """The pyproject.toml that configures a local-folder downstream: the folder's own, else the nearest
    one above it (the project root of a package folder or a `src/` layout), not crossing a repository
    root. None for a downstream that is not a local folder."""
    folder = Path(downstream).expanduser()
    if "==" in downstream or not folder.is_dir():
        return None
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            return pyproject
        if (candidate / ".git").exists() or (candidate / ".hg").exists():
            return None
    return None


def load_config(path: Path, *, explicit: bool = False) -> Config:
    """Read `[tool.apidrift]` from `path` (a pyproject.toml). A file given with `--config` may also be a
    dedicated TOML file holding the keys at its top level. No table in a found pyproject.toml: no config."""
    try:
        data = loads_toml(read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8"))  # never a FIFO nor /dev/zero
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except NestingError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    tool = data.get("tool")
    if isinstance(tool, dict) and "apidrift" in tool:
        table = tool["apidrift"]
        where = f"{path}: [tool.apidrift]"
    elif explicit and path.name != "pyproject.toml" and "tool" not in data:
        table = data
        where = f"{path}:"
    elif explicit:
        raise ConfigError(f"{path}: no [tool.apidrift] table")
    else:
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    return parse_table(table, where, path)


def parse_table(table: dict[str, Any], where: str, path: Path | None = None) -> Config:
    for key in table:
        if key not in KEYS:
            hint = _close(key, KEYS)
            raise ConfigError(f"{where} unknown key `{key}`" + (f" (did you mean `{hint}`?)" if hint else ""))

    def string(key: str, choices: tuple[str, ...] | None = None) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where} `{key}` must be a non-empty string")
        if choices and value not in choices:
            raise ConfigError(f"{where} `{key}` must be one of {', '.join(choices)}, not {value!r}")
        return value.strip()

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ConfigError(f"{where} `{key}` must be a list of strings")
        return tuple(v.strip() for v in value)

    selectors = known_selectors(all_rules())
    ignore = strings("ignore")
    for selector in ignore:
        if selector.lower() not in selectors:
            raise ConfigError(f"{where} `ignore`: no rule, rule name or family {selector!r}")
    severity_table = table.get("severity", {})
    if not isinstance(severity_table, dict):
        raise ConfigError(f"{where} `severity` must be a table of rule = level")
    severity: dict[str, str] = {}
    for selector, level in severity_table.items():
        if selector.lower() not in selectors:
            raise ConfigError(f"{where} `severity`: no rule, rule name or family {selector!r}")
        if level not in LEVELS:
            raise ConfigError(
                f"{where} `severity.{selector}` must be one of {', '.join(LEVELS)}, not {level!r}"
            )
        severity[selector] = level
    return Config(
        against=string("against"),
        old=string("from"),
        fail_on=string("fail-on", FAIL_ON),
        ignore=ignore,
        severity=severity,
        exclude=strings("exclude"),
        ignore_symbols=strings("ignore-symbols"),
        path=path,
    )


def known_selectors(rules: Any) -> set[str]:
    """Lower-cased codes, names and families: what `ignore`, `severity` and inline comments accept."""
    return {s for rule in rules for s in (rule.code.lower(), rule.name.lower(), rule.family.lower())}


def _close(word: str, options: tuple[str, ...]) -> str | None:
    match = difflib.get_close_matches(word.replace("_", "-"), options, n=1, cutoff=0.6)
    return match[0] if match else None
