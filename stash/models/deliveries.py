"""Sink deliveries: one row per item, revision, sink and event, with its attempts and how it ended."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from stash.models.content import Content
from stash.models.hooks import HookConfig


class DeliveryQuerySet(models.QuerySet["Delivery"]):
    def counts_by_config(self, config_ids: list[int]) -> dict[int, dict[str, int]]:
        """``{config id: {status: count}}`` of the deliveries of these sinks, in one query."""
        counts: dict[int, dict[str, int]] = {pk: dict.fromkeys(Delivery.Status.values, 0) for pk in config_ids}
        rows = (
            self.filter(config_id__in=config_ids)
            .values_list("config_id", "status")
            .annotate(n=models.Count("pk"))
            .order_by()
        )
        for config_id, status, n in rows:
            counts[config_id][status] = n
        return counts


class Delivery(models.Model):
    """One sink callback of one item's verdict, delivered by its own task: written ``pending`` when
    the task is sent, updated at each attempt, retry, success and final failure (``delivering``)."""

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        RETRYING = "retrying", _("retrying")
        DELIVERED = "delivered", _("delivered")
        FAILED = "failed", _("failed")

    content = models.ForeignKey(Content, on_delete=models.CASCADE, related_name="deliveries", verbose_name=_("content"))
    revision = models.PositiveIntegerField(_("revision"))
    config = models.ForeignKey(
        HookConfig,
        on_delete=models.CASCADE,
        related_name="deliveries",
        db_index=False,  # the (config, status) index serves
        verbose_name=_("hook config"),
    )
    event = models.CharField(_("event"), max_length=40, help_text=_("The callback: on_accept, on_reject, ..."))
    status = models.CharField(_("status"), max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    last_error = models.TextField(_("last error"), blank=True)
    created_at = models.DateTimeField(_("created"))
    updated_at = models.DateTimeField(_("updated"))
    delivered_at = models.DateTimeField(_("delivered"), null=True, blank=True)

    objects = DeliveryQuerySet.as_manager()

    class Meta:
        verbose_name = _("delivery")
        verbose_name_plural = _("deliveries")
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["content", "revision", "config", "event"], name="stash_delivery_unique_event"
            )
        ]
        indexes = [models.Index(fields=["config", "status"], name="stash_delivery_config_status")]

    def __str__(self) -> str:
        return f"{self.content_id} r{self.revision} {self.event} → {self.config_id}: {self.status}"
