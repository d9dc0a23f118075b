"""A payload's check reads its JSON text first and walks the value only when the text does not vouch
for it: the answer must be the walk's, for anything a program may hand over."""

from hypothesis import example, given, settings, strategies as st

from stash.models import validators

from .strategies import json_values, payloads


def nested(depth: int, leaf=1):
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


nestings = st.builds(nested, st.integers(min_value=90, max_value=110), json_values)


@settings(max_examples=500)
@given(value=st.one_of(payloads, nestings, st.lists(nestings, max_size=3)))
@example(value={"n": 10**1000})
@example(value={"n": -(10**1000)})
@example(value={"n": 10**999})
@example(value={"x": float("-inf")})
@example(value={"\x00": 1})
@example(value={"a": "\ud800"})
@example(value={"a": "\\u0000 is how JSON spells NUL"})
@example(value=nested(99))
@example(value=nested(100))
@example(value=nested(5000))
@example(value={1: "a", "b": 2})
def test_the_screen_answers_as_the_walk(value):
    assert validators.unstorable(value) == validators._walked_problem(value, "payload")


@given(value=payloads)
def test_the_checked_payload_is_its_canonical_json(value):
    try:
        canonical = validators.validate_payload(value, type("Stash", (), {"max_payload_bytes": 10**9})())
    except validators.ValidationError:
        assert not isinstance(value, dict) or validators._walked_problem(value, "payload")
        return
    assert canonical == validators.canonical_json(value)
