"""Reviewing: a person's verdict (approve, reject, overturn, judge again), the held items awaiting
one, and replaying the current hooks (or a draft of them, or a file's) over past items."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from django.conf import settings
from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from stash.core import pipeline
from stash.db import bulk_sql, publishing
from stash.models import Content, HookConfig, Review, Stash, Statement
from stash.processing import after_verdict, auto_observe, delivering, feedback, review_queue, statements
from stash.processing.building import item_for, pipeline_for, submitted_payload
from stash.processing.child_process import call_with_deadline
from stash.processing.judging import Status
from stash.processing.rejudging import reprocess
from stash.processing.simulating import looking_pipeline

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django_stubs_ext import WithAnnotations


@dataclass(frozen=True)
class _Verdict:
    """What a reviewer's verdict does: the status it moves each status it applies to into."""

    changes: dict[str, str]
    reason: str
    decision: str
    overturning: bool = False


_APPROVE = _Verdict({Status.HELD: Status.ACCEPTED}, "accepted in review", Review.Decision.APPROVE)
_REJECT = _Verdict({Status.HELD: Status.REJECTED}, "rejected in review", Review.Decision.REJECT)
# A hold overturned is a hook's false alarm, like a rejection overturned: the item is accepted.
_OVERTURN = _Verdict(
    {Status.HELD: Status.ACCEPTED, Status.REJECTED: Status.ACCEPTED, Status.ACCEPTED: Status.REJECTED},
    "overturned in review",
    Review.Decision.OVERTURN,
    overturning=True,
)
_VERDICTS = {"approve": _APPROVE, "reject": _REJECT, "overturn": _OVERTURN}
#: The statuses of an item the hooks are done with (a pending or processing one is being judged):
#: its status page stops waiting, and a person may have it judged again.
DECIDED_STATUSES = frozenset({Status.ACCEPTED, Status.REJECTED, Status.HELD, Status.FAILED})

#: A person's decisions on an item, in the order the admin offers them.
DECISIONS = ("approve", "reject", "overturn", "judge")


def approve(queryset: QuerySet[Content], user: User, note: str = "") -> int:
    """Accept the held items among ``queryset`` as ``user``; returns how many were held."""
    return _review(queryset, _APPROVE, user, note)


def reject(queryset: QuerySet[Content], user: User, note: str = "") -> int:
    """Reject the held items among ``queryset`` as ``user``; returns how many were held."""
    return _review(queryset, _REJECT, user, note)


def overturn(queryset: QuerySet[Content], user: User, note: str = "") -> int:
    """Reverse the hooks' verdict on the judged items among ``queryset``: rejected and held ones
    are accepted, accepted ones rejected. Each rejection or hold overturned counts against the
    hook that made it (``HookConfig.overturned_count``: its false positives). Items already
    overturned are left alone; returns how many were overturned.
    """
    return _review(queryset, _OVERTURN, user, note)


def decide_automatically(queryset: QuerySet[Content], status: str, reason: str) -> int:
    """Give the held items among ``queryset`` ``status`` (accepted or rejected) with no reviewer,
    as a ``Review`` of kind ``EXPIRE`` saying ``reason``; claims do not stop it. Returns how many."""
    verdict = _Verdict({Status.HELD: status}, reason, Review.Decision.EXPIRE)
    return _review(queryset, verdict, None, reason, automated=True)


#: Why an item waiting for an outside service is not decided on: its run has not ended.
WAITING_REFUSAL = (
    "The item is waiting for an outside moderation service's answer: it can be reviewed once its run "
    "has a verdict. Nothing was changed."
)


def decisions_for(content: Content) -> list[str]:
    """The decisions (of ``DECISIONS``) that apply to ``content`` as it is now."""
    return [
        name
        for name in DECISIONS
        if (content.status in DECIDED_STATUSES if name == "judge" else content.status in _VERDICTS[name].changes)
        and not (name == "overturn" and content.overturned)
    ]


@dataclass
class DecisionOutcome:
    """What became of a person's decision on one item: ``applied``, or left alone because the
    item no longer had the status it was decided on (``content`` says what it has now; None
    when the item is gone)."""

    decision: str
    applied: bool
    content: Content | None
    #: Why nothing was done although the item still had the status seen: ``CLAIMED`` (someone
    #: else holds it) or ``APPROVED_ALREADY`` (a four-eyes item this reviewer approved once); blank otherwise.
    refused: str = ""
    #: The approval was the first of the two a four-eyes item needs: it is still held.
    first_approval: bool = False

    @property
    def message(self) -> str:
        """What a refusal says (blank when there is none)."""
        if self.refused == CLAIMED and self.content is not None:
            return review_queue.holder_message(self.content)
        if self.refused == APPROVED_ALREADY and self.content is not None:
            return (
                f"You approved item {str(self.content.pk)[:8]} already: it needs the approval of a second, "
                "different reviewer. Nothing was changed."
            )
        return ""


CLAIMED = "claimed"
APPROVED_ALREADY = "approved_already"


def decide(
    content_id: uuid.UUID | str,
    decision: str,
    user: User,
    note: str = "",
    expected: str = Status.HELD,
    stash: Stash | None = None,
) -> DecisionOutcome:
    """Apply ``decision`` (one of ``DECISIONS``) to one item as ``user``, only while its status is
    still ``expected`` (the status the person saw) and it is in ``stash`` if one is given.

    Anything else (someone decided it meanwhile, the hooks judged it again, the decision does not
    apply to that status) changes nothing: the ``DecisionOutcome`` says so. Raises ``ValueError`` for a
    decision that is not one of ``DECISIONS``.
    """
    if decision not in DECISIONS:
        raise ValueError(f"unknown decision {decision!r}: one of {', '.join(DECISIONS)}")
    refused = _refusal(content_id, decision, user, expected)
    if refused:
        return DecisionOutcome(decision=decision, applied=False, content=_current(content_id), refused=refused)
    items = Content.objects.filter(pk=content_id, status=expected)
    if stash is not None:
        items = items.filter(stash=stash)
    if decision == "judge":
        applied = expected in DECIDED_STATUSES and _judge_again(items, user)
    else:
        verdict = _VERDICTS[decision]
        only = {status: to for status, to in verdict.changes.items() if status == expected}
        applied = bool(only) and _review(items, replace(verdict, changes=only), user, note) > 0
    current = _current(content_id)
    first = applied and decision == "approve" and current is not None and current.status == Status.HELD
    return DecisionOutcome(decision=decision, applied=applied, content=current, first_approval=first)


def _current(content_id: uuid.UUID | str) -> Content | None:
    return (
        Content.objects.select_related("stash", "decided_by", "reviewed_by", "claimed_by").filter(pk=content_id).first()
    )


def _refusal(content_id: uuid.UUID | str, decision: str, user: User, expected: str) -> str:
    """Why ``user`` may not make ``decision`` on a held item now (``CLAIMED``, ``APPROVED_ALREADY``),
    or blank. ``_review`` checks the same under the row locks; this names the reason."""
    if expected != Status.HELD:
        return ""
    content = Content.objects.select_related("stash").filter(pk=content_id, status=Status.HELD).first()
    if content is None:
        return ""
    if review_queue.held_by_other(content, user):
        return CLAIMED
    if decision == "approve" and user is not None:
        code = review_queue.reason_codes([content]).get(content.pk, "")
        if review_queue.needs_two(content, code):
            approvals = review_queue.first_approvals([content])[content.pk]
            if any(review.reviewer_id == user.pk for review in approvals):
                return APPROVED_ALREADY
    return ""


def _judge_again(items: QuerySet[Content], user: User) -> bool:
    """Send ``items`` to be judged again under their row locks, so no verdict slips in between;
    a held item another reviewer has claimed is left alone, as ``_review`` leaves it.

    A person's decision on the item is replaced (kept in its history): this is a person
    deciding, on the item's own page, that the hooks should judge it.
    """
    claims = ~Q(status=Status.HELD) | review_queue.free_for(user, timezone.now())
    with transaction.atomic():
        ids = list(items.filter(claims).select_for_update(of=("self",)).values_list("pk", flat=True))
        return bool(ids) and reprocess(Content.objects.filter(pk__in=ids), include_reviewed=True) > 0


# --- the items awaiting review ------------------------------------------------------------------


class _HeldCount(TypedDict):
    held_count: int


def with_held_counts(stashes: QuerySet[Stash]) -> QuerySet[WithAnnotations[Stash, _HeldCount]]:
    """``stashes`` with ``held_count``: how many of each one's items await review (0 for none), read
    by a subquery in the same query (other annotations' joins do not multiply it)."""
    held = (
        Content.objects.filter(stash=OuterRef("pk"), status=Status.HELD)
        .order_by()
        .values("stash")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return stashes.annotate(held_count=Coalesce(Subquery(held, output_field=IntegerField()), Value(0)))


def held_counts() -> list[tuple[Stash, int]]:
    """Every stash with held items and how many (``with_held_counts``), by name, in one query."""
    stashes = with_held_counts(Stash.objects.all()).filter(held_count__gt=0).order_by("name", "pk")
    return [(stash, stash.held_count) for stash in stashes]


def _review(
    queryset: QuerySet[Content], verdict: _Verdict, user: User | None, note: str, *, automated: bool = False
) -> int:
    """Move the items of ``queryset`` whose status is a key of ``verdict.changes`` to its value.

    Written with ``update``/``bulk_update``: no ``post_save``, so nothing is judged again.
    Items accepted here join their stash's queue; items rejected here leave it. Each decision is
    kept as a ``Review`` of the item (one ``bulk_create``) and ends the item's claim. Held items
    someone else has claimed are left alone, unless the decision is ``automated`` (expiry);
    a four-eyes approval that is the first one only records it (``_four_eyes``).
    """
    changes, reason, overturning = verdict.changes, verdict.reason, verdict.overturning
    # An overturn is never undone by overturning again.
    unturned = Q(overturned=False) if overturning else Q()
    now = timezone.now()
    claims = Q() if automated else ~Q(status=Status.HELD) | review_queue.free_for(user, now)
    ids = list(queryset.filter(unturned).values_list("pk", flat=True))
    with transaction.atomic():
        # Locked like the worker locks what it records, so a review and a verdict never cross.
        items = list(
            Content.objects.select_for_update(of=("self",))
            .select_related("stash")
            .filter(unturned, claims, pk__in=ids, status__in=list(changes))
            .order_by("created_at", "pk")
        )
        first: list[Content] = []
        if verdict.decision == Review.Decision.APPROVE and user is not None:
            items, first = _four_eyes(items, user, note, now)
        counters = after_verdict.new_counters()
        accepted_by_stash = defaultdict(list)
        for item in items:
            before, item.status = item.status, changes[item.status]
            item.reason = f"{reason} (was {before}: {item.reason})" if overturning and item.reason else reason
            item.overturned = item.overturned or overturning
            item.reviewed_by, item.reviewed_at, item.review_note, item.updated_at = user, now, note, now
            item.queue_seq, item.claimed_by, item.claimed_until = None, None, None
            if item.status == Status.ACCEPTED:
                accepted_by_stash[item.stash_id].append(item)
            if overturning and before in (Status.REJECTED, Status.HELD) and item.decided_by_id:
                counters[item.decided_by_id]["overturned_count"] += 1
        # Stashes, then hook configs: the lock order of _record.
        for stash_id in sorted(accepted_by_stash):
            after_verdict.assign_queue_positions(stash_id, accepted_by_stash[stash_id])
        after_verdict.add_counters(counters)
        bulk_sql.update_rows(
            Content,
            items,
            [
                "status",
                "reason",
                "overturned",
                "reviewed_by",
                "reviewed_at",
                "review_note",
                "queue_seq",
                "updated_at",
                "claimed_by",
                "claimed_until",
            ],
        )
        Review.objects.bulk_create(
            [
                Review(
                    content=item,
                    revision=item.revision,
                    decision=verdict.decision,
                    status=item.status,
                    reviewer=user,
                    note=note,
                    created_at=now,
                )
                for item in items
            ]
        )
        feedback.send([] if automated else items)  # to the hooks that decided them: a person's word
        auto_observe.after_decisions([] if automated else items)  # their precision, checked after commit
        statements.end([item for item in items if item.status == Status.ACCEPTED], now)  # a restriction lifted
        kind = Statement.Kind.EXPIRY if automated else Statement.Kind.REVIEWER
        statements.record(items, kind, reviewer=user, note=note, now=now)
        transaction.on_commit(lambda: _notify_reviewed(items))
    return len(items) + len(first)


def _four_eyes(items: list[Content], user: User, note: str, now: datetime) -> tuple[list[Content], list[Content]]:
    """Split the held ``items`` ``user`` approves into those approved now and those whose approval
    is the first of two (their stash's ``four_eyes_reasons`` name the code they were held with,
    and no other reviewer approved them yet): those get a ``FIRST_APPROVAL`` review, stay held and
    are released. Items ``user`` approved once already are left out of both."""
    stashes_with_rule = [item for item in items if item.status == Status.HELD and item.stash.four_eyes_reasons]
    if not stashes_with_rule:
        return items, []
    codes = review_queue.reason_codes(stashes_with_rule)
    needing = [item for item in stashes_with_rule if review_queue.needs_two(item, codes.get(item.pk, ""))]
    approvals = review_queue.first_approvals(needing)
    first: list[Content] = []
    twice: set[uuid.UUID] = set()
    for item in needing:
        reviewers = {review.reviewer_id for review in approvals[item.pk]}
        if user.pk in reviewers:
            twice.add(item.pk)
        elif not reviewers:
            first.append(item)
    first_ids = {item.pk for item in first}
    approve_now = [item for item in items if item.pk not in first_ids and item.pk not in twice]
    if first:
        Content.objects.filter(pk__in=list(first_ids)).update(claimed_by=None, claimed_until=None, updated_at=now)
        Review.objects.bulk_create(
            [
                Review(
                    content=item,
                    revision=item.revision,
                    decision=Review.Decision.FIRST_APPROVAL,
                    status=Status.HELD,
                    reviewer=user,
                    note=note,
                    created_at=now,
                )
                for item in first
            ]
        )
    return approve_now, first


def _notify_reviewed(items: list[Content]) -> None:
    """A reviewer's verdict reaches the sinks like a worker's: ``on_accept`` / ``on_reject``."""
    deliveries: list[publishing.Delivery] = []
    for content in items:
        event = pipeline.verdict_event(content.status)
        result = pipeline.Result(verdict=content.status, payload=content.payload, reason=content.reason)
        deliveries.extend(after_verdict.notify(pipeline_for(content.stash), content, item_for(content), event, result))
    delivering.send(deliveries)


# --- replaying ---------------------------------------------------------------------------------


@dataclass
class ReplayChange:
    """An item whose verdict the current hooks would change."""

    content: Content
    before: str
    result: pipeline.Result

    @property
    def submitted(self) -> dict[str, Any]:
        """The payload the item was submitted with (before any transform): the one judged again."""
        return submitted_payload(self.content)

    @property
    def decided_before(self) -> str:
        """The title of the hook that rejected or held the item, as recorded; blank if none did."""
        hook = self.content.decided_by if self.content.decided_by_id else None
        return hook.title if hook is not None and self.before != Status.ACCEPTED else ""

    @property
    def decided_now(self) -> str:
        """The title of the hook that would reject or hold it now; blank if none would."""
        return next((entry.title for entry in self.result.trail if entry.stopped), "")


@dataclass
class ReplayReport:
    """What the current hooks would say about recent items, next to what was recorded."""

    compared: int = 0
    changes: list[ReplayChange] = field(default_factory=list)
    #: The hooks that judged them (the enabled ones, in run order).
    steps: tuple[pipeline.Step, ...] = ()

    def newly(self, verdict: str) -> int:
        return sum(1 for change in self.changes if change.result.verdict == verdict)

    @property
    def unchanged(self) -> int:
        return self.compared - len(self.changes)


def replay(
    stash: Stash, last_n: int, *, hooks: Iterable[HookConfig] | None = None, document: Mapping[str, Any] | None = None
) -> ReplayReport:
    """Judge the last ``last_n`` judged items of ``stash`` again with its current hooks, or with a
    draft of them (``hooks``: configs in run order, saved or not), or with those of a pipeline
    ``document`` (a file's: checked as an import checks it; ``InvalidDocument`` names each fault).

    Nothing is saved or counted and no sink is called. Each item is judged on the payload it
    was submitted with (before any transform) and compared with its recorded status, which
    for a reviewed item is the reviewer's verdict. The hooks run in a child process given
    ``STASH_SIMULATE_TIMEOUT`` seconds in all: past it, ``DeadlineExceeded`` names the item
    and the hook that was running.
    """
    item_pipeline = looking_pipeline(stash, hooks=hooks, document=document)
    report = ReplayReport(steps=item_pipeline.steps)
    judged = list(
        Content.objects.filter(stash=stash, status__in=[Status.ACCEPTED, Status.REJECTED, Status.HELD])
        .select_related("decided_by")
        .order_by("-created_at", "-pk")[: max(0, int(last_n))]
    )
    for content in judged:
        content.stash = stash

    def rejudge(progress: Callable[[str], None]) -> list[pipeline.Result]:
        results = []
        for content in judged:
            submitted = submitted_payload(content)
            on_step = lambda step, pk=content.pk: progress(f"hook {step.title!r} (item {pk})")  # noqa: E731
            looking = item_pipeline.looking()  # each item on scratch state: the real counts stay
            results.append(looking.run(replace(item_for(content), payload=submitted), on_step=on_step))
        return results

    for content, result in zip(judged, call_with_deadline(rejudge, settings.STASH_SIMULATE_TIMEOUT), strict=True):
        report.compared += 1
        if result.verdict != content.status:
            report.changes.append(ReplayChange(content=content, before=content.status, result=result))
    return report
