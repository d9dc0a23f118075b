"""Built-in filters on what the payload says: each keeps or drops an item, with a reason code and a message.

Filters that decode files are in ``filetypes``, those that look at earlier items in ``history``
and ``json_schema`` in ``payload_schema``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from stash.core import pipeline
from stash.core.exceptions import ExpressionError
from stash.core.expressions import MAX_LENGTH as MAX_EXPRESSION_LENGTH, compile_condition
from stash.core.registry import register
from stash.hooks.base import Filter
from stash.hooks.paths import MISSING, excerpt, lookup, texts_at
from stash.hooks.patterns import MAX_PATTERN_LENGTH, compile_pattern, pattern_error

_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}


@register("require_fields")
class RequireFields(Filter):
    """Drop content whose payload lacks any of the given fields (dotted paths allowed)."""

    params_schema = {
        "type": "object",
        "properties": {
            "fields": {**_STRINGS, "description": "Fields that must be present, e.g. time or data.user."},
            "allow_empty": {
                "type": "boolean",
                "default": False,
                "description": 'Accept present but empty values (null, "", [], {}).',
            },
        },
        "required": ["fields"],
        "additionalProperties": False,
    }

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        allow_empty = self.params.get("allow_empty", False)
        missing = [f for f in self.params["fields"] if _absent(lookup(item.payload, f), allow_empty)]
        if missing:
            return self.drop(f"missing {', '.join(missing)}", "missing_fields")
        return self.keep()


def _absent(value: Any, allow_empty: bool) -> bool:
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
            "whole_word": {
                "type": "boolean",
                "default": False,
                "description": 'Match whole words only ("spam" does not block "spammer").',
            },
            "fields": {**_STRINGS, "description": "Dotted paths to scan (default: every text in the payload)."},
        },
        "required": ["words"],
        "additionalProperties": False,
    }

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        # Escaped literals only, so Python's engine cannot backtrack badly; its lookaround
        # (which RE2 lacks) gives whole words in any script.
        alternatives = "|".join(re.escape(w) for w in sorted(self.params["words"], key=len, reverse=True))
        if self.params.get("whole_word"):
            alternatives = rf"(?<!\w)(?:{alternatives})(?!\w)"
        self._pattern = re.compile(alternatives, re.IGNORECASE)

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        for path, text in texts_at(item.payload, self.params.get("fields")):
            match = self._pattern.search(text)
            if match:
                return self.drop(f"contains blocked word '{match.group(0).lower()}' in {path}", "blocked_word", path)
        return self.keep()


@register("regex")
class Regex(Filter):
    """Drop content whose field matches, or fails to match, a regular expression (RE2, linear time)."""

    params_schema = {
        "type": "object",
        "properties": {
            "field": {"type": "string", "minLength": 1, "description": "Dotted path of the value, e.g. data.email."},
            "pattern": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_PATTERN_LENGTH,
                "description": "RE2 syntax, searched anywhere in the value: anchor with ^ and $.",
            },
            "mode": {
                "enum": ["must_match", "must_not_match"],
                "default": "must_match",
                "description": "must_match drops what does not match; must_not_match drops what does.",
            },
            "ignore_case": {"type": "boolean", "default": False},
        },
        "required": ["field", "pattern"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        error = pattern_error(params["pattern"], params.get("ignore_case", False))
        return {"pattern": error} if error else {}

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        self._pattern = compile_pattern(self.params["pattern"], self.params.get("ignore_case", False))

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        field, pattern = self.params["field"], self.params["pattern"]
        must_match = self.params.get("mode", "must_match") == "must_match"
        value = lookup(item.payload, field)
        if value is MISSING or value is None:
            # Nothing there cannot match: that fails must_match and satisfies must_not_match.
            return self.drop(f"missing {field}", "missing_field", field) if must_match else self.keep()
        text = _as_text(value)
        if text is None:
            return self.drop(f"{field} is {_json_type(value)}, not text", "wrong_type", field)
        found = self._pattern.search(text)
        if must_match and found is None:
            return self.drop(f"{field} does not match {pattern}", "no_match", field)
        if not must_match and found is not None:
            return self.drop(f"{field} matches {pattern} ('{excerpt(found.group(0))}')", "match", field)
        return self.keep()


def _as_text(value: Any) -> str | None:
    """Strings as they are, numbers as JSON writes them; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    return None


def _json_type(value: Any) -> str:
    for kind, name in (
        (bool, "a boolean"),
        (str, "text"),
        ((int, float), "a number"),
        (dict, "an object"),
        (list, "a list"),
    ):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


@register("max_size")
class MaxSize(Filter):
    """Drop content whose JSON payload is larger than max_bytes."""

    params_schema = {
        "type": "object",
        "properties": {
            "max_bytes": {
                "type": "integer",
                "minimum": 1,
                "description": "Largest payload, in bytes of compact UTF-8 JSON.",
            }
        },
        "required": ["max_bytes"],
        "additionalProperties": False,
    }

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        size = payload_size(item.payload)
        if size > self.params["max_bytes"]:
            return self.drop(f"payload is {size} bytes, over the limit of {self.params['max_bytes']}", "too_large")
        return self.keep()


def payload_size(payload: Any) -> int:
    """Bytes of the payload as compact UTF-8 JSON."""
    return len(json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str).encode())


@register("min_score")
class MinScore(Filter):
    """Drop content whose number at a dotted path is below min or above max (e.g. data.probability)."""

    params_schema = {
        "type": "object",
        "properties": {
            "field": {
                "type": "string",
                "minLength": 1,
                "description": "Dotted path of the score, e.g. data.probability.",
            },
            "min": {"type": "number", "description": "Lowest score kept (inclusive)."},
            "max": {"type": "number", "description": "Highest score kept (inclusive)."},
        },
        "required": ["field"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        if "min" not in params and "max" not in params:
            return {"params": "give min, max or both"}
        if "min" in params and "max" in params and params["min"] > params["max"]:
            return {"max": f"{params['max']} is less than min ({params['min']})"}
        return {}

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        field = self.params["field"]
        value = lookup(item.payload, field)
        if value is MISSING or value is None:
            return self.drop(f"missing {field}", "missing_score", field)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return self.drop(f"{field} is {_json_type(value)}, not a number", "wrong_type", field)
        if not math.isfinite(value):
            return self.drop(f"{field} is {value}, not a finite number", "wrong_type", field)
        low, high = self.params.get("min"), self.params.get("max")
        if low is not None and value < low:
            return self.drop(f"{field} is {value}, below the minimum of {low}", "below_min", field)
        if high is not None and value > high:
            return self.drop(f"{field} is {value}, above the maximum of {high}", "above_max", field)
        return self.keep()


@register("condition")
class Condition(Filter):
    """Drop (or hold) content when a CEL condition over payload and meta holds."""

    params_schema = {
        "type": "object",
        "properties": {
            "expression": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_EXPRESSION_LENGTH,
                "description": "CEL, e.g. has(payload.data) && payload.data.probability > 0.9",
            },
            "action": {
                "enum": ["drop", "hold"],
                "default": "drop",
                "description": "What to do when it holds: reject the item or hold it for review.",
            },
            "reason": {
                "type": "string",
                "maxLength": 200,
                "description": "The reason recorded (default: the expression).",
            },
        },
        "required": ["expression"],
        "additionalProperties": False,
    }

    @classmethod
    def check_params(cls, params: Mapping[str, Any]) -> dict[str, str]:
        try:
            compile_condition(params["expression"])
        except ExpressionError as exc:
            return {"expression": str(exc)}
        return {}

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        self._holds = compile_condition(self.params["expression"])

    def filter(self, item: pipeline.Item) -> pipeline.Decision:
        """Raises ``ExpressionError`` if the expression fails on this item (a missing field: use has())."""
        if not self._holds(item.as_context()):
            return self.keep()
        reason = self.params.get("reason") or f"condition holds: {self.params['expression']}"
        if self.params.get("action", "drop") == "hold":
            return self.hold(reason, "condition")
        return self.drop(reason, "condition")
