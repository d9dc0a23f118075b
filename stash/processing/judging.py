"""Judging: claim items, run their stash's pipeline, write verdicts.

- ``judge(ids, wake=None, clock=None)`` claims the given items by compare-and-set (only ``pending`` ones; a
  duplicate delivery claims nothing) together with other items of their stashes (or of stash
  ``wake``) waiting for their first run, up to ``STASH_BATCH_SIZE`` (so single saves that arrive
  together are judged together; see ``publishing`` for the saves that publish nothing),
  judges them, and writes verdicts, runs and counters in a constant number of queries per batch,
  whatever the number of hooks (the claim: see ``claiming``). A verdict is written only if the
  claim still holds: an item edited meanwhile is left to its new revision's run. Claims last as
  long as the message may run, and items whose hooks' time would not fit in what is left of it go
  back to the queue (see ``time_limits``). Live saves go ahead of bulk work (``Content.bulk``: a
  bulk submit, a large re-judge): a batch of bulk items is judged a slice at a time, each after
  the live saves then waiting in its queue, so a live save waits for one slice at most however
  long the backlog before its own message; each lane keeps its own order in the stash's queue.
  The items of a stash whose pipeline has a batched hook run together (``Pipeline.run_many``),
  so that the hook is called once for them; the others run one at a time.

Whatever is sent again (released, swept, reprocessed) and every sink delivery goes to the queue
of its item's stash (``publishing``), grouped so that no message mixes queues.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from stash.core import logs, pipeline
from stash.db import bulk_sql, publishing, tracing
from stash.models import Content, PipelineRun, Stash, Statement, lease_end
from stash.processing import (
    after_verdict,
    callbacks,
    claiming,
    delivering,
    failures,
    review_queue,
    shadow_runs,
    statements,
)
from stash.processing.building import item_for, pipeline_for, priority_for
from stash.processing.time_limits import Clock, time_limit_for

logger = logging.getLogger(__name__)

Status = Content.Status


@dataclass
class BatchReport:
    """What one ``judge`` call did."""

    claimed: int = 0
    judged: int = 0
    stale: int = 0
    released: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    deliveries: list[publishing.Delivery] = field(default_factory=list)
    hook_seconds: dict[int, float] = field(default_factory=dict)  # stash id: its hooks' time (see ``slowness``)


# --- processing ------------------------------------------------------------------------------


def judge(
    ids: Iterable[uuid.UUID | str],
    wake: int | None = None,
    *,
    token: uuid.UUID | None = None,
    clock: Clock | None = None,
) -> BatchReport:
    """Claim and judge the pending items among ``ids``, and more of their stashes (with ``wake``,
    of that stash, then the saves that joined the message), under ``token`` within ``clock`` (the
    message's time limit; none by default); see the module docstring."""
    report = BatchReport()
    token = token or uuid.uuid4()
    clock = clock or Clock()
    ids = list(ids)
    # A message that wakes its stash claims its own items only: those that joined it are claimed
    # after, if any did. With no items of its own, it was sent for the stash's waiting items.
    others_of = None if wake is None else [] if ids else [wake]
    contents = _claim_batch(ids, others_of, token, clock, report)
    bulk = [content for content in contents if content.bulk]
    if bulk:
        _judge_bulk(bulk, [content for content in contents if not content.bulk], token, clock, report)
    else:
        _judge_batch(token, contents, clock, report)
    if wake is not None:
        _judge_joined(wake, token, clock, report)
    return report


#: Bulk items are judged this many at a time, the live saves waiting in their queue before each slice.
BULK_SLICE = 50


def _judge_bulk(bulk: list[Content], live: list[Content], token: uuid.UUID, clock: Clock, report: BatchReport) -> None:
    """Judge a batch of bulk work (``bulk``; ``live``: the live saves claimed with it) slice by
    slice, each after the live saves then waiting in its queue, which are judged and recorded at
    once: whatever lies before their own messages, a live save waits for a slice of bulk work at
    most. The bulk verdicts are recorded together, after the last slice; on SQLite, after each
    slice: there a transaction that writes holds the one write lock, and the live saves' claims
    wait for it."""
    first_tries = [content for content in bulk if content.attempts <= 1]
    judged: list[_Judged] = []
    later: list[Content] = []
    each_slice = connection.vendor == "sqlite"
    for start in range(0, len(first_tries), BULK_SLICE):
        waiting = claiming.claim_live(bulk[0].stash.queue, token, clock.lease_until())
        report.claimed += len(waiting)
        if live or waiting:
            _judge_batch(
                token, sorted(live + waiting, key=lambda content: (content.created_at, content.pk)), clock, report
            )
            live = []
        _run(first_tries[start : start + BULK_SLICE], token, report, clock, judged, later)
        if each_slice and judged:
            _finish(judged, [], token, report)
            judged = []
    _judge_batch(token, live, clock, report)
    if judged or later:
        _finish(judged, later, token, report)
    _judge_batch(token, [content for content in bulk if content.attempts > 1], clock, report)


def _judge_joined(stash: int, token: uuid.UUID, clock: Clock, report: BatchReport) -> None:
    """Judge the saves of ``stash`` that joined this message: made while its marker was up, they
    published nothing (see ``publishing``). While saves keep joining, the marker stays up, held by
    this message, and each batch claims what joined while the last was judged: under load the
    batches grow, instead of the messages. A claim that fills its batch is followed by another,
    and sends a message that claims more beside it.
    Ends when no save joined (the marker comes down: the next save publishes), another message
    holds the marker, or after half a lease or of the time left: the marker then comes down, and
    a message of its own is sent for the saves still waiting (a batch claimed by then is judged)."""
    deadline = time.monotonic() + min(settings.STASH_LEASE_SECONDS, clock.left()) / 2
    while (joined := publishing.take_joined(stash)) != publishing.NONE_JOINED:
        full = True
        while full:
            contents = _claim_batch([], [stash], token, clock, report)
            full = len(contents) >= settings.STASH_BATCH_SIZE
            late = time.monotonic() >= deadline
            queue = contents[0].stash.queue if contents else None
            if late and ((joined == publishing.HOLDING and publishing.take_marker_down(stash)) or full):
                publishing.hand_over(stash, _queue_of(stash) if queue is None else queue)
            elif full:
                publishing.send_helper(stash, queue)  # another worker may claim what this one cannot
            _judge_batch(token, contents, clock, report)
            if late or (joined == publishing.JOINED and not full):
                return


def _queue_of(stash: int) -> str:
    return Stash.objects.filter(pk=stash).values_list("queue", flat=True).first() or ""


def _claim_batch(
    ids: list[uuid.UUID | str], others_of: list[int] | None, token: uuid.UUID, clock: Clock, report: BatchReport
) -> list[Content]:
    """Claim a batch under ``token`` (see ``claiming``), oldest first: items accepted together join
    the stash's queue in the order they came."""
    contents = claiming.claim(ids, token, others_of, clock.lease_until())
    report.claimed += len(contents)
    return contents


def _judge_batch(token: uuid.UUID, contents: list[Content], clock: Clock, report: BatchReport) -> None:
    first_tries = [c for c in contents if c.attempts <= 1]
    retried = [c for c in contents if c.attempts > 1]
    if first_tries:
        _judge(first_tries, token, report, clock)
    if retried:
        # An item tried before may be what killed a worker. Judge one, alone, noting each hook
        # as it starts (a failure then names the hook); send the others back one per message,
        # so a poison item takes no neighbour down with it.
        _release(retried[1:], token, report)
        _judge(retried[:1], token, report, clock, note_progress=True)


def _release(contents: list[Content], token: uuid.UUID, report: BatchReport, alone: bool = False) -> None:
    """Give up this batch's claim on ``contents``, unjudged, and send them again: first tries
    together, items tried before (or all, if ``alone``) each in a message of its own."""
    if not contents:
        return
    ids = [c.pk for c in contents]
    report.released += Content.objects.filter(pk__in=ids, lease_token=token).update(
        status=Status.PENDING, lease_token=None, attempts=F("attempts") - 1, lease_until=lease_end()
    )
    send_by_queue([(c.pk, c.stash.queue) for c in contents if c.attempts <= 1 and not alone])
    send_alone([c for c in contents if c.attempts > 1 or alone])


def send_by_queue(rows: Iterable[tuple[uuid.UUID, str]], each: bool = False) -> None:
    """Send the ids of ``rows`` (id, its stash's queue field) after commit, in messages by queue:
    together in chunks, or ``each`` in a message of its own."""
    by_queue = defaultdict(list)
    for pk, queue in rows:
        by_queue[queue].append(pk)
    for queue, ids in by_queue.items():
        if each:
            publishing.send_each_on_commit(ids, queue=queue)
        else:
            publishing.send_on_commit(ids, queue=queue)


def send_alone(contents: Iterable[Content]) -> None:
    """Send each of ``contents`` in a message of its own, on its stash's queue, with the time
    limit its hooks need."""
    by_limit = defaultdict(list)
    for content in contents:
        by_limit[time_limit_for(pipeline_for(content.stash).budget), content.stash.queue].append(content.pk)
    for (time_limit, queue), ids in by_limit.items():
        publishing.send_each_on_commit(ids, time_limit=time_limit, queue=queue)


# What _judge hands on for each item it judged: the item, its pipeline, its result, when it started.
_Judged = tuple[Content, pipeline.Pipeline, pipeline.Result, datetime]


def _judge(
    contents: list[Content],
    token: uuid.UUID,
    report: BatchReport,
    clock: Clock,
    note_progress: bool = False,
    stopped: tuple[int | None, str] | None = None,
) -> None:
    """Judge ``contents`` in order while each one's budget fits in ``clock``, then record them.

    The first item that no longer fits goes back to the queue with all after it; an item that
    fits in no message of this limit goes alone, with a limit it fits in. ``stopped``:
    ``(config id, message)`` of a hook that hung in an earlier run, timed out at once this time.
    """
    judged: list[_Judged] = []
    later: list[Content] = []
    _run(contents, token, report, clock, judged, later, note_progress, stopped)
    _finish(judged, later, token, report, clock)


@tracing.judging
def _run(
    contents: list[Content],
    token: uuid.UUID,
    report: BatchReport,
    clock: Clock,
    judged: list[_Judged],
    later: list[Content],
    note_progress: bool = False,
    stopped: tuple[int | None, str] | None = None,
) -> None:
    """Run the hooks of ``contents`` for ``_judge``, adding each item to ``judged`` or, once one no
    longer fits in ``clock``, to ``later``.

    The items of a stash whose pipeline has a batched hook (``pipeline.batched``) are judged
    together, in one ``run_many`` after the others, each one's budget counted from the start
    (the time the batch may take); ``judged`` keeps the order of ``contents`` all the same. The
    others are judged one at a time, as they come."""
    # In the order of ``contents``: a judged item, or the Content of one judged in a batch below.
    ordered: list[_Judged | Content] = []
    batches: dict[int, list[Content]] = {}  # stash id: its items, judged together
    owed = 0.0  # the budgets of the items waiting in ``batches``
    for content in contents:
        item_pipeline = pipeline_for(content.stash)
        budget = item_pipeline.budget
        if not clock.ever_fits(budget):
            _release([content], token, report, alone=True)
            continue
        if later or not clock.fits(budget + owed, first=not judged and not ordered):
            later.append(content)
            continue
        if item_pipeline.has_batched:
            batches.setdefault(content.stash_id, []).append(content)
            ordered.append(content)
            owed += budget
            continue
        ordered.append(_run_one(content, item_pipeline, token, report, note_progress, stopped))
    done: dict[uuid.UUID, _Judged] = {}
    for group in batches.values():
        for entry in _run_together(group, token, report, note_progress, stopped):
            done[entry[0].pk] = entry
    judged.extend(done[entry.pk] if isinstance(entry, Content) else entry for entry in ordered)


def _run_one(
    content: Content,
    item_pipeline: pipeline.Pipeline,
    token: uuid.UUID,
    report: BatchReport,
    note_progress: bool,
    stopped: tuple[int | None, str] | None,
) -> _Judged:
    """Run the hooks of one item."""
    started = timezone.now()
    item = callbacks.attach(item_pipeline, [content], [item_for(content)])[0]
    with logs.judging(item):
        after_verdict.call(item_pipeline.listeners(pipeline.ON_PIPELINE_START), pipeline.ON_PIPELINE_START, item, None)
        run = item_pipeline.stopping(*stopped) if stopped else item_pipeline
        result = tracing.run(run, item, on_step=_on_step(content, token) if note_progress else logs.at_hook)
        log_failures(result)
    report.hook_seconds[content.stash_id] = (
        report.hook_seconds.get(content.stash_id, 0.0) + (timezone.now() - started).total_seconds()
    )
    if note_progress:
        _note(content, token, None)
    return (content, item_pipeline, result, started)


def _run_together(
    contents: list[Content],
    token: uuid.UUID,
    report: BatchReport,
    note_progress: bool,
    stopped: tuple[int | None, str] | None,
) -> list[_Judged]:
    """Run the hooks of ``contents``, items of one stash, in one ``run_many``: each batched hook is
    called once for them all. Each item's start callbacks, failures and progress note are its own."""
    item_pipeline = pipeline_for(contents[0].stash)
    started = timezone.now()
    items = callbacks.attach(item_pipeline, contents, [item_for(content) for content in contents])
    for item in items:
        with logs.judging(item):
            after_verdict.call(
                item_pipeline.listeners(pipeline.ON_PIPELINE_START), pipeline.ON_PIPELINE_START, item, None
            )
    run = item_pipeline.stopping(*stopped) if stopped else item_pipeline
    # Progress is noted on an item judged alone (see ``_judge_batch``): a batch of one, then.
    on_step = _on_step(contents[0], token) if note_progress and len(contents) == 1 else logs.at_hook
    with logs.bound(stash=items[0].stash, item=None, revision=None, hook=None, hook_config=None):
        results = tracing.run_many(run, items, on_step=on_step)
    for item, result in zip(items, results, strict=True):
        with logs.judging(item):
            log_failures(result)
    stash_id = contents[0].stash_id
    report.hook_seconds[stash_id] = report.hook_seconds.get(stash_id, 0.0) + (timezone.now() - started).total_seconds()
    if note_progress:
        for content in contents:
            _note(content, token, None)
    return [(content, item_pipeline, result, started) for content, result in zip(contents, results, strict=True)]


def _finish(
    judged: list[_Judged], later: list[Content], token: uuid.UUID, report: BatchReport, clock: Clock | None = None
) -> None:
    """Send ``later`` back, record the verdicts of ``judged``, send their sink deliveries, and judge what
    a running shadow samples of them (after all that: the live verdicts never wait for a shadow)."""
    _release(later, token, report)
    recorded = _record(judged, token, report)
    sent_before = len(report.deliveries)
    _notify_sinks(judged, report)
    delivering.record(report.deliveries[sent_before:])  # one statement: published after the batch
    shadow_runs.offer(recorded, clock)  # its hooks' time per item, within this message's time limit


def record_resumed(
    content: Content,
    item_pipeline: pipeline.Pipeline,
    result: pipeline.Result,
    started: datetime,
    token: uuid.UUID,
    report: BatchReport,
) -> None:
    """Record the end of a resumed run (``resuming``) as any run's: verdict, run, counters,
    statements, sinks; or its next wait."""
    _finish([(content, item_pipeline, result, started)], [], token, report)


PROGRESS_NOTE = "interrupted in hook "


def log_failures(result: pipeline.Result) -> None:
    """Log each hook that raised or ran out of time on this item, with its hook bound (its
    ``on_error`` policy decided what became of the item; the trail says the same)."""
    for entry in result.trail:
        if entry.outcome in (pipeline.ERROR, pipeline.TIMEOUT):
            with logs.bound(hook=entry.hook, hook_config=entry.config_id):
                logger.warning("Hook %s: %s: %s", entry.title, entry.outcome, entry.message)


def _on_step(content: Content, token: uuid.UUID) -> Callable[[pipeline.Step], None]:
    def on_step(step: pipeline.Step) -> None:
        logs.at_hook(step)
        _note(content, token, step)

    return on_step


def _note(content: Content, token: uuid.UUID, step: pipeline.Step | None) -> None:
    """Note on an item judged alone which hook runs (``step``; None: all have run), as its reason
    and its ``decided_by``: if its process dies, the sweeper or ``recovering`` names the hook."""
    note: dict[str, Any]
    if step is None:
        note = {"reason": "interrupted after its hooks ran", "decided_by_id": None}
    else:
        note = {"reason": PROGRESS_NOTE + step.title, "decided_by_id": step.config_id}
    Content.objects.filter(pk=content.pk, lease_token=token).update(**note)


def _record(judged: list[_Judged], token: uuid.UUID, report: BatchReport) -> list[tuple[Content, pipeline.Result]]:
    """Write verdicts, runs and counters for ``judged``, skipping items whose claim was lost; returns
    the items given a verdict, each with its result (what a running shadow may sample).

    Locks are taken in one order everywhere: items, then stashes (by id), then hook configs, so
    a worker and an admin reordering hooks never wait on each other in a cycle. The rows every
    batch shares (the stash's queue head, the hook configs' counters) are written last, so
    workers judging one stash hold them only for the last statements before the commit.
    """
    now = timezone.now()
    # Held items get their place in the review queue, computed before any row is locked.
    priorities = {
        content.pk: review_queue.evaluate_priority(priority_for(content.stash), item_for(content), result.code)
        for content, _pipeline, result, _started in judged
        if result.verdict == pipeline.HELD
    }
    with transaction.atomic():
        claimed = set(
            Content.objects.select_for_update()
            .filter(pk__in=[content.pk for content, *_ in judged], lease_token=token)
            .values_list("pk", flat=True)
        )
        runs, decided, transformed = [], [], []
        recorded: list[tuple[Content, pipeline.Result]] = []  # what a running shadow may sample
        deciding: dict[uuid.UUID, dict[str, Any]] = {}
        counters = after_verdict.new_counters()
        accepted_by_stash = defaultdict(list)
        waiting: list[tuple[Content, pipeline.Result]] = []
        finished_async: list[Content] = []  # items of pipelines with asynchronous hooks that ended
        for content, item_pipeline, result, started in judged:
            if content.pk not in claimed:
                report.stale += 1
                continue
            if result.verdict == pipeline.WAITING:
                waiting.append((content, result))
                report.verdicts[result.verdict] = report.verdicts.get(result.verdict, 0) + 1
                continue
            if callbacks.has_waiting(item_pipeline):
                finished_async.append(content)
            _apply_verdict(content, result, now)
            content.priority = priorities.get(content.pk)
            if result.verdict != pipeline.ACCEPTED:
                decided.append(content)
                deciding.update((content.pk, e.as_dict()) for e in result.trail if e.stopped)
            else:
                accepted_by_stash[content.stash_id].append(content)
                if result.transformed:
                    content.original_payload, content.payload = content.payload, dict(result.payload)
                    transformed.append(content)
            runs.append(
                PipelineRun(
                    content=content,
                    revision=content.revision,
                    config_version=item_pipeline.version,
                    outcome=result.verdict,
                    reason=result.reason,
                    started_at=started,
                    finished_at=now,
                    duration_ms=result.duration_ms,
                    trail=[entry.as_dict() for entry in result.trail],
                )
            )
            recorded.append((content, result))
            _count(counters, result.trail)
            report.verdicts[result.verdict] = report.verdicts.get(result.verdict, 0) + 1
        if waiting or finished_async:
            _write_waiting(waiting, now)
            callbacks.record_waits(waiting, finished_async, now)
        if not runs:
            report.judged += len(waiting)
            return []
        _write_verdicts(decided, now)
        bulk_sql.update_rows(Content, transformed, ["payload", "original_payload"])
        bulk_sql.insert_rows(PipelineRun, runs)
        failures.record(runs)  # the failure store: only hook errors and timeouts are written
        statements.record(decided, Statement.Kind.HOOK, now=now, decisions=deciding)
        # The shared rows, last: accepted items get their queue numbers under the stash's lock.
        for stash_id in sorted(accepted_by_stash):
            after_verdict.assign_queue_positions(stash_id, accepted_by_stash[stash_id])
            _write_verdicts(accepted_by_stash[stash_id], now)
        after_verdict.add_counters(counters)
    report.judged += len(runs) + len(waiting)
    return recorded


def _write_waiting(waiting: list[tuple[Content, pipeline.Result]], now: datetime) -> None:
    """Items whose run waits for an outside service: ``waiting``, no worker's claim, no attempt
    counted (the run so far went well); their verdict comes with the resume."""
    for content, result in waiting:
        content.status = Status.WAITING
        content.reason = callbacks.waiting_reason(result)
        content.attempts = 0
        content.lease_token = None
        content.lease_until = None
    if not waiting:
        return
    bulk_sql.update_rows(
        Content,
        [content for content, _result in waiting],
        ["status", "reason", "attempts"],
        constants={"updated_at": now, "lease_token": None, "lease_until": None},
    )


def _write_verdicts(contents: list[Content], now: datetime) -> None:
    bulk_sql.update_rows(
        Content,
        contents,
        _VERDICT_FIELDS,
        constants={"processed_at": now, "updated_at": now, "lease_token": None, "lease_until": None},
    )


_VERDICT_FIELDS = ["status", "reason", "decided_by", "processed_revision", "queue_seq", "priority"]


def _apply_verdict(content: Content, result: pipeline.Result, now: datetime) -> None:
    content.status = result.verdict
    content.reason = result.reason
    content.decided_by_id = result.decided_by if result.verdict != pipeline.ACCEPTED else None
    content.processed_revision = content.revision
    content.processed_at = now
    content.lease_token = None
    content.lease_until = None
    content.queue_seq = None
    content.updated_at = now


def _count(counters: after_verdict.Counters, trail: Iterable[pipeline.TrailEntry]) -> None:
    for entry in trail:
        if entry.config_id is None or entry.outcome == pipeline.SKIPPED:
            continue
        counts = counters[entry.config_id]
        counts["runs_count"] += 1
        counts["time_total_us"] += int(entry.duration_ms * 1000)
        if entry.outcome in (pipeline.KEPT, pipeline.TRANSFORMED):
            counts["kept_count"] += 1
            counts["changed_count"] += entry.outcome == pipeline.TRANSFORMED
        elif entry.outcome == pipeline.DROPPED or (entry.outcome == pipeline.OBSERVED and entry.would == "drop"):
            counts["dropped_count"] += 1
        elif entry.outcome == pipeline.HELD or (entry.outcome == pipeline.OBSERVED and entry.would == "hold"):
            counts["held_count"] += 1
        elif entry.outcome in (pipeline.ERROR, pipeline.TIMEOUT):
            counts["errors_count"] += 1


def _notify_sinks(judged: list[_Judged], report: BatchReport) -> None:
    """Call the lifecycle callbacks of each judged item once its verdict is stored.

    The verdict's callback and ``on_error`` (see ``pipeline.result_events``) go to hooks in
    process, and to ``deliver_async`` sinks through ``report.deliveries`` (their own task);
    ``on_pipeline_end`` follows in process. An item whose claim was lost gets only
    ``on_pipeline_end``: its verdict was not stored, its new revision is judged again.
    """
    for content, item_pipeline, result, _started in judged:
        if result.verdict == pipeline.WAITING:
            continue  # its run goes on when the service answers
        item = item_for(content)  # as stored now: with the transforms' payload
        stored = content.processed_revision == content.revision
        with logs.judging(item):
            for event in (*(pipeline.result_events(result) if stored else ()), pipeline.ON_PIPELINE_END):
                report.deliveries.extend(after_verdict.notify(item_pipeline, content, item, event, result))
