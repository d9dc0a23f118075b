"""Which schemas a generated form shows field by field: the one rule of the admin's and the public form."""

from stash.core import schema_fields


def test_an_object_of_simple_properties_becomes_fields_with_the_keywords_a_form_keeps():
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 9, "pattern": "^a"},
            "level": {"enum": [1, 2]},
            "on": {"enum": [True, False]},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 2},
        },
        "required": ["name", 7],
    }
    assert schema_fields.fields(schema) == {
        "name": {"type": "string", "maxLength": 9},
        "level": {"type": "integer", "enum": [1, 2]},
        "on": {"type": "boolean", "enum": [True, False]},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 2},
    }
    assert schema_fields.required(schema) == {"name"}


def test_what_a_form_cannot_show_faithfully_gets_no_form():
    for schema in (
        None,
        {"type": "array"},
        {"type": "object"},
        {"type": "object", "properties": {"address": {"type": "object"}}},
        {"type": "object", "properties": {"either": {"type": ["string", "number"]}}},
        {"type": "object", "properties": {"grid": {"type": "array", "items": {"type": "array"}}}},
        {"type": "object", "properties": {"mixed": {"enum": [1, "a"]}}},
    ):
        assert schema_fields.fields(schema) is None, schema
