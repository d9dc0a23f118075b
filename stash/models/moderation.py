"""Moderation a platform can answer for: the statement of reasons given for each restriction, and
the submitter's appeals against it."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy as _

from stash.core import statements
from stash.models.content import Content
from stash.models.hooks import HookConfig

#: The longest text a submitter may give with an appeal.
APPEAL_TEXT_MAX = 5000


class Statement(models.Model):
    """The statement of reasons for one decision restricting an item (DSA Art. 17): written when a
    hook rejects or holds it, when a reviewer rejects it and when it is decided automatically."""

    class Kind(models.TextChoices):
        HOOK = "hook", _("a hook decided")
        REVIEWER = "reviewer", _("a reviewer decided")
        EXPIRY = "expiry", _("decided automatically past the review deadline")
        APPEAL = "appeal", _("an appeal was decided")

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="statements", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    kind = models.CharField(_("decided by"), max_length=10, choices=Kind.choices)
    restriction = models.CharField(
        _("restriction"), max_length=10, choices=[(value, value) for value in statements.RESTRICTIONS]
    )
    text = models.TextField(_("text"), help_text=_("What the submitter reads."))
    reason_code = models.CharField(_("reason code"), max_length=100, blank=True)
    facts = models.JSONField(
        _("facts"), default=dict, help_text=_("What the decision relied on: the hook, its reason, the field.")
    )
    automated_detection = models.BooleanField(_("detected by automated means"))
    automated_decision = models.BooleanField(_("decided by automated means"))
    ground = models.CharField(_("ground"), max_length=10, choices=[(value, value) for value in statements.GROUNDS])
    ground_reference = models.CharField(_("ground reference"), max_length=500, blank=True)
    ground_url = models.CharField(_("ground URL"), max_length=500, blank=True)
    category = models.CharField(_("category"), max_length=100)
    decided_at = models.DateTimeField(_("decided"), default=timezone.now)
    hook_config = models.ForeignKey(
        HookConfig, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("hook")
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("reviewer"),
    )
    appeal_until = models.DateTimeField(_("appeal until"), null=True, blank=True)
    ended_at = models.DateTimeField(
        _("restriction ended"),
        null=True,
        blank=True,
        help_text=_("When the restriction was lifted: an appeal reversed it, or a reviewer released the held item."),
    )

    class Meta:
        verbose_name = _("statement of reasons")
        verbose_name_plural = _("statements of reasons")
        ordering = ["-decided_at", "-pk"]
        indexes = [
            models.Index(fields=["content", "-decided_at"], name="stash_statement_content"),
            models.Index(fields=["decided_at", "id"], name="stash_statement_decided"),
        ]

    def __str__(self) -> str:
        return gettext("%(restriction)s: %(text)s") % {"restriction": self.restriction, "text": self.text[:60]}


class Appeal(models.Model):
    """A submitter contesting a decision on their item (DSA Art. 20): decided by a person other than
    the one who made the decision appealed; reversed, it sets the verdict."""

    class Status(models.TextChoices):
        OPEN = "open", _("open")
        UPHELD = "upheld", _("upheld")
        REVERSED = "reversed", _("reversed")

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="appeals", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    statement = models.ForeignKey(
        Statement, on_delete=models.CASCADE, related_name="appeals", verbose_name=_("statement appealed")
    )
    text = models.TextField(_("submitter's statement"), max_length=APPEAL_TEXT_MAX)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("appealed by"),
    )
    created_at = models.DateTimeField(_("appealed"), default=timezone.now)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.OPEN)
    note = models.TextField(_("note"), blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)
    original_reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("original reviewer"),
        help_text=_("Who made the human decision appealed (none for a hook's): they may not decide the appeal."),
    )

    class Meta:
        verbose_name = _("appeal")
        verbose_name_plural = _("appeals")
        ordering = ["created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["content", "revision"], name="stash_appeal_one_per_revision")]
        indexes = [models.Index(fields=["status", "created_at"], name="stash_appeal_open")]

    def __str__(self) -> str:
        return gettext("appeal of %(content)s (%(status)s)") % {
            "content": self.content_id,
            "status": self.get_status_display(),
        }
