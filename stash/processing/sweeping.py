"""The sweeper's pass: give up on items claimed too often (``failed``, with the reason), send again every item
whose lease ran out (a lost message, a killed worker), and wake stashes whose saves joined a lost message;
for items waiting for a service (``callbacks.sweep``): time out the answers not given in time, and send
again the resumes lost or stopped with their worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from stash.db import publishing
from stash.models import Content, lease_end
from stash.processing import callbacks, claiming, failures
from stash.processing.judging import send_by_queue

Status = Content.Status


@dataclass
class SweepReport:
    requeued: int = 0
    failed: int = 0
    woken: int = 0  # stashes whose items waiting for their first run were sent a message
    timed_out: int = 0  # items waiting for a service that did not answer in time: their hook's on_error decides
    resumed: int = 0  # answered items whose resume was sent again (lost, or stopped with its worker)


def sweep(limit: int = 10_000) -> SweepReport:
    """One sweeper pass: fail items out of attempts, send again those whose lease ran out, and
    wake the stashes whose items wait for their first run with no message holding their marker
    (saves that joined a message whose note the cache lost: see ``publishing``)."""
    report = SweepReport()
    now = timezone.now()
    report.woken = publishing.wake(claiming.waiting_stashes(now))
    expired = Content.objects.filter(status__in=[Status.PENDING, Status.PROCESSING], lease_until__lt=now)
    exhausted = expired.filter(status=Status.PROCESSING, attempts__gte=settings.STASH_MAX_ATTEMPTS)
    given_up = [
        pk
        for pk, attempts, note in exhausted.values_list("pk", "attempts", "reason")[:limit]
        if exhausted.filter(pk=pk).update(**gave_up(attempts, note, now))
    ]
    report.failed += len(given_up)
    failures.record_gave_up(given_up, now)  # one query and one insert for the pass
    # Before the pass below: a resume stopped with its worker goes on from its answer, not from the start.
    waits = callbacks.sweep(now)
    report.timed_out, report.resumed = waits.timed_out, waits.resent
    rows = list(
        expired.filter(attempts__lt=settings.STASH_MAX_ATTEMPTS).values_list("pk", "attempts", "stash__queue")[:limit]
    )
    if rows:
        # The claim's token stays: if its message was stopped at its time limit and the recovery
        # (``recovering.recover``) comes after this pass, it still takes the item over, and gives a
        # hook that hung its verdict instead of a run that would hang again.
        report.requeued = Content.objects.filter(pk__in=[pk for pk, *_ in rows], lease_until__lt=now).update(
            status=Status.PENDING, lease_until=lease_end(now)
        )
        # Never claimed (a lost message): in batches. Claimed before (a worker died on it, or
        # on a neighbour): one per message, so that a poison item only ever takes itself down.
        send_by_queue([(pk, queue) for pk, attempts, queue in rows if not attempts])
        send_by_queue([(pk, queue) for pk, attempts, queue in rows if attempts], each=True)
    return report


def gave_up(attempts: int, note: str, now: datetime) -> dict[str, Any]:
    """The fields of an item set ``failed`` after ``attempts`` claims; ``note``: its progress note."""
    reason = f"gave up after {attempts} attempts: the worker stopped while judging it" + (f" ({note})" if note else "")
    return {
        "status": Status.FAILED,
        "reason": reason,
        "lease_token": None,
        "lease_until": None,
        "processed_at": now,
        "updated_at": now,
    }
