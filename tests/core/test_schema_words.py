"""Every JSON Schema error people see is said in a form's words, on the field it is about: no
regular expression, no refused value."""

import jsonschema
import pytest

from stash.core import schema_words


def said(schema, instance, whole="payload"):
    errors = jsonschema.Draft202012Validator(schema).iter_errors(instance)
    return [schema_words.worded(error, whole) for error in errors]


@pytest.mark.parametrize(
    ("rule", "value", "words"),
    [
        ({"minLength": 6}, "abc", "Must be at least 6 characters."),
        ({"minLength": 1}, "", "This field may not be blank."),
        ({"maxLength": 1}, "ab", "Must be at most 1 character."),
        ({"minimum": 1}, 0, "Must be at least 1."),
        ({"exclusiveMaximum": 10}, 10, "Must be less than 10."),
        ({"multipleOf": 5}, 7, "Must be a multiple of 5."),
        ({"type": ["integer", "null"]}, "x", "Must be a whole number or null."),
        ({"enum": ["a", 1]}, "b", "Must be one of: a, 1."),
        ({"const": True}, False, "Must be true."),
        ({"minItems": 1}, [], "Must not be empty."),
        ({"maxItems": 2}, [1, 2, 3], "Must have at most 2 items."),
        ({"uniqueItems": True}, [1, 1], "Must not list the same item twice."),
        ({"minProperties": 1}, {}, "Must have at least 1 entry."),
        ({"pattern": "^[a-z]+$"}, "ABC", "Enter a value in the expected format."),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 1.5, "Must match one of the allowed forms."),
        ({"contains": {"const": 1}}, [2], "Must contain a matching item."),
    ],
)
def test_each_rule_has_its_words(rule, value, words):
    assert said({"properties": {"v": rule}}, {"v": value}) == [("v", words)]


def test_a_pattern_is_said_with_the_property_s_description_or_else_its_title_never_the_expression():
    described = {"type": "string", "pattern": "^[a-z]+$", "description": "Lower-case letters", "title": "Tag"}
    titled = {"type": "string", "pattern": "^[a-z]+$", "title": "Tag"}
    schema = {"properties": {"tag": described, "name": titled}}

    assert said(schema, {"tag": "ABC", "name": "ABC"}) == [
        ("tag", "Enter a value in the expected format: Lower-case letters."),
        ("name", "Enter a value in the expected format: Tag."),
    ]


def test_a_missing_field_and_a_forbidden_one_are_named_as_the_field():
    schema = {
        "properties": {"order": {"required": ["sku"], "not": {"anyOf": [{"required": ["gift"]}]}}},
        "required": ["order"],
    }

    assert said(schema, {}) == [("order", "This field is required.")]
    assert said(schema, {"order": {"gift": 1}}) == [
        ("order.sku", "This field is required."),
        ("order.gift", "This field is not allowed here."),
    ]


def test_an_error_of_the_whole_is_on_the_whole_and_an_unknown_field_is_named():
    schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": False}

    assert said(schema, [], whole="statement") == [("statement", "Must be an object.")]
    assert said(schema, {"a": 1, "b": 2, "c": 3}) == [("payload", "Unexpected fields: b, c.")]


def test_a_rule_without_words_keeps_jsonschema_s_message():
    schema = {"properties": {"t": {"dependentRequired": {"a": ["b"]}}}}

    assert said(schema, {"t": {"a": 1}}) == [("t", "'b' is a dependency of 'a'")]
