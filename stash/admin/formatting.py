"""How the admin writes times, rates and verdicts: ``358 µs``, ``1.2 s``, ``12%``, a badge with its word.

    duration(0.358)          # "358 µs"  (durations are stored in milliseconds)
    duration(1234.5)         # "1.2 s"
    age(185)                 # "3 min 5 s"
    percent(0.125)           # "12%"
    badge("held")            # <span class="stash-badge stash-badge-held">held for review</span>
    pretty_json({"n": 1})    # '{\n  "n": 1\n}'

A badge always carries its word: the colour only repeats what the text says.
"""

from __future__ import annotations

import json
from typing import Any

from django.utils.html import format_html
from django.utils.safestring import SafeString

from stash.models import Content

#: What nothing measured looks like.
NONE = "–"

# Words a badge shows for what is not an item's status (a step's outcome in a trail, a verdict).
_STATUS_WORDS = dict(Content.Status.choices)


def duration(ms: float | None) -> str:
    """A duration given in milliseconds, in the unit that reads best: µs, ms, s, min, h.

    ``358 µs``, ``2.5 ms``, ``42 ms``, ``1.2 s``, ``12 s``, ``3 min 5 s``, ``2 h 5 min``;
    None (nothing measured) is ``–``. Each unit is chosen after rounding: 999.6 ms is ``1.0 s``.
    """
    if ms is None:
        return NONE
    ms = max(float(ms), 0.0)
    if round(ms * 1000) < 1000:
        return f"{round(ms * 1000)} µs"
    if round(ms) < 1000:
        return _short(ms, "ms")
    if round(ms / 1000) < 60:
        return _short(ms / 1000, "s")
    seconds = round(ms / 1000)
    if seconds < 3600:
        return _two_units(seconds, "min", "s")
    return _two_units(round(seconds / 60), "h", "min")


def _short(value: float, unit: str) -> str:
    """One decimal below 10, whole numbers from 10 up."""
    return f"{value:.1f} {unit}" if round(value, 1) < 10 else f"{round(value)} {unit}"


def _two_units(amount: int, big: str, small: str) -> str:
    whole, rest = divmod(amount, 60)
    return f"{whole} {big} {rest} {small}" if rest else f"{whole} {big}"


def age(seconds: float | None) -> str:
    """How long something has waited, given in seconds: ``3 min 5 s``."""
    return NONE if seconds is None else duration(seconds * 1000)


def percent(rate: float | None) -> str:
    """A rate between 0 and 1 as a percentage: ``0%``, ``<0.1%``, ``0.4%``, ``12%``; None is ``–``."""
    if rate is None:
        return NONE
    value = rate * 100
    if value == 0:
        return "0%"
    if value < 0.05:
        return "<0.1%"
    return f"{value:.1f}%" if round(value, 1) < 10 else f"{round(value)}%"


def badge(value: str, label: str | None = None) -> SafeString:
    """An item's status, a verdict or a step's outcome as a coloured badge that says it in words."""
    return format_html(
        '<span class="stash-badge stash-badge-{}">{}</span>',
        value,
        label if label is not None else _STATUS_WORDS.get(value, value),
    )


def pretty_json(value: Any) -> str:
    """A JSON value as indented text (a template escapes it like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False)
