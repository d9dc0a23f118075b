"""Housekeeping: deleting pipeline runs, and optionally final items, past their retention.

::

    report = prune()                          # runs older than STASH_RUN_RETENTION_DAYS
    report = prune(run_days=7, item_days=90, dry_run=True)   # what would go, nothing deleted

Each batch of ids is selected and deleted in a transaction of its own, so no lock outlives a
batch: saves, verdicts and reviews of the rows ahead go on while a long prune runs.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from stash.models import Content, PipelineRun

#: Statuses an item keeps for good: only these are ever pruned (never pending, processing or held).
FINAL_STATUSES = (Content.Status.ACCEPTED, Content.Status.REJECTED, Content.Status.FAILED)

#: Ids per batch unless told; the most one batch may take (ids travel as query parameters).
BATCH_SIZE = 1000
MAX_BATCH_SIZE = 10_000


@dataclass(frozen=True)
class PruneReport:
    """What a prune deleted (or, in a dry run, would delete)."""

    runs: int = 0
    items: int = 0
    item_runs: int = 0
    batches: int = 0
    run_cutoff: datetime | None = None
    item_cutoff: datetime | None = None
    dry_run: bool = False
    finished: bool = True


def old_runs(cutoff: datetime) -> QuerySet[PipelineRun]:
    """Runs that finished before ``cutoff``, less each item's latest run.

    The latest run is the one ``content.runs.first()`` gives (the newest ``finished_at``, then the
    highest id): the trail that the item's page, the API and the admin show, so it always stays.
    """
    newer = PipelineRun.objects.filter(content_id=OuterRef("content_id")).filter(
        Q(finished_at__gt=OuterRef("finished_at")) | Q(finished_at=OuterRef("finished_at"), pk__gt=OuterRef("pk"))
    )
    return PipelineRun.objects.filter(finished_at__lt=cutoff).filter(Exists(newer))


def latest_runs(content_ids: Iterable[uuid.UUID]) -> set[int]:
    """Ids of the latest run of each of these items (as ``old_runs`` means it), one lookup an item."""
    latest = PipelineRun.objects.filter(content_id=OuterRef("pk")).order_by("-finished_at", "-pk").values("pk")[:1]
    return set(
        Content.objects.filter(pk__in=list(content_ids))
        .order_by()
        .annotate(latest=Subquery(latest))
        .values_list("latest", flat=True)
    )


def old_items(cutoff: datetime) -> QuerySet[Content]:
    """Final items (accepted, rejected, failed) judged, and reviewed if they were, before ``cutoff``."""
    return Content.objects.filter(status__in=FINAL_STATUSES, processed_at__lt=cutoff).filter(
        Q(reviewed_at__isnull=True) | Q(reviewed_at__lt=cutoff)
    )


def prune(
    run_days: int | None = None,
    item_days: int | None = None,
    batch_size: int = BATCH_SIZE,
    dry_run: bool = False,
    budget: float | None = None,
    now: datetime | None = None,
    on_batch: Callable[[PruneReport], object] | None = None,
) -> PruneReport:
    """Delete runs older than ``run_days`` (default ``STASH_RUN_RETENTION_DAYS``), each item's
    latest run excepted, and, given ``item_days``, the final items older than that with all
    their runs. Items go first, so their runs are counted with them (``item_runs``).

    Batches of ``batch_size`` ids are selected and deleted each in a transaction of its own;
    ``on_batch(report)`` is called after each commits. Items locked by someone else (a reviewer,
    a worker) are skipped, not waited for: the next prune takes them. With ``budget`` (seconds)
    no batch starts once it has run out (the first always runs); the report then says
    ``finished=False``. A dry run counts and deletes nothing. Raises ``ValueError`` for a
    negative number of days or a batch size outside 1..``MAX_BATCH_SIZE``; then nothing is deleted.
    """
    run_days = settings.STASH_RUN_RETENTION_DAYS if run_days is None else run_days
    for name, days in (("run retention", run_days), ("item retention", item_days)):
        if days is not None and (not isinstance(days, int) or days < 0):
            raise ValueError(f"The {name} must be a whole number of days, 0 or more (not {days!r}).")
    if not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ValueError(f"The batch size must be 1 to {MAX_BATCH_SIZE:,} (not {batch_size!r}).")
    now = now or timezone.now()
    run_cutoff = now - timedelta(days=run_days)
    item_cutoff = None if item_days is None else now - timedelta(days=item_days)
    report = PruneReport(run_cutoff=run_cutoff, item_cutoff=item_cutoff, dry_run=dry_run)
    if dry_run:
        return _count(report, run_cutoff)
    deadline = None if budget is None else time.monotonic() + budget
    sources = [_run_batches(run_cutoff, batch_size)]
    if item_cutoff is not None:
        sources.insert(0, _item_batches(item_cutoff, batch_size))
    for source in sources:
        for counts in source:  # each step runs one batch
            report = replace(
                report,
                batches=report.batches + 1,
                **{key: getattr(report, key) + value for key, value in counts.items()},
            )
            if on_batch is not None:
                on_batch(report)
            if deadline is not None and time.monotonic() >= deadline:
                return replace(report, finished=False)
    return report


def scheduled_prune(budget: float | None = None) -> PruneReport:
    """Beat's daily prune: runs past ``STASH_RUN_RETENTION_DAYS`` and, if it is set, final items
    past ``STASH_ITEM_RETENTION_DAYS``."""
    return prune(item_days=settings.STASH_ITEM_RETENTION_DAYS, budget=budget)


def _count(report: PruneReport, run_cutoff: datetime) -> PruneReport:
    items = old_items(report.item_cutoff) if report.item_cutoff is not None else Content.objects.none()
    runs = old_runs(run_cutoff)
    if report.item_cutoff is not None:
        runs = runs.exclude(content__in=items)
    return replace(
        report, items=items.count(), runs=runs.count(), item_runs=PipelineRun.objects.filter(content__in=items).count()
    )


def _item_batches(cutoff: datetime, batch_size: int) -> Iterator[dict[str, int]]:
    """Delete old final items, a batch per transaction; yields what each batch deleted.

    The rows are locked (SKIP LOCKED where the database has it) and checked again in the batch's
    transaction: an item edited or sent back to be judged since is pending, and stays.
    """
    after = None
    while True:
        with transaction.atomic():
            batch = old_items(cutoff).select_for_update(skip_locked=True).order_by("pk")
            if after is not None:
                batch = batch.filter(pk__gt=after)
            ids = list(batch.values_list("pk", flat=True)[:batch_size])
            if not ids:
                return
            # Only the ids are read: the collector fetches the items before deleting them.
            _total, deleted = Content.objects.filter(pk__in=ids).only("pk").delete()
        after = ids[-1]
        yield {"items": deleted.get(Content._meta.label, 0), "item_runs": deleted.get(PipelineRun._meta.label, 0)}


def _run_batches(cutoff: datetime, batch_size: int) -> Iterator[dict[str, int]]:
    """Delete old runs (each item's latest excepted), a batch per transaction; yields counts.

    A batch is the next ``batch_size`` runs, in id order, that finished before ``cutoff``, less
    the latest run of each of their items. Each batch starts where the last stopped, so the table
    is read once, and only the batch's items are looked up for their latest run (a correlated
    ``EXISTS`` over the whole batch makes PostgreSQL hash the whole table, batch after batch).
    A run that an item gets meanwhile only makes the older ones less recent.
    """
    after = 0
    while True:
        with transaction.atomic():
            batch = list(
                PipelineRun.objects.filter(finished_at__lt=cutoff, pk__gt=after)
                .order_by("pk")
                .values_list("pk", "content_id")[:batch_size]
            )
            if not batch:
                return
            keep = latest_runs({content_id for _pk, content_id in batch})
            doomed = [pk for pk, _content_id in batch if pk not in keep]
            deleted = PipelineRun.objects.filter(pk__in=doomed).delete()[0] if doomed else 0
        after = batch[-1][0]
        yield {"runs": deleted}
