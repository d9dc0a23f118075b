"""The time a judging message has: its hard time limit, the leases it takes, which items fit in it.

A message runs under Celery's hard time limit (``STASH_TIME_LIMIT``, or one derived from a
stash's hooks): when it runs out, billiard kills the pool process, whatever a hook is doing, and
starts a new one. So that the sweeper never sends an item to a second process while the first may
still be judging it, a claim lasts until the limit is over plus ``STASH_TIME_LIMIT_MARGIN``. So
that a batch of slow but well-behaved hooks is not killed, an item is judged only while its
*budget* (the sum of its stash's hooks' ``timeout_ms``: the longest its run takes when each hook
is stopped at its deadline) still fits before the limit; the rest of the batch goes back to the
queue. An item sent alone (tried before, or with a budget that fits no message of the default
limit) gets a message of its own, limited to ``time_limit_for(budget)``::

    clock = Clock(limit=30)
    clock.fits(6.0, first=True)      # True: a fresh message has room for a 6 s budget
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from stash.models import lease_end


def margin() -> float:
    """Seconds a message keeps besides its items' budgets: claiming, recording, publishing."""
    return float(settings.STASH_TIME_LIMIT_MARGIN)


def time_limit_for(budget: float) -> float:
    """The hard time limit of a message for one item of ``budget`` seconds: its budget and the margin.
    (A hook without a timeout counts nothing: the margin is all it gets when its item is alone.)"""
    return budget + margin()


@dataclass(frozen=True)
class Clock:
    """A message's time limit, counted from its start (``limit`` None: no limit, as when a caller
    outside a worker judges items; claims then last ``STASH_LEASE_SECONDS``)."""

    limit: float | None = None
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.limit - (time.monotonic() - self.started) if self.limit is not None else float("inf")

    def lease_until(self) -> datetime:
        """When this message's claims run out: after its time limit, with the margin to spare."""
        if self.limit is None:
            return lease_end()
        return timezone.now() + timedelta(seconds=max(0.0, self.left()) + margin())

    def ever_fits(self, budget: float) -> bool:
        """True if a message of this limit has room for an item of ``budget`` at all."""
        return self.limit is None or budget + margin() <= self.limit

    def fits(self, budget: float, first: bool) -> bool:
        """True if an item of ``budget`` may start now: the first of a message whenever it ever
        fits (the margin covers the claim), a later one while the time left covers it."""
        if first:
            return self.ever_fits(budget)
        return budget + margin() <= self.left()
