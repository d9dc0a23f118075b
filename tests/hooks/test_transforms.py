"""Built-in transforms: normalize_text, redact_pii, set_fields, drop_fields. No database."""

import time

import pytest

from stash.core import pipeline
from stash.core.testing import build_hook, run_hook
from stash.hooks.transforms import luhn_valid

from ..support.hook_support import assert_refused

EXPECTED = "Enter a value in the expected format: "


def transformed(name, params, payload):
    """The payload a transform hands on, checking that the trail says it changed."""
    result = run_hook(name, params, payload)
    assert result.trail[0].outcome == "transformed", result.trail
    return result.payload


def unchanged(name, params, payload):
    result = run_hook(name, params, payload)
    return result.trail[0].outcome == "kept" and result.payload == payload


# --- normalize_text ---------------------------------------------------------------------------


def test_normalize_applies_nfkc_and_collapses_whitespace():
    payload = {"text": "  ｆｕｌｌ\u3000width\t\tand ﬁ ligature  \n\n ok ", "n": 3}

    assert transformed("normalize_text", {}, payload) == {"text": "full width and fi ligature ok", "n": 3}


def test_normalize_removes_invisible_characters_but_keeps_emoji_joiners():
    payload = {"text": "sp\u200bam\u00ad \u202eevil\u202c 👩\u200d💻"}

    assert transformed("normalize_text", {}, payload) == {"text": "spam evil 👩\u200d💻"}
    assert unchanged("normalize_text", {"remove_invisible": False}, payload)


def test_normalize_lowercase_is_optional():
    assert transformed("normalize_text", {"lowercase": True}, {"t": "HeLLo ÉCOLE"}) == {"t": "hello école"}
    assert transformed("normalize_text", {}, {"t": " HeLLo "}) == {"t": "HeLLo"}


def test_normalize_whitespace_modes():
    text = "  a \n\n b  "

    assert transformed("normalize_text", {"whitespace": "trim"}, {"t": text}) == {"t": "a \n\n b"}
    assert unchanged("normalize_text", {"whitespace": "keep"}, {"t": text})


def test_normalize_walks_nested_values_and_leaves_files_and_keys_alone():
    payload = {"ｋｅｙ": "ｖａｌｕｅ", "list": [" a ", {"deep": "ｂ"}, 5, None], "b64_file": "  QUJD  "}

    assert transformed("normalize_text", {}, payload) == {
        "ｋｅｙ": "value",
        "list": ["a", {"deep": "b"}, 5, None],
        "b64_file": "  QUJD  ",
    }


def test_normalize_fields_limit_what_changes():
    payload = {"title": " ＴＩＴＬＥ ", "body": " ＢＯＤＹ ", "data": {"note": " ｘ "}}

    assert transformed("normalize_text", {"fields": ["title", "data.note", "missing"]}, payload) == {
        "title": "TITLE",
        "body": " ＢＯＤＹ ",
        "data": {"note": "x"},
    }


def test_normalize_clean_text_is_unchanged():
    assert unchanged("normalize_text", {}, {"text": "already clean", "n": 1})
    assert unchanged("normalize_text", {}, {})


def test_normalize_huge_text():
    result = transformed("normalize_text", {"lowercase": True}, {"t": "ＡＢ  " * 200_000})

    assert result["t"] == " ".join(["ab"] * 200_000)


def test_normalize_before_a_blocklist_defeats_lookalike_spelling():
    normalize = pipeline.Step(hook=build_hook("normalize_text", {"lowercase": True}), name="normalize_text")
    block = pipeline.Step(
        hook=build_hook("keyword_blocklist", {"words": ["spam"], "whole_word": True}), name="keyword_blocklist"
    )

    for text in ("ＳＰＡＭ", "sp\u200bam", "S\u00adpam"):
        result = pipeline.Pipeline([normalize, block]).run(pipeline.Item(payload={"text": text}))
        assert (result.verdict, result.reason) == ("rejected", "contains blocked word 'spam' in text"), text


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"whitespace": "squash"}, {"whitespace": "Must be one of: collapse, trim, keep."}),
        ({"lowercase": "yes"}, {"lowercase": "Must be true or false."}),
        ({"fields": []}, {"fields": "Must not be empty."}),
        ({"form": "NFC"}, {"params": "Not a param of this hook: form."}),
    ],
)
def test_normalize_refuses_bad_params(params, errors):
    assert_refused("normalize_text", params, errors)


# --- redact_pii -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to ann.lee+news@mail.example.co.uk today", "write to [email] today"),
        ("card 4111 1111 1111 1111, exp 12/29", "card [card], exp 12/29"),
        ("card 4111-1111-1111-1111.", "card [card]."),
        ("amex 378282246310005", "amex [card]"),
        ("call +1 (555) 123-4567 now", "call [phone] now"),
        ("call (555) 123-4567 now", "call [phone] now"),
        ("appelez le 06 12 34 56 78", "appelez le [phone]"),
        ("+33612345678", "[phone]"),
    ],
)
def test_redact_masks_each_kind(text, expected):
    assert transformed("redact_pii", {}, {"text": text}) == {"text": expected}


@pytest.mark.parametrize(
    "text",
    [
        "the number 4111 1111 1111 1112 fails the Luhn check",  # 16 digits: no card, too long for a phone
        "on 2024-01-02 12:30:00 UTC",
        "order 12345678 shipped",  # 8 digits
        "pi is 3.14159",
        "serial abc123456789",  # part of a word
        "an @ alone, user@localhost",
    ],
)
def test_redact_leaves_what_is_not_pii(text):
    assert unchanged("redact_pii", {}, {"text": text})


def test_redact_kinds_are_configurable():
    text = "ann@example.com 4111 1111 1111 1111 +1 555 123 4567"

    def redacted(*kinds):
        return transformed("redact_pii", {"kinds": list(kinds)}, {"t": text})["t"]

    assert redacted("email") == "[email] 4111 1111 1111 1111 +1 555 123 4567"
    assert redacted("card") == "ann@example.com [card] +1 555 123 4567"
    assert redacted("phone") == "ann@example.com 4111 1111 1111 1111 [phone]"


def test_redact_walks_nested_text_but_not_files():
    payload = {"comments": [{"by": "ann@example.com"}], "b64_file": "ann@example.com", "n": 4111111111111111}

    assert transformed("redact_pii", {}, payload) == {
        "comments": [{"by": "[email]"}],
        "b64_file": "ann@example.com",
        "n": 4111111111111111,
    }


def test_redact_fields():
    payload = {"public": "ann@example.com", "private": "bob@example.com"}

    assert transformed("redact_pii", {"fields": ["private"]}, payload) == {
        "public": "ann@example.com",
        "private": "[email]",
    }


def test_redact_is_linear_on_hostile_text():
    started = time.monotonic()

    result = run_hook("redact_pii", {}, {"a": "a" * 1_000_000 + "@", "b": "1 " * 500_000, "c": "a." * 500_000})

    assert result.verdict == "accepted" and result.trail[0].outcome == "kept"
    # Linear: a second or so, on a loaded machine a few; backtracking on a million characters takes hours.
    assert time.monotonic() - started < 5


def test_luhn():
    assert luhn_valid("4111111111111111") and luhn_valid("378282246310005") and luhn_valid("0")
    assert not luhn_valid("4111111111111112")


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"kinds": []}, {"kinds": "Must not be empty."}),
        ({"kinds": ["ssn"]}, {"kinds.0": "Must be one of: email, card, phone."}),
        ({"kinds": ["email", "email"]}, {"kinds": "Must not list the same item twice."}),
        ({"mask": "***"}, {"params": "Not a param of this hook: mask."}),
    ],
)
def test_redact_refuses_bad_params(params, errors):
    assert_refused("redact_pii", params, errors)


# --- set_fields / drop_fields -----------------------------------------------------------------


def test_set_fields_sets_values_and_creates_objects_on_the_way():
    payload = {"text": "hi", "meta": {"lang": "en"}}
    params = {"values": {"meta.reviewed": False, "source": "feed", "a.b.c": [1, {"x": None}]}}

    assert transformed("set_fields", params, payload) == {
        "text": "hi",
        "meta": {"lang": "en", "reviewed": False},
        "source": "feed",
        "a": {"b": {"c": [1, {"x": None}]}},
    }
    assert payload == {"text": "hi", "meta": {"lang": "en"}}  # the caller's payload is intact


def test_set_fields_overwrite_or_only_fill_in():
    params = {"values": {"lang": "en", "tags": []}}

    assert transformed("set_fields", params, {"lang": "fr"}) == {"lang": "en", "tags": []}
    assert transformed("set_fields", {**params, "overwrite": False}, {"lang": "fr"}) == {"lang": "fr", "tags": []}
    assert unchanged("set_fields", params, {"lang": "en", "tags": []})


def test_set_fields_through_a_value_that_is_not_an_object_is_a_hook_error():
    result = run_hook("set_fields", {"values": {"meta.reviewed": True}}, {"meta": "plain"})

    assert (result.verdict, result.trail[0].outcome) == ("rejected", "error")
    assert result.reason == "set_fields: ValueError: cannot set meta.reviewed: meta is str, not an object"
    assert result.payload == {"meta": "plain"}


def test_drop_fields_removes_present_paths_and_ignores_absent_ones():
    payload = {"text": "hi", "data": {"secret": 1, "keep": 2}, "internal": True}

    assert transformed("drop_fields", {"fields": ["internal", "data.secret", "nope", "data.nope.deeper"]}, payload) == {
        "text": "hi",
        "data": {"keep": 2},
    }
    assert unchanged("drop_fields", {"fields": ["nope"]}, {"text": "hi"})
    assert unchanged("drop_fields", {"fields": ["text.length"]}, {"text": "hi"})  # a string has no fields


@pytest.mark.parametrize(
    ("name", "params", "errors"),
    [
        ("set_fields", {}, {"values": "This field is required."}),
        ("set_fields", {"values": {}}, {"values": "Must have at least 1 entry."}),
        ("set_fields", {"values": {"a..b": 1}}, {"values": EXPECTED + "A dotted path, e.g. meta.reviewed."}),
        ("set_fields", {"values": {"x": 1}, "overwrite": 1}, {"overwrite": "Must be true or false."}),
        ("drop_fields", {}, {"fields": "This field is required."}),
        ("drop_fields", {"fields": []}, {"fields": "Must not be empty."}),
        ("drop_fields", {"fields": [""]}, {"fields.0": "This field may not be blank."}),
    ],
)
def test_field_transforms_refuse_bad_params(name, params, errors):
    assert_refused(name, params, errors)
