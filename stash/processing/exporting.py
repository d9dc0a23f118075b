"""Exporting a stash's items as JSON Lines, streamed, for systems downstream.

::

    with open("audit.jsonl", "w", encoding="utf-8") as out:
        written = write_jsonl(export_rows(stash, statuses=["accepted"], after=120), out)

One JSON object a line: ``id``, ``stash`` (its slug), ``status``, ``payload``, ``reason``,
``queue_seq``, ``revision``, ``created_at``, ``processed_at`` (ISO 8601, as the API writes them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, TextIO

from django.db.models import QuerySet

from stash.models import Content, Stash

#: Rows fetched from the database at a time: memory holds at most this many payloads.
CHUNK_SIZE = 200

FIELDS = ("id", "stash__slug", "status", "payload", "reason", "queue_seq", "revision", "created_at", "processed_at")


def export_rows(
    stash: Stash, statuses: Iterable[str] | None = None, after: int | None = None
) -> Iterator[dict[str, Any]]:
    """The items of ``stash`` (only those with one of ``statuses``, if given) as plain dicts.

    Accepted items alone are in queue order (``queue_seq``; ``after``: only those numbered after
    it, as the queue API's ``after``); any other selection is in order of creation. Read with
    ``iterator()``: a server-side cursor on PostgreSQL, so memory stays flat however many there are.
    Raises ``ValueError`` if ``after`` is given for a selection other than accepted items.
    """
    for row in _selected(stash, statuses, after).values_list(*FIELDS).iterator(chunk_size=CHUNK_SIZE):
        yield _as_record(row)


def export_count(stash: Stash, statuses: Iterable[str] | None = None, after: int | None = None) -> int:
    """How many items ``export_rows`` would give for the same arguments (a progress bar's total)."""
    return _selected(stash, statuses, after).count()


def _selected(stash: Stash, statuses: Iterable[str] | None, after: int | None) -> QuerySet[Content]:
    statuses = sorted(set(statuses or []))
    queue = statuses == [Content.Status.ACCEPTED]
    if after is not None and not queue:
        raise ValueError("after is a queue number: export accepted items alone to use it.")
    items = Content.objects.filter(stash=stash)
    if statuses:
        items = items.filter(status__in=statuses)
    if after is not None:
        items = items.filter(queue_seq__gt=after)
    return items.order_by("queue_seq", "pk") if queue else items.order_by("created_at", "pk")


def _as_record(row: tuple[Any, ...]) -> dict[str, Any]:
    record = dict(zip(("id", "stash", *FIELDS[2:]), row, strict=True))
    record["id"] = str(record["id"])
    for key in ("created_at", "processed_at"):
        if record[key] is not None:
            record[key] = _iso(record[key])
    return record


def _iso(moment: datetime) -> str:
    """ISO 8601 as DRF writes it (the API's dates): UTC as ``Z``."""
    text = moment.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def write_jsonl(records: Iterable[dict[str, Any]], out: TextIO) -> int:
    """Write each of ``records`` to the text stream ``out`` as one line of JSON; returns how many."""
    count = 0
    for record in records:
        out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        count += 1
    return count
