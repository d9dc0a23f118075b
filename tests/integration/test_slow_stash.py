"""A stash whose hooks are slow takes one of the worker's two processes, not both: another stash's
saves on the same queue get their verdicts at once meanwhile, and every slow item is judged, once."""

import time

import pytest

from stash import processing
from stash.models import Content

from ..support.worker import wait_for
from .test_worker import judged, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

SLEEP = 1.5  # seconds the slow stash's filter takes on each item: past STASH_SLOW_MESSAGE_SECONDS (1 s)
SLOW_PER_ROUND = 3  # slow saves per round, then a fast save whose verdict is awaited
ROUND = 0.5  # seconds between a round's slow saves and its fast one
FAST_SAVES = 12
#: The longest a fast stash's save may wait for its verdict, in seconds: what a person would notice.
#: Without a limit, the slow stash's messages take both processes for about 4.5 s at a time.
BOUND = 3.0


def test_a_slow_stash_leaves_a_process_to_another_stash_and_all_its_items_are_judged_once(worker, make_stash, settings):
    slow = make_stash("slow", hooks=[{"hook": "test_sleep", "params": {"seconds": SLEEP}, "timeout_ms": 3000}])
    fast = make_stash("fast", hooks=[("require_fields", {"fields": ["text"]})])

    first = judged(submit(slow, text="first", sleep=True))  # the stash is seen to be slow
    assert first.status == "accepted"
    wait_for(lambda: slow.pk in processing.slow_stashes(), timeout=5, message="the slow stash's mark")

    # The slow stash is fed all along, single saves as people make them: its messages keep
    # coming, and without a limit each process takes one of them in turn.
    slow_items, latencies = [], []
    for n in range(FAST_SAVES):
        slow_items += [submit(slow, text=f"slow {n} {k}", sleep=True) for k in range(SLOW_PER_ROUND)]
        time.sleep(ROUND)
        item = judged(submit(fast, text=f"fast {n}"), timeout=30)
        assert item.status == "accepted"
        latencies.append((item.processed_at - item.created_at).total_seconds())
    unjudged_meanwhile = Content.objects.filter(
        pk__in=[c.pk for c in slow_items], status__in=["pending", "processing"]
    ).count()

    for content in slow_items:
        assert judged(content, timeout=120).status == "accepted"
    print(
        f"fast save -> verdict: {', '.join(f'{s:.2f}' for s in latencies)} s; "
        f"slow items unjudged after the fast saves: {unjudged_meanwhile} of {len(slow_items)}"
    )
    assert max(latencies) < BOUND, latencies
    assert unjudged_meanwhile > 0  # the fast saves were judged while the slow stash still had work
    assert all(content.runs.count() == 1 for content in Content.objects.filter(pk__in=[c.pk for c in slow_items]))
