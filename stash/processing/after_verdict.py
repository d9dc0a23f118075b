"""What judging and reviewing both do once a verdict is decided: add to the hooks' counters,
number accepted items in their stash's queue, and call the hooks that listen to the verdict."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from django.db import connection

from stash.core import logs, pipeline
from stash.db import bulk_sql, publishing
from stash.models import Content, HookConfig, Stash

logger = logging.getLogger(__name__)

#: hook config id -> {counter field: amount to add}
Counters = dict[int, dict[str, int]]


def new_counters() -> Counters:
    """Counters to add to, per hook config id, every field at 0."""
    return defaultdict(lambda: dict.fromkeys(HookConfig.COUNTER_FIELDS, 0))


def add_counters(counters: Counters) -> None:
    """Add to every hook's counters in one statement, however many hooks ran (in id order)."""
    fields = [name for name in HookConfig.COUNTER_FIELDS if any(counts[name] for counts in counters.values())]
    if fields:
        deltas = [HookConfig(pk=pk, **{name: counters[pk][name] for name in fields}) for pk in sorted(counters)]
        bulk_sql.update_rows(HookConfig, deltas, fields, add=True)


def assign_queue_positions(stash_id: int, accepted: list[Content]) -> None:
    """Number accepted items in the stash's queue. The stash's row stays locked until commit, so
    batches commit in number order: a consumer reading by number never skips one."""
    with connection.cursor() as cursor:
        table, head = connection.ops.quote_name(Stash._meta.db_table), connection.ops.quote_name("queue_head")
        cursor.execute(
            f"UPDATE {table} SET {head} = {head} + %s WHERE id = %s RETURNING {head}", [len(accepted), stash_id]
        )
        (last,) = cursor.fetchone()
    for offset, content in enumerate(accepted, start=last - len(accepted) + 1):
        content.queue_seq = offset


def notify(
    item_pipeline: pipeline.Pipeline, content: Content, item: pipeline.Item, event: str, result: pipeline.Result
) -> list[publishing.Delivery]:
    """Call ``event`` on the hooks of ``item_pipeline`` that listen to it: now, in process, or, for
    ``deliver_async`` sinks, by the deliveries returned (their own task; ``on_pipeline_end`` is
    always called in process)."""
    local: list[pipeline.Step] = []
    deliveries = []
    for step in item_pipeline.listeners(event):
        if getattr(step.hook, "deliver_async", False) and event != pipeline.ON_PIPELINE_END:
            # Steps built from hook configs (building.build_step) always have a config id.
            deliveries.append(
                publishing.Delivery(
                    step.config_id,  # type: ignore[arg-type]
                    str(content.pk),
                    event,
                    content.stash.queue,
                    content.revision,
                )
            )
        else:
            local.append(step)
    call(local, event, item, result)
    return deliveries


def call(steps: Sequence[pipeline.Step], event: str, item: pipeline.Item, result: pipeline.Result | None) -> None:
    """Call ``event`` on ``steps`` now, each with its hook bound to what it logs; a callback that
    raises is logged, never fatal."""
    for step in steps:
        with logs.in_hook(step):
            for _step, message in pipeline.notify([step], event, item, result):
                logger.error("Hook %s failed in %s for %s: %s", step.title, event, item.id, message)
