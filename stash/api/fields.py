"""The API's own fields: JSON objects and payloads parsed once, hook params, stash slugs, and strictly typed
JSON strings, booleans and integers; the resource serializers (``serializers``) are made of them."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_slug
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from stash import models, processing
from stash.models import Stash


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        "description": "Any JSON object that every database can store: no NUL character or lone "
        "surrogate in its strings and keys, at most 100 levels deep, no integer of "
        "more than 1000 digits; and at most the stash's max_payload_bytes.",
    }
)
class JSONObjectField(serializers.JSONField):
    """A JSON object that every database can store (``models.unstorable``); ``what`` names it in errors."""

    default_error_messages = {"not_object": "The {what} must be a JSON object, not {type}."}
    what = "payload"

    def to_internal_value(self, data):
        problem = models.unstorable(data, self.what)  # before DRF's check, which only says "not valid JSON"
        if problem:
            raise serializers.ValidationError(problem)
        value = super().to_internal_value(data)
        self.check_object(value)
        return value

    def check_object(self, value):
        if not isinstance(value, dict):
            self.fail("not_object", what=self.what, type=_JSON_TYPES.get(type(value), type(value).__name__))


_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


class PayloadField(JSONObjectField):
    """A JSON object (the payload of an item)."""


class ParsedPayloadField(PayloadField):
    """A JSON object as the JSON parser made it, so only its type is checked here: what else a
    payload must be, ``processing`` checks (``submit``, ``edit_payload``, ``simulate``), walking it once."""

    def to_internal_value(self, data):
        self.check_object(data)
        return data


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        "description": "Settings, checked against the hook's params_schema.",
    }
)
class ParamsField(ParsedPayloadField):
    """A hook config's params: a JSON object; that every database can store them and that they
    fit the hook's schema, ``HookConfig.save`` checks."""

    what = "params"


@extend_schema_field(
    {
        "type": "object",
        "description": "Answers given in place of outside services, by the label (or hook name) of an "
        "asynchronous hook of the stash: the example's run goes on with the answer instead of stopping "
        "where the item would wait.",
        "additionalProperties": {
            "type": "object",
            "properties": {
                "outcome": {"type": "string", "enum": list(models.SERVICE_OUTCOMES)},
                "reason": {"type": "string"},
            },
            "required": ["outcome"],
            "additionalProperties": False,
        },
        "example": {"Vendor": {"outcome": "drop", "reason": "toxic (0.97)"}},
    }
)
class ServiceAnswersField(ParsedPayloadField):
    """A golden example's answers in place of outside services: a JSON object; what each answer
    must be and that it names an asynchronous hook, ``Example.clean`` checks."""

    what = "service_answers"


class StashSlugField(serializers.SlugRelatedField):
    """A stash, named by its slug."""

    default_error_messages = {
        "does_not_exist": "There is no stash {slug_name}={value}.",
        "invalid": "Give the slug of a stash, as a string.",
    }

    def __init__(self, **kwargs):
        if not kwargs.get("read_only"):
            kwargs.setdefault("queryset", Stash.objects.all())
        super().__init__(slug_field="slug", **kwargs)

    def to_internal_value(self, data):
        return super().to_internal_value(self.checked_slug(data))

    def checked_slug(self, data):
        """``data`` if it can name a stash; else the field's error."""
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            validate_slug(data)
        except DjangoValidationError:  # no stash is named so; don't ask (PostgreSQL refuses a NUL in a query)
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return data


class SubmissionStashField(StashSlugField):
    """A stash to submit to, fetched with what submitting needs to know (``processing.submission_stash``)."""

    def to_internal_value(self, data):
        slug = self.checked_slug(data)
        stash = processing.submission_stash(self.context["request"].user, slug, self.context.get("idempotency_key", ""))
        if stash is None:
            self.fail("does_not_exist", slug_name=self.slug_field, value=slug)
        return stash


class JSONTyped:
    """A field that takes only values of its JSON type: DRF's fields would take the number 0 as the
    string "0" or as false, and the string "5" as 5, where the schema says otherwise."""

    json_types: tuple[type, ...] = ()

    def to_internal_value(self, data):
        if not isinstance(data, self.json_types) or (bool not in self.json_types and isinstance(data, bool)):
            self.fail("invalid")
        return super().to_internal_value(data)


class StringField(JSONTyped, serializers.CharField):
    json_types = (str,)


class BooleanField(JSONTyped, serializers.BooleanField):
    json_types = (bool,)


class IntegerField(JSONTyped, serializers.IntegerField):
    json_types = (int,)
