"""Stashes, their configured hooks, submitted content and the runs that judged it."""
import copy
import hashlib
import json
import math
import re
import unicodedata
import uuid
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Max, Min
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.translation import gettext, gettext_lazy as _

from stash.core import documents, pipeline, registry
from stash.core.exceptions import ExpressionError, InvalidParams, NotRegistered
from stash.core.expressions import validate_condition
from stash.db import publishing, versioning


class LoadedStateModel(models.Model):
    """Remembers ``TRACKED_FIELDS`` as last read from or written to the database.

    The values are copied, so a JSON field edited in place still counts as changed, and
    ``refresh_from_db`` makes what it read the new baseline. An abstract model, so that
    migrations name only ``models.Model`` among a model's bases, never this class.
    """

    TRACKED_FIELDS = ()

    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db, field_names, values):
        instance = super().from_db(db, field_names, values)
        instance._remember([f for f in cls.TRACKED_FIELDS if f in field_names])
        return instance

    def refresh_from_db(self, using=None, fields=None, **kwargs):
        super().refresh_from_db(using=using, fields=fields, **kwargs)
        deferred = self.get_deferred_fields()
        self._remember([f for f in self.TRACKED_FIELDS if f not in deferred
                        and (fields is None or f in fields or f.removesuffix("_id") in fields)])

    def _remember(self, fields=None, copies=None):
        """``copies``: fresh copies of some of the values, which the caller could make more cheaply."""
        fields = self.TRACKED_FIELDS if fields is None else fields
        copies = copies or {}
        self._loaded = {**getattr(self, "_loaded", {}),
                        **{f: copies[f] if f in copies else copy.deepcopy(getattr(self, f)) for f in fields}}

    def _changed(self, fields):
        """True unless every one of ``fields`` is known and equal to what was loaded."""
        loaded = getattr(self, "_loaded", None)
        return loaded is None or any(f not in loaded or loaded[f] != getattr(self, f) for f in fields)


class OnError(models.TextChoices):
    REJECT = pipeline.ON_ERROR_REJECT, _("reject the item")
    SKIP = pipeline.ON_ERROR_SKIP, _("skip the hook")
    HOLD = pipeline.ON_ERROR_HOLD, _("hold for review")


#: A hook's ``on_error``: its stash's (inherit), or one of ``OnError``'s.
HookOnError = models.TextChoices(
    "HookOnError", [("INHERIT", ("inherit", _("as the stash says"))),
                    *((choice.name, (choice.value, choice.label)) for choice in OnError)])


#: Longest Celery queue name a stash may give: AMQP allows 255 bytes, and the filesystem broker
#: names each message's file after its queue (within the 255 bytes of a file name).
QUEUE_NAME_MAX = 200


def validate_queue_name(value):
    """Raise ``ValidationError`` unless ``value`` can name a Celery queue on every broker stash
    runs on: no blanks, control characters or path separators (the filesystem broker writes it
    into file names), not RabbitMQ's reserved ``amq.`` prefix, at most ``QUEUE_NAME_MAX`` bytes."""
    if any(char.isspace() for char in value):
        raise ValidationError(_("A queue name cannot contain blanks."), code="whitespace")
    if any(unicodedata.category(char) in ("Cc", "Cf", "Cs") for char in value):
        raise ValidationError(_("A queue name cannot contain control characters."), code="control")
    if "/" in value or "\\" in value:
        raise ValidationError(_("A queue name cannot contain / or \\."), code="separator")
    if value.startswith("amq."):
        raise ValidationError(_("Queue names starting with \"amq.\" are reserved by RabbitMQ."), code="reserved")
    if len(value.encode("utf-8")) > QUEUE_NAME_MAX:
        raise ValidationError(_("A queue name has at most %(max)d bytes in UTF-8.") % {"max": QUEUE_NAME_MAX},
                              code="max_bytes")


class ExamplesPolicy(models.TextChoices):
    BLOCK = "block", _("refuse the change")
    WARN = "warn", _("make the change, with a warning")


class Stash(LoadedStateModel):
    """A named pipeline: the hooks that judge what is submitted to it, and its queue."""

    slug = models.SlugField(_("slug"), unique=True)
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    is_active = models.BooleanField(_("active"), default=True, help_text=_("Inactive stashes take no submissions."))
    allow_anonymous = models.BooleanField(
        _("allow anonymous submissions"), default=False,
        help_text=_("Anyone may submit (throttled); otherwise submitting needs the add-content permission."),
    )
    on_error = models.CharField(
        _("on hook error"), max_length=10, choices=OnError.choices, default=OnError.REJECT,
        help_text=_("What a failing hook does to an item, unless the hook says otherwise."),
    )
    max_payload_bytes = models.PositiveIntegerField(
        _("max payload bytes"), default=1024 * 1024, help_text=_("Largest payload accepted, as compact JSON.")
    )
    queue = models.CharField(
        _("Celery queue"), max_length=QUEUE_NAME_MAX, blank=True, validators=[validate_queue_name],
        help_text=_("The queue its items' messages and sink deliveries go to; blank: the default queue "
                    "(STASH_QUEUE). It needs workers of its own: celery -A hooksite worker -Q followed by this name."),
    )
    examples_policy = models.CharField(
        _("when an example breaks"), max_length=10, choices=ExamplesPolicy.choices, default=ExamplesPolicy.BLOCK,
        help_text=_("A change of its hooks first runs its golden examples: a change that breaks one is refused "
                    "(block) or made with a warning (warn)."),
    )
    config_version = models.PositiveIntegerField(
        _("config version"), default=1, editable=False,
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

    def __str__(self):
        return self.name or self.slug

    # Compared with what was loaded: a save that changes none of them leaves ``config_version``
    # (the workers keep their cached pipeline and stash); a save that moves the stash to another
    # queue says so (``queue_moved``), so that its waiting items follow it (see ``signals``).
    CONFIG_FIELDS = ("slug", "name", "description", "is_active", "allow_anonymous", "on_error", "max_payload_bytes",
                     "queue", "examples_policy")
    TRACKED_FIELDS = CONFIG_FIELDS
    # Written by their own statements (bumps, the workers' queue numbers), never from memory.
    OWN_FIELDS = ("config_version", "queue_head", "created_at")

    @property
    def effective_queue(self):
        """The Celery queue its items' messages go to: its own, or ``STASH_QUEUE``."""
        return publishing.queue_name(self.queue)

    def save(self, *args, **kwargs):
        """Save; a change of any of ``CONFIG_FIELDS`` moves ``config_version`` (once per
        ``versioning.one_change``), an unchanged save does not."""
        adding = self._state.adding
        self.queue_moved = not adding and self._changed(["queue"])
        update_fields = kwargs.get("update_fields")
        changed = not adding and self._changed([f for f in self.CONFIG_FIELDS
                                                if update_fields is None or f in update_fields])
        with versioning.one_change(using=kwargs.get("using") or "default"):
            if not adding and not kwargs.get("force_insert"):
                written = ([f.name for f in self._meta.concrete_fields
                            if not f.primary_key and f.name not in self.OWN_FIELDS]
                           if update_fields is None else [f for f in update_fields if f != "config_version"])
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
    def lock(stash_ids) -> dict:
        """Lock the rows of these stashes until the transaction ends, in id order: every writer of a
        stash's hooks takes this lock first and in this order, so none deadlocks or sees positions
        half renumbered. Returns their config versions by id (stashes that are gone are left out)."""
        return dict(Stash.objects.select_for_update().filter(pk__in=set(stash_ids)).order_by("pk")
                    .values_list("pk", "config_version"))

    @staticmethod
    def lock_one(stash_id) -> int:
        """``lock`` one stash; returns its config version, or raises ``Stash.DoesNotExist``."""
        try:
            return Stash.lock([stash_id])[stash_id]
        except KeyError:
            raise Stash.DoesNotExist(gettext("Stash %(id)s does not exist.") % {"id": stash_id}) from None

    @staticmethod
    def bump_config_version(stash_ids):
        """Mark the pipelines of these stashes as changed (locking their rows in id order): once per
        ``versioning.one_change``, whose first bump of a stash holds its row lock until the commit."""
        ids = versioning.to_bump(stash_ids)
        if not ids:
            return
        if len(ids) > 1:
            Stash.lock(ids)
        Stash.objects.filter(pk__in=ids).update(config_version=F("config_version") + 1)


class HookConfigQuerySet(models.QuerySet):
    def enabled(self):
        return self.filter(enabled=True)

    def in_order(self):
        return self.order_by("position", "pk")

    def update(self, **kwargs):
        """Update, and mark the stashes' pipelines changed unless only counters moved."""
        if set(kwargs) - set(HookConfig.COUNTER_FIELDS):
            stash_ids = list(self.values_list("stash_id", flat=True).distinct())
            with versioning.one_change(using=self.db):
                Stash.bump_config_version(stash_ids)  # the stash row first: see processing._record
                return super().update(**kwargs)
        return super().update(**kwargs)

    def delete(self):
        stash_ids = list(self.values_list("stash_id", flat=True).distinct())
        with versioning.one_change(using=self.db):
            # Items first, then stashes, then hook configs: the lock order of processing.
            Content.objects.filter(decided_by__in=self.values("pk")).update(decided_by=None)
            Stash.bump_config_version(stash_ids)
            return super().delete()

    def reorder(self, stash, ordered_ids):
        """Renumber ``stash``'s hooks 1..n in the order of ``ordered_ids``, atomically.

        ``ordered_ids`` must name every hook of the stash once; otherwise ``ValidationError``
        and nothing changes. Concurrent reorders of one stash queue on the stash's row lock,
        so positions are never duplicated or missing.
        """
        ordered_ids = [int(pk) for pk in ordered_ids]
        with versioning.one_change(using=self.db):  # the two steps below: one bump
            Stash.lock_one(stash.pk)
            current = set(self.model.objects.filter(stash=stash).values_list("pk", flat=True))
            if len(ordered_ids) != len(set(ordered_ids)) or set(ordered_ids) != current:
                raise ValidationError(_("The new order must list every hook of the stash exactly once."))
            # Two steps so that no intermediate row breaks the unique (stash, position):
            # first distinct negatives, then flip the sign.
            staged = [self.model(pk=pk, position=-index) for index, pk in enumerate(ordered_ids, start=1)]
            self.model.objects.bulk_update(staged, ["position"])
            self.model.objects.filter(stash=stash).update(position=-F("position"))


class HookConfig(LoadedStateModel):
    """One configured use of a registered hook in a stash: which, with what params, where."""

    COUNTER_FIELDS = ("runs_count", "kept_count", "dropped_count", "held_count", "errors_count", "time_total_us",
                      "overturned_count")

    class Mode(models.TextChoices):
        ENFORCE = pipeline.ENFORCE, _("enforce")
        OBSERVE = pipeline.OBSERVE, _("observe (record only)")

    HookOnError = HookOnError

    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="hooks", verbose_name=_("stash"))
    hook = models.CharField(_("hook"), max_length=100, help_text=_("Name of a registered hook."))
    label = models.CharField(_("label"), max_length=200, blank=True)
    params = models.JSONField(_("params"), default=dict, blank=True,
                              help_text=_("Settings of the hook, checked against its schema."))
    enabled = models.BooleanField(_("enabled"), default=True)
    mode = models.CharField(_("mode"), max_length=10, choices=Mode.choices, default=Mode.ENFORCE,
                            help_text=_("An observing hook records what it would do and decides nothing."))
    position = models.IntegerField(_("position"), default=0, db_index=True,
                                   help_text=_("Hooks run in increasing position; 0 appends at the end."))
    on_error = models.CharField(_("on error"), max_length=10, choices=HookOnError.choices,
                                default=HookOnError.INHERIT)
    condition = models.TextField(_("condition"), blank=True,
                                 help_text=_('Optional CEL expression; the hook runs only when it holds, '
                                             'e.g. payload.data.probability > 0.5'))
    timeout_ms = models.PositiveIntegerField(_("timeout (ms)"), default=2000,
                                             help_text=_("A run longer than this is stopped and counts as an error."))
    runs_count = models.PositiveBigIntegerField(_("runs"), default=0, editable=False)
    kept_count = models.PositiveBigIntegerField(_("kept"), default=0, editable=False)
    dropped_count = models.PositiveBigIntegerField(_("dropped"), default=0, editable=False)
    held_count = models.PositiveBigIntegerField(
        _("held"), default=0, editable=False,
        help_text=_("Items this hook held for review (or, observing, would have)."),
    )
    errors_count = models.PositiveBigIntegerField(_("errors"), default=0, editable=False)
    time_total_us = models.PositiveBigIntegerField(_("total time (µs)"), default=0, editable=False)
    overturned_count = models.PositiveBigIntegerField(
        _("overturned"), default=0, editable=False,
        help_text=_("Verdicts of this hook that a reviewer overturned: its false positives."),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    objects = HookConfigQuerySet.as_manager()

    class Meta:
        verbose_name = _("hook config")
        verbose_name_plural = _("hook configs")
        ordering = ["stash", "position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["stash", "position"], name="stash_hookconfig_unique_position"),
        ]

    def __str__(self):
        return gettext("%(title)s (position %(position)d)") % {"title": self.title, "position": self.position}

    # Compared with what was loaded: a change of these moves the stash's ``config_version`` (an
    # unchanged save does not); a change of ``CONFIG_FIELDS`` must validate; an unchanged position
    # is not written back, so a stale instance cannot undo a reorder.
    TRACKED_FIELDS = ("stash_id", "hook", "label", "params", "enabled", "mode", "position", "on_error", "condition",
                      "timeout_ms")
    CONFIG_FIELDS = ("hook", "params", "condition", "timeout_ms")

    @property
    def hook_class(self):
        """The registered hook class, or None if its name is not registered (any more)."""
        try:
            return registry.get(self.hook)
        except NotRegistered:
            return None

    @property
    def is_missing(self):
        return self.hook_class is None

    @property
    def title(self):
        """Its label, or its hook's name."""
        return self.label or self.hook

    def effective_on_error(self, stash=None):
        """What a failure of this hook does to an item: its own ``on_error``, or its stash's (pass
        ``stash`` when it is at hand) when it inherits."""
        return (stash or self.stash).on_error if self.on_error == self.HookOnError.INHERIT else self.on_error

    def clean(self):
        super().clean()
        if self._state.adding or self._changed(self.CONFIG_FIELDS):
            # As in save(): an untouched config whose hook has gone missing can be disabled.
            self.validate_hook()

    def validate_hook(self):
        """Raise ``ValidationError`` (per field) if hook, params, condition or timeout are not valid."""
        errors = {}
        # No hook may outlast a judging message: past it, its pool process is killed anyway, and
        # a longer timeout would only hold the item's claim (and a process) that much longer.
        limit_ms = settings.STASH_TIME_LIMIT * 1000
        if isinstance(self.timeout_ms, int) and self.timeout_ms > limit_ms:
            errors["timeout_ms"] = _(
                "At most %(limit)s ms: the hard time limit of a judging message (STASH_TIME_LIMIT, %(seconds)s s)."
            ) % {"limit": f"{limit_ms:,}", "seconds": settings.STASH_TIME_LIMIT}
        hook_class = self.hook_class
        if hook_class is None:
            errors["hook"] = _("%(name)r is not a registered hook.") % {"name": self.hook}
        elif unstorable(self.params, "params"):
            errors["params"] = unstorable(self.params, "params")
        else:
            try:
                hook_class.validate_params(self.params)
            except InvalidParams as exc:
                errors["params"] = str(exc)
        if unstorable(self.condition, "condition"):
            errors["condition"] = unstorable(self.condition, "condition")
        elif self.condition.strip():
            try:
                validate_condition(self.condition)
            except ExpressionError as exc:
                errors["condition"] = str(exc)
        if errors:
            raise ValidationError(errors)

    def save(self, *args, **kwargs):
        loaded = getattr(self, "_loaded", None)
        update_fields = kwargs.get("update_fields")
        changed = self._state.adding or self._changed(
            [f for f in self.TRACKED_FIELDS if update_fields is None or f.removesuffix("_id") in update_fields])
        if self._state.adding or self._changed(self.CONFIG_FIELDS):
            # New or changed configuration must be valid; an untouched config whose hook has
            # gone missing can still be saved (to disable or relabel it).
            self.validate_hook()
        if loaded is not None and kwargs.get("update_fields") is None and not self._state.adding:
            # Counters belong to the workers: a save never writes them back from memory.
            skip = {*self.COUNTER_FIELDS, "created_at"}
            if loaded.get("position") == self.position:
                skip.add("position")
            kwargs["update_fields"] = [f.name for f in self._meta.concrete_fields
                                       if not f.primary_key and f.name not in skip]
        with versioning.one_change():
            if self._state.adding and self.position <= 0:
                Stash.lock_one(self.stash_id)
                last = HookConfig.objects.filter(stash_id=self.stash_id).aggregate(m=Max("position"))["m"]
                self.position = (last or 0) + 1
            if changed:
                Stash.bump_config_version([self.stash_id])  # locks the stash row before the config's
            else:
                Stash.lock([self.stash_id])
            # A delete takes that lock first too: under it, a config still here stays until we commit.
            if not self._state.adding and not HookConfig.objects.filter(pk=self.pk).exists():
                raise HookConfig.DoesNotExist(gettext("This hook config was deleted meanwhile."))
            super().save(*args, **kwargs)
        self._remember()

    def delete(self, *args, **kwargs):
        with versioning.one_change():
            # Items first, then the stash, then this config: the lock order of processing.
            Content.objects.filter(decided_by_id=self.pk).update(decided_by=None)
            Stash.bump_config_version([self.stash_id])
            return super().delete(*args, **kwargs)


class ContentQuerySet(models.QuerySet):
    def accepted(self):
        return self.filter(status=Content.Status.ACCEPTED)

    def lag_by_stash(self, now=None):
        """Seconds since the oldest ``pending`` or ``processing`` item of each stash was saved (at
        its current revision), by stash id; a stash with none waiting is left out."""
        now = now or timezone.now()
        oldest = (self.filter(status__in=[Content.Status.PENDING, Content.Status.PROCESSING]).order_by()
                  .values("stash_id").annotate(oldest=Min("updated_at")).values_list("stash_id", "oldest"))
        return {stash_id: max((now - since).total_seconds(), 0.0) for stash_id, since in oldest}


def lease_end(now=None):
    """When a lease taken ``now`` runs out: the sweeper acts on items still waiting after it."""
    return (now or timezone.now()) + timedelta(seconds=settings.STASH_LEASE_SECONDS)


def canonical_json(payload):
    """``payload`` as canonical JSON in UTF-8 (keys sorted, no spaces): its length is the payload's size."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def content_hash(payload, canonical=None):
    """SHA-256 of the payload as canonical JSON: equal payloads, equal hashes.

    Pass ``canonical`` (the payload's ``canonical_json``) if you have it: large payloads are slow to encode.
    """
    return hashlib.sha256(canonical_json(payload) if canonical is None else canonical).hexdigest()


class Content(LoadedStateModel):
    """A submitted item. Every change of its payload is a new revision, judged again."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        PROCESSING = "processing", _("processing")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")
        HELD = "held", _("held for review")
        FAILED = "failed", _("failed")

    class Source(models.TextChoices):
        FORM = "form", _("web form")
        API = "api", _("API")
        ADMIN = "admin", _("admin")
        CODE = "code", _("code (ORM)")  # saved by a program through the models or processing, not a face

    # Fields the worker owns: a save that does not change the payload leaves them alone, so a
    # stale form can never overwrite a verdict.
    PROCESSING_FIELDS = ("status", "reason", "decided_by", "processed_revision", "processed_at", "attempts",
                         "lease_until", "lease_token", "queue_seq", "original_payload", "payload",
                         "content_hash", "revision", "overturned", "reviewed_by", "reviewed_at", "review_note",
                         "bulk")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Indexed by the (stash, status) and (stash, queue_seq) indexes below, which lead with it; so
    # is status by (status, lease_until). Every index is written again when an item is claimed
    # and judged, so none is kept twice.
    stash = models.ForeignKey(Stash, on_delete=models.PROTECT, related_name="contents", verbose_name=_("stash"),
                              db_index=False)
    payload = models.JSONField(_("payload"), default=dict)
    original_payload = models.JSONField(_("original payload"), null=True, blank=True, editable=False,
                                        help_text=_("The payload as submitted, when transforms changed it."))
    status = models.CharField(_("status"), max_length=12, choices=Status.choices, default=Status.PENDING,
                              editable=False)
    reason = models.TextField(_("reason"), blank=True, editable=False)
    decided_by = models.ForeignKey(HookConfig, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="decided", editable=False, verbose_name=_("decided by"))
    revision = models.PositiveIntegerField(_("revision"), default=1, editable=False)
    processed_revision = models.PositiveIntegerField(_("processed revision"), null=True, blank=True, editable=False)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0, editable=False)
    lease_until = models.DateTimeField(_("lease until"), null=True, blank=True, editable=False)
    lease_token = models.UUIDField(_("lease token"), null=True, blank=True, editable=False)
    queue_seq = models.PositiveBigIntegerField(_("queue position"), null=True, blank=True, editable=False)
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                     related_name="stash_contents", verbose_name=_("submitted by"))
    source = models.CharField(_("source"), max_length=10, choices=Source.choices, default=Source.CODE,
                              help_text=_("Where it was submitted: the web form, the API, the admin, or code."))
    idempotency_key = models.CharField(_("idempotency key"), max_length=200, blank=True)
    content_hash = models.CharField(_("content hash"), max_length=64, editable=False, db_index=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    processed_at = models.DateTimeField(_("processed"), null=True, blank=True, editable=False)
    overturned = models.BooleanField(_("overturned"), default=False, editable=False,
                                     help_text=_("A reviewer reversed the hooks' verdict."))
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="stash_reviews", editable=False, verbose_name=_("reviewed by"))
    reviewed_at = models.DateTimeField(_("reviewed"), null=True, blank=True, editable=False)
    review_note = models.TextField(_("review note"), blank=True, editable=False)
    # Live saves are judged ahead of bulk work: see ``processing.judging``.
    bulk = models.BooleanField(_("bulk"), default=False, db_default=False, editable=False,
                               help_text=_("Sent for judging in bulk (a bulk submit, a large re-judge): live saves "
                                           "waiting in its queue are judged first."))

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
            models.Index(fields=["stash", "created_at"], condition=models.Q(status="pending", bulk=False),
                         name="stash_content_live_waiting"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["stash", "submitted_by", "idempotency_key"],
                                    condition=~models.Q(idempotency_key=""), name="stash_content_idempotency"),
        ]

    def __str__(self):
        return f"{self.id} ({self.status})"

    TRACKED_FIELDS = ("payload", "stash_id")

    @property
    def needs_judging(self):
        """True when the payload or stash differs from what was loaded (or the item is new)."""
        if self._state.adding or getattr(self, "_loaded", None) is None:
            return True
        return any(self._loaded[f] != getattr(self, f) for f in self._loaded)

    @property
    def reviewer(self):
        """The person whose review gave the item its current verdict, or None when the hooks gave it
        (never reviewed, or judged again since)."""
        if self.reviewed_by_id is None or self.status not in (self.Status.ACCEPTED, self.Status.REJECTED):
            return None
        if self.reviewed_at is None or (self.processed_at is not None and self.processed_at > self.reviewed_at):
            return None
        return self.reviewed_by

    def clean(self):
        super().clean()
        validate_payload(self.payload, self.stash if self.stash_id else None)

    def save(self, *args, canonical=None, **kwargs):
        """Save; a new item or a changed payload becomes a new pending revision.

        Raises ``ValidationError`` for a payload that is not a JSON object. A caller that has
        validated the payload already passes what ``validate_payload`` returned as ``canonical``:
        the payload is neither checked nor encoded again (``processing.submit`` does).
        """
        if canonical is None:
            validate_payload(self.payload, None)
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
            kwargs["update_fields"] = [f.name for f in self._meta.concrete_fields
                                       if not f.primary_key and f.name not in self.PROCESSING_FIELDS]
        super().save(*args, **kwargs)
        if bump:
            self.refresh_from_db(fields=["revision"])
        # Parsing the canonical JSON copies a large payload several times faster than deepcopy.
        self._remember(copies={"payload": json.loads(canonical)} if canonical is not None else None)


def validate_payload(payload, stash):
    """Raise ``ValidationError`` unless ``payload`` is a JSON object every database can store
    (see ``unstorable``) and within ``stash``'s size limit (the error's code is then ``too_large``).

    With a stash, return the payload's ``canonical_json``: it is what was measured.
    """
    if not isinstance(payload, dict):
        raise ValidationError({"payload": _("The payload must be a JSON object, not %(type)s.")
                               % {"type": type(payload).__name__}})
    problem = unstorable(payload)
    if problem:
        raise ValidationError({"payload": problem})
    if stash is None:
        return None
    canonical = canonical_json(payload)
    if len(canonical) > stash.max_payload_bytes:
        message = _("The payload is %(size)d bytes; this stash takes at most %(max)d.") % {
            "size": len(canonical), "max": stash.max_payload_bytes}
        raise ValidationError({"payload": ValidationError(message, code="too_large")})
    return canonical


# Deeper payloads are refused: nobody needs them, and walking them costs recursion.
MAX_PAYLOAD_DEPTH = 100
_SURROGATE = re.compile("[\ud800-\udfff]")
# Integers longer than this are refused: well within what Python (4300 digits) and PostgreSQL write.
MAX_INTEGER_DIGITS = 1000
_INTEGER_LIMIT = 10**MAX_INTEGER_DIGITS
_MAX_INT_BITS = int(MAX_INTEGER_DIGITS * math.log2(10))  # no integer of this many bits reaches the limit


def unstorable(value, what="payload") -> str:
    """Why ``value`` (a ``what``) cannot be stored as JSON on every database, or "" if it can."""
    names = {"what": what}
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_PAYLOAD_DEPTH:
            return gettext("The %(what)s nests deeper than %(depth)d levels.") % {**names, "depth": MAX_PAYLOAD_DEPTH}
        if isinstance(item, dict):
            stack.extend((str(key), depth) for key in item)  # keys can hold a NUL too
            stack.extend((member, depth + 1) for member in item.values())
        elif isinstance(item, list):
            stack.extend((member, depth + 1) for member in item)
        elif isinstance(item, str) and "\x00" in item:
            return gettext("The %(what)s contains a NUL character (\\u0000), which cannot be stored.") % names
        elif isinstance(item, str) and not item.isascii() and _SURROGATE.search(item):
            # JSON can spell a lone surrogate (\ud800); UTF-8, and so every database, cannot.
            return gettext("The %(what)s contains an unpaired surrogate (\\ud800-\\udfff), which is not valid "
                           "Unicode.") % names
        elif isinstance(item, float) and not math.isfinite(item):
            # JSON parsers turn 1e999 into infinity, which JSON itself cannot express.
            return gettext("The %(what)s contains a number too large for JSON.") % names
        elif isinstance(item, int) and item.bit_length() > _MAX_INT_BITS and abs(item) >= _INTEGER_LIMIT:
            # Python writes no integer longer than its int_max_str_digits (4300) as text.
            return gettext("The %(what)s contains an integer of more than %(digits)d digits.") % {
                **names, "digits": MAX_INTEGER_DIGITS}
    return ""



class PipelineRun(models.Model):
    """One run of a stash's hooks over one revision of one item, with its per-hook trail."""

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="runs", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    config_version = models.PositiveIntegerField(_("config version"))
    outcome = models.CharField(_("outcome"), max_length=12, choices=Content.Status.choices)
    reason = models.TextField(_("reason"), blank=True)
    started_at = models.DateTimeField(_("started"))
    finished_at = models.DateTimeField(_("finished"))
    duration_ms = models.FloatField(_("duration (ms)"), default=0)
    trail = models.JSONField(_("trail"), default=list,
                             help_text=_("Per hook: config, hook, position, outcome, code, message, duration."))

    class Meta:
        verbose_name = _("pipeline run")
        verbose_name_plural = _("pipeline runs")
        ordering = ["-finished_at", "-pk"]

    def __str__(self):
        return f"{self.content_id} r{self.revision}: {self.outcome}"

    @cached_property
    def version(self):
        """The ``PipelineVersion`` that judged this run (None for runs older than versions)."""
        return PipelineVersion.objects.filter(stash_id=self.content.stash_id, number=self.config_version).first()


class EventCount(models.Model):
    """How often something happened on a worker that leaves no row of its own: a sweeper pass sent
    items again or failed them, a sink delivery succeeded, was retried or gave up (``/metrics``).

    Kept in the database, like the hook configs' counters, so that one scrape sees the counts of
    every worker on every machine. ``config`` names the sink for delivery counts; it is empty
    for the sweeper's.
    """

    name = models.CharField(_("name"), max_length=50)
    config = models.ForeignKey(HookConfig, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
                               verbose_name=_("hook config"))
    value = models.PositiveBigIntegerField(_("value"), default=0)

    class Meta:
        verbose_name = _("event count")
        verbose_name_plural = _("event counts")
        ordering = ["name", "config_id"]
        constraints = [
            models.UniqueConstraint(fields=["name"], condition=models.Q(config__isnull=True),
                                    name="stash_eventcount_unique_name"),
            models.UniqueConstraint(fields=["name", "config"], condition=models.Q(config__isnull=False),
                                    name="stash_eventcount_unique_name_config"),
        ]

    def __str__(self):
        return f"{self.name}{f' (hook config {self.config_id})' if self.config_id else ''}: {self.value}"


class PipelineVersion(models.Model):
    """A stash's pipeline as one change left it: its settings and hooks (``documents``), who made
    the change, when, and what changed. ``number`` is the stash's ``config_version``: a run names
    the version that judged it by its ``config_version`` (``PipelineRun.version``), and workers
    build the pipeline of a version from its document."""

    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="versions", verbose_name=_("stash"))
    number = models.PositiveIntegerField(_("version"))
    document = models.JSONField(_("document"), help_text=_("The stash's settings and hooks, secrets included."))
    summary = models.TextField(_("summary"), blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+", verbose_name=_("by"))
    created_at = models.DateTimeField(_("when"), default=timezone.now)

    class Meta:
        verbose_name = _("pipeline version")
        verbose_name_plural = _("pipeline versions")
        ordering = ["stash_id", "-number"]
        constraints = [models.UniqueConstraint(fields=["stash", "number"], name="stash_pipelineversion_unique")]

    def __str__(self):
        return gettext("%(stash)s version %(number)d") % {"stash": self.stash, "number": self.number}

    @classmethod
    def record(cls, stash_ids, *, note="", author=None, using="default"):
        """Write the current version of each of ``stash_ids`` (``versioning.recorder``), with a
        summary of what changed since its previous one."""
        stashes = list(Stash.objects.using(using).filter(pk__in=stash_ids).order_by("pk"))
        hooks = {}
        for config in HookConfig.objects.using(using).filter(stash_id__in=stash_ids).in_order():
            hooks.setdefault(config.stash_id, []).append(config)
        previous = {pk: cls.objects.using(using).filter(stash_id=pk).order_by("-number").first() for pk in stash_ids}
        versions = []
        for stash in stashes:
            document = documents.pipeline_document(stash, hooks.get(stash.pk, []), ids=True)
            before = previous.get(stash.pk)
            versions.append(cls(stash=stash, number=stash.config_version, document=document, created_by=author,
                                summary=documents.summary(before.document if before else None, document, note)))
        cls.objects.using(using).bulk_create(versions, ignore_conflicts=True)


versioning.recorder = PipelineVersion.record


class Example(models.Model):
    """A golden example of a stash: a payload and the verdict its pipeline must give it (and, if
    set, the reason code and the deciding hook). ``stash_test`` and every change of the hooks run them."""

    class Verdict(models.TextChoices):
        ACCEPTED = pipeline.ACCEPTED, _("accepted")
        REJECTED = pipeline.REJECTED, _("rejected")
        HELD = pipeline.HELD, _("held")

    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="examples", verbose_name=_("stash"))
    name = models.CharField(_("name"), max_length=200)
    payload = models.JSONField(_("payload"), blank=True, help_text=_("What is submitted, as JSON."))
    verdict = models.CharField(_("expected verdict"), max_length=10, choices=Verdict.choices)
    reason_code = models.CharField(_("expected reason code"), max_length=100, blank=True,
                                   help_text=_("If set, the deciding hook's reason code must be this."))
    hook = models.CharField(_("expected deciding hook"), max_length=200, blank=True,
                            help_text=_("If set, the label (or hook name) of the hook that must decide."))
    content = models.ForeignKey(Content, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                                verbose_name=_("made from item"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+", verbose_name=_("by"))
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("example")
        verbose_name_plural = _("examples")
        ordering = ["stash", "name"]
        constraints = [models.UniqueConstraint(fields=["stash", "name"], name="stash_example_unique_name")]

    def __str__(self):
        return self.name

    def clean(self):
        super().clean()
        validate_payload(self.payload, self.stash if self.stash_id else None)


class Review(models.Model):
    """A person's decision on an item (approve, reject, overturn), kept after the hooks judge the
    item again: ``replaced_at`` says when its verdict stopped being the item's."""

    class Decision(models.TextChoices):
        APPROVE = "approve", _("approve")
        REJECT = "reject", _("reject")
        OVERTURN = "overturn", _("overturn")

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="reviews", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"), help_text=_("The revision of the item decided on."))
    decision = models.CharField(_("decision"), max_length=10, choices=Decision.choices)
    status = models.CharField(_("status set"), max_length=12, choices=Content.Status.choices,
                              help_text=_("The status the decision gave the item."))
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="+", verbose_name=_("reviewer"))
    note = models.TextField(_("note"), blank=True)
    created_at = models.DateTimeField(_("decided"), default=timezone.now)
    replaced_at = models.DateTimeField(_("replaced"), null=True, blank=True,
                                       help_text=_("When the hooks judged the item again, replacing this decision."))

    class Meta:
        verbose_name = _("review")
        verbose_name_plural = _("reviews")
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return gettext("%(decision)s by %(reviewer)s") % {
            "decision": self.get_decision_display(),
            "reviewer": self.reviewer.get_username() if self.reviewer_id else gettext("a former user")}
