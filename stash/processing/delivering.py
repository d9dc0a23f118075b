"""Sink deliveries: ``deliver`` calls one sink for one item's verdict, on the sinks worker (a task of its own,
retried on ``DeliveryError``), and each delivery's row (``Delivery``) says how it went::

    send(deliveries)                           # record them pending, then publish their tasks
    record(deliveries)                         # judging: one statement per batch, published after
    deliver(config_id, content_id, event, revision, final=False)   # in the task: an attempt

A delivery's row is written ``pending`` when its task is sent, and updated at each attempt:
``delivered``; ``retrying`` with the error, when its task will try again; ``failed`` with the
error after its last try, when the sink refuses it for good (``DeliveryRefused``) or when its
task could not be published.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from contextlib import nullcontext

from django.db import IntegrityError, connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from stash.core import logs, pipeline
from stash.core.exceptions import DeliveryRefused
from stash.db import publishing, tracing
from stash.models import Content, Delivery, HookConfig
from stash.processing.building import build_step, item_for

logger = logging.getLogger(__name__)

Status = Delivery.Status

_KEY = ["content", "revision", "config", "event"]
_RESET = ["status", "attempts", "last_error", "updated_at", "delivered_at"]


class DeliveryError(Exception):
    """A sink failed to deliver; its task retries."""


def record(deliveries: Sequence[publishing.Delivery]) -> None:
    """Write each of ``deliveries`` (sink deliveries about to be published) as a ``pending`` row, in
    one statement; one sent again for the same revision and event starts over. Rows whose item or
    hook config is gone meanwhile are left out (logged): their tasks skip them."""
    if not deliveries:
        return
    now = timezone.now()
    rows = [
        Delivery(
            content_id=one.content_id,
            revision=one.revision,
            config_id=one.config_id,
            event=one.event,
            created_at=now,
            updated_at=now,
        )
        for one in deliveries
        if one.revision is not None
    ]
    try:
        _upsert(rows)
    except IntegrityError:
        # An item or hook config deleted since its verdict: write the others.
        configs = set(HookConfig.objects.filter(pk__in={row.config_id for row in rows}).values_list("pk", flat=True))
        items = set(Content.objects.filter(pk__in={row.content_id for row in rows}).values_list("pk", flat=True))
        kept = [row for row in rows if row.config_id in configs and uuid.UUID(str(row.content_id)) in items]
        logger.info("%d deliveries not recorded: their item or hook config is gone.", len(rows) - len(kept))
        _upsert(kept)


def _upsert(rows: list[Delivery]) -> None:
    """One statement, atomic by itself; in a transaction, under a savepoint, so that a failure
    leaves the transaction usable."""
    with transaction.atomic() if connection.in_atomic_block else nullcontext():
        Delivery.objects.bulk_create(rows, update_conflicts=True, unique_fields=_KEY, update_fields=_RESET)


def send(deliveries: Sequence[publishing.Delivery], *, recorded: bool = False) -> None:
    """Record ``deliveries`` (unless ``recorded`` already) and publish their tasks; those the broker
    refused are marked failed."""
    if not recorded:
        record(deliveries)
    unsent = publishing.send_deliveries(deliveries)
    for one in unsent:
        if one.revision is None:
            continue
        _rows(one.config_id, one.content_id, one.event, one.revision).update(
            status=Status.FAILED, last_error="its task could not be sent to the broker", updated_at=timezone.now()
        )


def _rows(config_id: int, content_id: uuid.UUID | str, event: str, revision: int) -> QuerySet[Delivery]:
    return Delivery.objects.filter(config_id=config_id, content_id=content_id, event=event, revision=revision)


@tracing.delivering
def deliver(
    config_id: int, content_id: uuid.UUID | str, event: str, revision: int | None = None, *, final: bool = False
) -> None:
    """Call ``event`` on the sink of HookConfig ``config_id`` for item ``content_id`` (its
    ``revision``'s verdict; None: a task sent before revisions were recorded) and record the
    attempt. ``final``: no retry follows a failure.

    A config or item that no longer exists is skipped; a sink that raises gives ``DeliveryError``
    (recorded ``retrying``, or ``failed`` when ``final``); one that raises ``DeliveryRefused`` is
    recorded ``failed`` and not retried.
    """
    config = HookConfig.objects.select_related("stash").filter(pk=config_id).first()
    content = Content.objects.select_related("stash").filter(pk=content_id).first()
    if config is None or content is None:
        logger.info("Sink delivery skipped: config %s or item %s is gone.", config_id, content_id)
        return
    if revision is None:
        revision = content.revision
    rows = _rows(config_id, content.pk, event, revision)
    now = timezone.now()
    if not rows.update(attempts=F("attempts") + 1, updated_at=now):
        Delivery.objects.bulk_create(
            [
                Delivery(
                    content=content,
                    revision=revision,
                    config=config,
                    event=event,
                    attempts=1,
                    created_at=now,
                    updated_at=now,
                )
            ],
            ignore_conflicts=True,
        )
    try:
        _call(config, content, event)
    except DeliveryRefused as exc:
        logger.error("Sink %s gave up on item %s (%s), not retried: %s", config.title, content.pk, event, exc)
        rows.update(status=Status.FAILED, last_error=str(exc), updated_at=timezone.now())
        return
    except DeliveryError as exc:
        rows.update(status=Status.FAILED if final else Status.RETRYING, last_error=str(exc), updated_at=timezone.now())
        raise
    done = timezone.now()
    rows.update(status=Status.DELIVERED, delivered_at=done, updated_at=done)


def _call(config: HookConfig, content: Content, event: str) -> None:
    """Call the sink; ``DeliveryRefused`` passes through, any other failure is a ``DeliveryError``."""
    step = build_step(config, config.stash)
    run = content.runs.first()
    trail = tuple(pipeline.TrailEntry(**entry) for entry in (run.trail if run else []))
    result = pipeline.Result(
        verdict=content.status,
        payload=content.payload,
        reason=content.reason,
        decided_by=content.decided_by_id,
        trail=trail,
    )
    item = item_for(content)
    with logs.judging(item), logs.in_hook(step):
        if not pipeline.listens(step.hook, event):
            return
        try:
            getattr(step.hook, event)(item, result)
        except DeliveryRefused:
            raise
        except Exception as exc:
            raise DeliveryError(f"{type(exc).__name__}: {exc}") from exc


def for_item(content_id: uuid.UUID | str, revision: int | None = None) -> list[Delivery]:
    """The sink deliveries of an item (of its ``revision`` only, if given), oldest first, each with
    its hook config: what the trail, the item's page and the API show after the verdict."""
    rows = Delivery.objects.filter(content_id=content_id).select_related("config")
    if revision is not None:
        rows = rows.filter(revision=revision)
    return list(rows.order_by("created_at", "pk"))
