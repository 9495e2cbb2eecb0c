"""The registry of "not checkable" reasons: one code each, a text each, and each one in use."""

from __future__ import annotations

import re
from pathlib import Path

from apidrift.auditor.core.reasons import Reason, Unknown

AUDITOR = Path(__file__).resolve().parents[2] / "auditor"


def test_codes_are_unique_kebab_case_with_a_text():
    codes = [reason.code for reason in Reason]
    assert len(codes) == len(set(codes))
    for reason in Reason:
        assert re.fullmatch(r"[_a-z][_a-z-]*", reason.code), reason
        assert reason.text and reason.text[0].islower() and not reason.text.endswith("."), reason
        assert Reason(reason.code) is reason  # looked up by its code


def test_only_binding_reasons_count_the_target_as_resolved():
    resolved = {reason.code for reason in Reason if reason.resolved}
    assert resolved == {
        "star-arguments",
        "invalid-signature",
        "invalid-call",
        "overloads",
        "stub-signature",
        "override-requires-optional",
    }


def test_label_is_the_code_with_its_detail():
    assert Unknown(Reason.STAR_ARGUMENTS).label == "star-arguments"
    assert Unknown(Reason.EXTERNAL_BASE, "msgspec.Struct").label == "external-base:msgspec.Struct"
    assert Unknown(Reason.EXTERNAL_BASE, "a") != Unknown(Reason.EXTERNAL_BASE, "b")


def test_every_reason_is_given_somewhere():
    source = "\n".join(p.read_text() for p in AUDITOR.rglob("*.py") if p.name != "reasons.py")
    unused = [reason.name for reason in Reason if f"Reason.{reason.name}" not in source]
    assert unused == []
