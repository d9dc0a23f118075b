"""How a params schema's error is worded for people: never with the value of a secret param.

jsonschema quotes the value it refused (``'abc' is too short``); of a secret (``writeOnly``) that
would show the secret back in the admin, the API's 400, an import's refusal. ``worded`` says the
rule instead (``must be at least 16 characters long``). Every face words these errors through
``Hook.validate_params``, which calls it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import jsonschema  # type: ignore[import-untyped]

# Keywords whose messages name keys only, never a value.
_NAMES_KEYS = frozenset(
    {"required", "additionalProperties", "unevaluatedProperties", "dependentRequired", "dependencies"}
)


def worded(error: jsonschema.ValidationError, secrets: Collection[str]) -> str:
    """``error``'s message; for an error of a secret param (or of the params that hold one) the
    message without the refused value: the rule it breaks."""
    path = list(error.absolute_path)
    touches = path[0] in secrets if path else bool(secrets) and _holds(error.instance, secrets)
    if not touches or error.validator in _NAMES_KEYS:
        return error.message
    if error.validator == "minLength":
        return f"must be at least {error.validator_value} characters long"
    if error.validator == "maxLength":
        return f"must be at most {error.validator_value} characters long"
    quoted = repr(error.instance)
    if error.message.startswith(quoted) and quoted not in error.message[len(quoted) :]:
        return error.message[len(quoted) :].strip()  # jsonschema's "<value> is not of type 'string'"
    return f"breaks the schema's {error.validator!r} rule"


def _holds(instance: Any, secrets: Collection[str]) -> bool:
    return isinstance(instance, dict) and any(key in instance for key in secrets)
