"""A hook that hangs where no alarm reaches it: the worker stops it for real, judges the item once
through the hook's policy, never lets a second process take the item, and goes on with other stashes."""

import time

import pytest
from django.db import transaction

from stash import processing
from stash.models import Content

from ..support.worker import WORKER_LEASE_SECONDS, wait_for
from .test_worker import judged, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

STUCK = {"hook": "test_stuck", "params": {"seconds": 120}, "label": "Stuck", "timeout_ms": 300}


def test_a_hook_stuck_in_c_code_is_stopped_and_its_policy_decides_once(worker, make_stash):
    stash = make_stash("stuck", hooks=[{**STUCK, "on_error": "hold"}, ("require_fields", {"fields": ["n"]})])
    pool_before = set(worker.child_pids())
    with transaction.atomic():
        stuck = submit(stash, stuck=True, n=0)
        neighbours = [submit(stash, n=i) for i in range(1, 4)]

    stuck = judged(stuck, timeout=60)

    assert stuck.status == "held"
    assert stuck.reason.startswith("Stuck: still running past its timeout of 300 ms")
    assert stuck.decided_by.label == "Stuck"
    run = stuck.runs.get()  # judged once
    assert [(step["label"], step["outcome"]) for step in run.trail] == [("Stuck", "timeout")]
    for item in neighbours:
        assert judged(item).status == "accepted"
        assert item.runs.count() == 1
    config = stash.hooks.get(hook="test_stuck")
    assert (config.runs_count, config.errors_count) == (4, 1)
    # The hung pool processes were killed and replaced: the worker still has two.
    assert "Hard time limit" in worker.read_log()
    wait_for(lambda: len(worker.child_pids()) == 2, message="two pool processes again")  # replaced, not lost
    assert set(worker.child_pids()) != pool_before


def test_a_hung_item_is_never_sent_to_a_second_process_and_other_stashes_go_on(worker, make_stash):
    hanging = make_stash("hanging", hooks=[{**STUCK, "on_error": "reject"}])
    other = make_stash("other", hooks=[("require_fields", {"fields": ["text"]})])
    stuck = submit(hanging, stuck=True)
    wait_for(lambda: Content.objects.filter(pk=stuck.pk, status="processing").exists(), message="the claim")

    # Past the lease an unclaimed item would have: the sweeper (beat) leaves a running claim alone.
    time.sleep(WORKER_LEASE_SECONDS + 0.5)
    assert processing.sweep().requeued == 0

    items = [submit(other, text=str(i)) for i in range(3)]
    for item in items:
        assert judged(item).status == "accepted"
    stuck = judged(stuck, timeout=60)
    assert stuck.status == "rejected"
    assert "Stuck: still running past its timeout of 300 ms" in stuck.reason
    assert stuck.runs.count() == 1
