"""Built-in filters and the hook base class: verdicts, edge cases and params checks. No database."""

import json
import time

import pytest

from stash import hooks
from stash.core import pipeline, registry
from stash.core.exceptions import InvalidParams
from stash.hooks.filters import payload_size

from ..support.hook_support import assert_refused


def build(name, params):
    """Build a registered hook the way a pipeline does: validate its params, then instantiate."""
    cls = registry.get(name)
    cls.validate_params(params)
    return cls(params)


def judge(hook, payload):
    return hook.filter(pipeline.Item(payload=payload))


def kept(decision):
    return decision == pipeline.keep()


# --- the base class ---------------------------------------------------------------------------


class Documented(hooks.Filter):
    """Drop things that look odd.

    A longer explanation that the admin does not show.
    """

    params_schema = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "default": 3},
            "mode": {"type": "string", "enum": ["strict", "lax"], "default": "lax"},
            "words": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": False,
    }


class Undocumented(hooks.Filter):
    pass


def test_description_is_the_first_docstring_line():
    assert Documented.description() == "Drop things that look odd."
    assert Undocumented.description() == ""
    assert registry.get("require_fields").description() == (
        "Drop content whose payload lacks any of the given fields (dotted paths allowed)."
    )
    assert registry.get("max_size").description() == "Drop content whose JSON payload is larger than max_bytes."


def test_default_params_come_from_the_schema():
    assert Documented.default_params() == {"limit": 3, "mode": "lax"}
    assert Undocumented.default_params() == {}
    assert registry.get("require_fields").default_params() == {"allow_empty": False}
    assert registry.get("keyword_blocklist").default_params() == {"whole_word": False}
    assert registry.get("max_size").default_params() == {}


def test_default_params_are_valid_for_a_hook_without_required_params():
    Documented.validate_params(Documented.default_params())


def test_base_hook_accepts_only_empty_params():
    Undocumented.validate_params({})
    with pytest.raises(InvalidParams, match=r"params: Not a param of this hook: x\."):
        Undocumented.validate_params({"x": 1})


def test_invalid_params_are_keyed_by_field_path():
    with pytest.raises(InvalidParams) as caught:
        Documented.validate_params({"limit": "3", "mode": "loud", "words": ["ok", 5]})

    assert caught.value.errors == {
        "limit": "Must be a whole number.",
        "mode": "Must be one of: strict, lax.",
        "words.1": "Must be text.",
    }
    assert str(caught.value).startswith("Invalid params for hook ")


def test_invalid_params_message_names_the_registered_hook():
    with pytest.raises(InvalidParams, match=r"^Invalid params for hook 'max_size': max_bytes: Must be at least 1\."):
        registry.get("max_size").validate_params({"max_bytes": 0})


def test_hook_keeps_a_copy_of_its_params():
    params = {"fields": ["time"]}
    hook = registry.get("require_fields")(params)
    params["fields"] = ["other"]

    assert hook.params == {"fields": ["time"]}
    assert registry.get("require_fields")(None).params == {}


def test_base_filter_and_transform_must_be_implemented():
    with pytest.raises(NotImplementedError, match="Undocumented must implement filter"):
        Undocumented().filter(pipeline.Item(payload={}))
    with pytest.raises(NotImplementedError, match="Bare must implement transform"):
        type("Bare", (hooks.Transform,), {})().transform(pipeline.Item(payload={}))


def test_filter_helpers_make_decisions():
    assert hooks.Filter.keep() == pipeline.keep()
    assert hooks.Filter.drop("why") == pipeline.Decision("drop", "why", "dropped")
    assert hooks.Filter.hold("why", "look") == pipeline.Decision("hold", "why", "look")


def test_kinds():
    assert (hooks.Filter.kind, hooks.Transform.kind, hooks.Sink.kind) == ("filter", "transform", "sink")
    assert hooks.Sink.deliver_async is False


# --- require_fields ---------------------------------------------------------------------------


def test_require_fields_keeps_complete_payload():
    hook = build("require_fields", {"fields": ["time", "text"]})

    assert kept(judge(hook, {"time": 1, "text": "hi", "extra": True}))


def test_require_fields_drops_naming_every_missing_field_in_order():
    hook = build("require_fields", {"fields": ["time", "text", "user"]})

    decision = judge(hook, {"text": "hi"})

    assert decision.action == "drop"
    assert decision.reason == "missing time, user"
    assert decision.code == "missing_fields"


def test_require_fields_dotted_paths():
    hook = build("require_fields", {"fields": ["data.time", "data.user.id"]})

    assert kept(judge(hook, {"data": {"time": 5, "user": {"id": 1}}}))
    assert judge(hook, {"data": {"time": 5, "user": {}}}).reason == "missing data.user.id"
    assert judge(hook, {"data": {"user": {"id": 1}}}).reason == "missing data.time"
    assert judge(hook, {"data": "not an object"}).reason == "missing data.time, data.user.id"
    assert judge(hook, {"data": None}).reason == "missing data.time, data.user.id"
    assert judge(hook, {}).reason == "missing data.time, data.user.id"


def test_require_fields_dotted_path_is_not_a_literal_key():
    hook = build("require_fields", {"fields": ["data.time"]})

    assert judge(hook, {"data.time": 5}).reason == "missing data.time"


def test_require_fields_list_indexes_in_paths():
    hook = build("require_fields", {"fields": ["items.0.name"]})

    assert kept(judge(hook, {"items": [{"name": "a"}]}))
    assert judge(hook, {"items": []}).reason == "missing items.0.name"
    assert judge(hook, {"items": [{"title": "a"}]}).reason == "missing items.0.name"
    assert judge(hook, {"items": {"0": {"name": "a"}}}).action == "keep"  # an object keyed "0" works too


@pytest.mark.parametrize("index", ["-1", "1", "x", "²", "01x", "٣"])
def test_require_fields_odd_list_indexes_are_just_missing(index):
    hook = build("require_fields", {"fields": [f"tags.{index}"]})

    decision = judge(hook, {"tags": ["only"]})

    assert decision.action == "drop"
    assert decision.reason == f"missing tags.{index}"


@pytest.mark.parametrize("empty", [None, "", [], {}])
def test_require_fields_empty_values_count_as_missing_by_default(empty):
    hook = build("require_fields", {"fields": ["time"]})

    assert judge(hook, {"time": empty}).reason == "missing time"


@pytest.mark.parametrize("empty", [None, "", [], {}])
def test_require_fields_allow_empty_accepts_present_empty_values(empty):
    hook = build("require_fields", {"fields": ["time"], "allow_empty": True})

    assert kept(judge(hook, {"time": empty}))
    assert judge(hook, {}).reason == "missing time"  # absent is still missing


@pytest.mark.parametrize("value", [0, 0.0, False, " ", [None], {"a": None}, "0"])
def test_require_fields_falsy_but_real_values_are_present(value):
    hook = build("require_fields", {"fields": ["time"]})

    assert kept(judge(hook, {"time": value}))


def test_require_fields_empty_value_at_a_dotted_path():
    hook = build("require_fields", {"fields": ["data.time"]})

    assert judge(hook, {"data": {"time": None}}).reason == "missing data.time"
    assert kept(
        build("require_fields", {"fields": ["data.time"], "allow_empty": True}).filter(
            pipeline.Item(payload={"data": {"time": None}})
        )
    )


def test_require_fields_in_a_pipeline_rejects_with_reason():
    hook = build("require_fields", {"fields": ["time"]})
    step = pipeline.Step(hook=hook, name="require_fields", config_id=4)

    result = pipeline.Pipeline([step]).run(pipeline.Item(payload={"text": "hi"}))

    assert (result.verdict, result.reason, result.code, result.decided_by) == (
        "rejected",
        "missing time",
        "missing_fields",
        4,
    )


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"fields": "This field is required."}),
        ({"fields": "time"}, {"fields": "Must be a list."}),
        ({"fields": []}, {"fields": "Must not be empty."}),
        ({"fields": [""]}, {"fields.0": "This field may not be blank."}),
        ({"fields": ["ok", 3]}, {"fields.1": "Must be text."}),
        ({"fields": ["a"], "allow_empty": "yes"}, {"allow_empty": "Must be true or false."}),
        ({"fields": ["a"], "extra": 1}, {"params": "Not a param of this hook: extra."}),
        (None, {"params": "Must be an object."}),
        (["time"], {"params": "Must be an object."}),
    ],
)
def test_require_fields_refuses_bad_params(params, errors):
    assert_refused("require_fields", params, errors)


def test_require_fields_accepts_good_params():
    registry.get("require_fields").validate_params({"fields": ["a", "b.c"], "allow_empty": True})


# --- keyword_blocklist ------------------------------------------------------------------------


def test_blocklist_keeps_clean_text():
    hook = build("keyword_blocklist", {"words": ["spam"]})

    assert kept(judge(hook, {"text": "hello there", "title": "greetings"}))


def test_blocklist_drops_naming_word_and_path():
    hook = build("keyword_blocklist", {"words": ["spam", "scam"]})

    decision = judge(hook, {"title": "fine", "body": "this is a scam"})

    assert decision.action == "drop"
    assert decision.reason == "contains blocked word 'scam' in body"
    assert decision.code == "blocked_word"


def test_blocklist_is_case_insensitive_both_ways():
    assert judge(build("keyword_blocklist", {"words": ["spam"]}), {"t": "Buy SPAM now"}).reason == (
        "contains blocked word 'spam' in t"
    )
    assert judge(build("keyword_blocklist", {"words": ["SpAm"]}), {"t": "spam"}).action == "drop"
    assert judge(build("keyword_blocklist", {"words": ["ÉCOLE"]}), {"t": "une école"}).reason == (
        "contains blocked word 'école' in t"
    )


def test_blocklist_substring_matches_without_whole_word():
    hook = build("keyword_blocklist", {"words": ["spam"]})

    assert judge(hook, {"t": "a spammer"}).reason == "contains blocked word 'spam' in t"


def test_blocklist_whole_word_ignores_parts_of_words():
    hook = build("keyword_blocklist", {"words": ["spam"], "whole_word": True})

    assert kept(judge(hook, {"t": "a spammer", "u": "antispam", "v": "spam_filter"}))
    for text in ["spam", "spam!", "(spam)", "buy spam now", "SPAM.", "eggs,spam"]:
        assert judge(hook, {"t": text}).action == "drop", text


def test_blocklist_whole_word_with_unicode_letters():
    hook = build("keyword_blocklist", {"words": ["café"], "whole_word": True})

    assert kept(judge(hook, {"t": "cafés"}))
    assert judge(hook, {"t": "un café noir"}).action == "drop"


def test_blocklist_phrases_and_regex_characters_are_literal():
    hook = build("keyword_blocklist", {"words": ["buy now", "c++", "a.b"]})

    assert judge(hook, {"t": "Please BUY NOW"}).reason == "contains blocked word 'buy now' in t"
    assert judge(hook, {"t": "I like c++"}).reason == "contains blocked word 'c++' in t"
    assert kept(judge(hook, {"t": "buy  now, a-b, c+"}))  # no regex meaning: '.' is a dot


def test_blocklist_prefers_the_longest_match():
    hook = build("keyword_blocklist", {"words": ["spam", "spam and eggs"]})

    assert judge(hook, {"t": "spam and eggs"}).reason == "contains blocked word 'spam and eggs' in t"


def test_blocklist_scans_nested_objects_and_lists():
    hook = build("keyword_blocklist", {"words": ["spam"]})

    payload = {"a": 1, "comments": [{"text": "ok"}, {"text": "fine", "replies": ["nice", ["deep spam"]]}]}

    assert judge(hook, payload).reason == "contains blocked word 'spam' in comments.1.replies.1.0"


def test_blocklist_top_level_string_list_path():
    hook = build("keyword_blocklist", {"words": ["spam"]})

    assert judge(hook, {"tags": ["x", "spam"]}).reason == "contains blocked word 'spam' in tags.1"


def test_blocklist_ignores_non_text_values_and_keys():
    hook = build("keyword_blocklist", {"words": ["spam", "1", "true", "none"]})

    assert kept(judge(hook, {"spam": 1, "n": 10, "flag": True, "nothing": None, "f": 1.5}))


def test_blocklist_does_not_scan_b64_file_values():
    hook = build("keyword_blocklist", {"words": ["spam"]})

    assert kept(judge(hook, {"b64_file": "c3BhbQ==spam", "attachment": {"b64_file": "spam spam"}}))
    assert kept(judge(hook, {"files": [{"b64_file": "spam", "name": "a.txt"}]}))
    assert judge(hook, {"files": [{"b64_file": "x", "name": "spam.txt"}]}).reason == (
        "contains blocked word 'spam' in files.0.name"
    )


def test_blocklist_huge_text():
    hook = build("keyword_blocklist", {"words": ["needle"], "whole_word": True})

    assert kept(judge(hook, {"t": "hay " * 250_000}))
    assert judge(hook, {"t": "hay " * 250_000 + "needle"}).reason == "contains blocked word 'needle' in t"


def test_blocklist_empty_payload_is_kept():
    assert kept(judge(build("keyword_blocklist", {"words": ["spam"]}), {}))


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"words": "This field is required."}),
        ({"words": []}, {"words": "Must not be empty."}),
        ({"words": "spam"}, {"words": "Must be a list."}),
        ({"words": ["spam", ""]}, {"words.1": "This field may not be blank."}),
        ({"words": [None]}, {"words.0": "Must be text."}),
        ({"words": ["spam"], "whole_word": 1}, {"whole_word": "Must be true or false."}),
        ({"words": ["spam"], "case_sensitive": True}, {"params": "Not a param of this hook: case_sensitive."}),
    ],
)
def test_blocklist_refuses_bad_params(params, errors):
    assert_refused("keyword_blocklist", params, errors)


def test_blocklist_reports_every_bad_field():
    with pytest.raises(InvalidParams, match=r"whole_word: .*; words\.0: ") as caught:
        registry.get("keyword_blocklist").validate_params({"words": [1], "whole_word": "no"})

    assert set(caught.value.errors) == {"words.0", "whole_word"}


# --- max_size ---------------------------------------------------------------------------------


def test_max_size_counts_compact_utf8_json():
    assert payload_size({"t": "a"}) == len('{"t":"a"}') == 9
    assert payload_size({"t": "é"}) == 10  # two bytes in UTF-8, not a \\u escape
    assert payload_size({"t": "😀"}) == 12  # four bytes
    assert payload_size({"a": [1, 2], "b": None}) == len('{"a":[1,2],"b":null}')
    assert payload_size({"t": 'say "hi"'}) == len(json.dumps({"t": 'say "hi"'}, separators=(",", ":")))


def test_max_size_boundary():
    hook = build("max_size", {"max_bytes": 9})

    assert kept(judge(hook, {"t": "a"}))  # exactly 9 bytes
    decision = judge(hook, {"t": "ab"})
    assert decision.action == "drop"
    assert decision.reason == "payload is 10 bytes, over the limit of 9"
    assert decision.code == "too_large"


def test_max_size_counts_bytes_not_characters():
    hook = build("max_size", {"max_bytes": 9})

    assert kept(judge(hook, {"t": "a"}))
    assert judge(hook, {"t": "é"}).reason == "payload is 10 bytes, over the limit of 9"
    assert judge(hook, {"t": "😀"}).reason == "payload is 12 bytes, over the limit of 9"


def test_max_size_huge_payload():
    hook = build("max_size", {"max_bytes": 1_000_000})

    assert kept(judge(hook, {"t": "x" * 999_000}))
    assert judge(hook, {"t": "x" * 1_000_000}).reason == "payload is 1000008 bytes, over the limit of 1000000"


def test_max_size_handles_values_json_cannot_encode():
    # Payloads are JSON, but a transform could hand on a Python object: it is sized as its str().
    import datetime

    hook = build("max_size", {"max_bytes": 40})

    assert payload_size({"d": datetime.date(2024, 1, 2)}) == len('{"d":"2024-01-02"}')
    assert kept(judge(hook, {"d": datetime.date(2024, 1, 2)}))


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"max_bytes": "This field is required."}),
        ({"max_bytes": 0}, {"max_bytes": "Must be at least 1."}),
        ({"max_bytes": -5}, {"max_bytes": "Must be at least 1."}),
        ({"max_bytes": 1.5}, {"max_bytes": "Must be a whole number."}),
        ({"max_bytes": "100"}, {"max_bytes": "Must be a whole number."}),
        ({"max_bytes": True}, {"max_bytes": "Must be a whole number."}),
        ({"max_bytes": None}, {"max_bytes": "Must be a whole number."}),
        ({"max_bytes": 10, "min_bytes": 1}, {"params": "Not a param of this hook: min_bytes."}),
    ],
)
def test_max_size_refuses_bad_params(params, errors):
    assert_refused("max_size", params, errors)


def test_blocklist_fields_limits_the_scan_to_those_paths():
    hook = build("keyword_blocklist", {"words": ["spam"], "fields": ["title", "data.body"]})

    assert kept(judge(hook, {"title": "hello", "data": {"body": "fine", "note": "spam"}, "other": "spam"}))
    assert judge(hook, {"data": {"body": ["ok", "spam here"]}}).reason == (
        "contains blocked word 'spam' in data.body.1"
    )
    assert kept(judge(hook, {}))  # absent fields have nothing to block
    assert kept(judge(hook, {"title": 5, "data": None}))  # neither is text


def test_blocklist_refuses_empty_fields():
    with pytest.raises(InvalidParams, match=r"fields: Must not be empty\."):
        registry.get("keyword_blocklist").validate_params({"words": ["spam"], "fields": []})


# --- check_params: checks a schema cannot express ---------------------------------------------


class Ranged(hooks.Filter):
    """Keep everything between low and high."""

    params_schema = {
        "type": "object",
        "properties": {"low": {"type": "integer"}, "high": {"type": "integer"}},
        "required": ["low", "high"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params):
        return {"high": "must be at least low"} if params["high"] < params["low"] else {}


def test_check_params_errors_are_reported_like_schema_errors():
    with pytest.raises(InvalidParams, match=r"^Invalid params for hook '': high: must be at least low$") as caught:
        Ranged.validate_params({"low": 5, "high": 1})

    assert caught.value.errors == {"high": "must be at least low"}
    Ranged.validate_params({"low": 1, "high": 1})


def test_check_params_runs_only_on_params_the_schema_accepts():
    # check_params reads params["high"]: it must never see params without it.
    with pytest.raises(InvalidParams, match=r"high: This field is required\."):
        Ranged.validate_params({"low": 5})


# --- regex ------------------------------------------------------------------------------------


def test_regex_must_match_keeps_matches_and_drops_the_rest():
    hook = build("regex", {"field": "data.email", "pattern": r"^[^@\s]+@example\.com$"})

    assert kept(judge(hook, {"data": {"email": "ann@example.com"}}))
    decision = judge(hook, {"data": {"email": "ann@elsewhere.org"}})
    assert (decision.action, decision.code) == ("drop", "no_match")
    assert decision.reason == r"data.email does not match ^[^@\s]+@example\.com$"


def test_regex_must_not_match_drops_matches_quoting_what_matched():
    hook = build("regex", {"field": "text", "pattern": r"\b(?:viagra|casino)\b", "mode": "must_not_match"})

    assert kept(judge(hook, {"text": "a quiet evening"}))
    decision = judge(hook, {"text": "best casino deals"})
    assert (decision.action, decision.code) == ("drop", "match")
    assert decision.reason == r"text matches \b(?:viagra|casino)\b ('casino')"


def test_regex_searches_anywhere_unless_anchored():
    assert kept(judge(build("regex", {"field": "t", "pattern": "b"}), {"t": "abc"}))
    assert judge(build("regex", {"field": "t", "pattern": "^b"}), {"t": "abc"}).action == "drop"


def test_regex_ignore_case():
    assert judge(build("regex", {"field": "t", "pattern": "hello"}), {"t": "HELLO"}).action == "drop"
    assert kept(judge(build("regex", {"field": "t", "pattern": "hello", "ignore_case": True}), {"t": "HELLO"}))
    assert kept(judge(build("regex", {"field": "t", "pattern": "école", "ignore_case": True}), {"t": "ÉCOLE"}))


@pytest.mark.parametrize("payload", [{}, {"t": None}, {"other": "x"}])
def test_regex_missing_field_fails_must_match_and_passes_must_not_match(payload):
    decision = judge(build("regex", {"field": "t", "pattern": "x"}), payload)
    assert (decision.action, decision.reason, decision.code) == ("drop", "missing t", "missing_field")

    assert kept(judge(build("regex", {"field": "t", "pattern": "x", "mode": "must_not_match"}), payload))


def test_regex_numbers_are_matched_as_json_writes_them():
    hook = build("regex", {"field": "zip", "pattern": r"^\d{5}$"})

    assert kept(judge(hook, {"zip": 75011}))
    assert judge(hook, {"zip": 7501.5}).reason == r"zip does not match ^\d{5}$"


@pytest.mark.parametrize(("value", "kind"), [(True, "a boolean"), ([1], "a list"), ({"a": 1}, "an object")])
@pytest.mark.parametrize("mode", ["must_match", "must_not_match"])
def test_regex_drops_values_that_are_not_text_in_either_mode(value, kind, mode):
    decision = judge(build("regex", {"field": "t", "pattern": "x", "mode": mode}), {"t": value})

    assert (decision.action, decision.reason, decision.code) == ("drop", f"t is {kind}, not text", "wrong_type")


def test_regex_empty_text_is_text():
    assert judge(build("regex", {"field": "t", "pattern": "."}), {"t": ""}).code == "no_match"
    assert kept(judge(build("regex", {"field": "t", "pattern": "^$"}), {"t": ""}))


def test_regex_is_linear_on_a_pattern_that_backtracks_catastrophically_elsewhere():
    hook = build("regex", {"field": "t", "pattern": r"^(a+)+$"})
    started = time.monotonic()

    decision = judge(hook, {"t": "a" * 100_000 + "!"})  # Python's re would take longer than the universe

    assert decision.code == "no_match"
    assert time.monotonic() - started < 5


def test_regex_long_match_is_quoted_short():
    decision = judge(build("regex", {"field": "t", "pattern": "a+", "mode": "must_not_match"}), {"t": "a" * 1000})

    assert decision.reason == "t matches a+ ('" + "a" * 60 + "…')"


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"field": "t"}, {"pattern": "This field is required."}),
        ({"pattern": "x"}, {"field": "This field is required."}),
        ({"field": "", "pattern": "x"}, {"field": "This field may not be blank."}),
        ({"field": "t", "pattern": ""}, {"pattern": "This field may not be blank."}),
        ({"field": "t", "pattern": "x", "mode": "match"}, {"mode": "Must be one of: must_match, must_not_match."}),
        ({"field": "t", "pattern": "x" * 1001}, {"pattern": "Must be at most 1000 characters."}),
        ({"field": "t", "pattern": "x", "flags": "i"}, {"params": "Not a param of this hook: flags."}),
    ],
)
def test_regex_refuses_bad_params(params, errors):
    assert_refused("regex", params, errors)


@pytest.mark.parametrize(
    ("pattern", "detail"),
    [
        ("(unclosed", "missing \\)"),
        (r"(a)\1", "invalid escape sequence: \\\\1"),
        ("(?<=a)b", "invalid perl operator: \\(\\?<="),
        ("a{2000}", "invalid repetition size"),
    ],
)
def test_regex_refuses_patterns_re2_cannot_run(pattern, detail):
    with pytest.raises(
        InvalidParams,
        match=rf"^Invalid params for hook 'regex': pattern: not a valid RE2 pattern "
        rf"\(.*{detail}.*\); backreferences and lookaround are not supported$",
    ):
        registry.get("regex").validate_params({"field": "t", "pattern": pattern})


# --- min_score --------------------------------------------------------------------------------


def test_min_score_keeps_within_bounds_inclusive():
    hook = build("min_score", {"field": "data.probability", "min": 0.5, "max": 0.9})

    for value in (0.5, 0.7, 0.9, 1 - 0.25):
        assert kept(judge(hook, {"data": {"probability": value}})), value


def test_min_score_drops_below_and_above_with_codes():
    hook = build("min_score", {"field": "data.probability", "min": 0.5, "max": 0.9})

    low = judge(hook, {"data": {"probability": 0.2}})
    high = judge(hook, {"data": {"probability": 0.95}})

    assert (low.reason, low.code) == ("data.probability is 0.2, below the minimum of 0.5", "below_min")
    assert (high.reason, high.code) == ("data.probability is 0.95, above the maximum of 0.9", "above_max")


def test_min_score_one_bound_is_enough():
    assert kept(judge(build("min_score", {"field": "s", "min": 3}), {"s": 10**30}))
    assert kept(judge(build("min_score", {"field": "s", "max": 3}), {"s": -(10**30)}))
    assert judge(build("min_score", {"field": "s", "max": 3}), {"s": 4}).code == "above_max"


@pytest.mark.parametrize(
    ("payload", "reason", "code"),
    [
        ({}, "missing s", "missing_score"),
        ({"s": None}, "missing s", "missing_score"),
        ({"s": "0.9"}, "s is text, not a number", "wrong_type"),
        ({"s": True}, "s is a boolean, not a number", "wrong_type"),
        ({"s": [0.9]}, "s is a list, not a number", "wrong_type"),
        ({"s": float("nan")}, "s is nan, not a finite number", "wrong_type"),
        ({"s": float("inf")}, "s is inf, not a finite number", "wrong_type"),
    ],
)
def test_min_score_drops_what_is_not_a_score(payload, reason, code):
    decision = judge(build("min_score", {"field": "s", "min": 0}), payload)

    assert (decision.action, decision.reason, decision.code) == ("drop", reason, code)


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"field": "s"}, {"params": "give min, max or both"}),
        ({"min": 1}, {"field": "This field is required."}),
        ({"field": "s", "min": "0.5"}, {"min": "Must be a number."}),
        ({"field": "s", "min": 0.9, "max": 0.1}, {"max": "0.1 is less than min (0.9)"}),
    ],
)
def test_min_score_refuses_bad_params(params, errors):
    assert_refused("min_score", params, errors)


# --- json_schema ------------------------------------------------------------------------------

ORDER_SCHEMA = {
    "type": "object",
    "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"}, "qty": {"type": "integer", "minimum": 1}},
    "required": ["sku", "qty"],
    "not": {"required": ["n"]},
}


def test_json_schema_keeps_valid_payloads():
    assert kept(judge(build("json_schema", {"schema": ORDER_SCHEMA}), {"sku": "ABC-12", "qty": 2}))


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"sku": "ABC-12"}, "qty: This field is required."),
        ({"sku": "ABC-12", "qty": 0}, "qty: Must be at least 1."),
        ({"sku": "abc", "qty": 1}, "sku: Enter a value in the expected format."),
        ({"sku": 12, "qty": 1}, "sku: Must be text."),
        ({"sku": "ABC-12", "qty": 1, "n": 2}, "n: This field is not allowed here."),
    ],
)
def test_json_schema_drops_naming_where_and_why_in_words(payload, reason):
    decision = judge(build("json_schema", {"schema": ORDER_SCHEMA}), payload)

    assert (decision.action, decision.reason, decision.code) == ("drop", reason, "schema_mismatch")


def test_json_schema_patterns_run_on_re2():
    hook = build("json_schema", {"schema": {"properties": {"t": {"type": "string", "pattern": "^(a+)+$"}}}})
    started = time.monotonic()

    assert judge(hook, {"t": "a" * 50_000 + "!"}).code == "schema_mismatch"
    assert time.monotonic() - started < 5


def test_json_schema_huge_value_gives_a_short_reason():
    decision = judge(build("json_schema", {"schema": {"properties": {"t": {"type": "integer"}}}}), {"t": "x" * 100_000})

    assert (decision.code, decision.reason) == ("schema_mismatch", "t: Must be a whole number.")


def test_json_schema_says_a_pattern_in_words_with_the_property_s_description():
    schema = {"properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$", "description": "Like ABC-12"}}}
    decision = judge(build("json_schema", {"schema": schema}), {"sku": "abc"})

    assert decision.reason == "sku: Enter a value in the expected format: Like ABC-12."
    assert "^" not in decision.reason and "abc" not in decision.reason


def test_json_schema_keeps_jsonschema_s_message_for_a_rule_without_words_cut_short():
    schema = {"properties": {"t": {"unevaluatedItems": False}}}
    decision = judge(build("json_schema", {"schema": schema}), {"t": ["x" * 100_000]})

    assert decision.reason.startswith("t: Unevaluated items are not allowed ('xxx") and len(decision.reason) < 320


def test_json_schema_local_refs_work():
    schema = {"$defs": {"name": {"type": "string", "minLength": 1}}, "properties": {"name": {"$ref": "#/$defs/name"}}}

    assert judge(build("json_schema", {"schema": schema}), {"name": ""}).reason == "name: This field may not be blank."


@pytest.mark.parametrize(
    ("schema", "errors"),
    [
        (
            {"type": "thing"},
            {"schema": "not a valid JSON Schema: 'thing' is not valid under any of the given schemas (at type)"},
        ),
        (
            {"properties": {"a": {"minimum": "1"}}},
            {"schema": "not a valid JSON Schema: '1' is not of type 'number' (at properties.a.minimum)"},
        ),
        (
            {"properties": {"a": {"pattern": "(?<=x)y"}}},
            {
                "schema.properties.a.pattern": "not a valid RE2 pattern (invalid perl operator: (?<=); "
                "backreferences and lookaround are not supported"
            },
        ),
        (
            {"patternProperties": {"^x": {}}},
            {"schema.patternProperties": "patternProperties is not supported; use properties, or the regex filter"},
        ),
        (
            {"$ref": "https://example.com/schema.json"},
            {
                "schema.$ref": "only references inside the schema (#/...) are allowed, not 'https://example.com/schema.json'"
            },
        ),
    ],
)
def test_json_schema_refuses_schemas_it_cannot_run_safely(schema, errors):
    assert_refused("json_schema", {"schema": schema}, errors)


def test_json_schema_nested_too_deeply_is_refused_not_a_crash():
    schema = deepest = {}
    for _ in range(5000):
        deepest["items"] = {}
        deepest = deepest["items"]

    assert_refused("json_schema", {"schema": schema}, {"schema": "the schema is nested too deeply"})


def test_json_schema_property_names_that_look_like_keywords_are_just_names():
    schema = {
        "properties": {
            "pattern": {"type": "string"},
            "patternProperties": {"type": "object"},
            "$ref": {"type": "string"},
        }
    }
    registry.get("json_schema").validate_params({"schema": schema})

    result = judge(build("json_schema", {"schema": schema}), {"pattern": 3})
    assert result.reason == "pattern: Must be text."


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"schema": "This field is required."}),
        ({"schema": True}, {"schema": "Must be an object."}),
        ({"schema": "{}"}, {"schema": "Must be an object."}),
    ],
)
def test_json_schema_refuses_bad_params(params, errors):
    assert_refused("json_schema", params, errors)


# --- condition --------------------------------------------------------------------------------


def test_condition_drops_when_the_expression_holds():
    hook = build("condition", {"expression": "has(payload.data) && payload.data.probability > 0.9"})

    assert kept(judge(hook, {"data": {"probability": 0.5}}))
    assert kept(judge(hook, {"text": "no data"}))
    decision = judge(hook, {"data": {"probability": 0.95}})
    assert (decision.action, decision.code) == ("drop", "condition")
    assert decision.reason == "condition holds: has(payload.data) && payload.data.probability > 0.9"


def test_condition_custom_reason_and_hold_action():
    hook = build("condition", {"expression": 'meta.source == "api"', "action": "hold", "reason": "API items wait"})

    decision = hook.filter(pipeline.Item(payload={}, source="api"))

    assert (decision.action, decision.reason, decision.code) == ("hold", "API items wait", "condition")
    assert kept(hook.filter(pipeline.Item(payload={}, source="form")))


def test_condition_that_fails_on_an_item_is_a_hook_error_for_the_policy():
    hook = build("condition", {"expression": "payload.data.probability > 0.9"})
    step = pipeline.Step(hook=hook, name="condition", on_error="skip")

    result = pipeline.Pipeline([step]).run(pipeline.Item(payload={"text": "no data"}))

    assert result.verdict == "accepted"
    assert (result.trail[0].outcome, result.trail[0].message) == (
        "error",
        "ExpressionError: condition failed: no such member in mapping: 'data'",
    )


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os')", r"expression: The condition calls unknown function\(s\) __import__\."),
        ("payload.__class__", "expression: The condition uses __class__"),
        ("payload.x >", "expression: The condition does not parse"),
        ("secrets == 1", r"expression: The condition reads unknown name\(s\) secrets"),
    ],
)
def test_condition_refuses_unsafe_or_invalid_expressions(expression, message):
    with pytest.raises(InvalidParams, match=f"^Invalid params for hook 'condition': {message}"):
        registry.get("condition").validate_params({"expression": expression})


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({}, {"expression": "This field is required."}),
        ({"expression": ""}, {"expression": "This field may not be blank."}),
        ({"expression": "true", "action": "reject"}, {"action": "Must be one of: drop, hold."}),
        ({"expression": "x" * 1001}, {"expression": "Must be at most 1000 characters."}),
    ],
)
def test_condition_refuses_bad_params(params, errors):
    assert_refused("condition", params, errors)


# --- sinks: which events they take ------------------------------------------------------------


class Notes(hooks.EventSink):
    """Note every event."""

    params_schema = {"type": "object", "properties": {"events": hooks.EVENTS_SCHEMA}, "additionalProperties": False}

    def __init__(self, params=None):
        super().__init__(params)
        self.seen = []

    def handle(self, event, item, result):
        self.seen.append(event)

    def on_pipeline_end(self, item, result):
        self.seen.append("end")


def test_event_sink_takes_every_verdict_event_unless_params_narrow_them():
    every, some = Notes({}), Notes({"events": ["reject", "error"]})
    events = ["on_accept", "on_reject", "on_hold", "on_error", "on_pipeline_end", "on_pipeline_start"]

    assert [pipeline.listens(every, e) for e in events] == [True, True, True, True, True, False]
    assert [pipeline.listens(some, e) for e in events] == [False, True, False, True, True, False]


def test_event_sink_passes_the_event_name_to_handle():
    sink = Notes({})
    step = pipeline.Step(hook=sink, name="notes")
    item = pipeline.Item(payload={})
    result = pipeline.Result(verdict="held", payload={})

    for event in ("on_accept", "on_reject", "on_hold", "on_error", "on_pipeline_end"):
        pipeline.notify([step], event, item, result)

    assert sink.seen == ["accept", "reject", "hold", "error", "end"]


def test_sink_events_param_refuses_unknown_and_repeated_events():
    with pytest.raises(InvalidParams, match=r"events\.0: Must be one of: accept, reject, hold, error\."):
        Notes.validate_params({"events": ["accepted"]})
    with pytest.raises(InvalidParams, match=r"events: Must not list the same item twice\."):
        Notes.validate_params({"events": ["accept", "accept"]})
    with pytest.raises(InvalidParams, match=r"events: Must not be empty\."):
        Notes.validate_params({"events": []})
