"""Hooks misbehave: one raises, one hangs in Python, one hangs inside C code."""

import pytest

from stash.models import Content

from ..support.worker import wait_for
from .ledger import CHECKS, payload, scaled

pytestmark = [pytest.mark.chaos, pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_raising_hook(chaos, chaos_worker):
    """A hook raises on some items: its on_error policy (reject) decides them, the rest go on."""
    stash = chaos.stash("raising", hooks=[*CHECKS, {"hook": "test_raise", "params": {}, "on_error": "reject"}])
    other = chaos.stash("raising-other")
    count = scaled(20, 300)
    raising = [{"text": f"raises {i}", "raise": True, "expect": "rejected"} for i in range(count // 4)]
    chaos.submit_bulk(stash, raising + [payload(i, spam=i % 5 == 0) for i in range(count)])
    chaos.submit(stash, [{"text": "raises alone", "raise": True, "expect": "rejected"}])
    chaos.submit(other, [payload(i, spam=i % 5 == 0) for i in range(scaled(10, 100))])
    chaos.settle()
    reasons = Content.objects.filter(stash=stash, payload__raise=True).values_list("reason", flat=True)
    assert all("RuntimeError: boom" in reason for reason in reasons)


def test_hanging_hook(chaos, chaos_worker):
    """A hook sleeps far past its timeout_ms: it is stopped, its policy (hold) decides, the other
    items and stashes go on."""
    stash = chaos.stash(
        "hanging",
        hooks=[*CHECKS, {"hook": "test_sleep", "params": {"seconds": 60}, "timeout_ms": 300, "on_error": "hold"}],
    )
    other = chaos.stash("hanging-other")
    hanging = [{"text": f"hangs {i}", "sleep": True, "expect": "held"} for i in range(scaled(2, 4))]
    chaos.submit_bulk(stash, hanging + [payload(i, spam=i % 5 == 0) for i in range(scaled(20, 200))])
    chaos.submit(other, [payload(i, spam=i % 5 == 0) for i in range(scaled(10, 100))])
    chaos.settle()
    reasons = Content.objects.filter(stash=stash, status="held").values_list("reason", flat=True)
    assert all("timed out after 300 ms" in reason for reason in reasons)


def test_hanging_hook_in_c(chaos, chaos_worker):
    """A hook blocks inside C code, where the timeout's signal handler cannot run: the item still
    gets its verdict (by the hook's policy, or failed naming the hook) and other stashes flow."""
    stash = chaos.stash(
        "stuck-in-c",
        hooks=[
            *CHECKS,
            {
                "hook": "test_hang_in_c",
                "params": {"seconds": 600},
                "timeout_ms": 500,
                "on_error": "hold",
                "label": "Stuck in C",
            },
        ],
    )
    other = chaos.stash("stuck-in-c-other")
    try:
        chaos.submit(stash, [{"text": "hangs in C", "hang": True, "expect": ["held", "failed"]}])
        wait_for(lambda: Content.objects.filter(stash=stash, status="processing").exists(), message="the claim")
        chaos.submit(stash, [payload(i) for i in range(scaled(5, 20))])
        chaos.submit(other, [payload(i, spam=i % 5 == 0) for i in range(scaled(10, 100))])
        chaos.settle(timeout=40)  # its message's time limit (10 s in tests) is what stops it, then recovery
        stuck = Content.objects.get(stash=stash, payload__hang=True)
        assert stuck.status == "held" or "Stuck in C" in stuck.reason
    finally:
        chaos_worker.kill()  # its pool processes may still be blocked
