"""How a params schema's error is worded for people, on the field it is about, in the form's own words.

The words are ``core.schema_words``' (the one rule for every schema error people see): ``Must be at
least 6 characters.`` on the field, ``This field is required.`` on ``fields``; an unknown param is
``Not a param of this hook: colour.``. Its words never quote the refused value, so a secret
(``writeOnly``) is never shown back; a rule it has no words for keeps jsonschema's message, without
the value when that is a secret's. Every face (the admin, the API's 400, an import's refusal, a
model's ``full_clean``) words these errors through ``Hook.validate_params``, which calls it.

    worded(error, secrets)     # ("fields", "This field is required."), ("secret", "Must be at least 16 characters.")
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from stash.core import schema_words

# Keywords whose messages name keys only, never a value.
_NAMES_KEYS = frozenset(
    {"required", "additionalProperties", "unevaluatedProperties", "dependentRequired", "dependencies"}
)


def _not_a_param(error: jsonschema.ValidationError) -> str | None:
    unknown = schema_words.unknown_keys(error)
    return f"Not a param of this hook: {', '.join(unknown)}." if unknown else None


#: The words of each rule for params: the schema's, an unknown key being a param.
RULES = {**schema_words.RULES, "additionalProperties": _not_a_param}


def worded(error: jsonschema.ValidationError, secrets: Collection[str]) -> tuple[str, str]:
    """Where ``error`` is (the dotted path of the param, ``params`` for the whole) and what it says,
    as a form says it (``Must be at most 10 items.``); never the refused value of a secret."""
    path, words = schema_words.placed(error, "params", RULES)
    return path, words if words is not None else _jsonschemas(error, secrets)


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


def _holds(instance: Any, secrets: Collection[str]) -> bool:
    return isinstance(instance, dict) and any(key in instance for key in secrets)
