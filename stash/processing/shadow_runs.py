"""Shadow runs: the live verdicts a running shadow samples, and those items judged again by the shadow's
pipeline in a task of their own, beside the live one, changing nothing.

    offer([(content, result), ...])     # judging, once a batch's verdicts are written
    run(shadow_id, rows, clock)          # the shadow's task: its pipeline over each item as submitted

``offer`` never runs a hook: it picks the items (``sampled``: by a hash of the shadow and the item, so
the same item gets the same answer every time) and publishes them after the verdicts commit: on Redis
into the shadow's list, which one message a second takes (``gathered``), so that a shadow costs
about its hooks' time per item rather than a message's; elsewhere in a message per batch. With no
shadow running, the live path pays a dictionary look-up per batch: which shadows run is read once a
second per worker process at most (``LOOKUP_SECONDS``), and at once in a process that starts or stops
one. A worker may so offer items for up to a second after a stop: ``run`` reads the shadow's status
and records nothing for one that no longer runs.

``run`` judges each item on the payload it was submitted with (before the live transforms), through
``Pipeline.looking()``: no sink is called, hooks with side effects work on scratch state, outcomes are
not cached, asynchronous hooks are not asked (the item would wait), and nothing of the item is
written. It records one ``ShadowRun`` per item and adds to the shadow's counters in one UPDATE, under
the shadow's row lock; the shadow finishes at its ``count`` or ``ends_at``.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from stash.core import pipeline
from stash.db import bulk_sql, publishing
from stash.models import Content, Shadow, ShadowRun
from stash.processing.building import document_pipeline, submitted_items
from stash.processing.time_limits import Clock, time_limit_for

logger = logging.getLogger(__name__)

#: Seconds a worker process goes on with what it read of the running shadows before reading again.
LOOKUP_SECONDS = 1.0

Running = Shadow.Status.RUNNING


@dataclass(frozen=True)
class Active:
    """What the live path needs of a running shadow."""

    id: int
    percent: int
    ends_at: datetime | None


# (monotonic time read, {stash id: its running shadow}); None: read at next use.
_active: tuple[float, dict[int, Active]] | None = None
# shadow id -> its pipeline: a shadow's document never changes.
_pipelines: dict[int, pipeline.Pipeline] = {}
_PIPELINES_KEPT = 32


def forget() -> None:
    """Read the running shadows again at next use (a shadow started, stopped or finished here), and
    build their pipelines again."""
    global _active
    _active = None
    _pipelines.clear()


def running() -> dict[int, Active]:
    """The running shadows by stash id, as read at most ``LOOKUP_SECONDS`` ago (one query for all stashes)."""
    global _active
    now = time.monotonic()
    if _active is None or now - _active[0] >= LOOKUP_SECONDS:
        rows = Shadow.objects.filter(status=Running).order_by().values_list("stash_id", "pk", "percent", "ends_at")
        _active = (now, {stash: Active(pk, percent, ends_at) for stash, pk, percent, ends_at in rows})
    return _active[1]


def sampled(shadow_id: int, content_id: uuid.UUID | str, percent: int) -> bool:
    """True if the item ``content_id`` is among the ``percent`` of items shadow ``shadow_id`` judges:
    the same answer every time for the same two (a replay picks the same items)."""
    digest = hashlib.blake2b(f"{shadow_id}:{content_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % 100 < percent


def decider(trail: Iterable[pipeline.TrailEntry]) -> str:
    """The title of the hook that decided a run (rejected or held it), blank if none did."""
    return next((entry.title for entry in trail if entry.stopped), "")


def offer(recorded: Sequence[tuple[Content, pipeline.Result]]) -> int:
    """Publish, once the current transaction commits, the items of ``recorded`` (each with its live
    result, as just written) that their stash's running shadow samples; returns how many."""
    if not recorded:
        return 0
    shadows = running()
    if not shadows:
        return 0
    now = timezone.now()
    rows: dict[int, list[list[Any]]] = {}
    queues: dict[int, str] = {}
    for content, result in recorded:
        shadow = shadows.get(content.stash_id)
        if shadow is None or (shadow.ends_at is not None and shadow.ends_at <= now):
            continue
        if sampled(shadow.id, content.pk, shadow.percent):
            rows.setdefault(shadow.id, []).append(
                [str(content.pk), content.revision, result.verdict, decider(result.trail)]
            )
            queues[shadow.id] = content.stash.queue
    for shadow_id, offered in rows.items():
        publishing.send_shadow_on_commit(shadow_id, offered, queue=queues[shadow_id])
    return sum(len(offered) for offered in rows.values())


def gathered(shadow_id: int) -> list[list[Any]]:
    """The rows offered to shadow ``shadow_id`` since its last message took them (on Redis, live
    batches' rows are gathered for one message a second: ``publishing.gather_shadow_rows``)."""
    return publishing.take_shadow_rows(shadow_id)


def pipeline_of(shadow: Shadow) -> pipeline.Pipeline:
    """The pipeline of ``shadow``'s document, built once per process."""
    built = _pipelines.get(shadow.pk)
    if built is None:
        if len(_pipelines) >= _PIPELINES_KEPT:
            _pipelines.clear()
        built = _pipelines[shadow.pk] = document_pipeline(shadow.stash, shadow.document)
    return built


def finish_expired(now: datetime | None = None) -> int:
    """Finish the running shadows past their ``ends_at`` (the sweeper, and each read of a stash's
    shadows: a shadow ends on time even when nothing is judged); returns how many."""
    now = now or timezone.now()
    finished = Shadow.objects.filter(status=Running, ends_at__lte=now).update(
        status=Shadow.Status.FINISHED, ended_at=now
    )
    if finished:
        forget()
    return finished


def run(shadow_id: int, rows: Sequence[Sequence[Any]], clock: Clock | None = None) -> int:
    """Judge ``rows`` (``[id, revision, live verdict, live decider]`` each, as ``offer`` sends them)
    through shadow ``shadow_id``'s pipeline and record them; returns how many were recorded.

    Nothing is done for a shadow that no longer runs, an item gone or edited since (its new revision
    has a live run of its own), or one recorded already (a duplicate message). Items whose hooks' time
    no longer fits in ``clock`` are published again, in a message of their own (each alone, with a time
    limit its hooks fit in, when they fit in no message of this one). A hook that fails is
    handled by its ``on_error``, as in any run: it never fails the task.
    """
    clock = clock or Clock()
    shadow = Shadow.objects.select_related("stash").filter(pk=shadow_id).first()
    if shadow is None or shadow.status != Running:
        return 0
    if shadow.ends_at is not None and shadow.ends_at <= timezone.now():
        finish_expired()
        return 0
    if shadow.count is not None:
        rows = rows[: max(0, shadow.count - shadow.items)]  # no more than it may still record (``record`` decides)
    shadow_pipeline = pipeline_of(shadow)
    items = submitted_items(shadow.stash, [row[0] for row in rows])
    outcomes: list[ShadowRun] = []
    for index, (pk, revision, live_verdict, live_decider) in enumerate(rows):
        if not clock.fits(shadow_pipeline.budget, first=index == 0):
            _send_again(shadow, rows[index:], shadow_pipeline.budget, alone=index == 0)
            break
        item = items.get(str(pk))
        if item is None or item.revision != revision:
            continue
        result = shadow_pipeline.looking().run(item)
        outcomes.append(
            ShadowRun(
                shadow=shadow,
                content_id=uuid.UUID(item.id),
                revision=revision,
                live_verdict=live_verdict,
                live_decider=live_decider[:200],
                shadow_verdict=result.verdict,
                shadow_decider=decider(result.trail)[:200],
                shadow_reason=result.reason,
                shadow_trail=[entry.as_dict() for entry in result.trail],
                agreed=live_verdict == result.verdict,
                duration_ms=result.duration_ms,
            )
        )
    return record(shadow.pk, outcomes)


def _send_again(shadow: Shadow, rows: Sequence[Sequence[Any]], budget: float, alone: bool) -> None:
    """Publish ``rows`` again: together, or (``alone``: they fit in no message of this time limit) each in a
    message of its own, with a limit its hooks' budget fits in."""
    if not alone:
        publishing.send_shadow(shadow.pk, [list(row) for row in rows], queue=shadow.stash.queue)
        return
    for row in rows:
        publishing.send_shadow(shadow.pk, [list(row)], queue=shadow.stash.queue, time_limit=time_limit_for(budget))


def record(shadow_id: int, outcomes: list[ShadowRun]) -> int:
    """Write ``outcomes`` of shadow ``shadow_id`` and add them to its counters, in one UPDATE under its
    row lock, up to its ``count`` (which finishes it); returns how many were written."""
    if not outcomes:
        return 0
    with transaction.atomic():
        shadow = Shadow.objects.select_for_update().filter(pk=shadow_id, status=Running).first()
        if shadow is None:
            return 0
        seen = set(
            ShadowRun.objects.filter(shadow_id=shadow_id, content_id__in=[run.content_id for run in outcomes])
            .order_by()
            .values_list("content_id", "revision")
        )
        fresh = []
        for outcome in outcomes:
            if (outcome.content_id, outcome.revision) not in seen:
                seen.add((outcome.content_id, outcome.revision))
                fresh.append(outcome)
        if shadow.count is not None:
            fresh = fresh[: max(0, shadow.count - shadow.items)]
        if not fresh:
            return 0
        now = timezone.now()
        for outcome in fresh:
            outcome.created_at = now
        bulk_sql.insert_rows(ShadowRun, fresh)  # COPY: bulk_create quotes each trail into an array literal
        matrix = dict(shadow.matrix)
        for outcome in fresh:
            key = f"{outcome.live_verdict}/{outcome.shadow_verdict}"
            matrix[key] = matrix.get(key, 0) + 1
        agreed = sum(1 for outcome in fresh if outcome.agreed)
        changes: dict[str, Any] = {
            "items": F("items") + len(fresh),
            "agreed": F("agreed") + agreed,
            "disagreed": F("disagreed") + len(fresh) - agreed,
            "time_total_us": F("time_total_us") + sum(int(outcome.duration_ms * 1000) for outcome in fresh),
            "matrix": matrix,
        }
        finished = shadow.count is not None and shadow.items + len(fresh) >= shadow.count
        if finished:
            changes.update(status=Shadow.Status.FINISHED, ended_at=now)
        Shadow.objects.filter(pk=shadow_id).update(**changes)
    if finished:
        forget()
        logger.info("Shadow %s finished at its count of %s items", shadow_id, shadow.count)
    return len(fresh)
