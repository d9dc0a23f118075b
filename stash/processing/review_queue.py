"""The team's review queue: the order held items are reviewed in, the claims that keep two reviewers
off one item, deadlines, the four-eyes state of an item, and its priority.

    item = review_queue.next_for(stash, user)      # the first held item nobody else holds, now claimed
    review_queue.release(item.pk, user)            # back to the queue for the others

A claim lasts ``STASH_REVIEW_CLAIM_MINUTES``; it ends with a decision (``reviewing`` clears it), a
release, or when it expires. Every claim is a compare-and-set ``UPDATE ... WHERE`` the item is
held and free (unclaimed, claimed past its time, or the caller's own): of two reviewers racing for
one item, the database lets one update through and the other retries with the next item. That
holds on SQLite (one writer at a time) and on PostgreSQL (the second ``UPDATE`` waits for the first
and checks its ``WHERE`` again on the row it wrote).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Min, Q, QuerySet
from django.utils import timezone

from stash.core import pipeline
from stash.core.expressions import compile_priority
from stash.models import Content, PipelineRun, Review, Stash
from stash.processing.building import item_for

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

Status = Content.Status

#: How many times ``next_for`` tries again when another reviewer took the item it chose.
_CLAIM_TRIES = 20
#: Held items read and written at once when a stash's priorities are computed again.
_REPRIORITIZE_BATCH = 500


# --- claims ------------------------------------------------------------------------------------


def claim_minutes() -> int:
    return int(settings.STASH_REVIEW_CLAIM_MINUTES)


def free_for(user: User | None, now: datetime) -> Q:
    """The items ``user`` may claim or decide: unclaimed, claimed past its time, or their own."""
    free = Q(claimed_by__isnull=True) | Q(claimed_until__isnull=True) | Q(claimed_until__lte=now)
    return free | Q(claimed_by=user) if user is not None and user.pk is not None else free


def held_by_other(content: Content, user: User | None, now: datetime | None = None) -> bool:
    """True when someone other than ``user`` holds an unexpired claim on ``content``."""
    now = now or timezone.now()
    return (
        content.claimed_by_id is not None
        and content.claimed_until is not None
        and content.claimed_until > now
        and (user is None or content.claimed_by_id != user.pk)
    )


def holder_message(content: Content) -> str:
    """Who holds ``content`` and until when, as a refusal says it."""
    holder = content.claimed_by.get_username() if content.claimed_by is not None else "someone"
    until = timezone.localtime(content.claimed_until).strftime("%H:%M") if content.claimed_until else ""
    return f"Item {str(content.pk)[:8]} is being reviewed by {holder} until {until}. Nothing was changed."


@dataclass(frozen=True)
class Claim:
    """What became of a claim: ``taken`` (the caller holds the item until ``until``) or not, and
    then ``content`` says why (someone else holds it, or it is no longer held; None: gone)."""

    taken: bool
    content: Content | None
    until: datetime | None = None


def claim(content_id: uuid.UUID | str, user: User, now: datetime | None = None) -> Claim:
    """Claim the held item ``content_id`` for ``user`` for ``STASH_REVIEW_CLAIM_MINUTES``: only
    if it is free (unclaimed, expired or already theirs); never two holders."""
    now = now or timezone.now()
    until = now + timedelta(minutes=claim_minutes())
    taken = (
        Content.objects.filter(free_for(user, now), pk=content_id, status=Status.HELD)
        .order_by()
        .update(claimed_by=user, claimed_until=until)
    )
    content = Content.objects.select_related("stash", "claimed_by").filter(pk=content_id).first()
    return Claim(taken=bool(taken), content=content, until=until if taken else None)


def release(content_id: uuid.UUID | str, user: User) -> bool:
    """End ``user``'s claim on ``content_id``; False when they held none."""
    return bool(
        Content.objects.filter(pk=content_id, claimed_by=user).order_by().update(claimed_by=None, claimed_until=None)
    )


# --- the order ---------------------------------------------------------------------------------

#: The queue's order: the highest priority first (items without one last), then the oldest.
ORDER = (F("priority").desc(nulls_last=True), "created_at", "pk")


def held_items(stash: Stash | QuerySet[Stash]) -> QuerySet[Content]:
    """The held items of ``stash`` in the order reviewers see them (``ORDER``); given a queryset of
    stashes (``reviewable_stashes``), the held items of all of them in one queue, in the same order."""
    where = Q(stash__in=stash) if isinstance(stash, QuerySet) else Q(stash=stash)
    return Content.objects.filter(where, status=Status.HELD).order_by(*ORDER)


def reviewable_stashes(user: User) -> QuerySet[Stash]:
    """The stashes whose held items ``user`` may review: all of them with ``stash.view_content`` (as
    every review page asks), none without."""
    return Stash.objects.all() if user.has_perm("stash.view_content") else Stash.objects.none()


def later_than(item: Content) -> Q:
    """The held items that come after ``item`` in ``ORDER``."""
    later = Q(created_at__gt=item.created_at) | Q(created_at=item.created_at, pk__gt=item.pk)
    if item.priority is None:
        return Q(priority__isnull=True) & later
    return Q(priority__lt=item.priority) | Q(priority__isnull=True) | (Q(priority=item.priority) & later)


def earlier_than(item: Content) -> Q:
    """The items that come before ``item`` in ``ORDER``."""
    earlier = Q(created_at__lt=item.created_at) | Q(created_at=item.created_at, pk__lt=item.pk)
    if item.priority is None:
        return Q(priority__isnull=False) | (Q(priority__isnull=True) & earlier)
    return Q(priority__gt=item.priority) | (Q(priority=item.priority) & earlier)


def position(item: Content, stashes: QuerySet[Stash] | None = None) -> int:
    """``item``'s place (from 1) among the held items of its stash (or of ``stashes``), in ``ORDER``."""
    held = (
        Content.objects.filter(stash_id=item.stash_id, status=Status.HELD) if stashes is None else held_items(stashes)
    )
    return held.filter(earlier_than(item)).count() + 1


def next_held(stash: Stash | QuerySet[Stash], after: Content | None = None) -> Content | None:
    """The first held item of ``stash`` (a stash, or a queryset of them: ``held_items``), or the
    first after ``after``, claimed or not: what someone who may only look sees. None when there is none."""
    items = held_items(stash).select_related("stash", "decided_by", "claimed_by")
    if after is not None:
        items = items.filter(later_than(after))
    return items.first()


def next_for(stash: Stash | QuerySet[Stash], user: User, after: Content | None = None) -> Content | None:
    """The first held item of ``stash`` (a stash, or a queryset of them: ``held_items``; after
    ``after``, if given) that nobody else holds,
    claimed for ``user``; without ``after``, the item ``user`` holds already comes first.
    Two reviewers asking at once never get the same item. None when none is free."""
    now = timezone.now()
    items = held_items(stash).select_related("stash", "decided_by", "claimed_by")
    if after is None:
        mine = items.filter(claimed_by=user, claimed_until__gt=now).first()
        if mine is not None:
            return mine
    else:
        items = items.filter(later_than(after))
    for _try in range(_CLAIM_TRIES):
        pk = items.filter(free_for(user, now)).values_list("pk", flat=True).first()
        if pk is None:
            return None
        if claim(pk, user, now).taken:
            return items.filter(pk=pk).first()
        now = timezone.now()  # someone took it first: the next free one
    return None


# --- deadlines ---------------------------------------------------------------------------------


def overdue_cut(stash: Stash, now: datetime | None = None) -> datetime | None:
    """Items of ``stash`` held since before this are overdue; None when it has no deadline."""
    if not stash.review_hours:
        return None
    return (now or timezone.now()) - timedelta(hours=stash.review_hours)


def is_overdue(content: Content, stash: Stash, now: datetime | None = None) -> bool:
    """True when ``content`` is held and has waited longer than ``stash.review_hours``."""
    cut = overdue_cut(stash, now)
    return (
        cut is not None
        and content.status == Status.HELD
        and content.processed_at is not None
        and content.processed_at < cut
    )


def oldest_held(now: datetime | None = None) -> dict[int, float]:
    """Seconds the oldest held item of each stash has waited since it was held, by stash id (a
    stash with none held is left out), in one query."""
    now = now or timezone.now()
    oldest = (
        Content.objects.filter(status=Status.HELD, processed_at__isnull=False)
        .order_by()
        .values("stash_id")
        .annotate(since=Min("processed_at"))
        .values_list("stash_id", "since")
    )
    return {stash_id: max((now - since).total_seconds(), 0.0) for stash_id, since in oldest}


def overdue_counts(now: datetime | None = None) -> dict[int, int]:
    """Overdue held items per stash id (stashes with a deadline and none overdue: 0), in two queries."""
    now = now or timezone.now()
    cuts = {
        pk: now - timedelta(hours=hours)
        for pk, hours in Stash.objects.filter(review_hours__gt=0).order_by().values_list("pk", "review_hours")
    }
    if not cuts:
        return {}
    late = Q()
    for pk, cut in cuts.items():
        late |= Q(stash_id=pk, processed_at__lt=cut)
    counts = dict.fromkeys(cuts, 0)
    rows = (
        Content.objects.filter(late, status=Status.HELD)
        .order_by()
        .values("stash_id")
        .annotate(n=Count("pk"))
        .values_list("stash_id", "n")
    )
    counts.update(rows)
    return counts


# --- four eyes ---------------------------------------------------------------------------------


def reason_codes(items: Iterable[Content]) -> dict[uuid.UUID, str]:
    """The reason code of the hook that held each of ``items`` (from its latest run's trail; blank
    when none is recorded), in one query."""
    items = [item for item in items if item.status == Status.HELD]
    if not items:
        return {}
    codes: dict[uuid.UUID, str] = {}
    deciders = {item.pk: item.decided_by_id for item in items}
    runs = (
        PipelineRun.objects.filter(content_id__in=list(deciders), outcome=Status.HELD)
        .order_by("content_id", "-finished_at", "-pk")
        .values_list("content_id", "trail")
    )
    for content_id, trail in runs:
        if content_id in codes:
            continue
        codes[content_id] = _held_code(trail, deciders[content_id])
    return {item.pk: codes.get(item.pk, "") for item in items}


def _held_code(trail: list[dict[str, Any]], decider: int | None) -> str:
    for entry in trail:
        stopping = entry.get("outcome") not in (
            pipeline.KEPT,
            pipeline.SKIPPED,
            pipeline.OBSERVED,
            pipeline.TRANSFORMED,
        )
        if stopping and (decider is None or entry.get("config_id") == decider):
            return str(entry.get("code") or "")
    return ""


def needs_two(item: Content, code: str) -> bool:
    """True when approving ``item`` (held with reason ``code``) takes two different reviewers."""
    return bool(code) and code in (item.stash.four_eyes_reasons or [])


def first_approvals(items: Iterable[Content]) -> dict[uuid.UUID, list[Review]]:
    """The first approvals each held item of ``items`` has had since it was held (one query)."""
    held = {item.pk: item for item in items if item.status == Status.HELD}
    found: dict[uuid.UUID, list[Review]] = {pk: [] for pk in held}
    if not held:
        return found
    reviews = (
        Review.objects.filter(
            content_id__in=list(held), decision=Review.Decision.FIRST_APPROVAL, replaced_at__isnull=True
        )
        .select_related("reviewer")
        .order_by("created_at", "pk")
    )
    for review in reviews:
        item = held[review.content_id]
        if review.revision == item.revision and (item.processed_at is None or review.created_at >= item.processed_at):
            found[review.content_id].append(review)
    return found


@dataclass(frozen=True)
class QueueRow:
    """One held item as the queue shows it: who holds it now (None: free), whether it is overdue,
    the usernames of its first approvals."""

    item: Content
    holder: User | None
    overdue: bool
    approvers: list[str]


def queue_rows(items: list[Content], stash: Stash | None = None, now: datetime | None = None) -> list[QueueRow]:
    """``items`` (held items of ``stash``, with ``claimed_by`` selected; None: each of its own stash,
    selected too) as queue rows, in one query."""
    now = now or timezone.now()
    approvals = first_approvals(items)
    return [
        QueueRow(
            item=item,
            holder=item.claimed_by if item.claimed_until is not None and item.claimed_until > now else None,
            overdue=is_overdue(item, stash or item.stash, now),
            approvers=[review.reviewer.get_username() for review in approvals.get(item.pk, []) if review.reviewer],
        )
        for item in items
    ]


# --- priority ----------------------------------------------------------------------------------


def evaluate_priority(
    expression: Callable[[Mapping[str, Any]], float] | None, item: pipeline.Item, code: str
) -> float | None:
    """``expression`` over ``item`` held with reason ``code``; None without one, or when it fails
    (logged: a priority never stops an item from being held)."""
    if expression is None:
        return None
    try:
        return expression({**item.as_context(), "reason_code": code})
    except Exception:
        logger.warning("Review priority of item %s could not be computed", item.id, exc_info=True)
        return None


def reprioritize(stash_id: int) -> int:
    """Compute the priority of every held item of stash ``stash_id`` again with its current
    ``review_priority`` (in batches, each its own short transaction); returns how many were
    written. An item that is no longer held by the time its batch is written is left alone."""
    stash = Stash.objects.filter(pk=stash_id).first()
    if stash is None:
        return 0
    expression = compile_priority(stash.review_priority) if stash.review_priority.strip() else None
    written, last = 0, None
    while True:
        batch_query = Content.objects.filter(stash_id=stash_id, status=Status.HELD).order_by("pk")
        if last is not None:
            batch_query = batch_query.filter(pk__gt=last)
        batch = list(batch_query[:_REPRIORITIZE_BATCH])
        if not batch:
            return written
        last = batch[-1].pk
        codes = reason_codes(batch)
        for item in batch:
            item.stash = stash
            item.priority = evaluate_priority(expression, item_for(item), codes.get(item.pk, ""))
        with transaction.atomic():
            for item in batch:
                written += (
                    Content.objects.filter(pk=item.pk, status=Status.HELD).order_by().update(priority=item.priority)
                )
