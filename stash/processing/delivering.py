"""Sink deliveries: ``deliver`` calls one sink for one item's verdict, on the sinks worker (a task of its own,
retried on ``DeliveryError``).
"""

from __future__ import annotations

import logging
import uuid

from stash.core import logs, pipeline
from stash.db import tracing
from stash.models import Content, HookConfig
from stash.processing.building import build_step, item_for

logger = logging.getLogger(__name__)


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
    result = pipeline.Result(
        verdict=content.status,
        payload=content.payload,
        reason=content.reason,
        decided_by=content.decided_by_id,
        trail=trail,
    )
    item = item_for(content)
    with logs.judging(item), logs.in_hook(step):
        failures = pipeline.notify([step], event, item, result)
    if failures:
        raise DeliveryError(failures[0][1])
