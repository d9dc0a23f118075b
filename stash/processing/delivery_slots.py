"""Delivery slots: at most ``STASH_SINK_CONCURRENCY`` deliveries of one hook config run at once.

    with delivery_slot(config_id) as held:
        if not held:
            ...  # every slot is taken: send the delivery again a little later
        deliver(config_id, content_id, event)

A slot is one of the ``cache_slots`` named ``stash:sink-slot:<config>``, so the bound holds across
every sink worker of every machine that shares the cache (Redis; the file cache of the embedded
default shares it between the processes of one machine). The holder gives it back when the delivery
ends, however it ends; a worker killed meanwhile leaves it to expire after ``STASH_SINK_SLOT_SECONDS``.

A cache that fails lets the delivery run without a slot (logged): a receiver may then see more
deliveries at once, but none waits on the cache's account.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings

from stash.processing import cache_slots

logger = logging.getLogger(__name__)


class SlotsTaken(Exception):
    """Every delivery slot of a hook config is taken: the delivery waits and tries again."""


def slots_name(config_id: int) -> str:
    return f"stash:sink-slot:{config_id}"


def slot_key(config_id: int, n: int) -> str:
    return f"{slots_name(config_id)}:{n}"


def take_slot(config_id: int) -> str | None:
    """Take a free slot of ``config_id``: return its key, "" when there is no bound (or the cache
    failed: the delivery runs anyway), or None when every slot is taken."""
    limit = settings.STASH_SINK_CONCURRENCY
    if limit <= 0:
        return ""
    try:
        held = cache_slots.take(slots_name(config_id), limit, settings.STASH_SINK_SLOT_SECONDS)
    except Exception:
        logger.exception("Could not take a delivery slot of hook config %s; delivering without one.", config_id)
        return ""
    return " ".join(held) if held else None


def free_slot(held: str) -> None:
    """Free the slot ``held`` (from ``take_slot``) unless it expired and was taken by another
    delivery since. A cache that fails leaves the key to expire."""
    if not held:
        return
    key, token = held.split(" ")
    try:
        cache_slots.give_back((key, token))
    except Exception:
        logger.exception("Could not free the delivery slot %s; it frees itself when it expires.", key)


@contextmanager
def delivery_slot(config_id: int) -> Iterator[bool]:
    """Hold a slot of hook config ``config_id`` inside the block: True if one was free (or there is
    no bound, or the cache failed), False if every slot is taken (nothing is held then)."""
    held = take_slot(config_id)
    try:
        yield held is not None
    finally:
        if held:
            free_slot(held)
