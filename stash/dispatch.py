"""Handing item ids to the workers: after commit, in chunks, never breaking the save.

Ids saved in one transaction travel together: the first save registers one on-commit callback
and later saves in the same transaction join it, so a bulk submit of 1,000 items sends
``ceil(1000 / STASH_BATCH_SIZE)`` messages, not 1,000. A publish that fails (broker down) is
logged and dropped: the item stays pending and the sweeper sends it again once its lease runs
out, so a save that returned success is still judged.
"""
import logging

from celery import current_app
from django.conf import settings
from django.db import connections, transaction

logger = logging.getLogger(__name__)

PROCESS_TASK = "stash.tasks.process_contents"
DELIVER_TASK = "stash.tasks.deliver_sink"
_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}


class _Batch:
    """The ids of one transaction, sent when it commits."""

    def __init__(self):
        self.ids = []

    def __call__(self):
        send(self.ids)


def send_on_commit(ids, using="default"):
    """Send ``ids`` to the workers when the current transaction commits (now, outside one)."""
    if not ids:
        return
    connection = connections[using]
    if not connection.in_atomic_block:
        send(ids)
        return
    batch = getattr(connection, "_stash_batch", None)
    # A batch belongs to the transaction that registered it: once that one has committed or
    # rolled back, its callback is no longer pending and a new batch starts.
    if batch is None or not any(entry[1] is batch for entry in connection.run_on_commit):
        batch = _Batch()
        connection._stash_batch = batch
        transaction.on_commit(batch, using=using)
    batch.ids.extend(ids)


def send_each_on_commit(ids, using="default"):
    """Send each of ``ids`` in a message of its own when the current transaction commits."""
    ids = list(ids)
    if not ids:
        return

    def send_each():
        for pk in ids:
            send([pk])

    transaction.on_commit(send_each, using=using)


def send(ids):
    """Publish ``ids`` in chunks; return how many were handed to the broker."""
    ids = [str(pk) for pk in dict.fromkeys(ids)]
    size = max(1, settings.STASH_BATCH_SIZE)
    sent = 0
    for start in range(0, len(ids), size):
        chunk = ids[start:start + size]
        try:
            current_app.send_task(PROCESS_TASK, args=[chunk], queue=settings.STASH_QUEUE,
                                  retry=True, retry_policy=_RETRY_POLICY)
        except Exception:
            logger.exception("Could not publish %d item(s); the sweeper will send them again.", len(chunk))
        else:
            sent += len(chunk)
    return sent


def send_deliveries(deliveries):
    """Publish one sink delivery task per ``(config id, content id, event)``; failures are logged."""
    for config_id, content_id, event in deliveries:
        try:
            current_app.send_task(DELIVER_TASK, args=[config_id, str(content_id), event],
                                  retry=True, retry_policy=_RETRY_POLICY)
        except Exception:
            logger.exception("Could not publish the %s delivery of %s to hook config %s.", event, content_id,
                             config_id)
