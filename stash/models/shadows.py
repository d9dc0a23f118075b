"""Shadow runs: another pipeline (a draft, or a saved version) run beside a stash's live one on a share of its
saves, its sinks off, changing nothing; each shadowed item's two outcomes side by side."""

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy as _

from stash.models.content import Content
from stash.models.stashes import Stash


class Shadow(models.Model):
    """A pipeline judged beside a stash's live one on ``percent`` of its live saves, until ``count``
    items or ``ends_at``; at most one runs per stash at a time. The counters are the agreement report's."""

    class Status(models.TextChoices):
        RUNNING = "running", _("running")
        STOPPED = "stopped", _("stopped")
        FINISHED = "finished", _("finished")
        PROMOTED = "promoted", _("promoted")

    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="shadows", verbose_name=_("stash"))
    document = models.JSONField(
        _("document"), help_text=_("The pipeline it runs, as a version records one: hooks with their secrets.")
    )
    version = models.PositiveIntegerField(
        _("version"), null=True, blank=True, help_text=_("The saved version it runs; blank: a draft.")
    )
    percent = models.PositiveSmallIntegerField(
        _("percent"),
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text=_("The share of live saves it judges, chosen per item (the same item, the same choice)."),
    )
    count = models.PositiveIntegerField(
        _("count"), null=True, blank=True, help_text=_("It finishes once it has judged this many items.")
    )
    ends_at = models.DateTimeField(_("ends at"), null=True, blank=True, help_text=_("It finishes at this time."))
    status = models.CharField(_("status"), max_length=12, choices=Status.choices, default=Status.RUNNING)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("started by"),
    )
    started_at = models.DateTimeField(_("started"), default=timezone.now)
    ended_at = models.DateTimeField(_("ended"), null=True, blank=True)
    promoted_version = models.PositiveIntegerField(_("promoted as version"), null=True, blank=True)
    items = models.PositiveIntegerField(_("items"), default=0)
    agreed = models.PositiveIntegerField(_("agreed"), default=0)
    disagreed = models.PositiveIntegerField(_("disagreed"), default=0)
    time_total_us = models.BigIntegerField(_("time (µs)"), default=0)
    matrix = models.JSONField(
        _("matrix"), default=dict, blank=True, help_text=_('Items by "<live verdict>/<shadow verdict>".')
    )

    class Meta:
        verbose_name = _("shadow")
        verbose_name_plural = _("shadows")
        ordering = ["stash_id", "-started_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["stash"], condition=Q(status="running"), name="stash_shadow_one_running_per_stash"
            ),
            models.CheckConstraint(condition=Q(percent__gte=1, percent__lte=100), name="stash_shadow_percent_1_to_100"),
        ]

    def __str__(self) -> str:
        return gettext("shadow %(id)s of %(stash)s") % {"id": self.pk, "stash": self.stash}

    @property
    def source(self) -> str:
        """What it runs, in words: a version or a draft."""
        if self.version is None:
            return gettext("a draft")
        return gettext("version %(number)d") % {"number": self.version}


class ShadowRun(models.Model):
    """One shadowed item: its live verdict and the shadow's, with the shadow's trail and time."""

    # No index of its own: the unique constraint's leads with it.
    shadow = models.ForeignKey(
        Shadow, on_delete=models.CASCADE, related_name="runs", verbose_name=_("shadow"), db_index=False
    )
    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="+", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    live_verdict = models.CharField(_("live verdict"), max_length=12)
    live_decider = models.CharField(_("live decider"), max_length=200, blank=True)
    shadow_verdict = models.CharField(_("shadow verdict"), max_length=12)
    shadow_decider = models.CharField(_("shadow decider"), max_length=200, blank=True)
    shadow_reason = models.TextField(_("shadow reason"), blank=True)
    shadow_trail = models.JSONField(_("shadow trail"), default=list)
    agreed = models.BooleanField(_("agreed"))
    duration_ms = models.FloatField(_("duration (ms)"), default=0)
    created_at = models.DateTimeField(_("when"), default=timezone.now)

    class Meta:
        verbose_name = _("shadow run")
        verbose_name_plural = _("shadow runs")
        ordering = ["shadow_id", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["shadow", "content", "revision"], name="stash_shadowrun_once_per_revision")
        ]
        # The report reads only the runs that disagree: those alone are indexed (most runs agree, and each
        # index is one more write per run).
        indexes = [models.Index(fields=["shadow", "-id"], condition=Q(agreed=False), name="stash_shadowrun_disagreed")]

    def __str__(self) -> str:
        return f"{self.content_id} r{self.revision}: {self.live_verdict}/{self.shadow_verdict}"
