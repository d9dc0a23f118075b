"""Appeals (DSA Art. 20): a submitter contests the rejection of their item; a person other than the
one who decided reviews it; a reversal accepts the item and counts against the hook that rejected it.

::

    appeal = appeals.appeal(content, "It is a recipe, not spam.", user)
    appeals.decide_appeal(appeal.pk, "reversed", "A recipe indeed.", reviewer)   # -> "reversed"
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from stash.core import pipeline
from stash.db import bulk_sql
from stash.models import Appeal, Content, HookConfig, Review, Stash, Statement
from stash.models.moderation import APPEAL_TEXT_MAX
from stash.processing import after_verdict, auto_observe, delivering, feedback, statements
from stash.processing.building import item_for, pipeline_for

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

logger = logging.getLogger(__name__)

#: The session key under which a browser keeps the ids of the items it submitted: what lets an
#: anonymous submitter follow (``/c/<id>/``) and appeal their item.
SUBMITTED_SESSION_KEY = "stash_submitted"
#: What a reviewer may decide on an appeal.
OUTCOMES = (Appeal.Status.UPHELD, Appeal.Status.REVERSED)
#: The permission that reviewing items needs, and so deciding appeals.
DECIDE_PERMISSION = "stash.change_content"


class AppealRefused(Exception):
    """An appeal that cannot be made: ``field`` names the input at fault (None: the item itself)."""

    field: str | None = None


class InvalidStatement(AppealRefused):
    """The submitter's text is empty or too long."""

    field = "statement"


class NotAppealable(AppealRefused):
    """The item is not one that may be appealed (not rejected, or its stash takes no appeals)."""


class AppealTooLate(AppealRefused):
    """The appeal window has closed; ``deadline`` says when."""

    def __init__(self, deadline: datetime) -> None:
        self.deadline = deadline
        super().__init__(
            f"The time to appeal ended on {deadline:%Y-%m-%d %H:%M} UTC."
            if deadline.utcoffset() == timedelta(0)
            else f"The time to appeal ended at {deadline.isoformat()}."
        )


class AppealConflict(Exception):
    """The request clashes with what is already there: a second appeal of the same decision, or an
    appeal decided already."""


class NotYourAppealToDecide(PermissionDenied):
    """The user may not decide this appeal: they made the decision appealed, or may not review."""


# --- appealing -----------------------------------------------------------------------------------


def may_appeal(user: User | AnonymousUser | None, content: Content, submitted_ids: Iterable[str] = ()) -> bool:
    """Whether ``user`` may appeal decisions on ``content``: its submitter when logged in; for an
    item submitted anonymously, the browser that submitted it (its id is among ``submitted_ids``,
    the session's ``SUBMITTED_SESSION_KEY``: the rule that shows it the item's page)."""
    if content.submitted_by_id is not None:
        return user is not None and user.is_authenticated and user.pk == content.submitted_by_id
    return str(content.pk) in {str(pk) for pk in submitted_ids}


def deadline(content: Content) -> datetime | None:
    """Until when the current decision on ``content`` may be appealed; None when it may not be at
    all (not rejected, or its stash's ``appeal_days`` is 0).

    The statement of reasons says (``appeal_until``); a statement without one, or an item rejected
    before statements were written, gives ``appeal_days`` from when it was decided.
    """
    days = content.stash.appeal_days
    if content.status != Content.Status.REJECTED or days == 0:
        return None
    statement = statements.current(content)
    if statement is not None and statement.appeal_until is not None:
        return statement.appeal_until
    decided = statement.decided_at if statement is not None else _decided_at(content)
    return decided + timedelta(days=days)


def appealable(content: Content, now: datetime | None = None) -> bool:
    """Whether ``content`` may be appealed now: rejected, within the window, no appeal of it yet."""
    until = deadline(content)
    return (
        until is not None
        and (now or timezone.now()) <= until
        and not Appeal.objects.filter(content=content, revision=content.revision).exists()
    )


def appeal(content: Content, text: str, user: User | AnonymousUser | None, now: datetime | None = None) -> Appeal:
    """Appeal the rejection of ``content`` with the submitter's ``text`` (1 to ``APPEAL_TEXT_MAX``
    characters). Who may appeal is the face's to check (``may_appeal``).

    Raises ``InvalidStatement`` for an empty or too long text, ``NotAppealable`` for an item that is
    not rejected or a stash that takes no appeals, ``AppealTooLate`` past the deadline (it says when)
    and ``AppealConflict`` when this decision (this revision of the item) was appealed already.
    """
    text = (text or "").strip()
    if not text:
        raise InvalidStatement("Say why you think the decision is wrong.")
    if len(text) > APPEAL_TEXT_MAX:
        raise InvalidStatement(f"Keep it to {APPEAL_TEXT_MAX} characters (this has {len(text)}).")
    now = now or timezone.now()
    with transaction.atomic():
        # The item's row first (the lock order), so a verdict or an edit cannot slip in between.
        locked = Content.objects.select_for_update(of=("self",)).select_related("stash").filter(pk=content.pk).first()
        if locked is None:
            raise NotAppealable("This item no longer exists.")
        content = locked
        if content.stash.appeal_days == 0:
            raise NotAppealable("Decisions in this stash cannot be appealed.")
        if content.status != Content.Status.REJECTED:
            raise NotAppealable(f"Only a rejected item can be appealed; this one is {content.get_status_display()}.")
        if Appeal.objects.filter(content=content, revision=content.revision).exists():
            raise AppealConflict("This decision has been appealed already: each decision can be appealed once.")
        until = deadline(content)
        if until is not None and now > until:
            raise AppealTooLate(until)
        statement = statements.current(content) or _statement_for_old_decision(content)
        try:
            with transaction.atomic():
                return Appeal.objects.create(
                    content=content,
                    revision=content.revision,
                    statement=statement,
                    text=text,
                    submitted_by=user if user is not None and user.is_authenticated else None,
                    created_at=now,
                    original_reviewer_id=statement.reviewer_id or content.reviewed_by_id,
                )
        except IntegrityError as exc:  # appealed at the same moment by another request
            raise AppealConflict("This decision has been appealed already.") from exc


def appeal_of(content: Content) -> Appeal | None:
    """The appeal of the current decision on ``content`` (its current revision), if any."""
    return Appeal.objects.filter(content=content, revision=content.revision).first()


# --- deciding ------------------------------------------------------------------------------------


def may_decide(user: User | AnonymousUser, appeal: Appeal) -> bool:
    """Whether ``user`` may decide ``appeal``: a reviewer (``DECIDE_PERMISSION``) who did not make
    the decision appealed."""
    return refusal(user, appeal) is None


def refusal(user: User | AnonymousUser, appeal: Appeal) -> str | None:
    """Why ``user`` may not decide ``appeal``, in a sentence; None when they may."""
    if not user.is_authenticated or not user.has_perm(DECIDE_PERMISSION):
        return "Deciding appeals needs the permission to change content."
    if appeal.original_reviewer_id is not None and appeal.original_reviewer_id == user.pk:
        return "You made the decision appealed: another reviewer must decide the appeal."
    return None


def decide_appeal(appeal_id: int, outcome: str, note: str, user: User) -> str:
    """Decide appeal ``appeal_id`` as ``user``: ``"upheld"`` (the rejection stays) or ``"reversed"``
    (the item is accepted, joins its stash's queue, counts against the hook that rejected it as an
    overturn, and its sinks get ``on_reversed`` after commit; nothing else is sent again). Either
    way a ``Review`` is recorded and, if the stash has an ``email`` sink, the submitter is told.

    Raises ``ValueError`` for another outcome, ``Appeal.DoesNotExist`` for no such appeal,
    ``NotYourAppealToDecide`` (a ``PermissionDenied``) when ``user`` may not decide it, and
    ``AppealConflict`` when it is decided already, or (reversing) the item changed since.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"Unknown outcome {outcome!r}: one of {', '.join(OUTCOMES)}.")
    content_id = Appeal.objects.values_list("content_id", flat=True).get(pk=appeal_id)
    now = timezone.now()
    with transaction.atomic():
        # Items, then stashes, then hook configs: the item's row before the queue's and counters'.
        content = Content.objects.select_for_update(of=("self",)).select_related("stash").get(pk=content_id)
        appeal = Appeal.objects.select_for_update(of=("self",)).get(pk=appeal_id)
        reason = refusal(user, appeal)
        if reason is not None:
            raise NotYourAppealToDecide(reason)
        if appeal.status != Appeal.Status.OPEN:
            raise AppealConflict(f"This appeal was {appeal.get_status_display()} already.")
        reversing = outcome == Appeal.Status.REVERSED
        if reversing and (content.revision != appeal.revision or content.status != Content.Status.REJECTED):
            raise AppealConflict(
                f"The item changed after the appeal (it is {content.get_status_display()} now): "
                "it cannot be reversed. Uphold the appeal to close it."
            )
        if reversing:
            _reverse(content, user, note, now)
            feedback.send([content])  # the hook that rejected it is told it was wrong
            statements.end([content], now)
        else:  # the restriction stands, now on a person's decision: its statement says so, with the note
            statements.record([content], Statement.Kind.APPEAL, reviewer=user, note=note, now=now)
        Review.objects.create(
            content=content,
            revision=content.revision,
            decision=Review.Decision.REVERSE if reversing else Review.Decision.UPHOLD,
            status=content.status,
            reviewer=user,
            note=note,
            created_at=now,
        )
        appeal.status, appeal.note, appeal.decided_by, appeal.decided_at = outcome, note, user, now
        appeal.save(update_fields=["status", "note", "decided_by", "decided_at"])
        auto_observe.after_decisions([content])  # upheld or reversed: the rejecting hook's precision moved
        # Nothing slow under the locks: the sinks and the email go once the decision is committed.
        transaction.on_commit(lambda: _after_decision(content, appeal, reversing))
    return outcome


def _reverse(content: Content, user: User, note: str, now: datetime) -> None:
    """Accept the rejected ``content`` (locked) as an overturn does: queued, counted against its hook."""
    content.status = Content.Status.ACCEPTED
    content.reason = f"reversed on appeal (was rejected: {content.reason})" if content.reason else "reversed on appeal"
    content.overturned = True
    content.reviewed_by, content.reviewed_at, content.review_note, content.updated_at = user, now, note, now
    after_verdict.assign_queue_positions(content.stash_id, [content])
    counters = after_verdict.new_counters()
    if content.decided_by_id:
        counters[content.decided_by_id]["overturned_count"] += 1
    after_verdict.add_counters(counters)
    bulk_sql.update_rows(
        Content,
        [content],
        ["status", "reason", "overturned", "reviewed_by", "reviewed_at", "review_note", "queue_seq", "updated_at"],
    )


def _after_decision(content: Content, appeal: Appeal, reversed_: bool) -> None:
    """Once committed: ``on_reversed`` to the stash's listeners, and the submitter's email."""
    if reversed_:
        result = pipeline.Result(verdict=content.status, payload=content.payload, reason=content.reason)
        delivering.send(
            after_verdict.notify(pipeline_for(content.stash), content, item_for(content), pipeline.ON_REVERSED, result)
        )
    _email_submitter(content, appeal)


def _email_submitter(content: Content, appeal: Appeal) -> None:
    """Tell the submitter the outcome by email, through the backend the stash's ``email`` sink uses,
    when the stash has one enabled and the submitter has an address. A failure is logged."""
    submitter = appeal.submitted_by
    address = getattr(submitter, "email", "") if submitter is not None else ""
    if not address or not HookConfig.objects.filter(stash_id=content.stash_id, hook="email", enabled=True).exists():
        return
    from django.core.mail import send_mail

    outcome = "reversed: your item is accepted" if appeal.status == Appeal.Status.REVERSED else "upheld"
    lines = [f"Your appeal of the decision on item {content.pk} in {content.stash.name} was {outcome}."]
    if appeal.note:
        lines += ["", f"The reviewer's note: {appeal.note}"]
    try:
        send_mail(f"Your appeal was {appeal.status}", "\n".join(lines), None, [address], fail_silently=False)
    except Exception:
        logger.exception("Could not email the outcome of appeal %s to its submitter.", appeal.pk)


# --- the queue -----------------------------------------------------------------------------------


def open_appeals(stash: Stash | None = None) -> QuerySet[Appeal]:
    """The open appeals, oldest first (of ``stash`` only, if given), with their item, its stash and
    deciding hook, the statement appealed and the people involved read in the same query."""
    appeals = Appeal.objects.filter(status=Appeal.Status.OPEN).select_related(
        "content__stash", "content__decided_by", "statement", "submitted_by", "original_reviewer"
    )
    if stash is not None:
        appeals = appeals.filter(content__stash=stash)
    return appeals.order_by("created_at", "pk")


def appeals_of(status: str | None = None, stash: Stash | None = None) -> QuerySet[Appeal]:
    """Appeals by ``status`` and ``stash`` (either None: any), oldest first, read as ``open_appeals``."""
    appeals = Appeal.objects.select_related(
        "content__stash", "content__decided_by", "statement", "submitted_by", "original_reviewer", "decided_by"
    )
    if status is not None:
        appeals = appeals.filter(status=status)
    if stash is not None:
        appeals = appeals.filter(content__stash=stash)
    return appeals.order_by("created_at", "pk")


def open_appeal_count() -> int:
    """How many appeals await a decision, all stashes together."""
    return Appeal.objects.filter(status=Appeal.Status.OPEN).count()


def _decided_at(content: Content) -> datetime:
    return content.reviewed_at or content.processed_at or content.updated_at


def _statement_for_old_decision(content: Content) -> Statement:
    """The statement of reasons of an item rejected before statements were written, as its stash's
    policy words it now and dated when it was decided, so that its appeal has a decision to point at."""
    kind = Statement.Kind.REVIEWER if content.reviewed_by_id is not None else Statement.Kind.HOOK
    return statements.record([content], kind, reviewer=content.reviewed_by, now=_decided_at(content))[0]
