"""Built-in transforms: each returns a changed payload that later hooks see and the stash keeps.

A transform gets a copy of the payload of its own (the pipeline makes it), so it may change
it in place and return it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Mapping

from stash.core import pipeline
from stash.core.registry import register
from stash.hooks.base import Transform
from stash.hooks.paths import MISSING, assign, lookup, map_texts_at, remove
from stash.hooks.patterns import compile_pattern

_PATHS = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
_FIELDS = {**_PATHS, "description": "Dotted paths to change (default: every text in the payload)."}

# Characters that show nothing but split words ("sp\u200bam"): zero-width spaces and joiners
# that are not emoji glue, the soft hyphen, the byte-order mark and direction controls.
_INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u200b\u200c\u200e\u200f\u2060\ufeff\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
)


@register("normalize_text")
class NormalizeText(Transform):
    """Normalize text: Unicode NFKC, invisible characters removed, whitespace collapsed, optionally lowercased."""

    params_schema = {
        "type": "object",
        "properties": {
            "fields": _FIELDS,
            "whitespace": {
                "enum": ["collapse", "trim", "keep"],
                "default": "collapse",
                "description": "collapse: runs of whitespace become one space, ends trimmed; "
                "trim: ends only; keep: as is.",
            },
            "lowercase": {"type": "boolean", "default": False},
            "remove_invisible": {
                "type": "boolean",
                "default": True,
                "description": "Remove zero-width and direction-control characters.",
            },
        },
        "additionalProperties": False,
    }

    def transform(self, item: pipeline.Item) -> dict[str, Any]:
        return map_texts_at(dict(item.payload), self.params.get("fields"), self.normalize)

    def normalize(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text)
        if self.params.get("remove_invisible", True):
            text = text.translate(_INVISIBLE)
        whitespace = self.params.get("whitespace", "collapse")
        if whitespace == "collapse":
            text = " ".join(text.split())
        elif whitespace == "trim":
            text = text.strip()
        return text.lower() if self.params.get("lowercase") else text


# RE2 patterns (linear time on any input). A run of digits, optionally after "+" or "(" and
# grouped by spaces, dots, dashes or parentheses, is then judged by its digits: 13 to 19 that
# pass the Luhn check make a card; 9 to 15 make a phone number; anything else is left alone.
_EMAIL = r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
_NUMBER = r"(?:\+\d|\(\d|\b\d)(?:[ .\-]?\(?\d\)?)*\b"
# A date and hour ("2024-01-02 12:30") has as many digits as a phone number: left alone.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
PII_KINDS = ("email", "card", "phone")


def luhn_valid(digits: str) -> bool:
    """True if the digit string passes the Luhn check that card numbers carry."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


@register("redact_pii")
class RedactPii(Transform):
    """Mask email addresses, card numbers (Luhn-checked) and phone numbers in text."""

    params_schema = {
        "type": "object",
        "properties": {
            "kinds": {
                "type": "array",
                "items": {"enum": list(PII_KINDS)},
                "minItems": 1,
                "uniqueItems": True,
                "default": list(PII_KINDS),
                "description": "What to mask: email, card, phone.",
            },
            "fields": _FIELDS,
        },
        "additionalProperties": False,
    }

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        self._kinds = frozenset(self.params.get("kinds", PII_KINDS))
        self._email = compile_pattern(_EMAIL)
        self._number = compile_pattern(_NUMBER)

    def transform(self, item: pipeline.Item) -> dict[str, Any]:
        return map_texts_at(dict(item.payload), self.params.get("fields"), self.redact)

    def redact(self, text: str) -> str:
        if "email" in self._kinds:
            text = self._email.sub("[email]", text)
        if self._kinds & {"card", "phone"}:
            text = self._number.sub(self._mask_number, text)
        return text

    def _mask_number(self, match: Any) -> str:
        number = match.group(0)
        digits = "".join(c for c in number if c.isdigit())
        if "card" in self._kinds and 13 <= len(digits) <= 19 and luhn_valid(digits):
            return "[card]"
        if "phone" in self._kinds and 9 <= len(digits) <= 15 and not _DATE.match(number):
            return "[phone]"
        return number


@register("set_fields")
class SetFields(Transform):
    """Set fields to fixed values (dotted paths; objects on the way are created)."""

    params_schema = {
        "type": "object",
        "properties": {
            "values": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {
                    "minLength": 1,
                    "pattern": r"^[^.]+(\.[^.]+)*$",
                    "description": "A dotted path, e.g. meta.reviewed.",
                },
                "description": 'Dotted path -> JSON value, e.g. {"meta.reviewed": false}.',
            },
            "overwrite": {
                "type": "boolean",
                "default": True,
                "description": "Replace a value already there (otherwise only fill in missing ones).",
            },
        },
        "required": ["values"],
        "additionalProperties": False,
    }

    def transform(self, item: pipeline.Item) -> dict[str, Any]:
        """Raises ``ValueError`` when a path runs through a value that is not an object."""
        payload = dict(item.payload)
        overwrite = self.params.get("overwrite", True)
        for path, value in self.params["values"].items():
            if overwrite or lookup(payload, path) is MISSING:
                assign(payload, path, value)
        return payload


@register("drop_fields")
class DropFields(Transform):
    """Remove fields from the payload (dotted paths; absent ones are ignored)."""

    params_schema = {
        "type": "object",
        "properties": {"fields": {**_PATHS, "description": "Dotted paths to remove, e.g. data.internal_id."}},
        "required": ["fields"],
        "additionalProperties": False,
    }

    def transform(self, item: pipeline.Item) -> dict[str, Any]:
        payload = dict(item.payload)
        for path in self.params["fields"]:
            remove(payload, path)
        return payload
