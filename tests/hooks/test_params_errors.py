"""Params errors in the form's own words, on the field they are about, alike for every face."""

import pytest
from django.core.exceptions import ValidationError

from stash import hooks
from stash.core.exceptions import InvalidParams
from stash.models import HookConfig


class Tagged(hooks.Filter):
    """Keep everything; its params only check the words."""

    params_schema = {
        "type": "object",
        "properties": {
            "tag": {"type": "string", "minLength": 6},
            "token": {"type": "string", "minLength": 16, "writeOnly": True},
            "level": {"type": "integer", "minimum": 1, "maximum": 5},
            "fields": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
            "mode": {"enum": ["strict", "lax"]},
        },
        "required": ["fields"],
        "additionalProperties": False,
    }

    def filter(self, item):
        return self.keep()


@pytest.fixture
def tagged(register_temporarily):
    register_temporarily("test_tagged", Tagged)
    return Tagged


def errors(hook, params):
    with pytest.raises(InvalidParams) as caught:
        hook.validate_params(params)
    return caught.value.errors


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, {"fields": "This field is required."}),  # on the field, not on the params as a whole
        ({"fields": ["a"], "tag": "short"}, {"tag": "Must be at least 6 characters."}),
        ({"fields": ["a"], "level": 9}, {"level": "Must be at most 5."}),
        ({"fields": ["a"], "level": "3"}, {"level": "Must be a whole number."}),
        ({"fields": []}, {"fields": "Must not be empty."}),
        ({"fields": ["a", "a"]}, {"fields": "Must not list the same item twice."}),
        ({"fields": ["a"], "mode": "loud"}, {"mode": "Must be one of: strict, lax."}),
        ({"fields": ["a"], "colour": "red"}, {"params": "Not a param of this hook: colour."}),
    ],
)
def test_each_rule_is_said_in_the_forms_words_on_its_field(tagged, params, expected):
    assert errors(tagged, params) == expected


def test_a_refused_secret_is_never_quoted(tagged):
    said = errors(tagged, {"fields": ["a"], "token": "my-short-secret"})
    assert said == {"token": "Must be at least 16 characters."}
    assert "my-short-secret" not in str(said)


@pytest.mark.django_db
def test_the_models_full_clean_says_the_same_words(tagged, make_stash):
    config = HookConfig(stash=make_stash("audit"), hook="test_tagged", params={"fields": ["a"], "tag": "short"})
    with pytest.raises(ValidationError) as caught:
        config.full_clean()
    assert caught.value.message_dict["params"] == [
        "Invalid params for hook 'test_tagged': tag: Must be at least 6 characters."
    ]
