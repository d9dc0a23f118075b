"""One change, one bump: the stashes whose ``config_version`` the current change has moved already.

    with versioning.one_change():      # an admin save, an action, a reorder: one change
        stash.save()                   # moves audit's config_version ...
        config.save()                  # ... and this, of the same stash, does not again

Outside ``one_change`` every write that changes a pipeline moves its stash's version once, as
before. Inside, the first such write of each stash moves it (at once, so what the block reads
afterwards is current, and the stash's row stays locked until the commit) and the others of that
stash leave it: workers rebuild a pipeline once per change, however many rows it touched.

A part of the block that is rolled back (a savepoint) takes its bump with it; a later write of
that stash in the block then moves the version again. Each bump is remembered by a marker
registered with ``transaction.on_commit``, which such a rollback drops (``compat.on_commit_pending``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import transaction

from .compat import on_commit_pending

# stash id -> the marker of its bump in the current change; None outside a change.
_bumped: ContextVar[dict[int, Callable[[], None]] | None] = ContextVar("stash_bumped", default=None)


@contextmanager
def one_change(using: str = "default") -> Iterator[None]:
    """Make the block one transaction in which each stash's ``config_version`` moves at most once.
    Nested blocks are savepoints of the outer change."""
    if _bumped.get() is not None:
        with transaction.atomic(using=using):
            yield
        return
    token = _bumped.set({})
    try:
        with transaction.atomic(using=using):
            yield
    finally:
        _bumped.reset(token)


def to_bump(stash_ids: Iterable[int], using: str = "default") -> list[int]:
    """Of ``stash_ids``, in order, those whose version the caller should move now: all of them
    outside a change; inside one, those it has not moved yet (which now count as moved)."""
    ids = sorted(set(stash_ids))
    bumped = _bumped.get()
    if bumped is None:
        return ids
    fresh = [pk for pk in ids if pk not in bumped or not on_commit_pending(bumped[pk], using)]
    for pk in fresh:
        bumped[pk] = marker = _marker()
        transaction.on_commit(marker, using=using)
    return fresh


def _marker() -> Callable[[], None]:
    """A callback of its own (``on_commit_pending`` tells callbacks apart by identity) that does nothing."""
    return lambda: None
