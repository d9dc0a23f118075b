"""A hook config: a registered hook chosen for a stash, with its params, position and mode."""

from collections.abc import Iterable
from typing import Any, Self

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import F, Max
from django.utils.translation import gettext, gettext_lazy as _

from stash.core import pipeline, registry
from stash.core.exceptions import ExpressionError, InvalidParams, NotRegistered
from stash.core.expressions import validate_condition
from stash.db import versioning
from stash.models.base import LoadedStateModel
from stash.models.choices import HookOnError
from stash.models.stashes import Stash
from stash.models.validators import unstorable


def validate_precision(value: float) -> None:
    """A minimum precision is above 0 and at most 1."""
    if not 0 < value <= 1:
        raise ValidationError(_("A precision above 0 and at most 1, e.g. 0.8."), code="precision")


class HookConfigQuerySet(models.QuerySet["HookConfig"]):
    def enabled(self) -> Self:
        return self.filter(enabled=True)

    def in_order(self) -> Self:
        return self.order_by("position", "pk")

    def update(self, **kwargs: Any) -> int:
        """Update, and mark the stashes' pipelines changed unless only counters moved."""
        if set(kwargs) - set(HookConfig.COUNTER_FIELDS):
            stash_ids = list(self.values_list("stash_id", flat=True).distinct())
            with versioning.one_change(using=self.db):
                Stash.bump_config_version(stash_ids)  # the stash row first: see processing._record
                return super().update(**kwargs)
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        stash_ids = list(self.values_list("stash_id", flat=True).distinct())
        with versioning.one_change(using=self.db):
            # Items first, then stashes, then hook configs: the lock order of processing.
            from stash.models.content import Content  # it names this model: imported when needed

            Content.objects.filter(decided_by__in=self.values("pk")).update(decided_by=None)
            Stash.bump_config_version(stash_ids)
            return super().delete()

    def reorder(self, stash: Stash, ordered_ids: Iterable[int | str]) -> None:
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

    COUNTER_FIELDS = (
        "runs_count",
        "kept_count",
        "changed_count",
        "dropped_count",
        "held_count",
        "errors_count",
        "time_total_us",
        "overturned_count",
    )

    class Mode(models.TextChoices):
        ENFORCE = pipeline.ENFORCE, _("enforce")
        OBSERVE = pipeline.OBSERVE, _("observe (record only)")

    HookOnError = HookOnError

    stash = models.ForeignKey(Stash, on_delete=models.CASCADE, related_name="hooks", verbose_name=_("stash"))
    hook = models.CharField(_("hook"), max_length=100, help_text=_("Name of a registered hook."))
    label = models.CharField(_("label"), max_length=200, blank=True)
    params = models.JSONField(
        _("params"), default=dict, blank=True, help_text=_("Settings of the hook, checked against its schema.")
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    mode = models.CharField(
        _("mode"),
        max_length=10,
        choices=Mode.choices,
        default=Mode.ENFORCE,
        help_text=_("An observing hook records what it would do and decides nothing."),
    )
    position = models.IntegerField(
        _("position"), default=0, db_index=True, help_text=_("Hooks run in increasing position; 0 appends at the end.")
    )
    on_error = models.CharField(_("on error"), max_length=10, choices=HookOnError.choices, default=HookOnError.INHERIT)
    condition = models.TextField(
        _("condition"),
        blank=True,
        help_text=_("Optional CEL expression; the hook runs only when it holds, e.g. payload.data.probability > 0.5"),
    )
    timeout_ms = models.PositiveIntegerField(
        _("timeout (ms)"), default=2000, help_text=_("A run longer than this is stopped and counts as an error.")
    )
    cache_seconds = models.PositiveIntegerField(
        _("cache (seconds)"),
        default=0,
        db_default=0,  # rows written without it (a worker of the previous release) get 0 too
        help_text=_(
            "Reuse the hook's outcome for the same input for this many seconds, until the pipeline "
            "changes. 0: never. For hooks that are slow or costly and give the same answer to the same content."
        ),
    )
    min_precision = models.FloatField(
        _("minimum precision"),
        null=True,
        blank=True,
        validators=[validate_precision],
        help_text=_(
            "Above 0, at most 1; blank: off. When people's decisions on the items this enforcing hook "
            "rejected or held show a lower precision over 30 days (with at least the minimum count of "
            "decisions), it is switched to observe."
        ),
    )
    min_precision_count = models.PositiveIntegerField(
        _("minimum decisions"),
        default=20,
        db_default=20,
        validators=[MinValueValidator(1)],
        help_text=_("How many human decisions on its items the minimum precision needs before it switches the hook."),
    )
    auto_observed_at = models.DateTimeField(
        _("switched to observe"),
        null=True,
        blank=True,
        editable=False,
        help_text=_("When the system last switched it to observe for its precision; cleared when its mode is set."),
    )
    precision_since = models.DateTimeField(
        _("precision counted since"),
        null=True,
        blank=True,
        editable=False,
        help_text=_("Only items it judged after this count toward the minimum precision (its last automatic switch)."),
    )
    runs_count = models.PositiveBigIntegerField(_("runs"), default=0, editable=False)
    kept_count = models.PositiveBigIntegerField(_("kept"), default=0, editable=False)
    changed_count = models.PositiveBigIntegerField(
        _("changed"),
        default=0,
        db_default=0,
        editable=False,
        help_text=_("Items whose payload this transform changed (they count as kept too)."),
    )
    dropped_count = models.PositiveBigIntegerField(_("dropped"), default=0, editable=False)
    held_count = models.PositiveBigIntegerField(
        _("held"),
        default=0,
        editable=False,
        help_text=_("Items this hook held for review (or, observing, would have)."),
    )
    errors_count = models.PositiveBigIntegerField(_("errors"), default=0, editable=False)
    time_total_us = models.PositiveBigIntegerField(_("total time (µs)"), default=0, editable=False)
    overturned_count = models.PositiveBigIntegerField(
        _("overturned"),
        default=0,
        editable=False,
        help_text=_("Verdicts of this hook that a reviewer overturned: its false positives."),
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    objects = HookConfigQuerySet.as_manager()

    class Meta:
        verbose_name = _("hook config")
        verbose_name_plural = _("hook configs")
        ordering = ["stash", "position", "pk"]
        constraints = [models.UniqueConstraint(fields=["stash", "position"], name="stash_hookconfig_unique_position")]

    def __str__(self) -> str:
        return gettext("%(title)s (position %(position)d)") % {"title": self.title, "position": self.position}

    # Compared with what was loaded: a change of these moves the stash's ``config_version`` (an
    # unchanged save does not); a change of ``CONFIG_FIELDS`` must validate; an unchanged position
    # is not written back, so a stale instance cannot undo a reorder.
    TRACKED_FIELDS = (
        "stash_id",
        "hook",
        "label",
        "params",
        "enabled",
        "mode",
        "position",
        "on_error",
        "condition",
        "timeout_ms",
        "cache_seconds",
        "min_precision",
        "min_precision_count",
    )
    CONFIG_FIELDS = ("hook", "params", "condition", "timeout_ms")
    # Not a field: its ``processing.stats.HookStats``, which ``stats.attach`` sets for the pages that
    # show it (typed Any: the models import nothing from processing).
    stats: Any

    @property
    def hook_class(self) -> type[Any] | None:
        """The registered hook class, or None if its name is not registered (any more)."""
        try:
            return registry.get(self.hook)
        except NotRegistered:
            return None

    @property
    def is_missing(self) -> bool:
        return self.hook_class is None

    @property
    def title(self) -> str:
        """Its label, or its hook's name."""
        return self.label or self.hook

    def effective_on_error(self, stash: Stash | None = None) -> str:
        """What a failure of this hook does to an item: its own ``on_error``, or its stash's (pass
        ``stash`` when it is at hand) when it inherits."""
        return (stash or self.stash).on_error if self.on_error == self.HookOnError.INHERIT else self.on_error

    def clean(self) -> None:
        super().clean()
        if self._state.adding or self._changed(self.CONFIG_FIELDS):
            # As in save(): an untouched config whose hook has gone missing can be disabled.
            self.validate_hook()

    def validate_hook(self) -> None:
        """Raise ``ValidationError`` (per field) if hook, params, condition or timeout are not valid."""
        errors: dict[str, str] = {}
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
            else:
                errors.update(self._two_timeouts(hook_class))
        if unstorable(self.condition, "condition"):
            errors["condition"] = unstorable(self.condition, "condition")
        elif self.condition.strip():
            try:
                validate_condition(self.condition)
            except ExpressionError as exc:
                errors["condition"] = str(exc)
        if errors:
            raise ValidationError(errors)

    def _two_timeouts(self, hook_class: type[Any]) -> dict[str, str]:
        """A sink with a ``timeout`` param (``webhook``) is timed by that param alone: its
        ``timeout_ms`` bounds no run (sinks act after the verdict, in their own task). A
        ``timeout_ms`` set to another time than the param's is refused, so that no one trusts it;
        one left at its default, or stored before this check, is let be."""
        if hook_class.kind != "sink" or "timeout" not in hook_class.params_schema.get("properties", {}):
            return {}
        default_ms = HookConfig.timeout_ms.field.default
        if self.timeout_ms == default_ms or not (self._state.adding or self._changed(["timeout_ms"])):
            return {}
        seconds = self.params.get("timeout", hook_class.params_schema["properties"]["timeout"].get("default"))
        if seconds is not None and self.timeout_ms == round(float(seconds) * 1000):
            return {}
        return {
            "timeout_ms": _(
                "%(hook)s's time is its timeout param (%(seconds)s s), not this field: set the time there, "
                "and leave this at %(default)s ms (or give the same time, %(same)s ms)."
            )
            % {"hook": self.hook, "seconds": f"{seconds:g}", "default": default_ms, "same": round(seconds * 1000)}
        }

    def save(self, *args: Any, **kwargs: Any) -> None:
        loaded = getattr(self, "_loaded", None)
        update_fields = kwargs.get("update_fields")
        changed = self._state.adding or self._changed(
            [f for f in self.TRACKED_FIELDS if update_fields is None or f.removesuffix("_id") in update_fields]
        )
        if self._state.adding or self._changed(self.CONFIG_FIELDS):
            # New or changed configuration must be valid; an untouched config whose hook has
            # gone missing can still be saved (to disable or relabel it).
            self.validate_hook()
        if not self._state.adding and self.auto_observed_at is not None and self._changed(["mode"]):
            # A person set its mode: the system's switch is no longer what the hook is in.
            self.auto_observed_at = None
            if update_fields is not None and "mode" in update_fields:
                kwargs["update_fields"] = [*update_fields, "auto_observed_at"]
        if loaded is not None and kwargs.get("update_fields") is None and not self._state.adding:
            # Counters belong to the workers: a save never writes them back from memory.
            skip = {*self.COUNTER_FIELDS, "created_at"}
            if loaded.get("position") == self.position:
                skip.add("position")
            kwargs["update_fields"] = [
                f.name for f in self._meta.concrete_fields if not f.primary_key and f.name not in skip
            ]
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

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with versioning.one_change():
            # Items first, then the stash, then this config: the lock order of processing.
            from stash.models.content import Content  # it names this model: imported when needed

            Content.objects.filter(decided_by_id=self.pk).update(decided_by=None)
            Stash.bump_config_version([self.stash_id])
            return super().delete(*args, **kwargs)
