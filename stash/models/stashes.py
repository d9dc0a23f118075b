"""A stash: a named pipeline, its policies, its queue and the version of its pipeline."""

from collections.abc import Iterable
from typing import Any

from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F
from django.utils.translation import gettext, gettext_lazy as _

from stash.db import publishing, versioning
from stash.models.base import LoadedStateModel
from stash.models.choices import ExamplesPolicy, ExpireAction, OnError
from stash.models.validators import (
    QUEUE_NAME_MAX,
    validate_queue_name,
    validate_reason_codes,
    validate_review_priority,
    validate_statement_policy,
)


class Stash(LoadedStateModel):
    """A named pipeline: the hooks that judge what is submitted to it, and its queue."""

    slug = models.SlugField(_("slug"), unique=True)
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    is_active = models.BooleanField(_("active"), default=True, help_text=_("Inactive stashes take no submissions."))
    allow_anonymous = models.BooleanField(
        _("allow anonymous submissions"),
        default=False,
        help_text=_("Anyone may submit (throttled); otherwise submitting needs the add-content permission."),
    )
    on_error = models.CharField(
        _("on hook error"),
        max_length=10,
        choices=OnError.choices,
        default=OnError.REJECT,
        help_text=_("What a failing hook does to an item, unless the hook says otherwise."),
    )
    max_payload_bytes = models.PositiveIntegerField(
        _("max payload bytes"), default=1024 * 1024, help_text=_("Largest payload accepted, as compact JSON.")
    )
    max_waiting = models.PositiveIntegerField(
        _("max waiting"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_(
            "When this many items wait to be judged, new submissions are refused (429 with Retry-After) "
            "until the workers catch up; blank: never."
        ),
    )
    queue = models.CharField(
        _("Celery queue"),
        max_length=QUEUE_NAME_MAX,
        blank=True,
        validators=[validate_queue_name],
        help_text=_(
            "The queue its items' messages and sink deliveries go to; blank: the default queue "
            "(STASH_QUEUE). It needs workers of its own: celery -A hooksite worker -Q followed by this name."
        ),
    )
    examples_policy = models.CharField(
        _("when an example breaks"),
        max_length=10,
        choices=ExamplesPolicy.choices,
        default=ExamplesPolicy.BLOCK,
        help_text=_(
            "A change of its hooks first runs its golden examples: a change that breaks one is refused "
            "(block) or made with a warning (warn)."
        ),
    )
    statement_policy = models.JSONField(
        _("statement policy"),
        default=dict,
        blank=True,
        validators=[validate_statement_policy],
        help_text=_(
            "What the submitter of a rejected or held item is told, per reason code: the text, the ground "
            "(terms or illegal, with its reference), the DSA category and the restriction."
        ),
    )
    appeal_days = models.PositiveSmallIntegerField(
        _("appeal days"), default=14, help_text=_("How many days a submitter has to appeal a rejection; 0: no appeals.")
    )
    review_priority = models.TextField(
        _("review priority"),
        blank=True,
        validators=[validate_review_priority],
        help_text=_(
            "A CEL expression over payload, meta and reason_code giving a number: held items with a higher "
            "one come first in the review queue (then the oldest). Blank: oldest first."
        ),
    )
    review_hours = models.PositiveIntegerField(
        _("review deadline (hours)"),
        default=0,
        help_text=_("A held item not decided within this many hours is overdue; 0: no deadline."),
    )
    review_expire_hours = models.PositiveIntegerField(
        _("decide automatically after (hours)"),
        default=0,
        help_text=_("A held item still undecided after this many hours is decided automatically; 0: never."),
    )
    review_expire_action = models.CharField(
        _("automatic decision"),
        max_length=10,
        choices=ExpireAction.choices,
        default=ExpireAction.REJECT,
        help_text=_("What an automatic decision does to a held item past its time."),
    )
    four_eyes_reasons = models.JSONField(
        _("four-eyes reason codes"),
        default=list,
        blank=True,
        validators=[validate_reason_codes],
        help_text=_("Items held with one of these reason codes need two different reviewers to approve them."),
    )
    config_version = models.PositiveIntegerField(
        _("pipeline version"),
        default=1,
        editable=False,
        help_text=_("Bumped on every change to the stash or its hooks; workers rebuild their pipeline on change."),
    )
    queue_head = models.PositiveBigIntegerField(
        _("queue head"), default=0, editable=False, help_text=_("Sequence number of the last accepted item.")
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("stash")
        verbose_name_plural = _("stashes")
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.name or self.slug

    # Compared with what was loaded: a save that changes none of them leaves ``config_version``
    # (the workers keep their cached pipeline and stash); a save that moves the stash to another
    # queue says so (``queue_moved``), so that its waiting items follow it (see ``signals``).
    CONFIG_FIELDS = (
        "slug",
        "name",
        "description",
        "is_active",
        "allow_anonymous",
        "on_error",
        "max_payload_bytes",
        "max_waiting",
        "queue",
        "examples_policy",
        "statement_policy",
        "appeal_days",
        "review_priority",
        "review_hours",
        "review_expire_hours",
        "review_expire_action",
        "four_eyes_reasons",
    )
    TRACKED_FIELDS = CONFIG_FIELDS
    # Written by their own statements (bumps, the workers' queue numbers), never from memory.
    OWN_FIELDS = ("config_version", "queue_head", "created_at")
    # Not fields: what ``processing.submission_stash`` read with the stash, only on the stash it returns.
    submitter_may_add: bool
    key_used: bool

    @property
    def effective_queue(self) -> str:
        """The Celery queue its items' messages go to: its own, or ``STASH_QUEUE``."""
        return publishing.queue_name(self.queue)

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save; a change of any of ``CONFIG_FIELDS`` moves ``config_version`` (once per
        ``versioning.one_change``), an unchanged save does not."""
        adding = self._state.adding
        self.queue_moved = not adding and self._changed(["queue"])
        update_fields = kwargs.get("update_fields")
        changed = not adding and self._changed(
            [f for f in self.CONFIG_FIELDS if update_fields is None or f in update_fields]
        )
        with versioning.one_change(using=kwargs.get("using") or "default"):
            if not adding and not kwargs.get("force_insert"):
                written = (
                    [f.name for f in self._meta.concrete_fields if not f.primary_key and f.name not in self.OWN_FIELDS]
                    if update_fields is None
                    else [f for f in update_fields if f != "config_version"]
                )
                if changed and versioning.to_bump([self.pk]):
                    # The default error policy, the queue, ...: cached pipelines and stashes must be read again.
                    self.config_version = F("config_version") + 1
                    written.append("config_version")
                kwargs["update_fields"] = written
            super().save(*args, **kwargs)
            if adding:
                versioning.created(self.pk)  # its first version
        self._remember()
        if changed:
            self.refresh_from_db(fields=["config_version"])

    @staticmethod
    def lock(stash_ids: Iterable[int]) -> dict[int, int]:
        """Lock the rows of these stashes until the transaction ends, in id order: every writer of a
        stash's hooks takes this lock first and in this order, so none deadlocks or sees positions
        half renumbered. Returns their config versions by id (stashes that are gone are left out)."""
        return dict(
            Stash.objects.select_for_update()
            .filter(pk__in=set(stash_ids))
            .order_by("pk")
            .values_list("pk", "config_version")
        )

    @staticmethod
    def lock_one(stash_id: int) -> int:
        """``lock`` one stash; returns its config version, or raises ``Stash.DoesNotExist``."""
        try:
            return Stash.lock([stash_id])[stash_id]
        except KeyError:
            raise Stash.DoesNotExist(gettext("Stash %(id)s does not exist.") % {"id": stash_id}) from None

    @staticmethod
    def bump_config_version(stash_ids: Iterable[int]) -> None:
        """Mark the pipelines of these stashes as changed (locking their rows in id order): once per
        ``versioning.one_change``, whose first bump of a stash holds its row lock until the commit."""
        ids = versioning.to_bump(stash_ids)
        if not ids:
            return
        if len(ids) > 1:
            Stash.lock(ids)
        Stash.objects.filter(pk__in=ids).update(config_version=F("config_version") + 1)
