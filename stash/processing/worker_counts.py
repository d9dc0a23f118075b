"""Counts of what the workers do that leaves no row behind: sweeper recoveries, sink deliveries,
hooks switched to observe.

    worker_counts.add(worker_counts.SINK_DELIVERED, config_id=7)
    worker_counts.count_sweep(report)            # after a sweeper pass
    worker_counts.totals()                       # {(name, config id or None): value}

They are ``EventCount`` rows, added to in one ``UPDATE ... SET value = value + n``, so workers on
any number of machines add to the same counts and one ``/metrics`` scrape reads them all (see
``stash.ops.metrics``). Counting never fails the work it counts: an error is logged and the count lost.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.db.models import F

from stash.models import EventCount, HookConfig

if TYPE_CHECKING:
    from stash.processing.sweeping import SweepReport

logger = logging.getLogger(__name__)

SWEEP_RECOVERED = "sweep_recovered"
SWEEP_FAILED = "sweep_failed"
SINK_DELIVERED = "sink_delivered"
SINK_RETRIED = "sink_retried"
SINK_FAILED = "sink_failed"
#: A hook the system switched to observe for its precision (``auto_observe``).
HOOK_AUTO_OBSERVED = "hook_auto_observed"


def add(name: str, n: int = 1, config_id: int | None = None) -> None:
    """Add ``n`` to the count ``name`` (of hook config ``config_id``, if given); 0 writes nothing.

    A count of a config deleted meanwhile is dropped; any other error is logged and dropped too.
    """
    if not n:
        return
    rows = EventCount.objects.filter(name=name, config_id=config_id)
    try:
        if rows.update(value=F("value") + n):
            return
        if config_id is not None and not HookConfig.objects.filter(pk=config_id).exists():
            return  # the config was deleted, and its counts with it
        try:
            with transaction.atomic():
                EventCount.objects.create(name=name, config_id=config_id, value=n)
        except IntegrityError:
            # Created by another worker since the update (or the config is gone since: nothing to add to).
            rows.update(value=F("value") + n)
    except Exception:
        logger.exception("Could not count %d %s event(s) (hook config %s).", n, name, config_id)


def count_sweep(report: SweepReport) -> None:
    """Count what one sweeper pass (``processing.sweep``'s ``report``) did."""
    add(SWEEP_RECOVERED, report.requeued)
    add(SWEEP_FAILED, report.failed)


def totals() -> dict[tuple[str, int | None], int]:
    """Every count: ``{(name, config id or None): value}``, in one query."""
    return {
        (name, config_id): value
        for name, config_id, value in EventCount.objects.order_by().values_list("name", "config_id", "value")
    }
