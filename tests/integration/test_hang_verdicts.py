"""Items whose hook hangs where no alarm reaches it: each gets its hook's ``on_error`` verdict once,
never ``failed``, while a sweeper runs as beat would, however many of them hang together."""

import re
import time

import pytest
from django.db import transaction

from stash import processing
from stash.models import Content

from ..support.worker import wait_for
from .test_worker import DONE, submit

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

STUCK = {"hook": "test_stuck", "params": {"seconds": 120}, "label": "Stuck", "timeout_ms": 300, "on_error": "hold"}


def kills_since(worker, offset):
    """The judging messages billiard stopped at their hard time limit since ``offset`` of the log:
    the stuck hook never returns, so each of its calls ends in one."""
    return len(re.findall(r"Hard time limit .* exceeded", worker.read_log()[offset:]))


def judged_while_sweeping(items, timeout=90):
    """Wait for a verdict on each of ``items`` while a sweeper runs every half second, as beat
    would (its passes come every ``STASH_SWEEP_INTERVAL``; the test worker's leases are short)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        processing.sweep()
        fresh = list(Content.objects.filter(pk__in=[item.pk for item in items]))
        if all(item.status in DONE for item in fresh):
            return sorted(fresh, key=lambda item: item.payload["n"])
        time.sleep(0.5)
    pytest.fail(f"no verdict after {timeout}s: {[(item.pk, item.status) for item in fresh]}")


def test_items_that_hang_together_each_get_their_hooks_policy_once(worker, make_stash):
    stash = make_stash("stuck-three", hooks=[STUCK])
    offset = len(worker.read_log())
    with transaction.atomic():
        items = [submit(stash, stuck=True, n=i) for i in range(3)]

    for item in judged_while_sweeping(items):
        assert (item.status, item.decided_by.label) == ("held", "Stuck")
        assert item.reason.startswith("Stuck: still running past its timeout of 300 ms")
        assert [(step["label"], step["outcome"]) for step in item.runs.get().trail] == [("Stuck", "timeout")]
    # Each call of the hook hung and was stopped with its process: once in the batch (which item
    # hung there is not known), then once per item judged alone; never again for an item the
    # sweeper sent back before its recovery came.
    assert kills_since(worker, offset) == 4
    wait_for(lambda: len(worker.child_pids()) == 2, message="two pool processes again")
    assert not Content.objects.filter(stash=stash, status="failed").exists()
