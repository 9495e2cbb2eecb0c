"""How messages are worded, in one place: the first line of an exception's text, and a count with its noun.

Every one-line error the tool prints ("cannot read X: <first line>") and every count in a report
("1 error", "3 warnings") goes through these, so the same input is always worded the same way.
"""

from __future__ import annotations


def first_line(error: BaseException | str, *, default: str | None = None, strip: bool = True) -> str:
    """The first line of `str(error)`; when that text is empty (after `strip`ping it, if asked), `default`,
    or the exception's class name when `default` is None (the empty string for a `str`).

    `strip=False` keeps the text as it is: a message that starts with a line break gives an empty
    first line, and leading or trailing blanks stay.
    """
    text = error if isinstance(error, str) else str(error)
    if strip:
        text = text.strip()
    if text:
        return text.splitlines()[0]
    if default is not None:
        return default
    return "" if isinstance(error, str) else type(error).__name__


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and its noun, singular for 1, else `many` (default: `word` + "s"):
    `plural(1, "error")` is "1 error", `plural(0, "fix", "fixes")` is "0 fixes"."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many if many is not None else word + 's'}"
