"""The hand-written baseline's model: an item with its payload and verdict, nothing more."""

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _


class Item(models.Model):
    """A submitted payload, judged by ``bench.baseline.tasks`` with the same five checks as the stash under test."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        ACCEPTED = "accepted", _("accepted")
        REJECTED = "rejected", _("rejected")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    payload = models.JSONField(_("payload"), default=dict)
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    reason = models.TextField(_("reason"), blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    processed_at = models.DateTimeField(_("processed"), null=True, blank=True)

    class Meta:
        verbose_name = _("item")
        verbose_name_plural = _("items")
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.id} ({self.status})"
