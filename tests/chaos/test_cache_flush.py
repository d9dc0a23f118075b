"""The cache is flushed while single saves share their stash's waiting message: they are judged
within a sweep interval, each once, not a lease later."""

import time

import pytest

from stash.models import Content

from ..support.worker import wait_for
from .ledger import CHECKS, payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# The sweeper passes this often here (beat: STASH_SWEEP_INTERVAL, 15 s by default), while an
# unclaimed item's lease is the default 60 s: what is judged within a pass was not swept by lease.
SWEEP_INTERVAL = 3
LEASE_SECONDS = 60
# Seconds a sweep's message may take to be read and its batches judged (300 items in the long run).
MARGIN = scaled(5, 15)
# Both pool processes of the worker judge a slow item this long, while the saves are made.
BUSY_SECONDS = 4


@pytest.fixture
def own_cache(own_cache, settings):
    """The chaos suite's own cache, with unclaimed items leased for the default time."""
    settings.STASH_LEASE_SECONDS = LEASE_SECONDS
    return own_cache


def test_cache_flushed_mid_run(chaos, own_cache):
    """FLUSHALL on the cache while a stash's message waits for a free pool process and the saves
    made meanwhile joined it: once it has judged its own item, nothing says they wait, and the
    sweeper's next pass sends them. Recovery is counted from the end of that message, with the
    first pass a whole interval after it; saves after the flush (another stash) are judged too."""
    blockers = [
        chaos.stash(
            f"cache-flushed-busy-{n}",
            hooks=[*CHECKS, {"hook": "test_sleep", "params": {"seconds": BUSY_SECONDS}, "timeout_ms": 5000}],
        )
        for n in range(2)
    ]
    busy = [chaos.submit(blocker, [payload(n, sleep=True)])[0] for n, blocker in enumerate(blockers)]
    wait_for(
        lambda: Content.objects.filter(pk__in=[c.pk for c in busy], status="processing").count() == 2,
        message="both pool processes busy",
    )
    stash, other = chaos.stash("cache-flushed"), chaos.stash("cache-flushed-other")
    (first, *joined) = chaos.submit(stash, [payload(i, spam=i % 5 == 0) for i in range(scaled(30, 300))])
    own_cache.client().flushall()
    chaos.submit(other, [payload(i, spam=i % 5 == 0) for i in range(scaled(5, 50))])
    wait_for(
        lambda: not Content.objects.filter(pk=first.pk, status__in=["pending", "processing"]).exists(),
        timeout=20,
        message="the end of the message that held the marker",
    )
    assert Content.objects.filter(pk__in=[c.pk for c in joined], status="pending").exists()
    chaos.healed()
    time.sleep(SWEEP_INTERVAL)  # beat's next pass may come a whole interval later: count the worst case

    figures = chaos.settle(timeout=LEASE_SECONDS / 2, sweep_every=SWEEP_INTERVAL)

    assert figures.recovery_seconds <= SWEEP_INTERVAL + MARGIN, figures.as_dict()
