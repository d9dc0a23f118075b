"""Feedback to hooks: a person's word on an item a hook decided, for the hook to learn from.

When a person approves, rejects or overturns an item whose verdict a hook gave (``Content.decided_by``),
or an appeal reverses it, ``send(items)`` publishes, once the decision is committed, one task per item
to the sinks' queue; the task calls ``give`` there, which calls the hook's ``feedback(item, verdict)``
(``verdict``: the item's new status, "accepted" or "rejected"). Only hooks that define ``feedback``
get one. A hook that is gone is logged and skipped; one that raises gives ``FeedbackError``, and
its task is retried as a sink delivery is. Nothing here can undo or hold up the decision.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable

from django.db import transaction

from stash.core import logs, pipeline, registry
from stash.core.exceptions import NotRegistered
from stash.db import publishing, tracing
from stash.hooks.base import Hook
from stash.models import Content, HookConfig
from stash.processing.building import build_step, item_for

logger = logging.getLogger(__name__)

#: The statuses feedback tells a hook of.
VERDICTS = (pipeline.ACCEPTED, pipeline.REJECTED)


class FeedbackError(Exception):
    """A hook's ``feedback`` failed; its task retries."""


def send(items: Iterable[Content]) -> int:
    """Once the current transaction commits, send feedback on each of ``items`` (their new status
    set) that a hook decided, to that hook if it takes feedback. Returns how many are sent."""
    decided = [item for item in items if item.decided_by_id and item.status in VERDICTS]
    if not decided:
        return 0
    names = dict(HookConfig.objects.filter(pk__in={item.decided_by_id for item in decided}).values_list("pk", "hook"))
    due = [
        publishing.Delivery(item.decided_by_id, str(item.pk), str(item.status), item.stash.queue)
        for item in decided
        if item.decided_by_id is not None and takes_feedback(names.get(item.decided_by_id))
    ]
    if due:
        transaction.on_commit(lambda: publishing.send_feedback(due))
    return len(due)


def takes_feedback(hook_name: str | None) -> bool:
    """True if the hook registered as ``hook_name`` defines ``feedback`` (not the base's, which does nothing)."""
    if hook_name is None:
        return False
    try:
        cls = registry.get(hook_name)
    except NotRegistered:
        return False
    return callable(getattr(cls, "feedback", None)) and getattr(cls, "feedback", None) is not Hook.feedback


@tracing.delivering
def give(config_id: int, content_id: uuid.UUID | str, verdict: str) -> None:
    """Call ``feedback(item, verdict)`` on the hook of HookConfig ``config_id`` for item ``content_id``,
    built from its config as judging builds it. A config or item that no longer exists, or a hook
    that cannot be built, is logged and skipped; a hook that raises gives ``FeedbackError``."""
    config = HookConfig.objects.select_related("stash").filter(pk=config_id).first()
    content = Content.objects.select_related("stash").filter(pk=content_id).first()
    if config is None or content is None:
        logger.info("Feedback skipped: hook config %s or item %s is gone.", config_id, content_id)
        return
    step = build_step(config, config.stash)
    if not callable(getattr(step.hook, "feedback", None)):
        logger.warning(
            "Feedback on item %s skipped: hook config %s (%s) cannot run.", content_id, config_id, config.hook
        )
        return
    item = item_for(content)
    with logs.judging(item), logs.in_hook(step):
        try:
            step.hook.feedback(item, verdict)
        except Exception as exc:
            logger.warning("Feedback of hook config %s on item %s failed: %s", config_id, content_id, exc)
            raise FeedbackError(f"{type(exc).__name__}: {exc}") from exc
