"""Conditions: safe CEL expressions over payload and meta, refused with a clear message. No database."""
import pytest

from stash.exceptions import ExpressionError
from stash.expressions import MAX_LENGTH, compile_condition, validate_condition
from stash.pipeline import Item

CONTEXT = Item(
    payload={"text": "Hello world", "tags": ["x", "news"], "data": {"probability": 0.7, "time": 12},
             "count": 3, "flag": True, "empty": None},
    stash="inbox", source="api", revision=2, submitted_by="alice",
).as_context()


@pytest.mark.parametrize(("text", "expected"), [
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
])
def test_valid_conditions_evaluate(text, expected):
    assert compile_condition(text)(CONTEXT) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ('payload.tags.exists(t, t == "x")', True),
    ('payload.tags.exists(t, t == "nope")', False),
    ("payload.tags.all(t, size(t) >= 1)", True),
    ('payload.tags.exists_one(tag, tag.startsWith("n"))', True),
    ("payload.tags.filter(t, t != \"x\").size() == 1", True),
    ("payload.tags.map(t, size(t)).exists(n, n == 4)", True),
])
def test_macros_with_bound_variables_compile_and_evaluate(text, expected):
    assert compile_condition(text)(CONTEXT) is expected


def test_predicate_is_reusable_across_contexts():
    check = compile_condition('payload.text.contains("spam")')

    assert check({"payload": {"text": "buy spam"}, "meta": {}}) is True
    assert check({"payload": {"text": "hello"}, "meta": {}}) is False


def test_validate_condition_accepts_valid_text():
    assert validate_condition("payload.count == 3") is None


@pytest.mark.parametrize(("text", "message"), [
    ("__import__('os')", r"calls unknown function\(s\) __import__"),
    ('open("/etc/passwd")', r"calls unknown function\(s\) open"),
    ("eval('1') && exec('2')", r"calls unknown function\(s\) eval, exec"),
    ("foo.bar", r"reads unknown name\(s\) foo: only payload and meta are available"),
    ("request == 1", r"reads unknown name\(s\) request"),
    ("os.system == payload", r"reads unknown name\(s\) os"),
    ('payload.tags.exists(t, q == "x")', r"reads unknown name\(s\) q"),  # only the macro's own variable is bound
])
def test_unsafe_or_unknown_names_are_refused_at_compile(text, message):
    with pytest.raises(ExpressionError, match=message):
        compile_condition(text)
    with pytest.raises(ExpressionError, match=message):
        validate_condition(text)


@pytest.mark.parametrize("text", [
    "payload.__class__.__mro__",
    "payload.__class__",
    'payload["__class__"]',
    "payload.text.__len__",
])
def test_attribute_walks_fail_at_evaluation(text):
    check = compile_condition(text)

    with pytest.raises(ExpressionError, match="condition failed"):
        check(CONTEXT)


@pytest.mark.parametrize("text", ["payload.", "payload.count >", "(((", 'payload.text == "open', "a &&& b",
                                  "payload.count = 3"])
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


@pytest.mark.parametrize(("text", "message"), [
    ("payload.missing == 1", "condition failed: no such member in mapping: 'missing'"),
    ("payload.data.nope > 0", "condition failed: no such member in mapping: 'nope'"),
])
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
    from stash import pipeline

    class Keep:
        kind = "filter"

        def filter(self, item):
            return pipeline.keep()

    step = pipeline.Step(hook=Keep(), name="keep", label="Guarded",
                         condition=compile_condition("payload.missing == 1"))
    result = pipeline.Pipeline([step]).run(Item(payload={"text": "hi"}))

    assert result.verdict == pipeline.REJECTED
    assert result.trail[0].outcome == "error"
    assert result.reason == "Guarded: ExpressionError: condition failed: no such member in mapping: 'missing'"
