"""Resuming a run that waited for an outside service (see ``callbacks``): claim the item, go on from
the hook after the one that waited, with the payload and trail it had there and the pipeline version
it began with, and record its end as judging records any run (``judging.record_resumed``)."""

from __future__ import annotations

import logging
import uuid

from stash.core import logs
from stash.models import Content
from stash.processing import callbacks, judging
from stash.processing.building import item_for, pipeline_at
from stash.processing.time_limits import Clock

logger = logging.getLogger(__name__)


def resume(callback_id: int, token: uuid.UUID | None = None, clock: Clock | None = None) -> judging.BatchReport:
    """Resume the run that waits on ``callback_id``, now answered, under a claim that lasts as
    long as the message may run (``clock``); a duplicate message, or one for an item changed
    since, does nothing."""
    report = judging.BatchReport()
    token = token or uuid.uuid4()
    clock = clock or Clock()
    callback = callbacks.claim(callback_id, token, clock.lease_until())
    if callback is None:
        return report
    report.claimed += 1
    content = Content.objects.select_related("stash").get(pk=callback.content_id)
    item_pipeline = pipeline_at(content.stash, callback.config_version)
    position = callback.position or 0
    item = callbacks.attach(item_pipeline, [content], [item_for(content)], start=position + 1)[0]
    with logs.judging(item):
        result = item_pipeline.resume(
            item,
            position,
            callback.payload if callback.payload is not None else content.payload,
            callbacks.trail_of(callback.trail or []),
            callbacks.decision_of(callback),
            on_step=logs.at_hook,
        )
        judging.log_failures(result)
        logger.info("Resumed at hook config %s (%s): %s", callback.hook_config_id, callback.outcome, result.verdict)
    judging.record_resumed(content, item_pipeline, result, callback.created_at, token, report)
    return report
