"""Back-pressure: a stash with ``max_waiting`` takes no new item while that many wait to be judged.

Every way in asks here: ``Content.save`` for a new item (the ORM, the API, the forms, the admin),
``processing.submit_many`` for a bulk call as a whole::

    backpressure.check_room(stash)              # StashFull when it is full
    backpressure.check_room(stash, adding=500)  # a bulk call: all of it or nothing

The count is kept in the cache for a second: a save reads one cache entry, and once a second one
of them counts again, reading at most ``max_waiting + 1`` index entries (the ``(stash, status)``
index; never a ``COUNT(*)`` of the stash). Each item taken adds to the cached figure, so between
counts a stash refuses early rather than late. ``StashFull`` carries ``retry_after``, the
seconds the API and forms answer in ``Retry-After``; each refusal is counted for ``/metrics``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.core.cache import cache
from django.utils.translation import gettext as _

from stash.core.exceptions import StashFull

if TYPE_CHECKING:
    from stash.models.stashes import Stash

logger = logging.getLogger(__name__)

#: The statuses of items that wait to be judged.
WAITING = ("pending", "processing")
#: How long a count is kept before the next save counts again.
COUNT_SECONDS = 1
#: What a refused submitter is told to wait (``Retry-After``).
RETRY_AFTER_SECONDS = 5


def _count_key(stash_id: int) -> str:
    return f"stash:waiting-count:{stash_id}"


def refused_key(stash_id: int) -> str:
    """The cache key of the count of submissions ``stash_id`` refused (``/metrics``)."""
    return f"stash:refused-full:{stash_id}"


def waiting(stash: Stash) -> int:
    """How many items of ``stash`` wait to be judged, counted up to ``max_waiting + 1`` (a second old
    at most, plus what was taken since); 0 for a stash with no ``max_waiting``."""
    limit = stash.max_waiting
    if limit is None:
        return 0
    try:
        count = cache.get(_count_key(stash.pk))
    except Exception:  # a cache that cannot answer does not stop submissions: count instead
        logger.warning("Could not read the waiting count of stash %s from the cache.", stash.pk, exc_info=True)
        return _count(stash, limit)
    if count is None:
        count = _count(stash, limit)
        try:
            cache.add(_count_key(stash.pk), count, COUNT_SECONDS)
        except Exception:
            logger.warning("Could not cache the waiting count of stash %s.", stash.pk, exc_info=True)
    return count


def _count(stash: Stash, limit: int) -> int:
    return stash.contents.filter(status__in=WAITING)[: limit + 1].count()


def check_room(stash: Stash, adding: int = 1, take: bool = True) -> None:
    """Raise ``StashFull`` if ``stash`` has a ``max_waiting`` and taking ``adding`` more items would
    pass it; else count them as waiting (unless ``take`` is False: a form asking before its save,
    which asks again). A stash with no ``max_waiting`` costs nothing."""
    if stash.max_waiting is None:
        return
    if waiting(stash) + adding > stash.max_waiting:
        _count_refusal(stash.pk)
        raise StashFull(
            _(
                "The stash %(slug)s has %(max)s items waiting to be judged (max_waiting): "
                "try again in %(seconds)d seconds."
            )
            % {"slug": stash.slug, "max": f"{stash.max_waiting:,}", "seconds": RETRY_AFTER_SECONDS},
            retry_after=RETRY_AFTER_SECONDS,
        )
    if not take:
        return
    try:
        cache.incr(_count_key(stash.pk), adding)
    except ValueError:
        pass  # the count ran out meanwhile: the next save counts again
    except Exception:
        logger.warning("Could not add to the waiting count of stash %s.", stash.pk, exc_info=True)


def _count_refusal(stash_id: int) -> None:
    key = refused_key(stash_id)
    try:
        if not cache.add(key, 1, None):
            cache.incr(key)
    except Exception:
        logger.warning("Could not count a refused submission of stash %s.", stash_id, exc_info=True)


def refused(stash_ids: list[int]) -> dict[int, int]:
    """Submissions refused for ``max_waiting`` since the cache was last emptied, by stash id."""
    keys = {refused_key(stash_id): stash_id for stash_id in stash_ids}
    try:
        found = cache.get_many(list(keys))
    except Exception:
        logger.warning("Could not read the refused submissions from the cache.", exc_info=True)
        return {}
    return {keys[key]: int(value) for key, value in found.items()}
