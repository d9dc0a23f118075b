"""Conditions: safe CEL expressions over payload and meta, refused with a clear message.

No database, except where a stash's hooks run a condition (``processing.simulate``)."""

import time

import pytest

from stash import processing
from stash.core import expressions
from stash.core.exceptions import ExpressionError
from stash.core.expressions import MAX_LENGTH, MAX_SECONDS, MAX_STEPS, compile_condition, validate_condition
from stash.core.pipeline import Item

CONTEXT = Item(
    payload={
        "text": "Hello world",
        "tags": ["x", "news"],
        "data": {"probability": 0.7, "time": 12},
        "count": 3,
        "flag": True,
        "empty": None,
    },
    stash="inbox",
    source="api",
    revision=2,
    submitted_by="alice",
).as_context()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("payload.count > 2", True),
        ("payload.count > 3", False),
        ("payload.flag", True),
        ("!payload.flag", False),
        ('payload.text == "Hello world"', True),
        ('payload.text.contains("world")', True),
        ('payload.text.startsWith("Bye")', False),
        ('payload.text.matches("^H.*d$")', True),
        ("has(payload.data) && payload.data.probability > 0.5", True),
        ("has(payload.missing)", False),
        ("has(payload.missing) && payload.missing > 1", False),  # short-circuits past the missing field
        ("size(payload.tags) == 2", True),
        ('"news" in payload.tags', True),
        ("payload.empty == null", True),
        ('meta.source == "api" && meta.stash == "inbox"', True),
        ("meta.revision >= 2", True),
        ('meta.submitted_by == "bob"', False),
        ("  payload.count == 3  ", True),  # surrounding whitespace is ignored
    ],
)
def test_valid_conditions_evaluate(text, expected):
    assert compile_condition(text)(CONTEXT) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('payload.tags.exists(t, t == "x")', True),
        ('payload.tags.exists(t, t == "nope")', False),
        ("payload.tags.all(t, size(t) >= 1)", True),
        ('payload.tags.exists_one(tag, tag.startsWith("n"))', True),
        ('payload.tags.filter(t, t != "x").size() == 1', True),
        ("payload.tags.map(t, size(t)).exists(n, n == 4)", True),
    ],
)
def test_macros_with_bound_variables_compile_and_evaluate(text, expected):
    assert compile_condition(text)(CONTEXT) is expected


def test_predicate_is_reusable_across_contexts():
    check = compile_condition('payload.text.contains("spam")')

    assert check({"payload": {"text": "buy spam"}, "meta": {}}) is True
    assert check({"payload": {"text": "hello"}, "meta": {}}) is False


def test_validate_condition_accepts_valid_text():
    assert validate_condition("payload.count == 3") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os')", r"^The condition calls unknown function\(s\) __import__\.$"),
        ('open("/etc/passwd")', r"calls unknown function\(s\) open"),
        ("eval('1') && exec('2')", r"calls unknown function\(s\) eval, exec"),
        ("foo.bar", r"reads unknown name\(s\) foo: only payload and meta are available"),
        ("request == 1", r"reads unknown name\(s\) request"),
        ("os.system == payload", r"reads unknown name\(s\) os"),
        ('payload.tags.exists(t, q == "x")', r"reads unknown name\(s\) q"),  # only the macro's own variable is bound
    ],
)
def test_unsafe_or_unknown_names_are_refused_at_compile(text, message):
    with pytest.raises(ExpressionError, match=message):
        compile_condition(text)
    with pytest.raises(ExpressionError, match=message):
        validate_condition(text)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("payload.__class__.__mro__", "__class__, __mro__"),
        ("payload.__class__", "__class__"),
        ("payload.text.__len__ == 1", "__len__"),
        ("payload.tags.exists(__t, __t == 1)", "__t"),
        ('__builtins__.open("x")', "__builtins__"),
        ("__import__ == payload", "__import__"),
    ],
)
def test_attribute_walks_are_refused_at_compile(text, names):
    with pytest.raises(
        ExpressionError,
        match=rf"^The condition uses {names}: names starting with __ are not allowed "
        r"\(conditions read payload data, not Python attributes\)\.$",
    ):
        compile_condition(text)


def test_single_underscore_keys_are_ordinary_data():
    assert compile_condition("payload._id == 7")({"payload": {"_id": 7}, "meta": {}}) is True


def test_a_dunder_key_in_brackets_is_only_a_key_lookup():
    check = compile_condition('payload["__class__"] == 1')

    assert check({"payload": {"__class__": 1}, "meta": {}}) is True  # plain data, no Python attribute
    with pytest.raises(ExpressionError, match=r"^condition failed: no such key$"):
        check(CONTEXT)


@pytest.mark.parametrize(
    "text", ["payload.", "payload.count >", "(((", 'payload.text == "open', "a &&& b", "payload.count = 3"]
)
def test_syntax_errors_are_refused(text):
    with pytest.raises(ExpressionError, match="The condition does not parse"):
        compile_condition(text)


@pytest.mark.parametrize("text", ["", "   ", "\n\t", None])
def test_empty_text_is_refused(text):
    with pytest.raises(ExpressionError, match="The condition is empty"):
        compile_condition(text)


def test_text_at_the_limit_is_accepted_and_longer_is_refused():
    assert MAX_LENGTH == 1000
    at_limit = '"' + "x" * 991 + '" != "y"'
    assert len(at_limit) == MAX_LENGTH
    assert compile_condition(at_limit)(CONTEXT) is True

    too_long = "payload.count == 3" + " || payload.count == 3" * 50
    assert len(too_long) > MAX_LENGTH
    with pytest.raises(ExpressionError, match=rf"The condition is {len(too_long)} characters long; the limit is 1000"):
        compile_condition(too_long)


def test_exactly_1001_characters_is_refused():
    text = '"' + "x" * 999 + '"'  # 1001 characters
    assert len(text) == 1001

    with pytest.raises(ExpressionError, match="1001 characters long; the limit is 1000"):
        compile_condition(text)


@pytest.mark.parametrize("text", ["1 + 1", '"yes"', "payload.tags", "payload.data.probability * 2.0", "null"])
def test_non_boolean_result_is_refused_at_evaluation(text):
    check = compile_condition(text)  # the result type is only known when it runs

    with pytest.raises(ExpressionError, match=r"condition gave \w+, not true or false"):
        check(CONTEXT)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("payload.missing == 1", "condition failed: no such member in mapping: 'missing'"),
        ("payload.data.nope > 0", "condition failed: no such member in mapping: 'nope'"),
    ],
)
def test_missing_fields_fail_at_evaluation(text, message):
    check = compile_condition(text)

    with pytest.raises(ExpressionError, match=message):
        check(CONTEXT)


def test_type_mismatch_fails_at_evaluation():
    check = compile_condition('payload.count > "two"')

    with pytest.raises(ExpressionError, match="condition failed"):
        check(CONTEXT)


def test_evaluation_error_is_an_exception_not_a_crash_in_the_pipeline():
    # A condition that fails at run time is a hook failure the pipeline's on_error handles.
    from stash.core import pipeline

    class Keep:
        kind = "filter"

        def filter(self, item):
            return pipeline.keep()

    step = pipeline.Step(hook=Keep(), name="keep", label="Guarded", condition=compile_condition("payload.missing == 1"))
    result = pipeline.Pipeline([step]).run(Item(payload={"text": "hi"}))

    assert result.verdict == pipeline.REJECTED
    assert result.trail[0].outcome == "error"
    assert result.reason == "Guarded: ExpressionError: condition failed: no such member in mapping: 'missing'"


# --- caps on nesting and on evaluation ----------------------------------------------------------


def test_nesting_at_the_depth_limit_is_accepted_and_deeper_is_refused():
    assert compile_condition("(" * 14 + "true" + ")" * 14)(CONTEXT) is True
    with pytest.raises(ExpressionError, match=r"^The condition is nested too deeply"):
        compile_condition("(" * 15 + "true" + ")" * 15)


@pytest.mark.parametrize(
    "text",
    [
        "(" * 400 + "true" + ")" * 400,
        "!" * 900 + "true",
        "[" * 300 + "]" * 300 + " == []",
        "payload.a" + ".b" * 300 + " == 1",
    ],
)
def test_deep_nesting_within_the_length_limit_is_refused_at_compile_not_at_run_time(text):
    assert len(text) <= MAX_LENGTH
    with pytest.raises(ExpressionError, match=r"^The condition is nested too deeply"):
        compile_condition(text)


def test_evaluation_stops_after_its_step_budget():
    check = compile_condition("payload.a.all(x, payload.a.all(y, x + y >= 0))")
    started = time.monotonic()

    # Whichever bound it meets first on this machine: the steps, or the time they take.
    stopped = rf"^condition stopped: it (took more than {MAX_STEPS} steps|ran longer than {MAX_SECONDS} s)$"
    with pytest.raises(ExpressionError, match=stopped):
        check({"payload": {"a": list(range(2000))}, "meta": {}})  # four million comparisons asked for
    assert time.monotonic() - started < MAX_SECONDS + 1


def test_the_budget_is_per_evaluation_not_per_predicate(monkeypatch):
    # The steps are counted here: the time cap is out of the way of a machine that pauses this process.
    monkeypatch.setattr(expressions, "MAX_SECONDS", 60)
    check = compile_condition("payload.a.exists(x, x == 99)")
    context = {"payload": {"a": list(range(100))}, "meta": {}}

    for _ in range(MAX_STEPS // 500):  # far more steps in total than one budget
        assert check(context) is True


def test_a_slow_evaluation_stops_at_the_time_cap(monkeypatch):
    monkeypatch.setattr(expressions, "MAX_SECONDS", 0.02)
    # Few steps, each slow: every element scans the same 200 KB text (linearly, on RE2).
    check = compile_condition('payload.a.all(x, payload.s.matches("^(a|b)*c$") || x >= 0)')
    context = {"payload": {"a": list(range(2000)), "s": "ab" * 100_000}, "meta": {}}
    started = time.monotonic()

    with pytest.raises(ExpressionError, match=r"^condition stopped: it ran longer than 0.02 s$"):
        check(context)
    assert time.monotonic() - started < 5


def test_matches_uses_re2_so_a_catastrophic_pattern_is_linear():
    check = compile_condition('payload.text.matches("^(a+)+$")')
    started = time.monotonic()

    assert check({"payload": {"text": "a" * 5000 + "!"}, "meta": {}}) is False
    assert time.monotonic() - started < 5


# --- numbers beyond CEL's 64-bit int -------------------------------------------------------

BIG = {"payload": {"score": 10, "pad": 9223372036854775808, "low": -(2**80), "huge": 10**400}, "meta": {}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("payload.score > 5", True),  # does not look at the big numbers
        ("payload.score > 50", False),
        ("payload.pad > 5", True),  # read as a double, as CEL reads every JSON number
        ("payload.low < -1.0", True),
        ("payload.huge > 1e300", True),
    ],
)
def test_a_payload_with_numbers_past_64_bits_is_judged(text, expected):
    assert compile_condition(text)(BIG) is expected


def test_a_condition_that_cannot_hold_such_a_number_says_why():
    with pytest.raises(
        ExpressionError,
        match=r"condition failed: a number is outside CEL's 64-bit integer range "
        r"\(-9223372036854775808 to 9223372036854775807\)",
    ):
        compile_condition("int(payload.pad) > 0")(BIG)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("on_error", "expression", "verdict"),
    [
        ("skip", "payload.score > 5", "rejected"),  # the filter's condition holds: it drops the item
        ("reject", "payload.score > 50", "accepted"),  # it does not: nothing drops a valid item
    ],
)
def test_a_condition_filter_judges_a_payload_with_a_big_number(make_stash, on_error, expression, verdict):
    stash = make_stash("big", hooks=[{"hook": "condition", "params": {"expression": expression}, "on_error": on_error}])
    result = processing.simulate(stash, {"score": 10, "pad": 9223372036854775808})
    assert (result.verdict, [entry.outcome for entry in result.trail]) == (
        verdict,
        ["dropped" if verdict == "rejected" else "kept"],
    )


@pytest.mark.django_db
def test_a_condition_that_fails_on_a_big_number_goes_by_its_policy_with_the_reason(make_stash):
    stash = make_stash(
        "big",
        hooks=[
            {
                "hook": "require_fields",
                "params": {"fields": ["text"]},
                "condition": "int(payload.pad) > 0",
                "on_error": "hold",
                "label": "Needs text",
            }
        ],
    )
    result = processing.simulate(stash, {"score": 10, "pad": 9223372036854775808})
    assert result.verdict == "held"
    assert result.reason == (
        "Needs text: ExpressionError: condition failed: a number is outside CEL's 64-bit "
        "integer range (-9223372036854775808 to 9223372036854775807)"
    )
