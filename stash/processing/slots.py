"""How many judging processes a slow stash may take at once: its slots, held in the cache.

A judging message of a stash marked slow (``slowness``) first takes one of the stash's
``STASH_STASH_CONCURRENCY`` slots (0: no limit); with none free it is not judged now, and its
caller sends it again a little later (``tasks.process_contents``, ``publishing.defer``), so the
process goes on to other stashes' messages instead of waiting behind the slow hooks. Nothing is
claimed before a slot is taken: the items stay pending, and whichever message claims them first
judges them (a claim is a compare-and-set). A slot is a cache key that runs out after the
message's time limit, so a worker killed while holding one frees it then; a message that ends
gives its slots back. A message of fast stashes takes nothing and pays one cache read::

    with judging_slot(ids, wake, seconds=30) as slot:
        if slot is None:
            ...  # send the message again later
        report = judge(ids, wake)
        slot.done(report)

A cache that fails lets the message run (a slow stash may then take more processes than its
slots, never fewer). With the filesystem cache (one machine) taking a key is not atomic across
processes: a slot is read back after it is taken, which leaves two takers a window of
microseconds, not the length of a message.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings

from stash.processing import cache_slots, slowness
from stash.processing.judging import BatchReport

logger = logging.getLogger(__name__)


@dataclass
class Slot:
    """What a judging message holds while it runs: the slots it took (none for fast stashes or a
    failed cache), and the marks of slow stashes as read before it ran."""

    slow: dict[int, float] = field(default_factory=dict)
    held: list[tuple[str, str]] = field(default_factory=list)  # (cache key, this message's token)

    def done(self, report: BatchReport) -> None:
        """Mark the stashes ``report`` judged slowly slow, and those judged fast no longer so."""
        slowness.note(report.hook_seconds, self.slow)

    def release(self) -> None:
        """Give back the slots still this message's (one that ran out may be another's by now)."""
        for held in self.held:
            try:
                cache_slots.give_back(held)
            except Exception:  # it runs out on its own, after the message's time limit
                logger.exception("Could not give back the judging slot %s.", held[0])
        self.held = []


def take(ids: Iterable[uuid.UUID | str], wake: int | None, seconds: float) -> Slot | None:
    """A slot of each slow stash that the message of ``ids`` (waking ``wake``) judges, held for at
    most ``seconds`` (the message's time limit); None if one has none free (nothing is held then)."""
    slow = slowness.slow_stashes()
    concurrency = settings.STASH_STASH_CONCURRENCY
    slot = Slot(slow=slow)
    if not slow or concurrency <= 0:
        return slot
    try:
        for stash in sorted(slowness.stashes_of(ids, wake, slow)):
            held = cache_slots.take(f"stash:slot:{stash}", concurrency, seconds)
            if held is None:
                slot.release()
                return None
            slot.held.append(held)
    except Exception:
        logger.exception("Could not take a judging slot; judging the message now.")
    return slot


@contextmanager
def judging_slot(ids: Iterable[uuid.UUID | str], wake: int | None, seconds: float) -> Iterator[Slot | None]:
    """``take`` a slot for the block and give it back after it, whatever happens in it."""
    slot = take(ids, wake, seconds)
    try:
        yield slot
    finally:
        if slot is not None:
            slot.release()
