"""Counted slots in the shared cache: at most ``limit`` holders of one name at once, over every
process and machine that shares the cache.

    held = take("stash:sink-slot:7", limit=4, seconds=120)   # (key, token), or None: all taken
    ...
    give_back(held)

A slot is the cache key ``<name>:<n>`` for ``n`` below the limit, added with its holder's token
(an add succeeds only for a key that is absent) and read back: the filesystem cache's add is not
atomic across processes, and the read-back leaves two takers a window of microseconds, not the
length of what they hold. A slot expires after ``seconds``, so a holder killed meanwhile frees it
then; ``give_back`` deletes it only while it is still the holder's (one that expired may be
another's by now). Cache errors propagate: each caller says what failing open means for it.
Judging slots of slow stashes (``slots``) and sink delivery slots (``delivery_slots``) are these.
"""

from __future__ import annotations

import math
import uuid

from django.core.cache import cache


def take(name: str, limit: int, seconds: float) -> tuple[str, str] | None:
    """A free slot of ``name`` held for at most ``seconds``: its (key, token), or None if all
    ``limit`` are taken."""
    token = uuid.uuid4().hex
    timeout = max(1, math.ceil(seconds))
    for number in range(limit):
        key = f"{name}:{number}"
        if cache.add(key, token, timeout=timeout) and cache.get(key) == token:
            return key, token
    return None


def give_back(held: tuple[str, str]) -> None:
    """Free the slot ``held`` (from ``take``) unless it expired and was taken by another since."""
    key, token = held
    if cache.get(key) == token:
        cache.delete(key)
