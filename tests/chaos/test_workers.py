"""Workers die: SIGKILL and SIGTERM mid-batch, and a poison item that kills its worker each time."""

import pytest

from stash.models import Content

from ..support.worker import wait_for
from .ledger import CHECKS, payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# A batch of this many items runs about a second and a half: long enough to be interrupted in,
# short enough to finish within a lease.
BATCH = scaled(40, 200)


def slow_stash(chaos, slug):
    """The default checks, then a hook that takes a little time over each item."""
    return chaos.stash(slug, hooks=[*CHECKS, ("test_sleep", {"seconds": 1.5 / BATCH})])


def submit_and_wait_for_a_claim(chaos, stash, count):
    items = chaos.submit_bulk(stash, [payload(i, spam=i % 7 == 0, sleep=True) for i in range(count)])
    wait_for(lambda: Content.objects.filter(stash=stash, status="processing").exists(), message="a claimed batch")
    return items


def test_sigkill_of_a_worker_mid_batch(chaos, chaos_worker):
    """The whole worker (main process and pool) is killed while it judges a batch."""
    stash = slow_stash(chaos, "sigkill")
    submit_and_wait_for_a_claim(chaos, stash, scaled(60, 600))
    chaos_worker.kill()
    assert Content.objects.filter(stash=stash, status__in=["pending", "processing"]).exists()
    chaos_worker.ensure_running()
    chaos.healed()
    chaos.settle()


def test_sigterm_mid_batch(chaos, chaos_worker):
    """SIGTERM to the worker while it judges a batch: a warm shutdown, then a new worker."""
    stash = slow_stash(chaos, "sigterm")
    submit_and_wait_for_a_claim(chaos, stash, scaled(60, 600))
    assert chaos_worker.terminate() == 0
    chaos_worker.ensure_running()
    chaos.healed()
    chaos.settle()


def test_poison_item_kills_its_worker(chaos, chaos_worker):
    """Items that kill their pool process whenever they are judged fail, naming the hook; their
    batch neighbours are judged once."""
    stash = chaos.stash("poison", hooks=[*CHECKS, {"hook": "test_crash", "params": {}, "label": "Crasher"}])
    poison = scaled(1, 3)
    payloads = [payload(i, spam=i % 7 == 0) for i in range(scaled(20, 200))]
    for n in range(poison):
        payloads.insert(n * 7, {"text": f"poison {n}", "crash": True, "expect": "failed"})
    chaos.submit_bulk(stash, payloads)
    chaos.settle(timeout=scaled(90, 240))
    failed = Content.objects.filter(stash=stash, status="failed")
    assert failed.count() == poison
    assert all("Crasher" in reason for reason in failed.values_list("reason", flat=True))
