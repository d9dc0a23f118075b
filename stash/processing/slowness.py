"""Which stashes are slow: those whose hooks took long in a judging message, marked in the cache.

After each judging message, a stash whose hooks took more than ``STASH_SLOW_MESSAGE_SECONDS``
in it (summed over its items) is marked slow for ``SLOW_FOR`` seconds, refreshed by every slow
message after; a message that judged it faster takes the mark down. A stash whose message was
stopped at its time limit is marked too (``mark_stopped``): its hooks hung. Only marked stashes
have their messages take a slot first (``slots``), so a fast stash's message pays one cache read.

The marks live in one cache entry, ``{stash id: until (epoch seconds)}``, read once per message,
shared by every process. Two workers that change it at the same instant may lose one change:
a lost mark is put back by the stash's next slow message, a lost clearing runs out with
``SLOW_FOR``. A cache that fails counts as no stash being slow (messages run as they come).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.core.cache import cache

from stash.models import Content

logger = logging.getLogger(__name__)

#: Seconds a stash stays marked slow after its last slow message.
SLOW_FOR = 300

_KEY = "stash:slow"


def slow_stashes() -> dict[int, float]:
    """The stashes marked slow, with when their mark runs out (one cache read; ``{}`` if it fails)."""
    try:
        marks = cache.get(_KEY)
    except Exception:
        logger.exception("Could not read which stashes are slow; judging as if none were.")
        return {}
    if not marks:
        return {}
    now = time.time()
    return {stash: until for stash, until in marks.items() if until > now}


def stashes_of(ids: Iterable[uuid.UUID | str], wake: int | None, slow: Mapping[int, float]) -> set[int]:
    """The stashes among ``slow`` that a message of ``ids`` (waking ``wake``) judges: ``wake`` names
    its stash; for ids alone, one query, made only when some stash is slow."""
    if not slow:
        return set()
    if wake is not None:
        return {wake} & slow.keys()
    ids = list(ids)
    if not ids:
        return set()
    found = Content.objects.filter(pk__in=ids, stash_id__in=list(slow)).order_by().values_list("stash_id", flat=True)
    return set(found.distinct())


def note(seconds: Mapping[int, float], slow: Mapping[int, float]) -> None:
    """After a message whose stashes' hooks took ``seconds`` (stash id: seconds), mark those past
    ``STASH_SLOW_MESSAGE_SECONDS`` slow and clear those of ``slow`` (the marks read before the
    message) that were fast; a message judging no slow stash and none marked writes nothing."""
    limit = settings.STASH_SLOW_MESSAGE_SECONDS
    marked = {stash for stash, took in seconds.items() if took > limit}
    cleared = {stash for stash, took in seconds.items() if took <= limit and stash in slow}
    if marked or cleared:
        _change(marked, cleared)


def mark_stopped(stopped_token: uuid.UUID) -> None:
    """Mark slow the stashes of a message stopped at its time limit (its items still claimed under
    ``stopped_token``): one query, on the recovery's path only."""
    stashes = set(
        Content.objects.filter(lease_token=stopped_token).order_by().values_list("stash_id", flat=True).distinct()
    )
    if stashes:
        _change(stashes, set())


def clear() -> None:
    """Take every mark down (each stash is fast until its next slow message)."""
    try:
        cache.delete(_KEY)
    except Exception:
        logger.exception("Could not clear the slow stashes' marks.")


def _change(marked: set[int], cleared: set[int]) -> None:
    now = time.time()
    try:
        before = {stash: until for stash, until in (cache.get(_KEY) or {}).items() if until > now}
        marks = {stash: until for stash, until in before.items() if stash not in cleared}
        marks.update(dict.fromkeys(marked, now + SLOW_FOR))
        if marks:
            cache.set(_KEY, marks, timeout=SLOW_FOR)
        else:
            cache.delete(_KEY)
    except Exception:
        logger.exception("Could not mark stashes %s slow (%s fast again).", sorted(marked), sorted(cleared))
        return
    for stash in sorted(marked - before.keys()):
        logger.info(
            "Stash %s is slow: its messages take one of its %d slot(s) first.", stash, settings.STASH_STASH_CONCURRENCY
        )
