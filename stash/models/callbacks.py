"""The answer an asynchronous hook awaits: one per item, revision and hook config, found by its token's hash."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Callback(models.Model):
    """Where an outside service gives its answer on one item for one asynchronous hook.

    Made before the run (its token goes to the service in the item's ``callback_url``); the run
    that waits at the hook arms it (``expires_at``, with the ``position``, ``payload`` and ``trail``
    the resume needs); the first answer, or the sweeper at ``expires_at``, sets ``answered_at``;
    the resume that records the run's end sets ``consumed_at``. Only the SHA-256 of the token is
    kept: a read of the database gives no working callback URL.
    """

    content = models.ForeignKey(
        "stash.Content", on_delete=models.CASCADE, related_name="callbacks", verbose_name=_("content")
    )
    hook_config = models.ForeignKey(
        "stash.HookConfig", on_delete=models.CASCADE, related_name="callbacks", verbose_name=_("hook config")
    )
    revision = models.PositiveIntegerField(_("revision"))
    token_hash = models.CharField(_("token hash"), max_length=64, unique=True)
    config_version = models.PositiveIntegerField(_("pipeline version"))
    #: The index of the waiting hook among the pipeline's judging steps (``Result.waiting_at``).
    position = models.PositiveIntegerField(_("position"), null=True, blank=True)
    payload = models.JSONField(_("payload at the hook"), null=True, blank=True)
    trail = models.JSONField(_("trail so far"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    answered_at = models.DateTimeField(_("answered"), null=True, blank=True)
    outcome = models.CharField(_("outcome"), max_length=10, blank=True)
    reason = models.TextField(_("reason"), blank=True)
    consumed_at = models.DateTimeField(_("consumed"), null=True, blank=True)

    class Meta:
        verbose_name = _("callback")
        verbose_name_plural = _("callbacks")
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["content", "revision"], name="stash_callback_content"),
            # The sweeper's pass: armed callbacks not answered, by when they expire.
            models.Index(
                fields=["expires_at"],
                condition=models.Q(answered_at__isnull=True, expires_at__isnull=False),
                name="stash_callback_expiring",
            ),
        ]

    def __str__(self) -> str:
        return f"callback {self.pk} for {self.content_id} r{self.revision}"
