"""Statements of reasons as the DSA Transparency Database takes them: its fields and enum keys.

``to_dsa(row)`` maps one statement (plain data: the fields of ``Statement`` plus ``content_id`` and
``content_created_at``) to the database's statement; ``SCHEMA`` is the JSON Schema a line of
``stash_statements --format dsa`` follows, written from the database's validation rules
(``StatementStoreRequest``, the API as of July 2025)::

    line = to_dsa({"id": 7, "content_id": "…", "restriction": "removed", "ground": "terms", …})
    errors(line)  # [] when it would be accepted as far as its rules go

Submitting the lines to the Commission's database (its API, its token, ``territorial_scope``) is the
platform's job: nothing here sends anything.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from stash.core import schema_words

#: Where the JSON Schema of one exported line lives.
SCHEMA_PATH = Path(__file__).with_name("dsa_statement.schema.json")

#: A restriction of stash's as the database's ``decision_visibility`` key.
VISIBILITY = {
    "removed": "DECISION_VISIBILITY_CONTENT_REMOVED",
    "disabled": "DECISION_VISIBILITY_CONTENT_DISABLED",
    "demoted": "DECISION_VISIBILITY_CONTENT_DEMOTED",
    "held": "DECISION_VISIBILITY_OTHER",
}
#: What ``DECISION_VISIBILITY_OTHER`` means for a hold.
HELD_VISIBILITY = "Held from view until a person reviews it"
GROUND = {"terms": "DECISION_GROUND_INCOMPATIBLE_CONTENT", "illegal": "DECISION_GROUND_ILLEGAL_CONTENT"}
#: What stash's items are, for ``content_type``: JSON payloads sent by forms and programs.
CONTENT_TYPE = "CONTENT_TYPE_TEXT"
#: stash's decisions are taken on its own initiative: no notice (Art. 16) started them.
SOURCE_TYPE = "SOURCE_VOLUNTARY"
#: The limits of the database's text fields.
FACTS_MAX, EXPLANATION_MAX, GROUND_MAX, URL_MAX = 5000, 2000, 500, 500


def to_dsa(row: Mapping[str, Any]) -> dict[str, Any]:
    """The DSA database's statement for ``row`` (see the module docstring); texts cut to its limits."""
    restriction = row["restriction"]
    statement: dict[str, Any] = {
        "decision_visibility": [VISIBILITY[restriction]],
        "decision_ground": GROUND[row["ground"]],
        "content_type": [CONTENT_TYPE],
        "category": row["category"],
        "content_date": _day(row["content_created_at"]),
        "application_date": _day(row["decided_at"]),
        "decision_facts": _cut(decision_facts(row), FACTS_MAX),
        "source_type": SOURCE_TYPE,
        "automated_detection": "Yes" if row["automated_detection"] else "No",
        "automated_decision": "AUTOMATED_DECISION_FULLY"
        if row["automated_decision"]
        else "AUTOMATED_DECISION_NOT_AUTOMATED",
        "puid": f"{row['content_id']}/{row['id']}",
    }
    if restriction == "held":
        statement["decision_visibility_other"] = HELD_VISIBILITY
    if row.get("ended_at"):
        statement["end_date_visibility_restriction"] = _day(row["ended_at"])
    reference = _cut(row.get("ground_reference") or "Terms of service", GROUND_MAX)
    explanation = _cut(row["text"] or "No explanation given.", EXPLANATION_MAX)
    if row["ground"] == "illegal":
        statement["illegal_content_legal_ground"] = reference
        statement["illegal_content_explanation"] = explanation
    else:
        statement["incompatible_content_ground"] = reference
        statement["incompatible_content_explanation"] = explanation
        statement["incompatible_content_illegal"] = "No"
    url = row.get("ground_url") or ""
    if url and len(url) <= URL_MAX:
        statement["decision_ground_reference_url"] = url
    return statement


def decision_facts(row: Mapping[str, Any]) -> str:
    """The facts and circumstances relied on, in words: the hook, its reason, the field, who decided."""
    facts = row.get("facts") or {}
    parts = []
    if facts.get("hook"):
        parts.append(f"Flagged by the automated check {facts['hook']!r}")
    if facts.get("reason"):
        parts.append(f"reason: {facts['reason']}")
    if facts.get("field"):
        parts.append(f"field: {facts['field']}")
    if facts.get("code"):
        parts.append(f"reason code: {facts['code']}")
    decided = {
        "hook": "Decided automatically by the check.",
        "expiry": "Decided automatically: no person reviewed it within the review deadline.",
        "reviewer": "Decided by a person reviewing it.",
        "appeal": "Decided by a person on the submitter's appeal.",
    }.get(row.get("kind") or "", "")
    if facts.get("note"):
        decided += f" Note: {facts['note']}"
    return "; ".join(parts) + (". " if parts else "") + decided


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of one exported line."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def errors(statement: Mapping[str, Any]) -> list[str]:
    """What in ``statement`` breaks ``schema()``, one sentence each, in the words of every schema
    error (``schema_words``: ``puid: This field is required.``); empty: it follows it."""
    validator = jsonschema.Draft202012Validator(schema(), format_checker=jsonschema.FormatChecker())
    found = sorted(validator.iter_errors(statement), key=lambda error: list(error.absolute_path))
    worded = (schema_words.worded(error, "statement") for error in found)
    return [f"{where}: {words}" for where, words in worded]


def _day(value: datetime | str) -> str:
    """A date as the database takes it: YYYY-MM-DD."""
    if isinstance(value, str):
        return value[:10]
    return value.strftime("%Y-%m-%d")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
