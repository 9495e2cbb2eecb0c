"""The replacement a message names (auditor/upstream/replacement.py), on the upstreams' own texts."""

from __future__ import annotations

import pytest

from apidrift.auditor.core.signature import Parameter, ParamKind, Signature
from apidrift.auditor.upstream.replacement import accepts_every_call, named_in

P, K = ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY


@pytest.mark.parametrize(
    ("message", "old", "named"),
    [
        # Jinja2 3.0.3 utils.py, numpy 2.0.0 _expired_attrs_2_0.py and 1.26.4 fromnumeric.py, MarkupSafe 2.0.1
        ("'contextfunction' is renamed to 'pass_context', the old name will be removed in Jinja 3.1.", "contextfunction", ["pass_context"]),
        ("`np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.", "float_", ["np.float64"]),
        ("`product` is deprecated as of NumPy 1.25.0, and will be removed in NumPy 2.0. Please use `prod` instead.", "product", ["prod"]),
        ("'soft_unicode' has been renamed to 'soft_str'. The old name will be removed in MarkupSafe 2.1.", "soft_unicode", ["soft_str"]),
        ("'jinja2.Markup' is deprecated and will be removed in Jinja 3.1. Import 'markupsafe.Markup' instead.", "Markup", []),
        # an expression is no name; a name not presented as the replacement is none
        ("`np.NINF` was removed in the NumPy 2.0 release. Use `-np.inf` instead.", "NINF", []),
        ("Importing 'parser.split_arg_string' is deprecated, it will only be available in 'shell_completion' in Click 9.0.", "split_arg_string", []),
        ("Do not use `legacy_mode`; `helper` is deprecated.", "helper", []),
        ("The use of `other` with `helper` is deprecated.", "helper", []),
        ("`a` is deprecated: use `b` or `c` instead.", "a", ["b", "c"]),
        # unquoted, a name reads as one where it is written as a call
        ("retired() is deprecated: use helper()", "retired", ["helper"]),
        ("use the default instead", "x", []),
    ],
)  # fmt: skip
def test_the_replacement_a_message_names(message: str, old: str, named: list[str]) -> None:
    assert named_in(message, old) == named


def sig(*params: Parameter) -> Signature:
    return Signature(tuple(params))


def test_every_call_the_old_signature_accepted_binds_the_new() -> None:
    f = Parameter("f", P)
    assert accepts_every_call(sig(f), sig(f))  # contextfunction(f) -> pass_context(f)
    assert accepts_every_call(sig(f), sig(f, Parameter("g", K, True, "None")))  # an optional addition
    assert not accepts_every_call(sig(f), sig(f, Parameter("g", K)))  # a required addition
    assert not accepts_every_call(sig(f), sig(Parameter("func", P)))  # renamed: a keyword call breaks
    assert not accepts_every_call(sig(Parameter("a", ParamKind.VAR_POSITIONAL)), sig(Parameter("a", P)))
    assert not accepts_every_call(
        sig(Parameter("a", P, True, "1")), sig(Parameter("a", P))
    )  # lost its default
