"""Built-in filters and the hook base class: verdicts, edge cases and params checks. No database."""
import json

import pytest

from stash import hooks, pipeline, registry
from stash.exceptions import InvalidParams
from stash.hooks.filters import payload_size


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
    with pytest.raises(InvalidParams, match=r"Additional properties are not allowed \('x' was unexpected\)"):
        Undocumented.validate_params({"x": 1})


def test_invalid_params_are_keyed_by_field_path():
    with pytest.raises(InvalidParams) as caught:
        Documented.validate_params({"limit": "3", "mode": "loud", "words": ["ok", 5]})

    assert caught.value.errors == {
        "limit": "'3' is not of type 'integer'",
        "mode": "'loud' is not one of ['strict', 'lax']",
        "words.1": "5 is not of type 'string'",
    }
    assert str(caught.value).startswith("Invalid params for hook ")


def test_invalid_params_message_names_the_registered_hook():
    with pytest.raises(InvalidParams, match=r"^Invalid params for hook 'max_size': max_bytes: 0 is less than"):
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
    assert kept(build("require_fields", {"fields": ["data.time"], "allow_empty": True})
                .filter(pipeline.Item(payload={"data": {"time": None}})))


def test_require_fields_in_a_pipeline_rejects_with_reason():
    hook = build("require_fields", {"fields": ["time"]})
    step = pipeline.Step(hook=hook, name="require_fields", config_id=4)

    result = pipeline.Pipeline([step]).run(pipeline.Item(payload={"text": "hi"}))

    assert (result.verdict, result.reason, result.code, result.decided_by) == (
        "rejected", "missing time", "missing_fields", 4)


@pytest.mark.parametrize(("params", "errors"), [
    ({}, {"params": "'fields' is a required property"}),
    ({"fields": "time"}, {"fields": "'time' is not of type 'array'"}),
    ({"fields": []}, {"fields": "[] should be non-empty"}),
    ({"fields": [""]}, {"fields.0": "'' should be non-empty"}),
    ({"fields": ["ok", 3]}, {"fields.1": "3 is not of type 'string'"}),
    ({"fields": ["a"], "allow_empty": "yes"}, {"allow_empty": "'yes' is not of type 'boolean'"}),
    ({"fields": ["a"], "extra": 1}, {"params": "Additional properties are not allowed ('extra' was unexpected)"}),
    (None, {"params": "None is not of type 'object'"}),
    (["time"], {"params": "['time'] is not of type 'object'"}),
])
def test_require_fields_refuses_bad_params(params, errors):
    with pytest.raises(InvalidParams, match="^Invalid params for hook 'require_fields': ") as caught:
        registry.get("require_fields").validate_params(params)

    assert caught.value.errors == errors


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
        "contains blocked word 'spam' in t")
    assert judge(build("keyword_blocklist", {"words": ["SpAm"]}), {"t": "spam"}).action == "drop"
    assert judge(build("keyword_blocklist", {"words": ["ÉCOLE"]}), {"t": "une école"}).reason == (
        "contains blocked word 'école' in t")


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
        "contains blocked word 'spam' in files.0.name")


def test_blocklist_huge_text():
    hook = build("keyword_blocklist", {"words": ["needle"], "whole_word": True})

    assert kept(judge(hook, {"t": "hay " * 250_000}))
    assert judge(hook, {"t": "hay " * 250_000 + "needle"}).reason == "contains blocked word 'needle' in t"


def test_blocklist_empty_payload_is_kept():
    assert kept(judge(build("keyword_blocklist", {"words": ["spam"]}), {}))


@pytest.mark.parametrize(("params", "errors"), [
    ({}, {"params": "'words' is a required property"}),
    ({"words": []}, {"words": "[] should be non-empty"}),
    ({"words": "spam"}, {"words": "'spam' is not of type 'array'"}),
    ({"words": ["spam", ""]}, {"words.1": "'' should be non-empty"}),
    ({"words": [None]}, {"words.0": "None is not of type 'string'"}),
    ({"words": ["spam"], "whole_word": 1}, {"whole_word": "1 is not of type 'boolean'"}),
    ({"words": ["spam"], "case_sensitive": True},
     {"params": "Additional properties are not allowed ('case_sensitive' was unexpected)"}),
])
def test_blocklist_refuses_bad_params(params, errors):
    with pytest.raises(InvalidParams, match="^Invalid params for hook 'keyword_blocklist': ") as caught:
        registry.get("keyword_blocklist").validate_params(params)

    assert caught.value.errors == errors


def test_blocklist_reports_every_bad_field():
    with pytest.raises(InvalidParams, match="whole_word: .*; words.0: ") as caught:
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


@pytest.mark.parametrize(("params", "errors"), [
    ({}, {"params": "'max_bytes' is a required property"}),
    ({"max_bytes": 0}, {"max_bytes": "0 is less than the minimum of 1"}),
    ({"max_bytes": -5}, {"max_bytes": "-5 is less than the minimum of 1"}),
    ({"max_bytes": 1.5}, {"max_bytes": "1.5 is not of type 'integer'"}),
    ({"max_bytes": "100"}, {"max_bytes": "'100' is not of type 'integer'"}),
    ({"max_bytes": True}, {"max_bytes": "True is not of type 'integer'"}),
    ({"max_bytes": None}, {"max_bytes": "None is not of type 'integer'"}),
    ({"max_bytes": 10, "min_bytes": 1}, {"params": "Additional properties are not allowed ('min_bytes' was unexpected)"}),
])
def test_max_size_refuses_bad_params(params, errors):
    with pytest.raises(InvalidParams, match="^Invalid params for hook 'max_size': ") as caught:
        registry.get("max_size").validate_params(params)

    assert caught.value.errors == errors
