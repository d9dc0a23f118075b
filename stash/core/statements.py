"""Statements of reasons: what a stash's *policy* says about each reason code, and its checks.

A policy maps the reason codes of a stash's hooks to what its submitter is told::

    {
        "default": {"text": "...", "ground": "terms", "reference": "Terms §4", "url": "https://...",
                    "category": "STATEMENT_CATEGORY_OTHER_VIOLATION_TC", "restriction": "removed"},
        "codes": {"blocked_word": {"text": "...", "category": "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH"}},
    }

An entry of ``codes`` names only what differs from ``default``; ``default`` names only what differs
from ``BUILT_IN``. So every decision has a complete entry (``entry_for``), whatever the policy holds.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

#: The grounds of a decision: the platform's terms (``reference`` names the clause), or the law
#: (``reference`` names the legal ground).
GROUNDS = ("terms", "illegal")
#: What a decision does to the item: a hook's or reviewer's rejection removes, disables or demotes
#: it; a hold keeps it from view until a person decides.
RESTRICTIONS = ("removed", "disabled", "demoted", "held")
#: The categories of the DSA Transparency Database's statements (their enum keys, as its API takes
#: them since July 2025: ``SCOPE_OF_PLATFORM_SERVICE`` became ``OTHER_VIOLATION_TC``).
CATEGORIES = (
    "STATEMENT_CATEGORY_ANIMAL_WELFARE",
    "STATEMENT_CATEGORY_CONSUMER_INFORMATION",
    "STATEMENT_CATEGORY_CYBER_VIOLENCE",
    "STATEMENT_CATEGORY_CYBER_VIOLENCE_AGAINST_WOMEN",
    "STATEMENT_CATEGORY_DATA_PROTECTION_AND_PRIVACY_VIOLATIONS",
    "STATEMENT_CATEGORY_ILLEGAL_OR_HARMFUL_SPEECH",
    "STATEMENT_CATEGORY_INTELLECTUAL_PROPERTY_INFRINGEMENTS",
    "STATEMENT_CATEGORY_NEGATIVE_EFFECTS_ON_CIVIC_DISCOURSE_OR_ELECTIONS",
    "STATEMENT_CATEGORY_NOT_SPECIFIED_NOTICE",
    "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
    "STATEMENT_CATEGORY_PROTECTION_OF_MINORS",
    "STATEMENT_CATEGORY_RISK_FOR_PUBLIC_SECURITY",
    "STATEMENT_CATEGORY_SCAMS_AND_FRAUD",
    "STATEMENT_CATEGORY_SELF_HARM",
    "STATEMENT_CATEGORY_UNSAFE_AND_PROHIBITED_PRODUCTS",
    "STATEMENT_CATEGORY_VIOLENCE",
)
#: The keys an entry may hold, and the longest text each may be.
ENTRY_KEYS = {"text": 2000, "ground": 10, "reference": 500, "url": 500, "category": 100, "restriction": 10}
#: What a decision says when its stash's policy says nothing.
BUILT_IN: dict[str, str] = {
    "text": "Your content was {restriction} because {reason}.",
    "ground": "terms",
    "reference": "Terms of service",
    "url": "",
    "category": "STATEMENT_CATEGORY_OTHER_VIOLATION_TC",
    "restriction": "removed",
}
#: The placeholders an entry's text may use.
PLACEHOLDERS = ("reason", "code", "hook", "field", "restriction", "stash")
MAX_CODES = 500


def policy_errors(policy: Any) -> list[str]:
    """What is wrong with ``policy`` (empty when it is valid), one sentence each."""
    if not isinstance(policy, Mapping):
        return ["The policy must be a JSON object with 'default' and 'codes'."]
    errors = [
        f"Unknown key {key!r}: a policy holds 'default' and 'codes'."
        for key in policy
        if key not in ("default", "codes")
    ]
    if "default" in policy:
        errors += _entry_errors(policy["default"], "default")
    codes = policy.get("codes", {})
    if not isinstance(codes, Mapping):
        errors.append("'codes' must be an object mapping reason codes to entries.")
        return errors
    if len(codes) > MAX_CODES:
        errors.append(f"At most {MAX_CODES} reason codes.")
    for code, entry in codes.items():
        if not isinstance(code, str) or not code.strip() or len(code) > 100:
            errors.append(f"Reason code {code!r} must be 1 to 100 characters.")
            continue
        errors += _entry_errors(entry, f"codes.{code}")
    return errors


def _entry_errors(entry: Any, where: str) -> list[str]:
    if not isinstance(entry, Mapping):
        return [f"{where}: must be an object."]
    errors = []
    for key, value in entry.items():
        if key not in ENTRY_KEYS:
            errors.append(f"{where}: unknown key {key!r} (one of {', '.join(ENTRY_KEYS)}).")
        elif not isinstance(value, str):
            errors.append(f"{where}.{key}: must be text.")
        elif len(value) > ENTRY_KEYS[key]:
            errors.append(f"{where}.{key}: at most {ENTRY_KEYS[key]} characters.")
    if isinstance(entry.get("ground"), str) and entry["ground"] not in GROUNDS:
        errors.append(f"{where}.ground: one of {', '.join(GROUNDS)}.")
    if isinstance(entry.get("restriction"), str) and entry["restriction"] not in RESTRICTIONS:
        errors.append(f"{where}.restriction: one of {', '.join(RESTRICTIONS)}.")
    if isinstance(entry.get("category"), str) and entry["category"] not in CATEGORIES:
        errors.append(f"{where}.category: {entry['category']!r} is not a category of the DSA database.")
    url = entry.get("url")
    if isinstance(url, str) and url and not url.startswith(("https://", "http://")):
        errors.append(f"{where}.url: must start with https:// or http://.")
    text = entry.get("text")
    if isinstance(text, str):
        errors += [f"{where}.text: {problem}" for problem in placeholder_errors(text)]
    return errors


def placeholder_errors(text: str) -> list[str]:
    """What is wrong with the ``{placeholders}`` of ``text``."""
    try:
        names = [name for _, name, _, _ in string.Formatter().parse(text) if name is not None]
    except ValueError as exc:
        return [f"{exc} (write {{{{ and }}}} for a brace)."]
    return [
        f"unknown placeholder {{{name}}} (one of {', '.join('{' + p + '}' for p in PLACEHOLDERS)})."
        for name in names
        if name not in PLACEHOLDERS
    ]


def entry_for(policy: Mapping[str, Any] | None, code: str) -> dict[str, str]:
    """The complete entry for reason ``code``: the code's own keys over the policy's default over ``BUILT_IN``."""
    policy = policy or {}
    entry = dict(BUILT_IN)
    entry.update(policy.get("default") or {})
    entry.update((policy.get("codes") or {}).get(code) or {})
    return entry


def render(text: str, facts: Mapping[str, Any]) -> str:
    """``text`` with its placeholders filled from ``facts`` (a missing fact reads as empty)."""
    return text.format_map({name: str(facts.get(name) or "") for name in PLACEHOLDERS})
