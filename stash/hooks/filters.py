"""Built-in filters: each keeps or drops an item, with a reason code and a message."""
from __future__ import annotations

import json
import re

from ..registry import register
from .base import Filter
from .paths import MISSING, lookup, texts

_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}


@register("require_fields")
class RequireFields(Filter):
    """Drop content whose payload lacks any of the given fields (dotted paths allowed)."""

    params_schema = {
        "type": "object",
        "properties": {
            "fields": {**_STRINGS, "description": "Fields that must be present, e.g. time or data.user."},
            "allow_empty": {"type": "boolean", "default": False,
                            "description": "Accept present but empty values (null, \"\", [], {})."},
        },
        "required": ["fields"],
        "additionalProperties": False,
    }

    def filter(self, item):
        allow_empty = self.params.get("allow_empty", False)
        missing = [f for f in self.params["fields"] if _absent(lookup(item.payload, f), allow_empty)]
        if missing:
            return self.drop(f"missing {', '.join(missing)}", "missing_fields")
        return self.keep()


def _absent(value, allow_empty):
    if value is MISSING:
        return True
    return not allow_empty and value in (None, "", [], {})


@register("keyword_blocklist")
class KeywordBlocklist(Filter):
    """Drop content whose text contains a blocked word or phrase (case-insensitive)."""

    params_schema = {
        "type": "object",
        "properties": {
            "words": {**_STRINGS, "description": "Words or phrases to block."},
            "whole_word": {"type": "boolean", "default": False,
                           "description": "Match whole words only (\"spam\" does not block \"spammer\")."},
        },
        "required": ["words"],
        "additionalProperties": False,
    }

    def __init__(self, params=None):
        super().__init__(params)
        alternatives = "|".join(re.escape(w) for w in sorted(self.params["words"], key=len, reverse=True))
        if self.params.get("whole_word"):
            alternatives = rf"(?<!\w)(?:{alternatives})(?!\w)"
        self._pattern = re.compile(alternatives, re.IGNORECASE)

    def filter(self, item):
        for path, text in texts(item.payload):
            match = self._pattern.search(text)
            if match:
                return self.drop(f"contains blocked word '{match.group(0).lower()}' in {path}", "blocked_word")
        return self.keep()


@register("max_size")
class MaxSize(Filter):
    """Drop content whose JSON payload is larger than max_bytes."""

    params_schema = {
        "type": "object",
        "properties": {"max_bytes": {"type": "integer", "minimum": 1,
                                     "description": "Largest payload, in bytes of compact UTF-8 JSON."}},
        "required": ["max_bytes"],
        "additionalProperties": False,
    }

    def filter(self, item):
        size = payload_size(item.payload)
        if size > self.params["max_bytes"]:
            return self.drop(f"payload is {size} bytes, over the limit of {self.params['max_bytes']}", "too_large")
        return self.keep()


def payload_size(payload) -> int:
    """Bytes of the payload as compact UTF-8 JSON."""
    return len(json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str).encode())
