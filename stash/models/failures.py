"""The failure store: every hook error, hook timeout and item given up on, kept for an operator to work from."""

import hashlib
from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from stash.models.content import Content
from stash.models.hooks import HookConfig
from stash.models.stashes import Stash


def group_key(stash_id: int, config_id: int | None, hook: str, error_type: str, config_version: int) -> str:
    """The key of a failure's group: its stash, hook config (or hook name), error type and pipeline
    version, as 16 hex digits (an index and a URL take it as it is)."""
    text = f"{stash_id}\x00{config_id or ''}\x00{hook}\x00{error_type}\x00{config_version}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Failure(models.Model):
    """One failure: a hook that raised or ran out of time on one revision of one item, or an item
    given up on (its worker stopped on it ``STASH_MAX_ATTEMPTS`` times). Failures of one hook
    config, error type and pipeline version share a ``group``; a re-drive sends a group's items
    to be judged again and marks its failures ``redriven_at``."""

    class Kind(models.TextChoices):
        ERROR = "error", _("hook error")
        TIMEOUT = "timeout", _("hook timeout")
        GAVE_UP = "gave_up", _("given up")

    group = models.CharField(_("group"), max_length=16, editable=False)
    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="+", verbose_name=_("stash"))
    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="failures", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    config_version = models.PositiveIntegerField(_("pipeline version"))
    config = models.ForeignKey(
        HookConfig,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
        verbose_name=_("hook config"),
    )
    hook = models.CharField(_("hook"), max_length=100, blank=True)
    label = models.CharField(_("label"), max_length=200, blank=True)
    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices)
    error_type = models.CharField(_("error type"), max_length=200)
    message = models.TextField(_("message"), blank=True)
    at = models.DateTimeField(_("at"))
    redriven_at = models.DateTimeField(_("re-driven at"), null=True, blank=True)

    class Meta:
        verbose_name = _("failure")
        verbose_name_plural = _("failures")
        ordering = ["-at", "-pk"]
        indexes = [
            models.Index(fields=["at"], name="stash_failure_at"),
            models.Index(fields=["stash", "at"], name="stash_failure_stash_at"),
            models.Index(fields=["group", "at"], name="stash_failure_group_at"),
        ]

    def __str__(self) -> str:
        return f"{self.label or self.hook or self.get_kind_display()}: {self.error_type}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.group = group_key(self.stash_id, self.config_id, self.hook, self.error_type, self.config_version)
        super().save(*args, **kwargs)
