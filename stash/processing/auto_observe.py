"""A hook switched to observe when people's decisions show its precision below its minimum.

    after_decisions(items)         # in a person's decision: checks sent once it commits
    check(config_id)               # in the task: Switch, or None when the hook stays as it is
    notice(config)                 # what the admin's pages warn of, or ""

After a person's decision (approve, reject, overturn, an appeal decided) on items that an enforcing
hook with a ``min_precision`` rejected or held, one ``check_precision`` task per such hook is sent
once the decision commits, so the reviewer's request does no more than one small query. The task
reads the hook's precision over the last ``WINDOW_DAYS`` (``precision``); when it is under
``min_precision`` with at least ``min_precision_count`` decisions, the hook is set to observe as one
change made by the system: one new version (no author) whose summary says why, a WARNING log line
and the count ``hook_auto_observed`` (``stash_hook_auto_observed_total``). It is not checked against
the stash's golden examples: a switch to observe only loosens the pipeline, and waiting for a person
to allow it would leave the hook deciding wrongly meanwhile.

An observing hook is never switched (so never twice). An operator switches it back by setting its
mode to enforce; only the items it judges after the switch (``HookConfig.precision_since``) count
toward the next one, so the decisions that made the system switch it do not switch it again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from stash.db import publishing, versioning
from stash.models import Content, HookConfig, Stash
from stash.processing import worker_counts
from stash.processing.precision import Precision, for_config

logger = logging.getLogger(__name__)

#: The window, in days, the automatic switch reads.
WINDOW_DAYS = 30


@dataclass(frozen=True)
class Switch:
    """A hook the system switched to observe, and why."""

    config_id: int
    title: str
    precision: Precision
    minimum: float
    note: str


def after_decisions(items: Iterable[Content]) -> int:
    """Once the current transaction commits, send a precision check for each enforcing hook with a
    ``min_precision`` that decided one of ``items`` (just decided by a person). Returns how many."""
    config_ids = {item.decided_by_id for item in items if item.decided_by_id is not None}
    if not config_ids:
        return 0
    due = list(
        HookConfig.objects.filter(pk__in=config_ids, mode=HookConfig.Mode.ENFORCE, min_precision__isnull=False)
        .order_by("pk")
        .values_list("pk", "stash__queue")
    )
    if due:
        transaction.on_commit(lambda: publishing.send_precision_checks(due))
    return len(due)


def falls_below(config: HookConfig, figure: Precision) -> bool:
    """Whether ``figure`` switches ``config``: under its minimum, on at least its minimum count."""
    return (
        config.min_precision is not None
        and figure.value is not None
        and figure.decisions >= config.min_precision_count
        and figure.value < config.min_precision
    )


def check(config_id: int, now: datetime | None = None) -> Switch | None:
    """Switch hook config ``config_id`` to observe if its precision (``WINDOW_DAYS``, items judged
    since ``precision_since``) is under its ``min_precision``; returns the ``Switch`` or None.

    The precision is read first, with no lock held; the switch is written under the stash's row
    lock (which every change of its hooks takes first) only while the config is as it was read, so
    two checks at once switch it once, and a person's change meanwhile wins. A config that is
    gone, observing or without a minimum is left alone.
    """
    now = now or timezone.now()
    hook = (
        HookConfig.objects.select_related("stash")
        .filter(pk=config_id, mode=HookConfig.Mode.ENFORCE, min_precision__isnull=False)
        .first()
    )
    if hook is None:
        return None
    figure = for_config(hook, days=WINDOW_DAYS, since=hook.precision_since, now=now)
    if not falls_below(hook, figure):
        return None
    note = switch_note(hook, figure)
    as_read = Q(
        pk=hook.pk,
        mode=HookConfig.Mode.ENFORCE,
        min_precision=hook.min_precision,
        min_precision_count=hook.min_precision_count,
    ) & (Q(precision_since__isnull=True) if hook.precision_since is None else Q(precision_since=hook.precision_since))
    with versioning.one_change(note=note):
        Stash.lock([hook.stash_id])
        switched = HookConfig.objects.filter(as_read).update(
            mode=HookConfig.Mode.OBSERVE, auto_observed_at=now, precision_since=now
        )
    if not switched:
        return None
    logger.warning("Stash %s, hook config %s: %s.", hook.stash.slug, hook.pk, note)
    worker_counts.add(worker_counts.HOOK_AUTO_OBSERVED, config_id=hook.pk)
    return Switch(config_id=hook.pk, title=hook.title, precision=figure, minimum=hook.min_precision or 0.0, note=note)


def switch_note(config: HookConfig, figure: Precision) -> str:
    """What the version of a switch says, e.g. "Switched 'No spam' to observe: precision 0.35 over 20
    human decisions in 30 days, below its minimum 0.80"."""
    return _(
        "Switched %(title)s to observe: precision %(value).2f over %(count)d human decisions in %(days)d days, "
        "below its minimum %(minimum).2f"
    ) % {
        "title": repr(config.title),
        "value": figure.value or 0.0,
        "count": figure.decisions,
        "days": WINDOW_DAYS,
        "minimum": config.min_precision or 0.0,
    }


def notice(config: HookConfig) -> str:
    """The warning the admin shows while ``config`` observes because the system switched it; "" else."""
    if config.auto_observed_at is None or config.mode != HookConfig.Mode.OBSERVE:
        return ""
    return _(
        "Hook %(title)s was switched to observe by the system on %(when)s UTC: its precision over "
        "%(days)d days fell below its minimum %(minimum).2f. It decides nothing until you set its "
        "mode back to enforce; then only the items it judges from then on count toward its minimum."
    ) % {
        "title": repr(config.title),
        "when": f"{config.auto_observed_at.astimezone(UTC):%Y-%m-%d %H:%M}",
        "days": WINDOW_DAYS,
        "minimum": config.min_precision or 0.0,
    }
