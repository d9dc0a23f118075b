"""How a params schema's error is worded for people, on the field it is about, in the form's own words.

jsonschema says ``'abc' is too short`` and ``'fields' is a required property`` on the params as a
whole; ``worded`` says ``Must be at least 6 characters.`` on the field, and ``This field is required.``
on ``fields``, as Django's forms word their own errors. Its words never quote the refused value, so
a secret (``writeOnly``) is never shown back; a rule it has no words for keeps jsonschema's message,
without the value when that is a secret's. Every face (the admin, the API's 400, an import's refusal,
a model's ``full_clean``) words these errors through ``Hook.validate_params``, which calls it.

    worded(error, secrets)     # ("fields", "This field is required."), ("secret", "Must be at least 16 characters.")
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import jsonschema  # type: ignore[import-untyped]

# Keywords whose messages name keys only, never a value.
_NAMES_KEYS = frozenset(
    {"required", "additionalProperties", "unevaluatedProperties", "dependentRequired", "dependencies"}
)
#: How a JSON type is named in "Must be …".
_TYPES = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def worded(error: jsonschema.ValidationError, secrets: Collection[str]) -> tuple[str, str]:
    """Where ``error`` is (the dotted path of the param, ``params`` for the whole) and what it says,
    as a form says it (``Must be at most 10 items.``); never the refused value of a secret."""
    path = [str(part) for part in error.absolute_path]
    if error.validator == "required":
        missing = _missing(error)
        if missing is not None:
            return ".".join([*path, missing]), "This field is required."
    said = _said(error)
    if said is None:
        said = _jsonschemas(error, secrets)
    return ".".join(path) or "params", said


def _missing(error: jsonschema.ValidationError) -> str | None:
    """The property a ``required`` error is about: jsonschema makes one error per missing property."""
    instance = error.instance if isinstance(error.instance, dict) else {}
    names = [name for name in error.validator_value if name not in instance]
    return next((name for name in names if error.message.startswith(repr(name))), names[0] if names else None)


def _said(error: jsonschema.ValidationError) -> str | None:
    """``error`` in a form's words, for the rules that have some; None for the others."""
    rule, value = error.validator, error.validator_value
    if rule == "minLength":
        return f"Must be at least {value} character{_s(value)}." if value > 1 else "This field may not be blank."
    if rule == "maxLength":
        return f"Must be at most {value} character{_s(value)}."
    if rule == "minimum":
        return f"Must be at least {value}."
    if rule == "maximum":
        return f"Must be at most {value}."
    if rule == "exclusiveMinimum":
        return f"Must be more than {value}."
    if rule == "exclusiveMaximum":
        return f"Must be less than {value}."
    if rule == "multipleOf":
        return f"Must be a multiple of {value}."
    if rule == "type":
        kinds = value if isinstance(value, list) else [value]
        return "Must be " + " or ".join(_TYPES.get(kind, str(kind)) for kind in kinds) + "."
    if rule == "enum":
        return "Must be one of: " + ", ".join(_shown(choice) for choice in value) + "."
    if rule == "const":
        return f"Must be {_shown(value)}."
    if rule == "minItems":
        return f"Must have at least {value} item{_s(value)}." if value > 1 else "Must not be empty."
    if rule == "maxItems":
        return f"Must have at most {value} item{_s(value)}."
    if rule == "uniqueItems" and value:
        return "Must not list the same item twice."
    if rule == "minProperties":
        return f"Must have at least {value} entr{'y' if value == 1 else 'ies'}."
    if rule == "maxProperties":
        return f"Must have at most {value} entr{'y' if value == 1 else 'ies'}."
    if rule == "pattern":
        return f"Must match the pattern {value}."
    if rule == "format":
        return f"Must be a valid {value}."
    if rule == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        unknown = [key for key in error.instance if key not in allowed]
        if unknown:
            return f"Not a param of this hook: {', '.join(unknown)}."
    return None


def _jsonschemas(error: jsonschema.ValidationError, secrets: Collection[str]) -> str:
    """jsonschema's own message; for an error of a secret param (or of the params that hold one)
    the message without the refused value."""
    path = list(error.absolute_path)
    touches = path[0] in secrets if path else bool(secrets) and _holds(error.instance, secrets)
    if not touches or error.validator in _NAMES_KEYS:
        return error.message
    quoted = repr(error.instance)
    if error.message.startswith(quoted) and quoted not in error.message[len(quoted) :]:
        return error.message[len(quoted) :].strip()  # "<value> is not valid under any of the given schemas"
    return f"breaks the schema's {error.validator!r} rule"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _s(count: Any) -> str:
    return "" if count == 1 else "s"


def _holds(instance: Any, secrets: Collection[str]) -> bool:
    return isinstance(instance, dict) and any(key in instance for key in secrets)
