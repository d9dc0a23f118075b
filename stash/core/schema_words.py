"""How a JSON Schema error is said to people: on the field it is about, in a form's own words.

jsonschema says ``'abc' is too short`` and ``'fields' is a required property`` on the object as a
whole, and ``'abc' does not match '^[a-z]+$'``; ``worded`` says ``Must be at least 6 characters.`` on
the field, ``This field is required.`` on ``fields`` and ``Enter a value in the expected format.``
(with the property's ``description``, or else its ``title``, when the schema gives one), as Django's
forms word their own errors. Its words never quote the refused value nor a regular expression; a
rule it has no words for keeps jsonschema's message. A property that is missing, or present where a
``not`` forbids it, is named as the field: ``puid: This field is required.``

One rule words every schema error people see: a hook's params (``hooks.params_errors``, which also
keeps a secret's value out of jsonschema's message), the ``json_schema`` hook's reasons and the check
of a DSA statement (``core.dsa.errors``).

    worded(error, "payload")   # ("sku", "Enter a value in the expected format: Three letters, a dash, a number.")
    worded(error, "statement") # ("puid", "This field is required.")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema  # type: ignore[import-untyped]

#: How a JSON type is named in "Must be …".
TYPES = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


#: Words of a rule: a format string of the rule's ``value``, or a function of the error (None: no
#: words for this error).
Words = str | Callable[[jsonschema.ValidationError], str | None]


def worded(error: jsonschema.ValidationError, whole: str) -> tuple[str, str]:
    """Where ``error`` is (the dotted path of the value; ``whole`` for the instance itself) and what
    it says, as a form says it (``Must be at most 10 items.``); jsonschema's message for a rule
    without words."""
    path, words = placed(error, whole)
    return path, words if words is not None else error.message


def placed(
    error: jsonschema.ValidationError, whole: str, rules: Mapping[str, Words] | None = None
) -> tuple[str, str | None]:
    """``worded``, with None for the words of a rule that has none (in ``rules``, default ``RULES``):
    a missing property is placed on itself (``fields``: ``This field is required.``), any other
    error on the value it refuses."""
    path = [str(part) for part in error.absolute_path]
    if error.validator == "required":
        missing = _missing(error)
        if missing is not None:
            return ".".join([*path, missing]), "This field is required."
    if error.validator == "not":
        forbidden = _forbidden(error)
        if forbidden:
            return ".".join([*path, forbidden[0]]), "This field is not allowed here."
    return ".".join(path) or whole, said(error, RULES if rules is None else rules)


def said(error: jsonschema.ValidationError, rules: Mapping[str, Words]) -> str | None:
    """``error`` in the words ``rules`` give its rule; None for a rule they have none for."""
    words = rules.get(error.validator)
    if isinstance(words, str):
        return words.format(value=error.validator_value)
    return words(error) if words is not None else None


def _missing(error: jsonschema.ValidationError) -> str | None:
    """The property a ``required`` error is about: jsonschema makes one error per missing property."""
    instance = error.instance if isinstance(error.instance, dict) else {}
    names = [name for name in error.validator_value if name not in instance]
    return next((name for name in names if error.message.startswith(repr(name))), names[0] if names else None)


def _forbidden(error: jsonschema.ValidationError) -> list[str]:
    """The properties a ``not`` error is about, when it forbids properties (``{"not": {"required":
    [...]}}``, or an ``anyOf`` of such): those of them the instance has."""
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema = error.validator_value if isinstance(error.validator_value, dict) else {}
    branches = [schema, *schema.get("anyOf", []), *schema.get("oneOf", [])]
    names = [name for branch in branches if isinstance(branch, dict) for name in branch.get("required", [])]
    return [name for name in names if name in instance]


def _min_length(error: jsonschema.ValidationError) -> str:
    value = error.validator_value
    return f"Must be at least {value} character{_s(value)}." if value > 1 else "This field may not be blank."


def _max_length(error: jsonschema.ValidationError) -> str:
    return f"Must be at most {error.validator_value} character{_s(error.validator_value)}."


def _type(error: jsonschema.ValidationError) -> str:
    kinds = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
    return "Must be " + " or ".join(TYPES.get(kind, str(kind)) for kind in kinds) + "."


def _enum(error: jsonschema.ValidationError) -> str:
    return "Must be one of: " + ", ".join(_shown(choice) for choice in error.validator_value) + "."


def _const(error: jsonschema.ValidationError) -> str:
    return f"Must be {_shown(error.validator_value)}."


def _min_items(error: jsonschema.ValidationError) -> str:
    value = error.validator_value
    return f"Must have at least {value} item{_s(value)}." if value > 1 else "Must not be empty."


def _max_items(error: jsonschema.ValidationError) -> str:
    return f"Must have at most {error.validator_value} item{_s(error.validator_value)}."


def _unique_items(error: jsonschema.ValidationError) -> str | None:
    return "Must not list the same item twice." if error.validator_value else None


def _min_properties(error: jsonschema.ValidationError) -> str:
    return f"Must have at least {_entries(error.validator_value)}."


def _max_properties(error: jsonschema.ValidationError) -> str:
    return f"Must have at most {_entries(error.validator_value)}."


def _pattern(error: jsonschema.ValidationError) -> str:
    """The expected format in words: the property's description (or title) if it has one, never the
    regular expression."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    hint = next((str(schema[key]).strip() for key in ("description", "title") if str(schema.get(key, "")).strip()), "")
    if not hint:
        return "Enter a value in the expected format."
    return f"Enter a value in the expected format: {hint}" + ("" if hint.endswith((".", "!", "?")) else ".")


def _contains(error: jsonschema.ValidationError) -> str | None:
    counted = isinstance(error.schema, dict) and ("minContains" in error.schema or "maxContains" in error.schema)
    return None if counted else "Must contain a matching item."


def unknown_keys(error: jsonschema.ValidationError) -> list[str]:
    """The keys an ``additionalProperties`` error refuses: those its schema does not name."""
    if not isinstance(error.instance, dict):
        return []
    allowed = set(error.schema.get("properties", {}))
    return [str(key) for key in error.instance if key not in allowed]


def _additional_properties(error: jsonschema.ValidationError) -> str | None:
    unknown = unknown_keys(error)
    return f"Unexpected field{_s(len(unknown))}: {', '.join(unknown)}." if unknown else None


#: Each rule (a validator's name) with its words.
RULES: dict[str, Words] = {
    "minLength": _min_length,
    "maxLength": _max_length,
    "minimum": "Must be at least {value}.",
    "maximum": "Must be at most {value}.",
    "exclusiveMinimum": "Must be more than {value}.",
    "exclusiveMaximum": "Must be less than {value}.",
    "multipleOf": "Must be a multiple of {value}.",
    "type": _type,
    "enum": _enum,
    "const": _const,
    "minItems": _min_items,
    "maxItems": _max_items,
    "uniqueItems": _unique_items,
    "minProperties": _min_properties,
    "maxProperties": _max_properties,
    "pattern": _pattern,
    "format": "Must be a valid {value}.",
    "additionalProperties": _additional_properties,
    "anyOf": "Must match one of the allowed forms.",
    "oneOf": "Must match exactly one of the allowed forms.",
    "not": "This value is not allowed here.",
    "contains": _contains,
}


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _s(count: Any) -> str:
    return "" if count == 1 else "s"


def _entries(count: Any) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"
