"""The one Django-side path: claim items, run their stash's pipeline, write verdicts; sweep, simulate.

Every face (task, admin action, API endpoint, command) calls these functions, so the rules live
here once:

- ``process(ids)`` claims the given items by compare-and-set (only ``pending`` ones; a duplicate
  delivery claims nothing), judges them, and writes verdicts, runs and counters in a constant
  number of queries per batch, whatever the number of hooks. A verdict is written only if the
  claim still holds: an item edited meanwhile is left to its new revision's run.
- ``sweep()`` gives up on items claimed too often (``failed``, with the reason) and sends again
  every item whose lease ran out (a lost message, a killed worker).
- ``simulate(stash, payload)`` runs the pipeline and saves nothing; ``replay(stash, n)`` runs it
  over the last n judged items and lists the verdicts that would change, saving nothing.
- ``place_hooks`` reorders a stash's hooks atomically; ``approve``, ``reject`` and ``overturn``
  record a reviewer's verdict.
- ``submit``, ``submit_many`` and ``edit`` are how every face saves what people and programs
  send; ``queue_page`` is how consumers read a stash's accepted items.
"""
from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import BigIntegerField, Case, F, Value, When
from django.utils import timezone
from django.utils.translation import gettext as _

from . import bulk_sql, dispatch, pipeline, registry
from .exceptions import HookUnavailable, IdempotencyConflict, PayloadTooLarge, StaleConfig
from .expressions import compile_condition
from .models import Content, HookConfig, PipelineRun, Stash, content_hash, unstorable, validate_payload

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
    verdicts: dict[str, int] = field(default_factory=dict)
    deliveries: list[tuple[int, str, str]] = field(default_factory=list)  # (config id, content id, event)


@dataclass
class SweepReport:
    requeued: int = 0
    failed: int = 0


# --- building pipelines ----------------------------------------------------------------------


class _Unavailable:
    """Stands in for a hook that cannot run; its failure goes through the config's on_error."""

    kind = "filter"

    def __init__(self, message):
        self.message = message

    def filter(self, item):
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
    on_error = stash.on_error if config.on_error == HookConfig.HookOnError.INHERIT else config.on_error
    return pipeline.Step(hook=hook, name=config.hook, label=config.label, config_id=config.pk,
                         position=config.position, mode=config.mode, on_error=on_error, condition=condition,
                         timeout=config.timeout_ms / 1000 if config.timeout_ms else None)


def build_pipeline(stash: Stash) -> pipeline.Pipeline:
    """A fresh pipeline of the stash's enabled hooks, in order (one query)."""
    configs = HookConfig.objects.filter(stash_id=stash.pk).enabled().in_order()
    return pipeline.Pipeline([build_step(config, stash) for config in configs])


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


def process(ids) -> BatchReport:
    """Claim and judge the pending items among ``ids``; see the module docstring."""
    report = BatchReport()
    token = uuid.uuid4()
    now = timezone.now()
    report.claimed = Content.objects.filter(
        pk__in=list(ids), status=Status.PENDING, attempts__lt=settings.STASH_MAX_ATTEMPTS
    ).update(status=Status.PROCESSING, lease_token=token, attempts=F("attempts") + 1,
             lease_until=now + timedelta(seconds=settings.STASH_LEASE_SECONDS))
    if not report.claimed:
        return report
    # Oldest first: items accepted together join the stash's queue in the order they came.
    contents = list(Content.objects.filter(lease_token=token).select_related("stash").order_by("created_at", "pk"))
    first_tries = [c for c in contents if c.attempts <= 1]
    if first_tries:
        _judge(first_tries, token, report)
    # An item tried before may be what killed the worker: judge it alone, noting each hook as
    # it starts, so that a poison item takes no neighbour down and its failure names the hook.
    for content in contents:
        if content.attempts > 1:
            _judge([content], token, report, note_progress=True)
    return report


def _judge(contents, token, report, note_progress=False):
    judged = []
    for content in contents:
        item_pipeline = pipeline_for(content.stash)
        started = timezone.now()
        on_step = _progress_note(content, token) if note_progress else None
        item = item_for(content)
        _call(item_pipeline.listeners(pipeline.ON_PIPELINE_START), pipeline.ON_PIPELINE_START, item, None)
        result = item_pipeline.run(item, on_step=on_step)
        judged.append((content, item_pipeline, result, started))
    _record(judged, token, report)
    _notify_sinks(judged, report)


def _progress_note(content, token):
    def note(step):
        Content.objects.filter(pk=content.pk, lease_token=token).update(reason=f"interrupted in hook {step.title}")
    return note


def _record(judged, token, report):
    """Write verdicts, runs and counters for ``judged``, skipping items whose claim was lost."""
    now = timezone.now()
    with transaction.atomic():
        still_claimed = set(Content.objects.select_for_update()
                   .filter(lease_token=token, pk__in=[c.pk for c, *_ in judged])
                   .values_list("pk", flat=True))
        contents, runs, transformed = [], [], []
        counters: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(HookConfig.COUNTER_FIELDS, 0))
        accepted_by_stash = defaultdict(list)
        for content, _pipeline, result, started in judged:
            if content.pk not in still_claimed:
                report.stale += 1
                continue
            _apply_verdict(content, result, now)
            if result.verdict == pipeline.ACCEPTED:
                accepted_by_stash[content.stash_id].append(content)
                if result.transformed:
                    transformed.append(content)
            contents.append(content)
            runs.append(PipelineRun(content=content, revision=content.revision,
                                    config_version=content.stash.config_version, outcome=result.verdict,
                                    reason=result.reason, started_at=started, finished_at=now,
                                    duration_ms=result.duration_ms,
                                    trail=[entry.as_dict() for entry in result.trail]))
            _count(counters, result.trail)
            report.verdicts[result.verdict] = report.verdicts.get(result.verdict, 0) + 1
        if not contents:
            return
        # Locks are taken in one order everywhere: items, then stashes (by id), then hook
        # configs; so a worker and an admin reordering hooks never wait on each other in a cycle.
        for stash_id in sorted(accepted_by_stash):
            _assign_queue_positions(stash_id, accepted_by_stash[stash_id])
        _add_counters(counters)
        bulk_sql.insert_rows(PipelineRun, runs)
        bulk_sql.update_rows(Content, contents, _VERDICT_FIELDS)
        bulk_sql.update_rows(Content, transformed, ["payload", "original_payload"])
    report.judged += len(contents)


_VERDICT_FIELDS = ["status", "reason", "rejected_by", "processed_revision", "processed_at", "lease_token",
                   "lease_until", "queue_seq", "updated_at"]


def _apply_verdict(content, result, now):
    content.status = result.verdict
    content.reason = result.reason
    content.rejected_by_id = result.decided_by if result.verdict != pipeline.ACCEPTED else None
    if result.transformed and result.verdict == pipeline.ACCEPTED:
        content.original_payload = content.payload
        content.payload = dict(result.payload)
    content.processed_revision = content.revision
    content.processed_at = now
    content.lease_token = None
    content.lease_until = None
    content.updated_at = now


def _count(counters, trail):
    for entry in trail:
        if entry.config_id is None or entry.outcome == pipeline.SKIPPED:
            continue
        counts = counters[entry.config_id]
        counts["runs_count"] += 1
        counts["time_total_us"] += int(entry.duration_ms * 1000)
        if entry.outcome in (pipeline.KEPT, pipeline.TRANSFORMED):
            counts["kept_count"] += 1
        elif entry.outcome in (pipeline.DROPPED, pipeline.HELD) or (
                entry.outcome == pipeline.OBSERVED and entry.message.startswith(("would drop", "would hold"))):
            counts["dropped_count"] += 1
        elif entry.outcome in (pipeline.ERROR, pipeline.TIMEOUT):
            counts["errors_count"] += 1


def _add_counters(counters):
    """Add to every hook's counters in one UPDATE, however many hooks ran."""
    if not counters:
        return
    updates = {}
    for name in HookConfig.COUNTER_FIELDS:
        whens = [When(pk=pk, then=Value(counts[name])) for pk, counts in counters.items() if counts[name]]
        if whens:
            updates[name] = F(name) + Case(*whens, default=Value(0), output_field=BigIntegerField())
    if updates:
        HookConfig.objects.filter(pk__in=list(counters)).update(**updates)


def _assign_queue_positions(stash_id, accepted):
    """Number accepted items in the stash's queue; the row lock orders commits by number."""
    Stash.objects.filter(pk=stash_id).update(queue_head=F("queue_head") + len(accepted))
    head = Stash.objects.filter(pk=stash_id).values_list("queue_head", flat=True).get()
    for offset, content in enumerate(accepted, start=head - len(accepted) + 1):
        content.queue_seq = offset


def _notify_sinks(judged, report):
    """Call the lifecycle callbacks of each judged item once its verdict is stored.

    The verdict's callback and ``on_error`` (see ``pipeline.result_events``) go to hooks in
    process, and to ``deliver_async`` sinks through ``report.deliveries`` (their own task);
    ``on_pipeline_end`` follows in process. An item whose claim was lost gets only
    ``on_pipeline_end``: its verdict was not stored, its new revision is judged again.
    """
    for content, item_pipeline, result, _started in judged:
        item = item_for(content)
        stored = content.processed_revision == content.revision
        for event in (*(pipeline.result_events(result) if stored else ()), pipeline.ON_PIPELINE_END):
            local, remote = _listeners(item_pipeline, event)
            report.deliveries.extend((step.config_id, str(content.pk), event) for step in remote)
            _call(local, event, item, result)


def _listeners(item_pipeline, event):
    """The steps listening to ``event``: those called in process, and sinks with their own task."""
    local, remote = [], []
    for step in item_pipeline.listeners(event):
        deliver_async = getattr(step.hook, "deliver_async", False) and event != pipeline.ON_PIPELINE_END
        (remote if deliver_async else local).append(step)
    return local, remote


def _call(steps, event, item, result):
    """Call ``event`` on ``steps`` now; a callback that raises is logged, never fatal."""
    for step, message in pipeline.notify(steps, event, item, result):
        logger.error("Hook %s failed in %s for %s: %s", step.title, event, item.id, message)


# --- sweeping, reprocessing, simulating ----------------------------------------------------


def sweep(limit=10_000) -> SweepReport:
    """One sweeper pass: fail items out of attempts, send again those whose lease ran out."""
    report = SweepReport()
    now = timezone.now()
    expired = Content.objects.filter(status__in=[Status.PENDING, Status.PROCESSING], lease_until__lt=now)
    exhausted = expired.filter(status=Status.PROCESSING, attempts__gte=settings.STASH_MAX_ATTEMPTS)
    for pk, attempts, note in exhausted.values_list("pk", "attempts", "reason")[:limit]:
        reason = f"gave up after {attempts} attempts: the worker stopped while judging it"
        if note:
            reason += f" ({note})"
        report.failed += exhausted.filter(pk=pk).update(status=Status.FAILED, reason=reason, lease_token=None,
                                                        lease_until=None, processed_at=now, updated_at=now)
    ids = list(expired.filter(attempts__lt=settings.STASH_MAX_ATTEMPTS).values_list("pk", flat=True)[:limit])
    if ids:
        report.requeued = Content.objects.filter(pk__in=ids, lease_until__lt=now).update(
            status=Status.PENDING, lease_token=None,
            lease_until=now + timedelta(seconds=settings.STASH_LEASE_SECONDS))
        dispatch.send_on_commit(ids)
    return report


def reprocess(queryset) -> int:
    """Judge the selected items again with their stash's current hooks; returns how many."""
    now = timezone.now()
    ids = list(queryset.values_list("pk", flat=True))
    count = Content.objects.filter(pk__in=ids).update(
        status=Status.PENDING, attempts=0, lease_token=None, reason="",
        lease_until=now + timedelta(seconds=settings.STASH_LEASE_SECONDS), updated_at=now)
    dispatch.send_on_commit(ids)
    return count


def simulate(stash: Stash, payload) -> pipeline.Result:
    """Run ``stash``'s current hooks over ``payload``; nothing is saved or counted.

    Raises ``ValidationError`` for a payload that is not a JSON object or is too large.
    """
    validate_payload(payload, stash)
    return pipeline_for(stash).run(pipeline.Item(payload=payload, stash=stash.slug, source="simulate"))


class DeliveryError(Exception):
    """A sink failed to deliver; its task retries."""


def deliver(config_id, content_id, event):
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
                             decided_by=content.rejected_by_id, trail=trail)
    failures = pipeline.notify([step], event, item_for(content), result)
    if failures:
        raise DeliveryError(failures[0][1])


# --- submitting, editing, consuming ----------------------------------------------------------

#: Items one bulk submission may carry.
BULK_LIMIT = 1000


def may_submit(user, stash) -> bool:
    """True if ``user`` (anonymous too) may submit to ``stash``: it takes anonymous submissions,
    or the user has ``stash.add_content``. (Whether the stash is active is ``submit``'s to say.)"""
    return stash.allow_anonymous or user.has_perm("stash.add_content")


def submittable_stashes(user):
    """The active stashes ``user`` may submit to, as a queryset."""
    stashes = Stash.objects.filter(is_active=True)
    return stashes if user.has_perm("stash.add_content") else stashes.filter(allow_anonymous=True)


def visible_contents(user):
    """The items ``user`` may read: every item with ``stash.view_content``, else their own."""
    if user.has_perm("stash.view_content"):
        return Content.objects.all()
    if not user.is_authenticated:
        return Content.objects.none()
    return Content.objects.filter(submitted_by=user)


def check_payload(stash: Stash, payload) -> None:
    """Raise unless ``payload`` may be submitted to ``stash``.

    ``ValidationError`` (on ``payload``) for anything but a JSON object that every database can
    store: no NUL characters, no infinite numbers, at most ``MAX_PAYLOAD_DEPTH`` levels deep.
    ``PayloadTooLarge`` when it is larger than the stash's ``max_payload_bytes``.
    """
    validate_payload(payload, None)
    try:
        validate_payload(payload, stash)
    except ValidationError as exc:  # the type is fine, so it is the size
        raise PayloadTooLarge(exc.message_dict["payload"][0]) from exc


def _submitter(user):
    return user if user is not None and user.is_authenticated else None


def _check_open(stash: Stash) -> None:
    if not stash.is_active:
        raise ValidationError({"stash": _("The stash %(slug)s is inactive and takes no submissions.")
                               % {"slug": stash.slug}})


def submit(stash: Stash, payload, user=None, source=Content.Source.API, idempotency_key=""):
    """Save ``payload`` as a new item of ``stash``; return ``(content, created)``.

    With an ``idempotency_key`` (authenticated submitters only), repeating the same stash and
    payload returns the item the key made first, with ``created`` False; the same key with another
    stash or payload raises ``IdempotencyConflict``. Raises ``ValidationError`` for an inactive
    stash, a bad payload, a key without a user or over 200 characters, and ``PayloadTooLarge``
    (see ``check_payload``).
    """
    user = _submitter(user)
    _check_open(stash)
    check_payload(stash, payload)
    if idempotency_key:
        if user is None:
            raise ValidationError({"idempotency_key": _("An idempotency key needs an authenticated submitter.")})
        limit = Content._meta.get_field("idempotency_key").max_length
        if len(idempotency_key) > limit:
            raise ValidationError({"idempotency_key": _("At most %(limit)d characters.") % {"limit": limit}})
        earlier = _keyed(user, idempotency_key)
        if earlier is not None:
            return _replayed(earlier, stash, payload), False
    content = Content(stash=stash, payload=payload, submitted_by=user, source=source,
                      idempotency_key=idempotency_key or "")
    try:
        with transaction.atomic():
            content.save()
    except IntegrityError:
        # Two requests with one key raced; the unique constraint let one through.
        earlier = _keyed(user, idempotency_key) if idempotency_key else None
        if earlier is None:
            raise
        return _replayed(earlier, stash, payload), False
    return content, True


def _keyed(user, key):
    return Content.objects.select_related("stash").filter(submitted_by=user, idempotency_key=key).first()


def _replayed(earlier: Content, stash: Stash, payload) -> Content:
    if earlier.stash_id != stash.pk or earlier.content_hash != content_hash(payload):
        raise IdempotencyConflict(_("This idempotency key was already used for another stash or payload "
                                    "(item %(id)s).") % {"id": earlier.pk})
    return earlier


def submit_many(stash: Stash, payloads, user=None, source=Content.Source.API) -> list[Content]:
    """Save ``payloads`` as new items of ``stash``, all or none, in one transaction; return them.

    Each payload is checked first (``check_payload``; errors name the item's index) and nothing
    is saved if any fails. One bulk insert sends no ``post_save``, so the ids are handed to the
    workers here: together, after commit, in chunks of ``STASH_BATCH_SIZE``.
    """
    if len(payloads) > BULK_LIMIT:
        raise ValidationError({"items": _("At most %(limit)d items per request.") % {"limit": BULK_LIMIT}})
    user = _submitter(user)
    _check_open(stash)
    errors = []
    for index, payload in enumerate(payloads):
        try:
            check_payload(stash, payload)
        except ValidationError as exc:
            errors.extend(f"{index}: {message}" for message in exc.messages)
        except PayloadTooLarge as exc:
            raise PayloadTooLarge(_("Item %(index)d: %(reason)s") % {"index": index, "reason": exc}) from exc
    if errors:
        raise ValidationError({"items": errors})
    # What Content.save() sets on a new item; the other fields' defaults are a pending revision 1.
    lease_until = timezone.now() + timedelta(seconds=settings.STASH_LEASE_SECONDS)
    contents = [Content(stash=stash, payload=payload, content_hash=content_hash(payload), lease_until=lease_until,
                        submitted_by=user, source=source) for payload in payloads]
    with transaction.atomic():
        Content.objects.bulk_create(contents)
        dispatch.send_on_commit([content.pk for content in contents])
    return contents


def edit(content: Content, payload) -> Content:
    """Replace ``content``'s payload; a changed payload is a new revision, judged again.

    Raises like ``check_payload``; saving an unchanged payload changes nothing.
    """
    check_payload(content.stash, payload)
    content.payload = payload
    content.save()
    return content


def queue_page(stash: Stash, after: int = 0, limit: int = 100) -> list[Content]:
    """Up to ``limit`` accepted items of ``stash`` numbered after ``after``, in queue order.

    Numbers are given at acceptance under the stash's row lock, so they commit in number order:
    a consumer that passes the last number it read as ``after`` never misses or repeats an item.
    An item edited after acceptance leaves the queue and, accepted again, comes back later with a
    new number.
    """
    return list(Content.objects.accepted().filter(stash=stash, queue_seq__gt=after)
                .select_related("stash").order_by("queue_seq")[:limit])


def reorder_hooks(stash: Stash, ordered_ids, config_version: int) -> None:
    """Put ``stash``'s hooks in the order of ``ordered_ids`` if nothing changed since ``config_version``.

    Raises ``StaleConfig`` when the stash's hooks changed meanwhile, and ``ValidationError`` when
    ``ordered_ids`` does not list every hook of the stash once; then nothing changes.
    """
    with transaction.atomic():
        current = Stash.objects.select_for_update().filter(pk=stash.pk).values_list("config_version", flat=True).get()
        if current != config_version:
            raise StaleConfig(_("The hooks of %(slug)s changed since version %(based)d (now %(current)d): "
                                "reload them and try again.")
                              % {"slug": stash.slug, "based": config_version, "current": current})
        HookConfig.objects.reorder(stash, ordered_ids)
    stash.refresh_from_db(fields=["config_version"])


# --- arranging hooks ---------------------------------------------------------------------------


def place_hooks(stash: Stash, positions) -> bool:
    """Move hooks of ``stash`` to the 1-based places in ``positions`` ({config id: position}).

    The other hooks keep their relative order; where a moved hook and another want the same
    place, the moved one goes first, so a place below 1 puts hooks at the top and one past the
    end at the bottom. Ids of other stashes are ignored. Runs under the stash's row lock and
    through ``HookConfig.objects.reorder``: positions end up 1..n and ``config_version`` moves,
    so workers rebuild the pipeline on their next batch. Returns whether anything changed.
    """
    wanted = {int(pk): int(position) for pk, position in positions.items()}
    with transaction.atomic():
        Stash.objects.select_for_update().filter(pk=stash.pk).get()
        current = list(HookConfig.objects.filter(stash_id=stash.pk).in_order().values_list("pk", "position"))
        keyed = sorted((wanted.get(pk, position), pk not in wanted, index, pk)
                       for index, (pk, position) in enumerate(current))
        order = [key[-1] for key in keyed]
        if order == [pk for pk, _position in current] and \
                [position for _pk, position in current] == list(range(1, len(current) + 1)):
            return False
        HookConfig.objects.reorder(stash, order)
    return True


# --- reviewing ---------------------------------------------------------------------------------


def approve(queryset, user, note="") -> int:
    """Accept the held items among ``queryset`` as ``user``; returns how many were held."""
    return _review(queryset, {Status.HELD: Status.ACCEPTED}, user, note, "accepted in review")


def reject(queryset, user, note="") -> int:
    """Reject the held items among ``queryset`` as ``user``; returns how many were held."""
    return _review(queryset, {Status.HELD: Status.REJECTED}, user, note, "rejected in review")


def overturn(queryset, user, note="") -> int:
    """Reverse the hooks' verdict on the judged items among ``queryset``: rejected ones are
    accepted, accepted ones rejected. Each rejection overturned counts against the hook that
    made it (``HookConfig.overturned_count``: its false positives). Items already overturned
    are left alone; returns how many were overturned.
    """
    return _review(queryset.filter(overturned=False), {Status.REJECTED: Status.ACCEPTED,
                                                        Status.ACCEPTED: Status.REJECTED},
                   user, note, "overturned in review", overturning=True)


def _review(queryset, changes, user, note, reason, overturning=False) -> int:
    """Move the items of ``queryset`` whose status is a key of ``changes`` to its value.

    Written with ``update``/``bulk_update``: no ``post_save``, so nothing is judged again.
    Items accepted here join their stash's queue; items rejected here leave it.
    """
    now = timezone.now()
    ids = list(queryset.values_list("pk", flat=True))
    with transaction.atomic():
        # Locked like the worker locks what it records, so a review and a verdict never cross.
        items = list(Content.objects.select_for_update(of=("self",)).select_related("stash")
                     .filter(pk__in=ids, status__in=list(changes))
                     .order_by("created_at", "pk"))
        counters: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(HookConfig.COUNTER_FIELDS, 0))
        accepted_by_stash = defaultdict(list)
        for item in items:
            before, item.status = item.status, changes[item.status]
            item.reason = f"{reason} (was {before}: {item.reason})" if overturning and item.reason else reason
            item.overturned = item.overturned or overturning
            item.reviewed_by, item.reviewed_at, item.review_note, item.updated_at = user, now, note, now
            item.queue_seq = None
            if item.status == Status.ACCEPTED:
                accepted_by_stash[item.stash_id].append(item)
            if overturning and before == Status.REJECTED and item.rejected_by_id:
                counters[item.rejected_by_id]["overturned_count"] += 1
        # Stashes, then hook configs: the lock order of _record.
        for stash_id in sorted(accepted_by_stash):
            _assign_queue_positions(stash_id, accepted_by_stash[stash_id])
        _add_counters(counters)
        bulk_sql.update_rows(Content, items, ["status", "reason", "overturned", "reviewed_by", "reviewed_at",
                                              "review_note", "queue_seq", "updated_at"])
        transaction.on_commit(lambda: _notify_reviewed(items))
    return len(items)


def _notify_reviewed(items):
    """A reviewer's verdict reaches the sinks like a worker's: ``on_accept`` / ``on_reject``."""
    deliveries = []
    for content in items:
        event = pipeline.verdict_event(content.status)
        result = pipeline.Result(verdict=content.status, payload=content.payload, reason=content.reason)
        local, remote = _listeners(pipeline_for(content.stash), event)
        deliveries.extend((step.config_id, str(content.pk), event) for step in remote)
        _call(local, event, item_for(content), result)
    dispatch.send_deliveries(deliveries)


# --- replaying ---------------------------------------------------------------------------------


@dataclass
class ReplayChange:
    """An item whose verdict the current hooks would change."""

    content: Content
    before: str
    result: pipeline.Result


@dataclass
class ReplayReport:
    """What the current hooks would say about recent items, next to what was recorded."""

    compared: int = 0
    changes: list[ReplayChange] = field(default_factory=list)

    def newly(self, verdict) -> int:
        return sum(1 for change in self.changes if change.result.verdict == verdict)

    @property
    def unchanged(self) -> int:
        return self.compared - len(self.changes)


def replay(stash: Stash, last_n: int) -> ReplayReport:
    """Judge the last ``last_n`` judged items of ``stash`` again with its current hooks.

    Nothing is saved or counted and no sink is called. Each item is judged on the payload it
    was submitted with (before any transform) and compared with its recorded status, which
    for a reviewed item is the reviewer's verdict.
    """
    report = ReplayReport()
    item_pipeline = pipeline_for(stash)
    judged = (Content.objects.filter(stash=stash, status__in=[Status.ACCEPTED, Status.REJECTED, Status.HELD])
              .order_by("-created_at", "-pk")[:max(0, int(last_n))])
    for content in judged:
        content.stash = stash
        submitted = content.payload if content.original_payload is None else content.original_payload
        result = item_pipeline.run(replace(item_for(content), payload=submitted))
        report.compared += 1
        if result.verdict != content.status:
            report.changes.append(ReplayChange(content=content, before=content.status, result=result))
    return report
