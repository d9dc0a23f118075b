"""What happened: pipeline runs and their trails, event counts, pipeline versions, golden examples, reviews."""

from collections.abc import Collection
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.translation import gettext, gettext_lazy as _

from stash.core import documents, pipeline, registry
from stash.models.content import Content
from stash.models.hooks import HookConfig
from stash.models.stashes import Stash
from stash.models.validators import validate_payload, validate_service_answers

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class PipelineRun(models.Model):
    """One run of a stash's hooks over one revision of one item, with its per-hook trail."""

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="runs", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    config_version = models.PositiveIntegerField(_("pipeline version"))
    outcome = models.CharField(_("outcome"), max_length=12, choices=Content.Status.choices)
    reason = models.TextField(_("reason"), blank=True)
    started_at = models.DateTimeField(_("started"))
    finished_at = models.DateTimeField(_("finished"))
    duration_ms = models.FloatField(_("duration (ms)"), default=0)
    trail = models.JSONField(
        _("trail"), default=list, help_text=_("Per hook: config, hook, position, outcome, code, message, duration.")
    )

    class Meta:
        verbose_name = _("pipeline run")
        verbose_name_plural = _("pipeline runs")
        ordering = ["-finished_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.content_id} r{self.revision}: {self.outcome}"

    @cached_property
    def version(self) -> "PipelineVersion | None":
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
    config = models.ForeignKey(
        HookConfig, on_delete=models.CASCADE, null=True, blank=True, related_name="+", verbose_name=_("hook config")
    )
    value = models.PositiveBigIntegerField(_("value"), default=0)

    class Meta:
        verbose_name = _("event count")
        verbose_name_plural = _("event counts")
        ordering = ["name", "config_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["name"], condition=models.Q(config__isnull=True), name="stash_eventcount_unique_name"
            ),
            models.UniqueConstraint(
                fields=["name", "config"],
                condition=models.Q(config__isnull=False),
                name="stash_eventcount_unique_name_config",
            ),
        ]

    def __str__(self) -> str:
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
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("by"),
    )
    created_at = models.DateTimeField(_("when"), default=timezone.now)

    class Meta:
        verbose_name = _("pipeline version")
        verbose_name_plural = _("pipeline versions")
        ordering = ["stash_id", "-number"]
        constraints = [models.UniqueConstraint(fields=["stash", "number"], name="stash_pipelineversion_unique")]

    def __str__(self) -> str:
        return gettext("%(stash)s version %(number)d") % {"stash": self.stash, "number": self.number}

    @classmethod
    def record(
        cls, stash_ids: Collection[int], *, note: str = "", author: "User | None" = None, using: str = "default"
    ) -> None:
        """Write the current version of each of ``stash_ids`` (``versioning.recorder``), with a
        summary of what changed since its previous one."""
        stashes = list(Stash.objects.using(using).filter(pk__in=stash_ids).order_by("pk"))
        hooks: dict[int, list[HookConfig]] = {}
        for config in HookConfig.objects.using(using).filter(stash_id__in=stash_ids).in_order():
            hooks.setdefault(config.stash_id, []).append(config)
        previous = {pk: cls.objects.using(using).filter(stash_id=pk).order_by("-number").first() for pk in stash_ids}
        versions = []
        for stash in stashes:
            document = documents.pipeline_document(stash, hooks.get(stash.pk, []), ids=True)
            before = previous.get(stash.pk)
            versions.append(
                cls(
                    stash=stash,
                    number=stash.config_version,
                    document=document,
                    created_by=author,
                    summary=documents.summary(before.document if before else None, document, note),
                )
            )
        # django-stubs types cls(...) as PipelineVersion but cls.objects as a manager of Self.
        cls.objects.using(using).bulk_create(versions, ignore_conflicts=True)  # type: ignore[arg-type]


class Example(models.Model):
    """A golden example of a stash: a payload and the verdict its pipeline must give it (and, if
    set, the reason code and the deciding hook). ``stash_test`` and every change of the hooks run them."""

    class Verdict(models.TextChoices):
        ACCEPTED = pipeline.ACCEPTED, _("accepted")
        REJECTED = pipeline.REJECTED, _("rejected")
        HELD = pipeline.HELD, _("held")
        #: An asynchronous hook would wait for its service (looking runs never ask it).
        WAITING = pipeline.WAITING, _("waiting")

    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="examples", verbose_name=_("stash"))
    name = models.CharField(_("name"), max_length=200)
    payload = models.JSONField(_("payload"), blank=True, help_text=_("What is submitted, as JSON."))
    verdict = models.CharField(_("expected verdict"), max_length=10, choices=Verdict.choices)
    reason_code = models.CharField(
        _("expected reason code"),
        max_length=100,
        blank=True,
        help_text=_("If set, the deciding hook's reason code must be this."),
    )
    hook = models.CharField(
        _("expected deciding hook"),
        max_length=200,
        blank=True,
        help_text=_("If set, the label (or hook name) of the hook that must decide."),
    )
    service_answers = models.JSONField(
        _("service answers"),
        default=dict,
        blank=True,
        help_text=_(
            'Answers given in place of outside services, by asynchronous hook label: {"Vendor": {"outcome": '
            '"drop", "reason": "toxic"}}. Without one, the example stops where such a hook would wait.'
        ),
    )
    content = models.ForeignKey(
        Content, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("made from item")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("by"),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("example")
        verbose_name_plural = _("examples")
        ordering = ["stash", "name"]
        constraints = [models.UniqueConstraint(fields=["stash", "name"], name="stash_example_unique_name")]

    def __str__(self) -> str:
        return self.name

    #: The hook configs its ``service_answers`` must name asynchronous hooks of (None: the stash's
    #: saved ones); an import checks an example against the hooks the document gives the stash.
    checked_against: "Collection[HookConfig] | None" = None

    def clean(self) -> None:
        super().clean()
        validate_payload(self.payload, self.stash if self.stash_id else None)
        configs = self.checked_against
        if configs is None:
            configs = list(HookConfig.objects.filter(stash_id=self.stash_id)) if self.stash_id else None
        try:
            validate_service_answers(self.service_answers, None if configs is None else asynchronous_titles(configs))
        except ValidationError as exc:
            raise ValidationError({"service_answers": exc.messages}) from None


def asynchronous_titles(configs: "Collection[HookConfig]") -> set[str]:
    """The titles (label, or hook name) of those of ``configs`` whose hook answers later (async mode)."""
    titles = set()
    for config in configs:
        try:
            hook = registry.get(config.hook)(config.params)
        except Exception:  # a missing hook or bad params: not one a service answers for
            continue
        if getattr(hook, "asynchronous", False):
            titles.add(config.label or config.hook)
    return titles


class Review(models.Model):
    """A person's decision on an item (approve, reject, overturn), kept after the hooks judge the
    item again: ``replaced_at`` says when its verdict stopped being the item's."""

    class Decision(models.TextChoices):
        APPROVE = "approve", _("approve")
        REJECT = "reject", _("reject")
        OVERTURN = "overturn", _("overturn")
        #: The first of the two approvals a four-eyes item needs: it stays held.
        FIRST_APPROVAL = "approve1", _("first approval")
        #: Decided automatically past the stash's ``review_expire_hours`` (no reviewer).
        EXPIRE = "expire", _("decided automatically")
        UPHOLD = "upheld", _("appeal upheld")
        REVERSE = "reversed", _("appeal reversed")

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="reviews", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"), help_text=_("The revision of the item decided on."))
    decision = models.CharField(_("decision"), max_length=10, choices=Decision.choices)
    status = models.CharField(
        _("status set"),
        max_length=12,
        choices=Content.Status.choices,
        help_text=_("The status the decision gave the item."),
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("reviewer"),
    )
    note = models.TextField(_("note"), blank=True)
    created_at = models.DateTimeField(_("decided"), default=timezone.now)
    replaced_at = models.DateTimeField(
        _("replaced"),
        null=True,
        blank=True,
        help_text=_("When the hooks judged the item again, replacing this decision."),
    )

    class Meta:
        verbose_name = _("review")
        verbose_name_plural = _("reviews")
        ordering = ["-created_at", "-pk"]
        # The decisions that still stand, by when they were made: what hooks' precision reads (a window).
        indexes = [
            models.Index(
                fields=["created_at"], condition=models.Q(replaced_at__isnull=True), name="stash_review_standing"
            )
        ]

    def __str__(self) -> str:
        return gettext("%(decision)s by %(reviewer)s") % {
            "decision": self.get_decision_display(),
            "reviewer": self.reviewer.get_username() if self.reviewer is not None else gettext("a former user"),
        }
