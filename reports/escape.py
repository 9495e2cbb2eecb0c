"""Control characters made visible before a text-like report prints them.

Downstream file names, upstream deprecation messages and docstrings are untrusted: a newline in one
would forge a finding line in the text report, a line starting `::error` in a CI log would become a
workflow command, and ESC/OSC sequences or BEL would drive the terminal. Every string of a result is
passed through `escape_controls` (C0 and C1 controls, DEL, and the Unicode line and paragraph
separators become `\\n`, `\\x1b`, `\\u2028`...; a tab stays a tab, so carets still line up) before
the text, Markdown and GitHub renderers format it. HTML, JSON and SARIF escape by their own rules.
"""

from __future__ import annotations

import dataclasses
import re
from enum import Enum
from typing import Any, TypeVar

_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r"}

T = TypeVar("T")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """`text` with every control character but the tab written as an escape (`\\n`, `\\x1b`)."""
    return _CONTROL.sub(_visible, text) if _CONTROL.search(text) else text


def escaped(value: T) -> T:
    """A copy of `value` (a result, finding, list, dict...) with `escape_controls` applied to every string in it."""
    return _walk(value)


def _walk(value: Any) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return escape_controls(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _walk(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, list):
        return [_walk(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_walk(item) for item in value)
    if isinstance(value, dict):
        return {_walk(key): _walk(item) for key, item in value.items()}
    return value
