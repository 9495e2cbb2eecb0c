"""`bind` against the real `inspect.Signature.bind` of the running Python, plus readable examples."""

from __future__ import annotations

import inspect
import random
from itertools import chain, combinations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apidrift.auditor.core.bind import (
    Break,
    CallShape,
    Ok,
    Problem,
    ProblemKind,
    Verdict,
    bind,
)
from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.signature import Parameter, ParamKind, Signature

PO = ParamKind.POSITIONAL_ONLY
PK = ParamKind.POSITIONAL_OR_KEYWORD
VP = ParamKind.VAR_POSITIONAL
KO = ParamKind.KEYWORD_ONLY
VK = ParamKind.VAR_KEYWORD

# A small pool, so that call keywords often hit parameter names, including the *args/**kwargs names.
POOL = ("a", "b", "c", "d", "e", "f", "g")
FRESH = ("zz", "yy")  # never a parameter name

_INSPECT_KIND = {
    PO: inspect.Parameter.POSITIONAL_ONLY,
    PK: inspect.Parameter.POSITIONAL_OR_KEYWORD,
    VP: inspect.Parameter.VAR_POSITIONAL,
    KO: inspect.Parameter.KEYWORD_ONLY,
    VK: inspect.Parameter.VAR_KEYWORD,
}


def to_inspect(signature: Signature) -> inspect.Signature:
    return inspect.Signature(
        [
            inspect.Parameter(
                p.name, _INSPECT_KIND[p.kind], default=0 if p.has_default else inspect.Parameter.empty
            )
            for p in signature.parameters
        ]
    )


def classify(message: str) -> ProblemKind:
    """The category of an `inspect.Signature.bind` TypeError (messages of 3.10 to 3.14)."""
    if "too many positional arguments" in message:
        return ProblemKind.TOO_MANY_POSITIONAL
    if "multiple values for argument" in message:
        return ProblemKind.MULTIPLE_VALUES
    if "missing a required" in message:
        return ProblemKind.MISSING_ARGUMENT
    if "unexpected keyword argument" in message:
        return ProblemKind.UNEXPECTED_KEYWORD
    if "positional only, but was passed" in message or "positional-only arguments passed as" in message:
        return ProblemKind.POSITIONAL_ONLY_AS_KEYWORD
    raise AssertionError(f"unclassified TypeError: {message}")


def inspect_bind(
    signature: Signature, positional: int, keywords: tuple[str, ...]
) -> tuple[list[object], dict[str, object], object]:
    """(args, kwargs, BoundArguments or the TypeError)."""
    args = [object() for _ in range(positional)]
    kwargs = {name: object() for name in keywords}
    try:
        return args, kwargs, to_inspect(signature).bind(*args, **kwargs)
    except TypeError as error:
        return args, kwargs, error


@st.composite
def signatures(draw: st.DrawFn, max_named: int = 7) -> Signature:
    counts = [draw(st.integers(0, most)) for most in (3, 3, 1, 3, 1)]  # per kind, in ParamKind order
    kinds = [kind for kind, count in zip((PO, PK, VP, KO, VK), counts) for _ in range(count)]
    if len(kinds) > max_named:  # drop kinds at random, keeping the order
        kept = sorted(draw(st.permutations(range(len(kinds))))[:max_named])
        kinds = [kinds[i] for i in kept]
    names = draw(st.permutations(POOL))[: len(kinds)]
    positional = sum(1 for kind in kinds if kind in (PO, PK))
    first_default = draw(st.integers(0, positional))  # defaults form a tail of the positional parameters
    params = []
    for index, (name, kind) in enumerate(zip(names, kinds)):
        if kind in (PO, PK):
            has_default = index >= first_default
        elif kind is KO:
            has_default = draw(st.booleans())
        else:
            has_default = False
        params.append(Parameter(name, kind, has_default, "0" if has_default else None))
    return Signature(tuple(params))


def call_keywords(max_size: int = 5) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(POOL + FRESH[:1]), unique=True, max_size=max_size).map(tuple)


def arguments_from(
    signature: Signature,
    assignments: tuple[tuple[int | str, str], ...],
    args: list[object],
    kwargs: dict[str, object],
) -> dict[str, object]:
    """What `BoundArguments.arguments` should hold if our assignments are right."""
    expected: dict[str, Any] = {}
    for key, name in assignments:
        param = signature.get(name)
        assert param is not None, (key, name)
        if isinstance(key, int):
            if param.kind is VP:
                expected[name] = (*expected.get(name, ()), args[key])
            else:
                expected[name] = args[key]
        elif param.kind is VK:
            expected.setdefault(name, {})[key] = kwargs[key]
        else:
            expected[name] = kwargs[key]
    return expected


def expected_message_name(problem: Problem, message: str) -> str:
    if "positional-only arguments passed as keyword" in message:
        return repr(", ".join(problem.names))  # 3.12.4+/3.13+: all of them in one message
    return repr(problem.names[0])


@settings(max_examples=3000, deadline=None)
@given(signatures(), st.integers(0, 6), call_keywords())
def test_matches_inspect_without_unpacking(
    signature: Signature, positional: int, keywords: tuple[str, ...]
) -> None:
    verdict = bind(CallShape(positional, keywords), signature)
    args, kwargs, outcome = inspect_bind(signature, positional, keywords)
    if isinstance(outcome, TypeError):
        assert isinstance(verdict, Break), (str(outcome), verdict)
        first = verdict.problems[0]
        assert first.kind is classify(str(outcome)), (str(outcome), verdict)
        if first.kind is ProblemKind.TOO_MANY_POSITIONAL:
            assert first.names == () and first.given == positional
            assert first.accepted == sum(1 for p in signature.parameters if p.kind in (PO, PK))
        else:
            assert expected_message_name(first, str(outcome)) in str(outcome), (str(outcome), verdict)
        kinds = [problem.kind for problem in verdict.problems]
        assert len(kinds) == len(set(kinds))
    else:
        assert isinstance(verdict, Ok), (verdict, outcome)
        # Every explicit argument lands exactly once, where inspect puts it.
        keys = [key for key, _ in verdict.assignments]
        assert sorted(k for k in keys if isinstance(k, int)) == list(range(positional))
        assert sorted(k for k in keys if isinstance(k, str)) == sorted(keywords)
        assert arguments_from(signature, verdict.assignments, args, kwargs) == dict(outcome.arguments)


def binds(signature: Signature, positional: int, keywords: tuple[str, ...]) -> bool:
    return not isinstance(inspect_bind(signature, positional, keywords)[2], TypeError)


def assert_sound(verdict: Verdict, outcomes: list[bool], context: object) -> None:
    if isinstance(verdict, Break):
        assert not any(outcomes), (verdict, context)
        assert verdict.problems
    elif isinstance(verdict, Ok):
        assert all(outcomes), (verdict, context)
    else:
        assert verdict == Unknown(Reason.STAR_ARGUMENTS)


@st.composite
def unpacking_shapes(draw: st.DrawFn) -> CallShape:
    star_args, star_kwargs = draw(st.sampled_from([(True, False), (False, True), (True, True)]))
    return CallShape(draw(st.integers(0, 5)), draw(call_keywords()), star_args, star_kwargs)


@settings(max_examples=3000, deadline=None)
@given(signatures(), unpacking_shapes(), st.integers(0, 2**32))
def test_sound_with_unpacking(signature: Signature, shape: CallShape, seed: int) -> None:
    verdict = bind(shape, signature)
    rng = random.Random(seed)  # cheaper than drawing every expansion through hypothesis
    # A mapping never repeats an explicit keyword: that fails at the call, before binding.
    extra_names = [name for name in POOL + FRESH if name not in shape.keywords]
    outcomes = []
    for _ in range(8):
        count = shape.positional + (rng.randint(0, 4) if shape.star_args else 0)
        keywords = shape.keywords
        if shape.star_kwargs:
            keywords += tuple(rng.sample(extra_names, rng.randint(0, min(5, len(extra_names)))))
        outcomes.append(binds(signature, count, keywords))
    assert_sound(verdict, outcomes, shape)


def every_expansion(signature: Signature, shape: CallShape) -> list[tuple[int, tuple[str, ...]]]:
    """All calls the shape can stand for, up to what `bind` can tell apart.

    Counts past the positional parameters all behave alike, and so do keywords naming no parameter.
    """
    capacity = sum(1 for p in signature.parameters if p.kind in (PO, PK))
    counts = [shape.positional]
    if shape.star_args:
        counts = list(range(shape.positional, max(shape.positional, capacity) + 2))
    names = [p.name for p in signature.parameters if p.name not in shape.keywords] + [FRESH[0]]
    extras = (
        list(chain.from_iterable(combinations(names, size) for size in range(len(names) + 1)))
        if shape.star_kwargs
        else [()]
    )
    return [(count, shape.keywords + extra) for count in counts for extra in extras]


# Before gh-103404 (3.12.4/3.13) inspect rejects every keyword naming a positional-only parameter it has
# not filled; after it, inspect sometimes binds such keywords, and `bind` is merely sound there.
LEGACY_INSPECT = isinstance(
    inspect_bind(Signature((Parameter("a", PO, True), Parameter("kw", VK))), 0, ("a",))[2], TypeError
)


@settings(max_examples=1000, deadline=None)
@given(signatures(max_named=4), unpacking_shapes())
def test_unpacking_checked_against_every_expansion(signature: Signature, shape: CallShape) -> None:
    verdict = bind(shape, signature)
    outcomes = [binds(signature, count, keywords) for count, keywords in every_expansion(signature, shape)]
    assert_sound(verdict, outcomes, shape)
    if LEGACY_INSPECT:
        # There, `bind` is also complete: it says Break whenever no content binds, Ok whenever all do.
        assert isinstance(verdict, Break) == (not any(outcomes)), (verdict, shape)
        assert isinstance(verdict, Ok) == all(outcomes), (verdict, shape)


# --- readable examples -------------------------------------------------------------------------


def sig(*params: Parameter) -> Signature:
    return Signature(tuple(params))


def p(name: str, kind: ParamKind = PK, default: str | None = None) -> Parameter:
    return Parameter(name, kind, default is not None, default)


def test_lost_keyword_is_unexpected() -> None:
    old_init = sig(p("self"), p("config"), p("kv_cache_specs", default="None"))
    new_init = sig(p("self"), p("config"))
    shape = CallShape(1, ("kv_cache_specs",))
    assert bind(shape, old_init.bound()) == Ok(((0, "config"), ("kv_cache_specs", "kv_cache_specs")))
    assert bind(shape, new_init.bound()) == Break(
        (Problem(ProblemKind.UNEXPECTED_KEYWORD, ("kv_cache_specs",)),)
    )


def test_constructor_seen_bound_misses_a_new_required_parameter() -> None:
    init = sig(
        p("self"),
        p("vllm_config"),
        p("kv_cache_config"),
        p("structured_output_manager"),
        p("block_size"),
        p("mm_registry", default="MULTIMODAL_REGISTRY"),
        p("include_finished_set", default="False"),
        p("log_stats", default="False"),
    )
    shape = CallShape(0, ("vllm_config", "kv_cache_config", "structured_output_manager"))
    assert bind(shape, init.bound()) == Break((Problem(ProblemKind.MISSING_ARGUMENT, ("block_size",)),))
    # Unbound, `self` is missing too, and named first, as inspect does.
    assert bind(shape, init) == Break((Problem(ProblemKind.MISSING_ARGUMENT, ("self", "block_size")),))


def test_too_many_positional() -> None:
    verdict = bind(CallShape(3, ()), sig(p("a"), p("b", default="1"), p("c", KO)))
    assert verdict == Break(
        (
            Problem(ProblemKind.TOO_MANY_POSITIONAL, (), given=3, accepted=2),
            Problem(ProblemKind.MISSING_ARGUMENT, ("c",)),
        )
    )


def test_positional_only_by_keyword_without_var_keyword() -> None:
    signature = sig(p("a", PO), p("b", default="1"))
    assert bind(CallShape(0, ("a",)), signature) == Break(
        (Problem(ProblemKind.POSITIONAL_ONLY_AS_KEYWORD, ("a",)),)
    )
    # Filled positionally, the keyword `a` is just one more keyword nobody takes.
    assert bind(CallShape(1, ("a",)), signature) == Break((Problem(ProblemKind.UNEXPECTED_KEYWORD, ("a",)),))


def test_positional_only_by_keyword_with_var_keyword() -> None:
    signature = sig(p("a", PO), p("kw", VK))
    # Filled positionally, a keyword of the same name goes into **kw, as at a real call.
    assert bind(CallShape(1, ("a",)), signature) == Ok(((0, "a"), ("a", "kw")))
    # Not filled positionally: CPython <= 3.12.3 rejects the keyword, 3.13+ `inspect` may bind it into **kw.
    outcome = inspect_bind(signature, 0, ("a",))[2]
    verdict = bind(CallShape(0, ("a",)), signature)
    if isinstance(outcome, TypeError):
        assert isinstance(verdict, Break) and verdict.problems[0].kind is classify(str(outcome))
    else:
        assert verdict == Ok((("a", "kw"),))


def test_multiple_values() -> None:
    verdict = bind(CallShape(2, ("a", "zz")), sig(p("a"), p("b")))
    assert verdict == Break(
        (
            Problem(ProblemKind.MULTIPLE_VALUES, ("a",)),
            Problem(ProblemKind.UNEXPECTED_KEYWORD, ("zz",)),
        )
    )


def test_var_positional_and_var_keyword_collect_the_rest() -> None:
    signature = sig(p("a"), p("args", VP), p("k", KO, "0"), p("kw", VK))
    assert bind(CallShape(3, ("k", "args", "x")), signature) == Ok(
        ((0, "a"), (1, "args"), (2, "args"), ("k", "k"), ("args", "kw"), ("x", "kw"))
    )


def test_mapping_may_hold_a_required_keyword_only_parameter() -> None:
    signature = sig(p("a"), p("k", KO))
    assert bind(CallShape(1, (), star_kwargs=True), signature) == Unknown(Reason.STAR_ARGUMENTS)
    assert bind(CallShape(1, ()), signature) == Break((Problem(ProblemKind.MISSING_ARGUMENT, ("k",)),))


def test_unexpected_explicit_keyword_with_mapping_is_certain() -> None:
    signature = sig(p("config"), p("flag", default="False"))
    verdict = bind(CallShape(1, ("kv_cache_specs",), star_kwargs=True), signature)
    assert verdict == Break((Problem(ProblemKind.UNEXPECTED_KEYWORD, ("kv_cache_specs",)),))


def test_certain_problems_with_unpacking() -> None:
    signature = sig(p("a"), p("b", default="1"))
    # More plain positional arguments than the signature takes, whatever `*rest` holds.
    assert bind(CallShape(3, (), star_args=True), signature) == Break(
        (Problem(ProblemKind.TOO_MANY_POSITIONAL, (), given=3, accepted=2),)
    )
    # `a` is filled by the first plain argument and named again.
    assert bind(CallShape(1, ("a",), star_kwargs=True), signature) == Break(
        (Problem(ProblemKind.MULTIPLE_VALUES, ("a",)),)
    )
    # `*rest` may or may not reach `b`.
    assert bind(CallShape(1, ("b",), star_args=True), signature) == Unknown(Reason.STAR_ARGUMENTS)


def test_required_parameter_only_reachable_past_a_named_one() -> None:
    # `f(*rest, a=1)`: `*rest` fills `b` only by also filling `a`, which is then given twice.
    verdict = bind(CallShape(0, ("a",), star_args=True), sig(p("a"), p("b")))
    assert verdict == Break((Problem(ProblemKind.MISSING_ARGUMENT, ("b",)),))
    # With a `**mapping` that may hold `b`, nothing is certain.
    verdict = bind(CallShape(0, ("a",), star_args=True, star_kwargs=True), sig(p("a"), p("b")))
    assert verdict == Unknown(Reason.STAR_ARGUMENTS)


def test_positional_only_keyword_with_unpacking() -> None:
    # Unfilled, inspect rejects the keyword (CPython <= 3.12.3); filled by `*rest`, the keyword is left
    # over. Later versions may bind it by keyword, so there `bind` says Unknown.
    verdict = bind(CallShape(0, ("b",), star_args=True), sig(p("a", PO, "0"), p("b", PO, "0")))
    if LEGACY_INSPECT:
        assert verdict == Break((Problem(ProblemKind.POSITIONAL_ONLY_AS_KEYWORD, ("b",)),))
    else:
        assert verdict == Unknown(Reason.STAR_ARGUMENTS)


def test_certain_binding_with_unpacking() -> None:
    # The mapping may hold `a`, which the plain argument fills: maybe multiple values.
    signature = sig(p("a"), p("args", VP), p("k", KO), p("kw", VK))
    verdict = bind(CallShape(1, ("k",), star_args=True, star_kwargs=True), signature)
    assert verdict == Unknown(Reason.STAR_ARGUMENTS)
    # With `a` positional-only, a mapping key `a` just goes into **kw. Where the plain argument lands
    # (`a`, or *args when `*rest` precedes it) is not certain, so only the keywords are listed.
    signature = sig(p("a", PO), p("args", VP), p("k", KO), p("kw", VK))
    verdict = bind(CallShape(1, ("k", "a"), star_args=True, star_kwargs=True), signature)
    assert verdict == Ok((("k", "k"), ("a", "kw")))
    assert bind(CallShape(1, (), star_args=True), sig(p("a"), p("args", VP))) == Ok(())
    # Past the named parameters, every plain argument lands in *args.
    assert bind(CallShape(2, (), star_args=True), sig(p("args", VP))) == Ok(((0, "args"), (1, "args")))


@pytest.mark.parametrize(
    "params",
    [
        (p("a"), p("a", KO)),  # duplicate name
        (p("a", KO), p("b")),  # keyword-only before positional
        (p("a", default="1"), p("b")),  # non-default after default
        (p("a", VP), p("b", VP)),  # two *args
        (p("class"),),  # not an identifier
    ],
)
def test_invalid_signature_is_unknown(params: tuple[Parameter, ...]) -> None:
    assert bind(CallShape(0, ()), Signature(params)) == Unknown(Reason.INVALID_SIGNATURE)


def test_repeated_keyword_is_not_a_call() -> None:
    assert bind(CallShape(0, ("a", "a")), sig(p("a"))) == Unknown(Reason.INVALID_CALL)


def test_render() -> None:
    assert CallShape(0, ()).render() == "()"
    shape = CallShape(2, ("a", "b"), star_args=True, star_kwargs=True)
    assert shape.render() == "(<2 positional>, *..., a=..., b=..., **...)"


def test_the_memo_tells_parameter_lists_apart_and_shares_equal_ones() -> None:
    """The memo keys a signature by its parameters (kept on the signature, hashed once): a signature
    made again with other parameters (`replace`), an equal one made apart, and one sent through pickle
    (as a pool's worker sends results) each bind as a fresh signature would."""
    import pickle
    from dataclasses import replace

    one = Signature((Parameter("a", PK), Parameter("b", PK)))
    call = CallShape(1, ("b",))
    assert isinstance(bind(call, one), Ok)
    fewer = replace(one, parameters=(Parameter("a", PK),))  # the memo's key not carried over
    assert isinstance(bind(call, fewer), Break)
    assert isinstance(bind(call, Signature((Parameter("a", PK),))), Break)
    again = pickle.loads(pickle.dumps(fewer))
    assert isinstance(bind(call, again), Break)
    assert bind(CallShape(2, ()), again) == bind(CallShape(2, ()), Signature((Parameter("a", PK),)))
    assert isinstance(bind(call, pickle.loads(pickle.dumps(one))), Ok)
