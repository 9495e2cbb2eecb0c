"""The shared wording helpers: the first line of an exception's text, and a count with its noun."""

from __future__ import annotations

import pytest

from apidrift.auditor.core.wording import first_line, plural


class Custom(Exception):
    pass


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("one", "one"),
        ("one\ntwo\nthree", "one"),
        ("  padded  \nnext", "padded  "),  # only the whole text's ends are stripped
        ("\n\nafter blank lines\nmore", "after blank lines"),
        ("one\r\ntwo", "one"),
        ("", "Custom"),  # empty: the class name
        (" \n\t ", "Custom"),  # blank is empty once stripped
    ],
)
def test_first_line_strips_and_falls_back_to_the_class_name(text: str, expected: str) -> None:
    assert first_line(Custom(text)) == expected


def test_first_line_default_replaces_the_class_name() -> None:
    assert first_line(Custom(""), default="") == ""
    assert first_line(Custom("  "), default="syntax error") == "syntax error"
    assert first_line(Custom("real\nrest"), default="syntax error") == "real"


def test_first_line_unstripped_keeps_the_text_as_it_is() -> None:
    assert first_line(Custom("  padded\nnext"), strip=False) == "  padded"
    assert first_line(Custom("\nafter a break"), strip=False) == ""  # the first line is empty
    assert first_line(Custom(" "), strip=False) == " "
    assert first_line(Custom(""), strip=False) == "Custom"
    assert first_line(Custom(""), default="", strip=False) == ""


def test_first_line_of_a_string_and_of_exceptions_without_text() -> None:
    assert first_line("worker died (OSError: a\nb)") == "worker died (OSError: a"
    assert first_line("") == ""
    assert first_line(KeyError()) == "KeyError"
    assert first_line(OSError(2, "No such file or directory")) == "[Errno 2] No such file or directory"


@pytest.mark.parametrize(
    ("count", "word", "many", "expected"),
    [
        (0, "error", None, "0 errors"),
        (1, "error", None, "1 error"),
        (2, "call site", None, "2 call sites"),
        (1, "fix", "fixes", "1 fix"),
        (3, "fix", "fixes", "3 fixes"),
        (4, "info", "info", "4 info"),
        (-1, "file", None, "-1 files"),
    ],
)
def test_plural(count: int, word: str, many: str | None, expected: str) -> None:
    assert plural(count, word, many) == expected
