"""A stash whose webhook receiver takes seconds to answer delays no other stash's verdicts, and
loses none of its deliveries.

On the production arrangement, as the ``worker`` fixture runs it: the judging worker (prefork, 2
processes, as `make run`'s) and the sinks worker (threads), processes of their own. The slow
stash's deliveries wait in the sink queue and the sinks worker, never in a process that judges;
at most ``STASH_SINK_CONCURRENCY`` of them reach the receiver at once, the others wait for a slot.
"""

import statistics
import time

import pytest

from stash.models import Content

from ..hooks.test_webhook import LOOPBACK, SECRET, Receiver
from ..support.worker import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

#: Seconds the slow stash's receiver takes to answer each delivery.
SLOW = 3.0
#: Items saved to each stash, a save to each every ``INTERVAL`` seconds.
SAVES = 10
INTERVAL = 0.5
#: The longest a save may wait for its verdict, in seconds: what a person at the form would notice.
BOUND = 2.0


@pytest.fixture
def slow_receiver():
    server = Receiver(delay=SLOW)
    yield server
    server.close()


def test_a_slow_receiver_delays_no_verdict_and_loses_no_delivery(
    worker, sink_worker, make_stash, slow_receiver, settings
):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = LOOPBACK
    log_start = len(sink_worker.read_log())
    webhook = {"hook": "webhook", "params": {"url": slow_receiver.url(), "secret": SECRET, "timeout": 10}}
    slow = make_stash("slow", hooks=[("require_fields", {"fields": ["text"]}), webhook])
    fast = make_stash("fast", hooks=[("require_fields", {"fields": ["text"]})])

    saved = {slow: [], fast: []}
    for n in range(SAVES):
        for stash in saved:
            saved[stash].append(Content.objects.create(stash=stash, payload={"text": f"{stash.slug} {n}"}))
        time.sleep(INTERVAL)

    # Every item of both stashes has its verdict within BOUND of its save, though the slow stash's
    # deliveries take SLOW seconds each and are due faster than the receiver answers them.
    ids = [item.pk for items in saved.values() for item in items]
    accepted = Content.objects.filter(pk__in=ids, status="accepted")
    wait_for(lambda: accepted.count() == len(ids), timeout=30, message="every verdict")
    waits = sorted((item.processed_at - item.created_at).total_seconds() for item in accepted)
    assert waits[-1] <= BOUND, f"save -> verdict (s): {waits}"

    # Every delivery arrives, once, though more were due at once than may run at once.
    wait_for(lambda: len(slow_receiver.requests) >= SAVES, timeout=60, message="every delivery")
    time.sleep(SLOW)  # time for any duplicate to come in too
    delivered = [request["headers"]["X-Stash-Delivery"] for request in slow_receiver.requests]
    assert sorted(delivered) == sorted(f"{item.pk}:1:accept" for item in saved[slow])
    # No more than STASH_SINK_CONCURRENCY at once: each delivery began after all but as many of
    # those before it had been answered; the others waited for a slot.
    starts = sorted(request["at"] for request in slow_receiver.requests)
    at_once = max(sum(start - SLOW < other <= start for other in starts) for start in starts)
    print(
        f"\nsave -> verdict: median {statistics.median(waits) * 1000:.0f} ms, max {waits[-1] * 1000:.0f} ms; "
        f"{SAVES} deliveries of {SLOW:g} s each in {starts[-1] - starts[0] + SLOW:.1f} s, at most {at_once} at once"
    )
    assert at_once <= settings.STASH_SINK_CONCURRENCY, starts
    assert "every delivery slot of hook config" in sink_worker.read_log()[log_start:]
