"""The five checks of the stash under test: as its hooks (``HOOKS``, which the runner gives that stash), and in
plain Python (``verdict``, which the baseline's tasks run). Plain Python only: the runner imports it before Django
is set up.

    verdict({"text": "hello", "score": 0.5})        # ("accepted", "")
    verdict({"text": "free money", "score": 0.5})   # ("rejected", "text matches free money")

Require ``text``; block "spam" and "scam" anywhere in the payload's text; at most 2,000 bytes of
compact JSON; ``score`` at least 0.2; and no ``free money`` in ``text``.
"""

import json
import math
import re

HOOKS = [
    ("require_fields", {"fields": ["text"]}),
    ("keyword_blocklist", {"words": ["spam", "scam"]}),
    ("max_size", {"max_bytes": 2000}),
    ("min_score", {"field": "score", "min": 0.2}),
    ("regex", {"field": "text", "pattern": r"\bfree money\b", "mode": "must_not_match"}),
]
BLOCKED = re.compile("spam|scam", re.IGNORECASE)
FREE_MONEY = re.compile(r"\bfree money\b")
MAX_BYTES = 2000
MIN_SCORE = 0.2


def strings(value):
    """Every string in a JSON value (file contents in ``b64_file`` left out, as the stash does)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, child in value.items():
            if key != "b64_file":
                yield from strings(child)
    elif isinstance(value, list):
        for child in value:
            yield from strings(child)


def verdict(payload):
    """``(status, reason)`` for ``payload``: the first check that fails rejects it."""
    if payload.get("text") in (None, "", [], {}):
        return "rejected", "missing text"
    if any(BLOCKED.search(text) for text in strings(payload)):
        return "rejected", "blocked word"
    if len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()) > MAX_BYTES:
        return "rejected", "too large"
    score = payload.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or score < MIN_SCORE:
        return "rejected", "score too low"
    if isinstance(payload["text"], str) and FREE_MONEY.search(payload["text"]):
        return "rejected", "text matches free money"
    return "accepted", ""
