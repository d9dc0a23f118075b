"""Shadow runs: the live verdicts a running shadow samples, and those items judged again by the shadow's
pipeline, beside the live one, changing nothing.

    offer([(content, result), ...], clock)  # judging, once a batch's verdicts and deliveries are out
    run(shadow_id, rows, clock)              # a shadow's message: its pipeline over each item as submitted
    record_gathered(shadow_id)               # a shadow's message with no rows: write what was gathered

``offer`` picks the items (``sampled``: by a hash of the shadow and the item, so the same item gets the
same answer every time) and, once the verdicts are committed, judges them right there in the live worker,
after its sink deliveries are sent: a shadow costs a live message its hooks' time per item and nothing
more (its items are in memory, and no message carries them). On Redis the runs are gathered in the
shadow's list, which one message every two seconds writes (``publishing.gather_shadow_runs``); elsewhere
they are written at once. Items whose hooks no longer fit in the live message's time limit, and a bulk import's
(live saves may wait behind it), go to a message of their own, which ``run`` judges. With no shadow
running, the live path pays a dictionary look-up per batch: which shadows run is read once a second per
worker process at most (``LOOKUP_SECONDS``), and at once in a process that starts or stops one. A worker
may so judge items for up to a second after a stop: ``record`` reads the shadow's status and writes
nothing for one that no longer runs.

Each item is judged on the payload it was submitted with (before the live transforms), through
``Pipeline.looking()``: no sink is called, hooks with side effects work on scratch state, outcomes are
not cached, asynchronous hooks are not asked (the item would wait), and nothing of the item is
written. ``record`` writes one ``ShadowRun`` per item (with the shadow's trail where the verdicts
differ) and adds to the shadow's counters in one UPDATE, under the shadow's row lock; the shadow
finishes at its ``count`` or ``ends_at``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from stash.core import pipeline
from stash.db import bulk_sql, publishing, shadow_rows
from stash.models import Content, Shadow, ShadowRun
from stash.processing.building import document_pipeline, item_for, submitted_items, submitted_payload
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


def offer(recorded: Sequence[tuple[Content, pipeline.Result]], clock: Clock | None = None) -> int:
    """Judge through their stash's running shadow the items of ``recorded`` (each with its live result,
    as just written) that it samples, once the current transaction commits (now, outside one): here,
    in the live worker, while each item's hooks fit in ``clock``; the rest, and all of them without a
    clock (a bulk import's, a resumed run's: live saves may be waiting behind them), in a message of
    their own (``run``). Returns how many were sampled. Nothing here touches an item or its verdict."""
    if not recorded:
        return 0
    shadows = running()
    if not shadows:
        return 0
    now = timezone.now()
    picked: dict[int, list[tuple[Content, list[Any]]]] = {}
    for content, result in recorded:
        shadow = shadows.get(content.stash_id)
        if shadow is None or (shadow.ends_at is not None and shadow.ends_at <= now):
            continue
        if sampled(shadow.id, content.pk, shadow.percent):
            row = [str(content.pk), content.revision, result.verdict, decider(result.trail)]
            picked.setdefault(shadow.id, []).append((content, row))
    for shadow_id, items in picked.items():
        if clock is None:
            rows = [row for _content, row in items]
            queue = items[0][0].stash.queue
            transaction.on_commit(functools.partial(publishing.send_shadow, shadow_id, rows, queue=queue))
        else:
            transaction.on_commit(functools.partial(_judge_here, shadow_id, items, clock))
    return sum(len(items) for items in picked.values())


def _judge_here(shadow_id: int, picked: Sequence[tuple[Content, list[Any]]], clock: Clock) -> None:
    """``offer``'s work once the verdicts are committed: judge ``picked`` here while their hooks fit in
    ``clock`` and keep their runs (``publishing.gather_shadow_runs``: on Redis for one message a
    second to write, elsewhere written now); send the rest to be judged in a message. A failure is
    logged: a shadow is a sample, and the live verdicts stand whatever becomes of it."""
    queue = picked[0][0].stash.queue
    try:
        shadow_pipeline = _pipeline_by_id(shadow_id)
        if shadow_pipeline is None:
            return
        outcomes: list[ShadowRun] = []
        for index, (content, row) in enumerate(picked):
            if not clock.fits(shadow_pipeline.budget, first=False):
                publishing.send_shadow(shadow_id, [row for _content, row in picked[index:]], queue=queue)
                break
            item = replace(item_for(content), payload=submitted_payload(content))
            outcomes.append(_outcome(shadow_id, shadow_pipeline, item, *row))
        if outcomes and not publishing.gather_shadow_runs(shadow_id, [_as_json(run) for run in outcomes], queue):
            record(shadow_id, outcomes)
    except Exception:
        logger.exception("Shadow %s could not judge %d item(s); they are not shadowed.", shadow_id, len(picked))


def _outcome(
    shadow_id: int,
    shadow_pipeline: pipeline.Pipeline,
    item: pipeline.Item,
    pk: Any,
    revision: int,
    live_verdict: str,
    live_decider: str,
) -> ShadowRun:
    """The shadow's run of ``item`` (as submitted) beside its live verdict, not yet written. Its trail is
    kept only where the verdicts differ: the report shows both trails there, and nothing reads it elsewhere
    (a run that agrees is its verdict, its decider and its time)."""
    result = shadow_pipeline.looking().run(item)
    agreed = live_verdict == result.verdict
    return ShadowRun(
        shadow_id=shadow_id,
        content_id=uuid.UUID(str(pk)),
        revision=revision,
        live_verdict=live_verdict,
        live_decider=live_decider[:200],
        shadow_verdict=result.verdict,
        shadow_decider=decider(result.trail)[:200],
        shadow_reason=result.reason,
        shadow_trail=[] if agreed else [entry.as_dict() for entry in result.trail],
        agreed=agreed,
        duration_ms=result.duration_ms,
    )


_GATHERED_FIELDS = (
    "revision",
    "live_verdict",
    "live_decider",
    "shadow_verdict",
    "shadow_decider",
    "shadow_reason",
    "shadow_trail",
    "agreed",
    "duration_ms",
)


def _as_json(run: ShadowRun) -> dict[str, Any]:
    return {"content_id": str(run.content_id), **{name: getattr(run, name) for name in _GATHERED_FIELDS}}


def _from_json(shadow_id: int, data: dict[str, Any]) -> ShadowRun:
    return ShadowRun(
        shadow_id=shadow_id, content_id=uuid.UUID(data["content_id"]), **{name: data[name] for name in _GATHERED_FIELDS}
    )


def record_gathered(shadow_id: int) -> int:
    """Write the runs gathered for shadow ``shadow_id`` (``publishing.gather_shadow_runs``: on Redis, live
    workers' runs are gathered for one message every two seconds to write); returns how many were written. On
    PostgreSQL their JSON goes to the database as it was gathered (``shadow_rows.insert_gathered``): no
    model instance is built for a run."""
    taken = publishing.take_shadow_runs(shadow_id)
    if not taken:
        return 0
    if not shadow_rows.available():
        return record(shadow_id, [_from_json(shadow_id, json.loads(run)) for run in taken])
    return _write(shadow_id, lambda limit, now: shadow_rows.insert_gathered(shadow_id, taken, limit, now))


def _pipeline_by_id(shadow_id: int) -> pipeline.Pipeline | None:
    """``pipeline_of`` the shadow ``shadow_id`` (read once per process), None if it no longer runs."""
    built = _pipelines.get(shadow_id)
    if built is not None:
        return built
    shadow = Shadow.objects.select_related("stash").filter(pk=shadow_id, status=Running).first()
    return pipeline_of(shadow) if shadow is not None else None


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
    for index, row in enumerate(rows):
        if not clock.fits(shadow_pipeline.budget, first=index == 0):
            _send_again(shadow, rows[index:], shadow_pipeline.budget, alone=index == 0)
            break
        item = items.get(str(row[0]))
        if item is None or item.revision != row[1]:
            continue
        outcomes.append(_outcome(shadow.pk, shadow_pipeline, item, *row))
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
    """Write ``outcomes`` of shadow ``shadow_id`` and add them to its counters (``_write``); returns how
    many were written. Runs written already (the same item and revision: a duplicate message) and runs of
    items deleted since are left out."""
    if not outcomes:
        return 0

    def insert(limit: int | None, now: datetime) -> list[tuple[str, str, bool, float]]:
        ids = [run.content_id for run in outcomes]
        seen = set(
            ShadowRun.objects.filter(shadow_id=shadow_id, content_id__in=ids)
            .order_by()
            .values_list("content_id", "revision")
        )
        present = set(Content.objects.filter(pk__in=ids).values_list("pk", flat=True))
        fresh = []
        for outcome in outcomes:
            if outcome.content_id in present and (outcome.content_id, outcome.revision) not in seen:
                seen.add((outcome.content_id, outcome.revision))
                fresh.append(outcome)
        fresh = fresh[:limit]
        for outcome in fresh:
            outcome.created_at = now
        bulk_sql.insert_rows(ShadowRun, fresh)  # COPY: bulk_create quotes each trail into an array literal
        return [(run.live_verdict, run.shadow_verdict, run.agreed, run.duration_ms) for run in fresh]

    return _write(shadow_id, insert)


def _write(shadow_id: int, insert: Callable[[int | None, datetime], list[tuple[str, str, bool, float]]]) -> int:
    """Under shadow ``shadow_id``'s row lock, if it runs: ``insert(limit, now)`` its runs (no more than
    ``limit``, None: no limit, up to its ``count``), which returns ``(live verdict, shadow verdict, agreed,
    duration_ms)`` of each row written, and add those to its counters in one UPDATE, finishing it at its
    ``count``; returns how many were written. The commit does not wait for the disk
    (``bulk_sql.commit_unsynced``): runs are a sample, and the live commits beside them should not queue
    behind their write."""
    with transaction.atomic():
        bulk_sql.commit_unsynced()  # a sample: the live commits beside it need not wait behind its disk write
        shadow = Shadow.objects.select_for_update().filter(pk=shadow_id, status=Running).first()
        if shadow is None:
            return 0
        limit = None if shadow.count is None else max(0, shadow.count - shadow.items)
        now = timezone.now()
        written = insert(limit, now) if limit != 0 else []
        if not written:
            return 0
        matrix = dict(shadow.matrix)
        for live_verdict, shadow_verdict, _agreed, _duration in written:
            key = f"{live_verdict}/{shadow_verdict}"
            matrix[key] = matrix.get(key, 0) + 1
        agreed = sum(1 for run in written if run[2])
        changes: dict[str, Any] = {
            "items": F("items") + len(written),
            "agreed": F("agreed") + agreed,
            "disagreed": F("disagreed") + len(written) - agreed,
            "time_total_us": F("time_total_us") + sum(int(run[3] * 1000) for run in written),
            "matrix": matrix,
        }
        finished = shadow.count is not None and shadow.items + len(written) >= shadow.count
        if finished:
            changes.update(status=Shadow.Status.FINISHED, ended_at=now)
        Shadow.objects.filter(pk=shadow_id).update(**changes)
    if finished:
        forget()
        logger.info("Shadow %s finished at its count of %s items", shadow_id, shadow.count)
    return len(written)
