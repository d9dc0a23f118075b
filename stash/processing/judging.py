"""Judging: claim items, run their stash's pipeline, write verdicts; sweep, reprocess, deliver.

- ``process(ids, wake=None, clock=None)`` claims the given items by compare-and-set (only ``pending`` ones; a
  duplicate delivery claims nothing) together with other items of their stashes (or of stash
  ``wake``) waiting for their first run, up to ``STASH_BATCH_SIZE`` (so single saves that arrive
  together are judged together; see ``dispatch`` for the saves that publish nothing),
  judges them, and writes verdicts, runs and counters in a constant number of queries per batch,
  whatever the number of hooks (the claim: see ``claiming``). A verdict is written only if the
  claim still holds: an item edited meanwhile is left to its new revision's run. Claims last as
  long as the message may run, and items whose hooks' time would not fit in what is left of it go
  back to the queue (see ``deadlines``). Live saves go ahead of bulk work (``Content.bulk``: a
  bulk submit, a large re-judge): a batch of bulk items is judged a slice at a time, each after
  the live saves then waiting in its queue, so a live save waits for one slice at most however
  long the backlog before its own message; each lane keeps its own order in the stash's queue.
- ``sweep()`` gives up on items claimed too often (``failed``, with the reason) and sends again
  every item whose lease ran out (a lost message, a killed worker).

Whatever is sent again (released, swept, reprocessed) and every sink delivery goes to the queue
of its item's stash (``dispatch``), grouped so that no message mixes queues.
"""
from __future__ import annotations

import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NoReturn

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from .. import bulk_sql, dispatch, logs, pipeline, registry, tracing
from ..documents import HOOK_FIELDS
from ..exceptions import HookUnavailable
from ..expressions import compile_condition
from ..models import Content, HookConfig, PipelineRun, PipelineVersion, Review, Stash, lease_end
from . import claiming, recording
from .deadlines import Clock, time_limit_for

logger = logging.getLogger(__name__)

Status = Content.Status

# stash id -> (config_version, Pipeline): built once per stash and version, per process.
_pipelines: dict[int, tuple[int, pipeline.Pipeline]] = {}


@dataclass
class BatchReport:
    """What one ``process`` call did."""

    claimed: int = 0
    judged: int = 0
    stale: int = 0
    released: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    deliveries: list[dispatch.Delivery] = field(default_factory=list)
    hook_seconds: dict[int, float] = field(default_factory=dict)  # stash id: its hooks' time (see ``slowness``)


@dataclass
class SweepReport:
    requeued: int = 0
    failed: int = 0
    woken: int = 0  # stashes whose items waiting for their first run were sent a message


# --- building pipelines ----------------------------------------------------------------------


class _Unavailable:
    """Stands in for a hook that cannot run; its failure goes through the config's on_error."""

    kind = "filter"

    def __init__(self, message: str) -> None:
        self.message = message

    def filter(self, item: pipeline.Item) -> NoReturn:
        raise HookUnavailable(self.message)


def build_step(config: HookConfig, stash: Stash) -> pipeline.Step:
    """The pipeline step for one HookConfig; a missing or broken hook becomes a failing step."""
    condition = None
    try:
        hook = registry.get(config.hook)(config.params)
        if config.condition.strip():
            condition = compile_condition(config.condition)
    except Exception as exc:
        logger.warning("Hook config %s (%s) cannot run: %s", config.pk, config.hook, exc)
        hook = _Unavailable(f"hook {config.hook!r} cannot run: {exc}")
    return pipeline.Step(hook=hook, name=config.hook, label=config.label, config_id=config.pk,
                         position=config.position, mode=config.mode, on_error=config.effective_on_error(stash),
                         condition=condition,
                         timeout=config.timeout_ms / 1000 if config.timeout_ms else None)


def build_pipeline(stash: Stash) -> pipeline.Pipeline:
    """A fresh pipeline of the stash's enabled hooks, in order, as its version ``config_version``
    recorded them (one query): exactly the hooks and params that the runs of that version name.
    A stash with no such version (older than versions) is built from its hook configs."""
    document = next(iter(PipelineVersion.objects.filter(stash_id=stash.pk, number=stash.config_version)
                         .order_by().values_list("document", flat=True)), None)  # unique: no LIMIT
    if document is None:
        configs = list(HookConfig.objects.filter(stash_id=stash.pk).enabled().in_order())
    else:
        stash = Stash(pk=stash.pk, slug=stash.slug, on_error=document["stash"]["on_error"])
        configs = [HookConfig(pk=hook["id"], stash_id=stash.pk, **{name: hook[name] for name in HOOK_FIELDS})
                   for hook in document["hooks"] if hook["enabled"]]
    return pipeline.Pipeline([build_step(config, stash) for config in configs])


def forget_cached() -> None:
    """Drop what this process keeps of stashes and their pipelines (read again on next use)."""
    _pipelines.clear()
    claiming.forget_stashes()


def pipeline_for(stash: Stash) -> pipeline.Pipeline:
    """The stash's pipeline, rebuilt only when its ``config_version`` has moved."""
    cached = _pipelines.get(stash.pk)
    if cached is not None and cached[0] == stash.config_version:
        return cached[1]
    built = build_pipeline(stash)
    _pipelines[stash.pk] = (stash.config_version, built)
    return built


def item_for(content: Content) -> pipeline.Item:
    return pipeline.Item(payload=content.payload, id=str(content.pk), stash=content.stash.slug,
                         revision=content.revision, source=content.source,
                         submitted_by=str(content.submitted_by_id) if content.submitted_by_id else None,
                         created_at=content.created_at, content_hash=content.content_hash)


# --- processing ------------------------------------------------------------------------------


def process(ids: Iterable[uuid.UUID | str], wake: int | None = None, *, token: uuid.UUID | None = None,
            clock: Clock | None = None) -> BatchReport:
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


def _judge_bulk(bulk: list[Content], live: list[Content], token: uuid.UUID, clock: Clock,
                report: BatchReport) -> None:
    """Judge a batch of bulk work (``bulk``; ``live``: the live saves claimed with it) slice by
    slice, each after the live saves then waiting in its queue, which are judged and recorded at
    once: whatever lies before their own messages, a live save waits for a slice of bulk work at
    most. The bulk verdicts are recorded together, after the last slice."""
    first_tries = [content for content in bulk if content.attempts <= 1]
    judged: list[_Judged] = []
    later: list[Content] = []
    for start in range(0, len(first_tries), BULK_SLICE):
        waiting = claiming.claim_live(bulk[0].stash.queue, token, clock.lease_until())
        report.claimed += len(waiting)
        if live or waiting:
            _judge_batch(token, sorted(live + waiting, key=lambda content: (content.created_at, content.pk)), clock,
                         report)
            live = []
        _run(first_tries[start:start + BULK_SLICE], token, report, clock, judged, later)
    _judge_batch(token, live, clock, report)
    if judged or later:
        _finish(judged, later, token, report)
    _judge_batch(token, [content for content in bulk if content.attempts > 1], clock, report)


def _judge_joined(stash: int, token: uuid.UUID, clock: Clock, report: BatchReport) -> None:
    """Judge the saves of ``stash`` that joined this message: made while its marker was up, they
    published nothing (see ``dispatch``). The marker comes down first, so that a save made after
    the claim publishes; it goes up again, held by this message, while the batch is judged, so
    that saves meanwhile join the next batch. Under load the batches grow, instead of the
    messages. Ends when no save joined, a claim finds nothing, another message holds the marker,
    or after half a lease or of the time left (a batch claimed by then is still judged)."""
    deadline = time.monotonic() + min(settings.STASH_LEASE_SECONDS, clock.left()) / 2
    while dispatch.started(stash):
        contents = _claim_batch([], [stash], token, clock, report)
        if not contents:
            return
        holding = time.monotonic() < deadline and dispatch.hold(stash)
        _judge_batch(token, contents, clock, report)
        if not holding:
            return


def _claim_batch(ids: list[uuid.UUID | str], others_of: list[int] | None, token: uuid.UUID, clock: Clock,
                 report: BatchReport) -> list[Content]:
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
        status=Status.PENDING, lease_token=None, attempts=F("attempts") - 1,
        lease_until=lease_end())
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
            dispatch.send_each_on_commit(ids, queue=queue)
        else:
            dispatch.send_on_commit(ids, queue=queue)


def send_alone(contents: Iterable[Content]) -> None:
    """Send each of ``contents`` in a message of its own, on its stash's queue, with the time
    limit its hooks need."""
    by_limit = defaultdict(list)
    for content in contents:
        by_limit[time_limit_for(pipeline_for(content.stash).budget), content.stash.queue].append(content.pk)
    for (time_limit, queue), ids in by_limit.items():
        dispatch.send_each_on_commit(ids, time_limit=time_limit, queue=queue)


# What _judge hands on for each item it judged: the item, its pipeline, its result, when it started.
_Judged = tuple[Content, pipeline.Pipeline, pipeline.Result, datetime]


def _judge(contents: list[Content], token: uuid.UUID, report: BatchReport, clock: Clock, note_progress: bool = False,
           stopped: tuple[int | None, str] | None = None) -> None:
    """Judge ``contents`` in order while each one's budget fits in ``clock``, then record them.

    The first item that no longer fits goes back to the queue with all after it; an item that
    fits in no message of this limit goes alone, with a limit it fits in. ``stopped``:
    ``(config id, message)`` of a hook that hung in an earlier run, timed out at once this time.
    """
    judged: list[_Judged] = []
    later: list[Content] = []
    _run(contents, token, report, clock, judged, later, note_progress, stopped)
    _finish(judged, later, token, report)


@tracing.judging
def _run(contents: list[Content], token: uuid.UUID, report: BatchReport, clock: Clock, judged: list[_Judged],
         later: list[Content], note_progress: bool = False, stopped: tuple[int | None, str] | None = None) -> None:
    """Run the hooks of ``contents`` for ``_judge``, adding each item to ``judged`` or, once one no
    longer fits in ``clock``, to ``later``."""
    for content in contents:
        item_pipeline = pipeline_for(content.stash)
        budget = item_pipeline.budget
        if not clock.ever_fits(budget):
            _release([content], token, report, alone=True)
            continue
        if later or not clock.fits(budget, first=not judged):
            later.append(content)
            continue
        started = timezone.now()
        item = item_for(content)
        with logs.judging(item):
            recording.call(item_pipeline.listeners(pipeline.ON_PIPELINE_START), pipeline.ON_PIPELINE_START, item,
                           None)
            run = item_pipeline.stopping(*stopped) if stopped else item_pipeline
            result = tracing.run(run, item, on_step=_on_step(content, token) if note_progress else logs.at_hook)
            _log_failures(result)
        report.hook_seconds[content.stash_id] = (report.hook_seconds.get(content.stash_id, 0.0)
                                                 + (timezone.now() - started).total_seconds())
        if note_progress:
            _note(content, token, None)
        judged.append((content, item_pipeline, result, started))


def _finish(judged: list[_Judged], later: list[Content], token: uuid.UUID, report: BatchReport) -> None:
    """Send ``later`` back, record the verdicts of ``judged`` and send their sink deliveries."""
    _release(later, token, report)
    _record(judged, token, report)
    _notify_sinks(judged, report)


PROGRESS_NOTE = "interrupted in hook "


def _log_failures(result: pipeline.Result) -> None:
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
    and its ``decided_by``: if its process dies, the sweeper or ``stopping`` names the hook."""
    note: dict[str, Any]
    if step is None:
        note = {"reason": "interrupted after its hooks ran", "decided_by_id": None}
    else:
        note = {"reason": PROGRESS_NOTE + step.title, "decided_by_id": step.config_id}
    Content.objects.filter(pk=content.pk, lease_token=token).update(**note)


def _record(judged: list[_Judged], token: uuid.UUID, report: BatchReport) -> None:
    """Write verdicts, runs and counters for ``judged``, skipping items whose claim was lost.

    Locks are taken in one order everywhere: items, then stashes (by id), then hook configs, so
    a worker and an admin reordering hooks never wait on each other in a cycle. The rows every
    batch shares (the stash's queue head, the hook configs' counters) are written last, so
    workers judging one stash hold them only for the last statements before the commit.
    """
    now = timezone.now()
    with transaction.atomic():
        claimed = set(Content.objects.select_for_update().filter(
            pk__in=[content.pk for content, *_ in judged], lease_token=token).values_list("pk", flat=True))
        runs, decided, transformed = [], [], []
        counters = recording.new_counters()
        accepted_by_stash = defaultdict(list)
        for content, _pipeline, result, started in judged:
            if content.pk not in claimed:
                report.stale += 1
                continue
            _apply_verdict(content, result, now)
            if result.verdict != pipeline.ACCEPTED:
                decided.append(content)
            else:
                accepted_by_stash[content.stash_id].append(content)
                if result.transformed:
                    content.original_payload, content.payload = content.payload, dict(result.payload)
                    transformed.append(content)
            runs.append(PipelineRun(content=content, revision=content.revision,
                                    config_version=content.stash.config_version, outcome=result.verdict,
                                    reason=result.reason, started_at=started, finished_at=now,
                                    duration_ms=result.duration_ms,
                                    trail=[entry.as_dict() for entry in result.trail]))
            _count(counters, result.trail)
            report.verdicts[result.verdict] = report.verdicts.get(result.verdict, 0) + 1
        if not runs:
            return
        _write_verdicts(decided, now)
        bulk_sql.update_rows(Content, transformed, ["payload", "original_payload"])
        bulk_sql.insert_rows(PipelineRun, runs)
        # The shared rows, last: accepted items get their queue numbers under the stash's lock.
        for stash_id in sorted(accepted_by_stash):
            recording.assign_queue_positions(stash_id, accepted_by_stash[stash_id])
            _write_verdicts(accepted_by_stash[stash_id], now)
        recording.add_counters(counters)
    report.judged += len(runs)


def _write_verdicts(contents: list[Content], now: datetime) -> None:
    bulk_sql.update_rows(Content, contents, _VERDICT_FIELDS, constants={
        "processed_at": now, "updated_at": now, "lease_token": None, "lease_until": None})


_VERDICT_FIELDS = ["status", "reason", "decided_by", "processed_revision", "queue_seq"]


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


def _count(counters: recording.Counters, trail: Iterable[pipeline.TrailEntry]) -> None:
    for entry in trail:
        if entry.config_id is None or entry.outcome == pipeline.SKIPPED:
            continue
        counts = counters[entry.config_id]
        counts["runs_count"] += 1
        counts["time_total_us"] += int(entry.duration_ms * 1000)
        if entry.outcome in (pipeline.KEPT, pipeline.TRANSFORMED):
            counts["kept_count"] += 1
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
        item = item_for(content)  # as stored now: with the transforms' payload
        stored = content.processed_revision == content.revision
        with logs.judging(item):
            for event in (*(pipeline.result_events(result) if stored else ()), pipeline.ON_PIPELINE_END):
                report.deliveries.extend(recording.notify(item_pipeline, content, item, event, result))






# --- sweeping, reprocessing ----------------------------------------------------------------


def sweep(limit: int = 10_000) -> SweepReport:
    """One sweeper pass: fail items out of attempts, send again those whose lease ran out, and
    wake the stashes whose items wait for their first run with no message holding their marker
    (saves that joined a message whose note the cache lost: see ``dispatch``)."""
    report = SweepReport()
    now = timezone.now()
    report.woken = dispatch.wake(claiming.waiting_stashes(now))
    expired = Content.objects.filter(status__in=[Status.PENDING, Status.PROCESSING], lease_until__lt=now)
    exhausted = expired.filter(status=Status.PROCESSING, attempts__gte=settings.STASH_MAX_ATTEMPTS)
    for pk, attempts, note in exhausted.values_list("pk", "attempts", "reason")[:limit]:
        report.failed += exhausted.filter(pk=pk).update(**gave_up(attempts, note, now))
    rows = list(expired.filter(attempts__lt=settings.STASH_MAX_ATTEMPTS)
                .values_list("pk", "attempts", "stash__queue")[:limit])
    if rows:
        # The claim's token stays: if its message was stopped at its time limit and the recovery
        # (``stopping.recover``) comes after this pass, it still takes the item over, and gives a
        # hook that hung its verdict instead of a run that would hang again.
        report.requeued = Content.objects.filter(pk__in=[pk for pk, *_ in rows], lease_until__lt=now).update(
            status=Status.PENDING, lease_until=lease_end(now))
        # Never claimed (a lost message): in batches. Claimed before (a worker died on it, or
        # on a neighbour): one per message, so that a poison item only ever takes itself down.
        send_by_queue([(pk, queue) for pk, attempts, queue in rows if not attempts])
        send_by_queue([(pk, queue) for pk, attempts, queue in rows if attempts], each=True)
    return report


def gave_up(attempts: int, note: str, now: datetime) -> dict[str, Any]:
    """The fields of an item set ``failed`` after ``attempts`` claims; ``note``: its progress note."""
    reason = f"gave up after {attempts} attempts: the worker stopped while judging it" + (f" ({note})" if note else "")
    return {"status": Status.FAILED, "reason": reason, "lease_token": None, "lease_until": None,
            "processed_at": now, "updated_at": now}


# An item whose status a person's decision gave: reviewed, and not judged by the hooks since.
# (Overturned items are reviewed ones; the flag is named too, should a reviewer's account be gone.)
PEOPLES_DECISION = Q(overturned=True) | (
    Q(reviewed_at__isnull=False, status__in=[Status.ACCEPTED, Status.REJECTED])
    & (Q(processed_at__isnull=True) | Q(processed_at__lte=F("reviewed_at"))))


@dataclass(frozen=True)
class PeoplesDecisions:
    """How many items of a selection have the status a person's decision gave, and whose."""

    count: int = 0
    reviewers: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.count > 0

    def who(self, most: int = 5) -> str:
        """The reviewers' names, ``most`` of them at most: "alice, bob" or "alice, bob and 4 more"."""
        if not self.reviewers:
            return gettext("people no longer registered")
        names = ", ".join(self.reviewers[:most])
        more = len(self.reviewers) - most
        return gettext("%(names)s and %(more)d more") % {"names": names, "more": more} if more > 0 else names


def decided_by_people(queryset: QuerySet[Content]) -> PeoplesDecisions:
    """The items of ``queryset`` that ``reprocess`` leaves out unless told to include them (two queries)."""
    decided = queryset.filter(PEOPLES_DECISION)
    names = (decided.filter(reviewed_by__isnull=False).order_by()
             .values_list(f"reviewed_by__{get_user_model().USERNAME_FIELD}", flat=True).distinct())
    return PeoplesDecisions(count=decided.count(), reviewers=tuple(sorted(map(str, names))))


def reprocess(queryset: QuerySet[Content], include_reviewed: bool = False) -> int:
    """Judge the selected items again with their stash's current hooks; returns how many were sent.

    Items whose status a person's decision gave (``decided_by_people``) are left out, unless
    ``include_reviewed``. An item sent no longer names a reviewer (``reviewed_by``, ``reviewed_at``
    and ``review_note`` cleared, no longer ``overturned``): the hooks decide it now, and its
    ``reviews`` keep the people's decisions, marked replaced.
    """
    now = timezone.now()
    ids = list(queryset.values_list("pk", flat=True))
    with transaction.atomic():
        # Locked, as a review locks them: a decision made meanwhile is either seen here or made after.
        items = Content.objects.select_for_update(of=("self",)).filter(pk__in=ids)
        if not include_reviewed:
            items = items.exclude(PEOPLES_DECISION)
        rows = list(items.values_list("pk", "stash__queue"))
        sent = [pk for pk, _ in rows]
        # More than a batch is bulk work: live saves meanwhile are judged first.
        count = Content.objects.filter(pk__in=sent).update(
            status=Status.PENDING, attempts=0, lease_token=None, reason="", bulk=len(sent) > settings.STASH_BATCH_SIZE,
            lease_until=lease_end(now), updated_at=now,
            reviewed_by=None, reviewed_at=None, review_note="", overturned=False)
        Review.objects.filter(content_id__in=sent, replaced_at__isnull=True).update(replaced_at=now)
        send_by_queue(rows)
    return count


class DeliveryError(Exception):
    """A sink failed to deliver; its task retries."""


@tracing.delivering
def deliver(config_id: int, content_id: uuid.UUID | str, event: str) -> None:
    """Call ``event`` on the sink of HookConfig ``config_id`` for item ``content_id``.

    A config or item that no longer exists is skipped; a sink that raises gives ``DeliveryError``.
    """
    config = HookConfig.objects.select_related("stash").filter(pk=config_id).first()
    content = Content.objects.select_related("stash").filter(pk=content_id).first()
    if config is None or content is None:
        logger.info("Sink delivery skipped: config %s or item %s is gone.", config_id, content_id)
        return
    step = build_step(config, config.stash)
    run = content.runs.first()
    trail = tuple(pipeline.TrailEntry(**entry) for entry in (run.trail if run else []))
    result = pipeline.Result(verdict=content.status, payload=content.payload, reason=content.reason,
                             decided_by=content.decided_by_id, trail=trail)
    item = item_for(content)
    with logs.judging(item), logs.in_hook(step):
        failures = pipeline.notify([step], event, item, result)
    if failures:
        raise DeliveryError(failures[0][1])
