"""Asynchronous hooks: the callback an outside service answers at, and the run's resume.

- ``attach(item_pipeline, contents, items, start)``: before a run, one token per item and
  asynchronous hook from judging step ``start`` on (a ``Callback`` row holding its SHA-256); the
  items handed back carry their callback URLs (``Item.callbacks``, by hook config id).
- ``record_waits(...)`` (called by ``judging`` in the transaction that records a batch): an item
  whose run waits becomes ``waiting`` and the callback of the hook it waits at is armed (what a
  resume needs, and ``expires_at``); the other tokens of its run are dropped. An answer that came
  while the run still went on sends the resume at once.
- ``answer(token, body, signature_header)``: the endpoint's rule. The token's callback, the
  signature (``X-Stash-Signature``, as ``webhook`` signs, with the hook config's secret), the body
  ``{"outcome": "keep" | "drop" | "hold", "reason": "..."}``; then, items first (the lock order),
  one compare-and-set sets ``answered_at``; the resume is sent on commit.
- ``resume(callback_id)``: the task's work: claims the item ``waiting`` -> ``processing`` (a
  duplicate message claims nothing), rebuilds the pipeline of the version the run began with,
  goes on from the next hook (``Pipeline.resume``) and records the end as judging does.
- ``sweep(now)``: the sweeper's part: callbacks not answered by ``expires_at`` are answered
  ``timeout`` by the same compare-and-set (the hook's ``on_error`` decides), and resumes are sent
  again for answered callbacks whose item still waits, or whose resume stopped with its worker.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.urls import reverse
from django.utils import timezone

from stash.core import pipeline
from stash.db import publishing
from stash.hooks.outbound import signature
from stash.models import Callback, Content, HookConfig, lease_end

logger = logging.getLogger(__name__)

Status = Content.Status

#: What a service may answer.
OUTCOMES = ("keep", "drop", "hold")
#: The ``outcome`` the sweeper gives a callback not answered in time.
TIMED_OUT = "timeout"
#: The longest reason kept.
REASON_MAX = 2000


class CallbackRefused(Exception):
    """An answer refused: ``status`` is the HTTP status (404, 401, 409, 400), ``field`` the body's
    field at fault (400 only)."""

    def __init__(self, status: int, message: str, field: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field


# --- tokens ---------------------------------------------------------------------------------------


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def public_url(token: str) -> str:
    """The callback URL of ``token``: ``STASH_PUBLIC_URL`` and the endpoint's path."""
    base = (settings.STASH_PUBLIC_URL or "").rstrip("/")
    return base + reverse("api:callback", kwargs={"token": token})


def waiting_steps(item_pipeline: pipeline.Pipeline, start: int = 0) -> list[pipeline.Step]:
    """The asynchronous steps of ``item_pipeline`` from judging step ``start`` on."""
    return [
        step
        for step in item_pipeline.judging[start:]
        if getattr(step.hook, "asynchronous", False) and step.config_id is not None
    ]


def attach(
    item_pipeline: pipeline.Pipeline, contents: Sequence[Content], items: Sequence[pipeline.Item], start: int = 0
) -> list[pipeline.Item]:
    """``items`` (of ``contents``) with a callback URL for each asynchronous step of the pipeline
    from judging step ``start`` on, their tokens stored (hashed) in one statement; ``items`` as
    they are when it has none."""
    steps = waiting_steps(item_pipeline, start)
    if not steps or not contents or not settings.STASH_PUBLIC_URL:
        return list(items)  # without STASH_PUBLIC_URL the hook has no URL to send: it fails, on_error decides
    config_ids = [step.config_id for step in steps if step.config_id is not None]
    rows, attached = [], []
    for content, item in zip(contents, items, strict=True):
        urls = {}
        for config_id in config_ids:
            token = secrets.token_urlsafe(32)
            rows.append(
                Callback(
                    content_id=content.pk,
                    hook_config_id=config_id,
                    revision=content.revision,
                    token_hash=token_hash(token),
                    config_version=item_pipeline.version,
                )
            )
            urls[config_id] = public_url(token)
        attached.append(replace(item, callbacks=urls))
    Callback.objects.bulk_create(rows)
    return attached


def has_waiting(item_pipeline: pipeline.Pipeline) -> bool:
    return bool(waiting_steps(item_pipeline))


# --- recording a run that waits (within judging's transaction) -----------------------------------


def record_waits(
    waiting: Sequence[tuple[Content, pipeline.Result]], finished: Sequence[Content], now: datetime
) -> None:
    """In the transaction that records a batch, after its items are locked: each item of
    ``waiting`` becomes ``waiting`` and arms the callback of the hook it waits at; the callbacks
    of an earlier wait of ``finished`` items (resumed runs) are consumed; the tokens of these runs
    that no hook waits on are dropped. An armed callback already answered (the service was quick)
    sends its resume on commit."""
    everyone = [content.pk for content, _ in waiting] + [content.pk for content in finished]
    if not everyone:
        return
    # The wait a resumed run came from, and any wait a new run of the item supersedes: what a
    # resume needed is no longer kept.
    Callback.objects.filter(content_id__in=everyone, consumed_at__isnull=True, expires_at__isnull=False).update(
        consumed_at=now, payload=None, trail=None
    )
    armed: list[int] = []
    if waiting:
        wanted = {}
        for content, result in waiting:
            at = result.waiting_at
            wanted[(content.pk, content.revision, result.trail[at].config_id)] = (content, result, at)  # type: ignore[index]
        # Newest first: the tokens of this run, not those of one its worker died in.
        rows = (
            Callback.objects.filter(content_id__in=[content.pk for content, _ in waiting], expires_at__isnull=True)
            .select_related("hook_config")
            .order_by("-pk")
        )
        changed = []
        for callback in rows:
            key = (callback.content_id, callback.revision, callback.hook_config_id)
            if key not in wanted:
                continue
            content, result, at = wanted.pop(key)
            callback.position = at
            callback.payload = dict(result.payload)
            callback.trail = [entry.as_dict() for entry in result.trail[:at]]
            callback.expires_at = now + timedelta(seconds=wait_seconds(callback.hook_config))
            changed.append(callback)
            armed.append(callback.pk)
            if callback.answered_at is not None:
                send_resume_on_commit(callback.pk, content.stash.queue)
        Callback.objects.bulk_update(changed, ["position", "payload", "trail", "expires_at"])
        for content, result, _at in wanted.values():  # no token: never the case for an item judged here
            logger.error("Item %s waits at hook config %s with no callback", content.pk, result.decided_by)
    Callback.objects.filter(content_id__in=everyone, expires_at__isnull=True).exclude(pk__in=armed).delete()


def wait_seconds(config: HookConfig) -> float:
    """The seconds a service has to answer for ``config``'s hook: its ``timeout`` param, at most
    ``STASH_CALLBACK_MAX_SECONDS``."""
    try:
        wanted = float(config.params.get("timeout", settings.STASH_CALLBACK_MAX_SECONDS))
    except (TypeError, ValueError):
        wanted = settings.STASH_CALLBACK_MAX_SECONDS
    return max(0.0, min(wanted, settings.STASH_CALLBACK_MAX_SECONDS))


def waiting_reason(result: pipeline.Result) -> str:
    at = result.waiting_at
    entry = result.trail[at] if at is not None else None
    return f"waiting for {entry.title}: {entry.message}" if entry is not None else "waiting"


# --- the endpoint's rule ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answered:
    """An answer taken: its callback, and whether its resume was sent."""

    callback_id: int
    outcome: str
    resumed: bool


def answer(token: str, body: bytes, signature_header: str | None) -> Answered:
    """Take a service's answer at ``token`` (see the module docstring); ``CallbackRefused``
    otherwise, with nothing changed."""
    callback = Callback.objects.filter(token_hash=token_hash(token)).select_related("hook_config").first()
    if callback is None:
        raise CallbackRefused(404, "No callback has this token.")
    secret = callback.hook_config.params.get("secret")
    if not signature_header or not isinstance(secret, str) or not secret:
        raise CallbackRefused(
            401, "The request is not signed: send X-Stash-Signature: sha256=<HMAC-SHA256 of the body>."
        )
    if not hmac.compare_digest(signature(secret, body).encode(), signature_header.strip().encode()):
        raise CallbackRefused(401, "The signature does not match the body and the hook's secret.")
    outcome, reason = parse(body)
    return settle(callback, outcome, reason)


def parse(body: bytes) -> tuple[str, str]:
    """The ``outcome`` and ``reason`` of an answer's body; ``CallbackRefused`` (400) naming the field."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise CallbackRefused(400, "The body is not JSON.", "body") from None
    if not isinstance(data, dict):
        raise CallbackRefused(400, 'The body must be an object: {"outcome", "reason"}.', "body")
    unknown = sorted(set(data) - {"outcome", "reason"})
    if unknown:
        raise CallbackRefused(400, f"Unknown field: {unknown[0]}.", unknown[0])
    outcome = data.get("outcome")
    if outcome not in OUTCOMES:
        raise CallbackRefused(400, f"Must be one of {', '.join(OUTCOMES)}.", "outcome")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise CallbackRefused(400, "Must be a string.", "reason")
    if len(reason) > REASON_MAX or "\x00" in reason:
        raise CallbackRefused(400, f"At most {REASON_MAX} characters, and no NUL.", "reason")
    if outcome != "keep" and not reason.strip():
        raise CallbackRefused(400, f"Say why the item is to {outcome}.", "reason")
    return outcome, reason


def settle(callback: Callback, outcome: str, reason: str, now: datetime | None = None) -> Answered:
    """Set ``callback``'s answer by compare-and-set (items first: the item's row is locked before),
    and send its resume on commit when its item waits on it; ``CallbackRefused`` (409) when it
    was answered already, is late, or its item has changed since."""
    now = now or timezone.now()
    with transaction.atomic():
        content = Content.objects.select_for_update().filter(pk=callback.content_id).select_related("stash").first()
        if content is None or content.revision != callback.revision:
            raise CallbackRefused(
                409, "The item has changed since it was sent (a new revision): the answer is not needed."
            )
        taken = Callback.objects.filter(pk=callback.pk, answered_at__isnull=True, consumed_at__isnull=True)
        if outcome != TIMED_OUT:
            taken = taken.exclude(expires_at__lt=now)
        if content.status not in (Status.WAITING, Status.PROCESSING) or not taken.update(
            answered_at=now, outcome=outcome, reason=reason
        ):
            fresh = Callback.objects.filter(pk=callback.pk).values_list("answered_at", "expires_at").first()
            if fresh is not None and fresh[0] is None and fresh[1] is not None and fresh[1] < now:
                raise CallbackRefused(409, "Too late: the time to answer has passed; the hook's on_error decided.")
            raise CallbackRefused(409, "Already answered: the first answer counts.")
        armed = Callback.objects.filter(pk=callback.pk, expires_at__isnull=False).exists()
        resumed = content.status == Status.WAITING and armed
        if resumed:
            send_resume_on_commit(callback.pk, content.stash.queue)
    return Answered(callback.pk, outcome, resumed)


def send_resume_on_commit(callback_id: int, queue: str) -> None:
    transaction.on_commit(lambda: send_resume(callback_id, queue))


def send_resume(callback_id: int, queue: str) -> bool:
    """Publish the resume of ``callback_id`` (see ``publishing.resume``)."""
    return bool(publishing.resume(callback_id, queue))


# --- the resume -------------------------------------------------------------------------------------


def decision_of(callback: Callback) -> pipeline.Decision | BaseException:
    """What the answer means for the hook: a decision, or a timeout."""
    title = callback.hook_config.label or callback.hook_config.hook
    if callback.outcome in ("keep", "drop", "hold"):
        return answer_decision(callback.outcome, callback.reason)
    return pipeline.HookTimeout(f"{title}: no answer from the service in time")


def answer_decision(outcome: str, reason: str) -> pipeline.Decision:
    """The hook's decision for a service's answer ``outcome`` (keep, drop or hold) with ``reason``."""
    if outcome == "keep":
        return pipeline.keep()
    if outcome == "drop":
        return pipeline.drop(reason, "moderation")
    return pipeline.hold(reason, "moderation")


def trail_of(data: Sequence[Mapping[str, Any]]) -> list[pipeline.TrailEntry]:
    names = set(pipeline.TrailEntry.__dataclass_fields__)
    return [pipeline.TrailEntry(**{key: value for key, value in entry.items() if key in names}) for entry in data]


def claim(callback_id: int, token: uuid.UUID, lease_until: datetime | None = None) -> Callback | None:
    """Claim the item of an answered callback it waits on (``waiting`` -> ``processing``, under
    ``token`` until ``lease_until``), or None: a duplicate message, an item changed since, an
    answer consumed."""
    callback = Callback.objects.filter(pk=callback_id).select_related("hook_config").first()
    if callback is None or callback.answered_at is None or callback.consumed_at is not None:
        return None
    if callback.expires_at is None:
        return None
    unconsumed = Callback.objects.filter(pk=callback_id, consumed_at__isnull=True)
    taken = (
        Content.objects.filter(pk=callback.content_id, status=Status.WAITING, revision=callback.revision)
        .filter(Exists(unconsumed.filter(content_id=OuterRef("pk"))))
        .update(
            status=Status.PROCESSING,
            lease_token=token,
            lease_until=lease_until or lease_end(),
            attempts=F("attempts") + 1,
        )
    )
    return callback if taken else None


# --- the sweeper's part -----------------------------------------------------------------------------


@dataclass
class CallbackSweep:
    timed_out: int = 0
    resent: int = 0


def sweep(now: datetime | None = None, limit: int = 1000) -> CallbackSweep:
    """Answer ``timeout`` for callbacks past ``expires_at`` (their items wait), and send again the
    resumes of answered callbacks whose item waits past a lease, or is ``processing`` past its
    lease (its resume stopped with its worker)."""
    now = now or timezone.now()
    report = CallbackSweep()
    due = (
        Callback.objects.filter(answered_at__isnull=True, expires_at__lt=now, consumed_at__isnull=True)
        .filter(
            Exists(
                Content.objects.filter(pk=OuterRef("content_id"), revision=OuterRef("revision"), status=Status.WAITING)
            )
        )
        .select_related("hook_config")[:limit]
    )
    for callback in due:
        try:
            settle(callback, TIMED_OUT, "", now=now)
        except CallbackRefused:
            continue  # answered meanwhile: that answer counts
        report.timed_out += 1
    stale = now - timedelta(seconds=settings.STASH_LEASE_SECONDS)
    answered = Callback.objects.filter(
        answered_at__isnull=False, answered_at__lt=stale, consumed_at__isnull=True, expires_at__isnull=False
    )
    # An answer whose resume was lost: the item still waits on it.
    lost = answered.filter(
        Exists(Content.objects.filter(pk=OuterRef("content_id"), revision=OuterRef("revision"), status=Status.WAITING))
    )
    # A resume stopped with its worker: the item is processing past its lease; it waits again.
    stopped = list(
        answered.filter(
            Exists(
                Content.objects.filter(
                    pk=OuterRef("content_id"),
                    revision=OuterRef("revision"),
                    status=Status.PROCESSING,
                    lease_until__lt=now,
                    attempts__lt=settings.STASH_MAX_ATTEMPTS,
                )
            )
        ).values_list("pk", "content_id", "revision")[:limit]
    )
    for _pk, content_id, revision in stopped:
        Content.objects.filter(pk=content_id, revision=revision, status=Status.PROCESSING, lease_until__lt=now).update(
            status=Status.WAITING, lease_token=None, lease_until=None
        )
    for pk, queue in lost.values_list("pk", "content__stash__queue")[:limit]:
        report.resent += send_resume(pk, queue)
    # Waiting on nothing (its hook config was deleted meanwhile): judged again from the start, by
    # the sweeper's pass that follows (its lease has run out).
    Content.objects.filter(status=Status.WAITING).exclude(
        Exists(
            Callback.objects.filter(content_id=OuterRef("pk"), revision=OuterRef("revision"), consumed_at__isnull=True)
        )
    ).update(status=Status.PENDING, attempts=0, lease_until=now - timedelta(seconds=1))
    return report
