"""Submitted content: its payload, status and verdict, its lease while a worker judges it, its place in the queue."""

import json
import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Self

from django.conf import settings
from django.db import models
from django.db.models import F, Min
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from stash.models import backpressure
from stash.models.base import LoadedStateModel
from stash.models.hooks import HookConfig
from stash.models.stashes import Stash
from stash.models.validators import content_hash, validate_payload

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class ContentQuerySet(models.QuerySet["Content"]):
    def accepted(self) -> Self:
        return self.filter(status=Content.Status.ACCEPTED)

    def waiting(self) -> Self:
        """The items still to be judged: ``pending`` or ``processing`` (``WAITING_STATUSES``)."""
        return self.filter(status__in=WAITING_STATUSES)

    def lag_by_stash(self, now: datetime | None = None) -> dict[int, float]:
        """Seconds since the oldest ``pending`` or ``processing`` item of each stash was saved (at
        its current revision), by stash id; a stash with none waiting is left out."""
        now = now or timezone.now()
        oldest = (
            self.waiting()
            .order_by()
            .values("stash_id")
            .annotate(oldest=Min("updated_at"))
            .values_list("stash_id", "oldest")
        )
        return {stash_id: max((now - since).total_seconds(), 0.0) for stash_id, since in oldest}

    def id_prefix(self, term: str) -> Self:
        """The items whose id starts with ``term`` (hex digits, dashes ignored: ``3f2a9c1b`` or
        ``3f2a9c1b-77e1``), read as a range on the id (an index seek, no cast to text); none for a
        term that is not such a prefix (see ``id_prefix_bounds``)."""
        bounds = id_prefix_bounds(term)
        if bounds is None:
            return self.none()
        low, high = bounds
        return self.filter(pk__gte=low) if high is None else self.filter(pk__gte=low, pk__lt=high)


#: The shortest id prefix searched for: fewer hex digits would match a sixteenth of everything, or more.
ID_PREFIX_MIN = 4


def id_prefix_bounds(term: str) -> tuple[uuid.UUID, uuid.UUID | None] | None:
    """The ids starting with ``term``, as ``(low, high)``: ``low <= id < high`` (``high`` None: no
    upper bound, the prefix is all ``f``). None when ``term`` without its dashes is not 4 to 32 hex digits.

    >>> id_prefix_bounds("3f2a-9c")
    (UUID('3f2a9c00-0000-0000-0000-000000000000'), UUID('3f2a9d00-0000-0000-0000-000000000000'))
    """
    digits = term.strip().replace("-", "").lower()
    if not ID_PREFIX_MIN <= len(digits) <= 32 or any(digit not in "0123456789abcdef" for digit in digits):
        return None
    shift = 4 * (32 - len(digits))
    start = int(digits, 16)
    low = uuid.UUID(int=start << shift)
    end = (start + 1) << shift
    return low, (uuid.UUID(int=end) if end < 1 << 128 else None)


def lease_end(now: datetime | None = None) -> datetime:
    """When a lease taken ``now`` runs out: the sweeper acts on items still waiting after it."""
    return (now or timezone.now()) + timedelta(seconds=settings.STASH_LEASE_SECONDS)


class Content(LoadedStateModel):
    """A submitted item. Every change of its payload is a new revision, judged again."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        PROCESSING = "processing", _("processing")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")
        HELD = "held", _("held for review")
        FAILED = "failed", _("failed")
        WAITING = "waiting", _("waiting for a service")

    class Source(models.TextChoices):
        FORM = "form", _("web form")
        API = "api", _("API")
        ADMIN = "admin", _("admin")
        CODE = "code", _("code (ORM)")  # saved by a program through the models or processing, not a face

    # Fields the worker owns: a save that does not change the payload leaves them alone, so a
    # stale form can never overwrite a verdict.
    PROCESSING_FIELDS = (
        "status",
        "reason",
        "decided_by",
        "processed_revision",
        "processed_at",
        "attempts",
        "lease_until",
        "lease_token",
        "queue_seq",
        "original_payload",
        "payload",
        "content_hash",
        "revision",
        "overturned",
        "reviewed_by",
        "reviewed_at",
        "review_note",
        "bulk",
        "claimed_by",
        "claimed_until",
        "priority",
    )

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by the (stash, status) and (stash, queue_seq) indexes below, which lead with it; so
    # is status by (status, lease_until). Every index is written again when an item is claimed
    # and judged, so none is kept twice.
    stash = models.ForeignKey(
        Stash, on_delete=models.PROTECT, related_name="contents", verbose_name=_("stash"), db_index=False
    )
    payload = models.JSONField(_("payload"), default=dict)
    original_payload = models.JSONField(
        _("original payload"),
        null=True,
        blank=True,
        editable=False,
        help_text=_("The payload as submitted, when transforms changed it."),
    )
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.PENDING, editable=False
    )
    reason = models.TextField(_("reason"), blank=True, editable=False)
    decided_by = models.ForeignKey(
        HookConfig,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="decided",
        editable=False,
        verbose_name=_("decided by"),
        db_index=False,  # a partial index below
    )
    revision = models.PositiveIntegerField(_("revision"), default=1, editable=False)
    processed_revision = models.PositiveIntegerField(_("processed revision"), null=True, blank=True, editable=False)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0, editable=False)
    lease_until = models.DateTimeField(_("lease until"), null=True, blank=True, editable=False)
    lease_token = models.UUIDField(_("lease token"), null=True, blank=True, editable=False)
    queue_seq = models.PositiveBigIntegerField(_("queue position"), null=True, blank=True, editable=False)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="stash_contents",
        verbose_name=_("submitted by"),
        db_index=False,  # a partial index below
    )
    source = models.CharField(
        _("source"),
        max_length=10,
        choices=Source.choices,
        default=Source.CODE,
        help_text=_("Where it was submitted: the web form, the API, the admin, or code."),
    )
    idempotency_key = models.CharField(_("idempotency key"), max_length=200, blank=True)
    content_hash = models.CharField(_("content hash"), max_length=64, editable=False)  # indexed below
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    processed_at = models.DateTimeField(_("processed"), null=True, blank=True, editable=False)
    overturned = models.BooleanField(
        _("overturned"), default=False, editable=False, help_text=_("A reviewer reversed the hooks' verdict.")
    )
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="stash_reviews",
        editable=False,
        verbose_name=_("reviewed by"),
        db_index=False,  # a partial index below
    )
    reviewed_at = models.DateTimeField(_("reviewed"), null=True, blank=True, editable=False)
    review_note = models.TextField(_("review note"), blank=True, editable=False)
    # Live saves are judged ahead of bulk work: see ``processing.judging``.
    bulk = models.BooleanField(
        _("bulk"),
        default=False,
        db_default=False,
        editable=False,
        help_text=_(
            "Sent for judging in bulk (a bulk submit, a large re-judge): live saves "
            "waiting in its queue are judged first."
        ),
    )

    # The review queue (``processing.review_queue``): who is looking at a held item, and its place.
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
        verbose_name=_("claimed by"),
        db_index=False,  # a partial index below
    )
    claimed_until = models.DateTimeField(_("claimed until"), null=True, blank=True, editable=False)
    priority = models.FloatField(
        _("review priority"),
        null=True,
        blank=True,
        editable=False,
        help_text=_("Its stash's review priority when it was held: higher first."),
    )

    objects = ContentQuerySet.as_manager()

    class Meta:
        verbose_name = _("content")
        verbose_name_plural = _("contents")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["stash", "status"], name="stash_content_stash_status"),
            models.Index(fields=["status", "lease_until"], name="stash_content_lease"),
            models.Index(fields=["stash", "queue_seq"], name="stash_content_queue"),
            # The live saves waiting: few rows however large a bulk backlog, read by every bulk batch.
            models.Index(
                fields=["stash", "created_at"],
                condition=models.Q(status="pending", bulk=False),
                name="stash_content_live_waiting",
            ),
            # Equality only: one btree (db_index would add a second, for LIKE, on PostgreSQL).
            models.Index(fields=["content_hash"], name="stash_content_hash"),
            # Who decided, reviewed, claimed or submitted an item: most items have nobody there, and an
            # index of the rows that have costs nothing to the saves and verdicts of the others.
            *(
                models.Index(
                    fields=[field], condition=models.Q(**{f"{field}__isnull": False}), name=f"stash_content_{field}"
                )
                for field in ("decided_by", "reviewed_by", "claimed_by", "submitted_by")
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["stash", "submitted_by", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="stash_content_idempotency",
            )
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    TRACKED_FIELDS = ("payload", "stash_id")

    @property
    def needs_judging(self) -> bool:
        """True when the payload or stash differs from what was loaded (or the item is new)."""
        if self._state.adding or getattr(self, "_loaded", None) is None:
            return True
        return any(self._loaded[f] != getattr(self, f) for f in self._loaded)

    @property
    def reviewer(self) -> "User | None":
        """The person whose review gave the item its current verdict, or None when the hooks gave it
        (never reviewed, or judged again since)."""
        if self.reviewed_by_id is None or self.status not in (self.Status.ACCEPTED, self.Status.REJECTED):
            return None
        if self.reviewed_at is None or (self.processed_at is not None and self.processed_at > self.reviewed_at):
            return None
        return self.reviewed_by

    def clean(self) -> None:
        super().clean()
        validate_payload(self.payload, self.stash if self.stash_id else None)

    def save(self, *args: Any, canonical: bytes | None = None, **kwargs: Any) -> None:
        """Save; a new item or a changed payload becomes a new pending revision.

        Raises ``ValidationError`` for a payload that is not a JSON object, and ``StashFull`` for a
        new item of a stash that has ``max_waiting`` items waiting to be judged already. A caller that has
        validated the payload already passes what ``validate_payload`` returned as ``canonical``:
        the payload is neither checked nor encoded again (``processing.submit`` does).
        """
        if canonical is None:
            validate_payload(self.payload, None)
        if self._state.adding:
            backpressure.check_room(self.stash)  # StashFull past the stash's max_waiting
        bump = False
        if self.needs_judging:
            if not self._state.adding:
                bump = True
                self.revision = F("revision") + 1  # in the database: concurrent edits never share one
            self.content_hash = content_hash(self.payload, canonical)
            self.status = self.Status.PENDING
            self.reason = ""
            self.decided_by = None
            self.attempts = 0
            self.bulk = False
            self.lease_token = None
            self.original_payload = None
            self.queue_seq = None
            self.overturned = False
            # The sweeper sends the item again if no worker has claimed it by then.
            self.lease_until = lease_end()
            self._enqueue_on_commit = True
        elif kwargs.get("update_fields") is None and not kwargs.get("force_insert"):
            kwargs["update_fields"] = [
                f.name for f in self._meta.concrete_fields if not f.primary_key and f.name not in self.PROCESSING_FIELDS
            ]
        super().save(*args, **kwargs)
        if bump:
            self.refresh_from_db(fields=["revision"])
        # Parsing the canonical JSON copies a large payload several times faster than deepcopy.
        self._remember(copies={"payload": json.loads(canonical)} if canonical is not None else None)


#: The statuses of an item still to be judged (``ContentQuerySet.waiting``).
WAITING_STATUSES = (Content.Status.PENDING, Content.Status.PROCESSING)
