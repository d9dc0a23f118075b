"""After a judging message ran out of time: its items are taken over, and a hook that hung times out.

When a message outlives its hard time limit, billiard kills its pool process, whatever a hook is
doing (stuck in C code, ignoring its alarm), and starts another; the worker's main process then
publishes a recovery message for the stopped message (``tasks``, ``publishing.recover``), saying
whether the process was still running (``hung``) or had died before (a crash). ``recover`` takes
over the items still claimed under the stopped message's lease token (or sent again by the
sweeper meanwhile and not claimed since: it keeps the token):

- an item that was judged alone names the hook that was running (``judging``'s progress note).
  If that hook hung, the item is judged again at once with the hook timed out
  (``Pipeline.stopping``): its ``on_error`` policy decides, the trail says why, and the hook is
  not called again, however many attempts the item has had. If the process had died, the item
  is sent again, as the sweeper would;
- the items of a batch (which of them hung or crashed is not known) go back, each in a message
  of its own: judged alone, the one at fault names its hook the next time;
- an item out of attempts (``STASH_MAX_ATTEMPTS``) is set ``failed`` with the reason.

The claim moves from the stopped token by compare-and-set, so a verdict the stopped process
wrote first is never written twice. If the recovery message is lost, the sweeper still acts once
the stopped claims' leases run out.
"""

from __future__ import annotations

import uuid
from typing import cast

from django.conf import settings
from django.utils import timezone

from stash.models import Content, HookConfig, lease_end
from stash.processing import failures
from stash.processing.judging import PROGRESS_NOTE, BatchReport, _judge, send_alone
from stash.processing.sweeping import gave_up
from stash.processing.time_limits import Clock

Status = Content.Status


def token_for(task_id: str | None) -> uuid.UUID:
    """The lease token of the message ``task_id``: its claims are found by it after it is stopped.
    (A call outside a message, ``task_id`` None, gets a token of its own.)"""
    if task_id is None:
        return uuid.uuid4()
    try:
        return uuid.UUID(str(task_id))
    except ValueError:
        return uuid.uuid5(uuid.NAMESPACE_URL, f"stash-task:{task_id}")


def recover(
    stopped_token: uuid.UUID, hung: bool = True, token: uuid.UUID | None = None, clock: Clock | None = None
) -> BatchReport:
    """Take over the items still claimed by the stopped message ``stopped_token``; see above."""
    report = BatchReport()
    token, clock = token or uuid.uuid4(), clock or Clock()
    # Pending too: the sweeper may have sent an item again before this recovery came (it keeps
    # the token); whichever claims first takes it, the other finds nothing.
    report.claimed = Content.objects.filter(
        lease_token=stopped_token, status__in=[Status.PROCESSING, Status.PENDING]
    ).update(status=Status.PROCESSING, lease_token=token, lease_until=clock.lease_until())
    if not report.claimed:
        return report
    contents = list(
        Content.objects.filter(lease_token=token).select_related("stash", "decided_by").order_by("created_at", "pk")
    )
    now = timezone.now()
    again, stopped, given_up = [], [], []
    for content in contents:
        # A hook known to hang gives its verdict whatever the attempts: they count crashes.
        if hung and content.decided_by_id is not None and content.reason.startswith(PROGRESS_NOTE):
            stopped.append(content)
        elif content.attempts >= settings.STASH_MAX_ATTEMPTS:
            if Content.objects.filter(pk=content.pk, lease_token=token).update(
                **gave_up(content.attempts, content.reason if content.reason.startswith(PROGRESS_NOTE) else "", now)
            ):
                given_up.append(content.pk)
        else:
            again.append(content)
    failures.record_gave_up(given_up, now)
    report.released += Content.objects.filter(pk__in=[c.pk for c in again], lease_token=token).update(
        status=Status.PENDING, lease_token=None, lease_until=lease_end()
    )
    send_alone(again)
    for content in stopped:
        Content.objects.filter(pk=content.pk, lease_token=token).update(attempts=content.attempts + 1)
        content.attempts += 1
        # Only an item with a deciding hook (selected with it) is stopped.
        _judge(
            [content],
            token,
            report,
            clock,
            note_progress=True,
            stopped=(content.decided_by_id, _stopped_message(cast(HookConfig, content.decided_by))),
        )
    return report


def _stopped_message(config: HookConfig) -> str:
    timeout = f"its timeout of {config.timeout_ms} ms" if config.timeout_ms else "the time limit"
    return f"still running past {timeout}, where it could not be interrupted: stopped with its worker process"
