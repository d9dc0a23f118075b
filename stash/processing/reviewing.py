"""Reviewing: a person's verdict (approve, reject, overturn) and replaying the current hooks over past items."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from .. import bulk_sql, dispatch, pipeline
from ..models import Content, Stash
from . import recording
from .isolation import call_with_deadline
from .judging import Status, item_for, pipeline_for

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def approve(queryset: QuerySet[Content], user: User, note: str = "") -> int:
    """Accept the held items among ``queryset`` as ``user``; returns how many were held."""
    return _review(queryset, {Status.HELD: Status.ACCEPTED}, user, note, "accepted in review")


def reject(queryset: QuerySet[Content], user: User, note: str = "") -> int:
    """Reject the held items among ``queryset`` as ``user``; returns how many were held."""
    return _review(queryset, {Status.HELD: Status.REJECTED}, user, note, "rejected in review")


def overturn(queryset: QuerySet[Content], user: User, note: str = "") -> int:
    """Reverse the hooks' verdict on the judged items among ``queryset``: rejected ones are
    accepted, accepted ones rejected. Each rejection overturned counts against the hook that
    made it (``HookConfig.overturned_count``: its false positives). Items already overturned
    are left alone; returns how many were overturned.
    """
    return _review(queryset.filter(overturned=False), {Status.REJECTED: Status.ACCEPTED,
                                                        Status.ACCEPTED: Status.REJECTED},
                   user, note, "overturned in review", overturning=True)


def _review(queryset: QuerySet[Content], changes: dict[str, str], user: User, note: str, reason: str,
            overturning: bool = False) -> int:
    """Move the items of ``queryset`` whose status is a key of ``changes`` to its value.

    Written with ``update``/``bulk_update``: no ``post_save``, so nothing is judged again.
    Items accepted here join their stash's queue; items rejected here leave it.
    """
    now = timezone.now()
    ids = list(queryset.values_list("pk", flat=True))
    with transaction.atomic():
        # Locked like the worker locks what it records, so a review and a verdict never cross.
        items = list(Content.objects.select_for_update(of=("self",)).select_related("stash")
                     .filter(pk__in=ids, status__in=list(changes))
                     .order_by("created_at", "pk"))
        counters = recording.new_counters()
        accepted_by_stash = defaultdict(list)
        for item in items:
            before, item.status = item.status, changes[item.status]
            item.reason = f"{reason} (was {before}: {item.reason})" if overturning and item.reason else reason
            item.overturned = item.overturned or overturning
            item.reviewed_by, item.reviewed_at, item.review_note, item.updated_at = user, now, note, now
            item.queue_seq = None
            if item.status == Status.ACCEPTED:
                accepted_by_stash[item.stash_id].append(item)
            if overturning and before == Status.REJECTED and item.decided_by_id:
                counters[item.decided_by_id]["overturned_count"] += 1
        # Stashes, then hook configs: the lock order of _record.
        for stash_id in sorted(accepted_by_stash):
            recording.assign_queue_positions(stash_id, accepted_by_stash[stash_id])
        recording.add_counters(counters)
        bulk_sql.update_rows(Content, items, ["status", "reason", "overturned", "reviewed_by", "reviewed_at",
                                              "review_note", "queue_seq", "updated_at"])
        transaction.on_commit(lambda: _notify_reviewed(items))
    return len(items)


def _notify_reviewed(items: list[Content]) -> None:
    """A reviewer's verdict reaches the sinks like a worker's: ``on_accept`` / ``on_reject``."""
    deliveries: list[dispatch.Delivery] = []
    for content in items:
        event = pipeline.verdict_event(content.status)
        result = pipeline.Result(verdict=content.status, payload=content.payload, reason=content.reason)
        deliveries.extend(recording.notify(pipeline_for(content.stash), content, item_for(content), event, result))
    dispatch.send_deliveries(deliveries)


# --- replaying ---------------------------------------------------------------------------------


@dataclass
class ReplayChange:
    """An item whose verdict the current hooks would change."""

    content: Content
    before: str
    result: pipeline.Result


@dataclass
class ReplayReport:
    """What the current hooks would say about recent items, next to what was recorded."""

    compared: int = 0
    changes: list[ReplayChange] = field(default_factory=list)

    def newly(self, verdict: str) -> int:
        return sum(1 for change in self.changes if change.result.verdict == verdict)

    @property
    def unchanged(self) -> int:
        return self.compared - len(self.changes)


def replay(stash: Stash, last_n: int) -> ReplayReport:
    """Judge the last ``last_n`` judged items of ``stash`` again with its current hooks.

    Nothing is saved or counted and no sink is called. Each item is judged on the payload it
    was submitted with (before any transform) and compared with its recorded status, which
    for a reviewed item is the reviewer's verdict. The hooks run in a child process given
    ``STASH_SIMULATE_TIMEOUT`` seconds in all: past it, ``DeadlineExceeded`` names the item
    and the hook that was running.
    """
    report = ReplayReport()
    item_pipeline = pipeline_for(stash)
    judged = list(Content.objects.filter(stash=stash, status__in=[Status.ACCEPTED, Status.REJECTED, Status.HELD])
                  .order_by("-created_at", "-pk")[:max(0, int(last_n))])
    for content in judged:
        content.stash = stash

    def rejudge(progress: Callable[[str], None]) -> list[pipeline.Result]:
        results = []
        for content in judged:
            submitted = content.payload if content.original_payload is None else content.original_payload
            on_step = lambda step, pk=content.pk: progress(f"hook {step.title!r} (item {pk})")  # noqa: E731
            results.append(item_pipeline.run(replace(item_for(content), payload=submitted), on_step=on_step))
        return results

    for content, result in zip(judged, call_with_deadline(rejudge, settings.STASH_SIMULATE_TIMEOUT), strict=True):
        report.compared += 1
        if result.verdict != content.status:
            report.changes.append(ReplayChange(content=content, before=content.status, result=result))
    return report
